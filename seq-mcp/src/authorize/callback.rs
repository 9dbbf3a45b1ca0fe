//! Where an authorization comes back: the redirect to seqc's loopback address (RFC 8252), with
//! the code and the state, from a person's browser or straight from an authorization server
//! that approves without asking anyone.

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use rmcp::transport::auth::AuthorizationCallback;
use std::convert::Infallible;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// How long the authorization server may take to answer the first request.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The page the browser shows once it has brought the code back.
const DONE_PAGE: &str = "<!doctype html><title>seqc</title><p>seqc is signed in. You can close \
                         this tab and go back to the terminal.</p>";

/// The loopback listener the browser is sent back to, and the redirect URI that names it.
#[derive(Debug)]
pub(crate) struct Redirect {
    listener: TcpListener,
    pub uri: String,
    path: String,
}

impl Redirect {
    /// Listens on `configured`'s port, or on a free loopback port with the path `/callback`.
    pub async fn bind(configured: Option<&str>) -> Result<Redirect, String> {
        let port = configured
            .and_then(super::settings::redirect_port)
            .unwrap_or(0);
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|error| {
                format!("cannot listen on 127.0.0.1:{port} for the redirect: {error}")
            })?;
        let uri = match configured {
            Some(uri) => uri.to_owned(),
            None => {
                let port = listener
                    .local_addr()
                    .map_err(|error| error.to_string())?
                    .port();
                format!("http://127.0.0.1:{port}/callback")
            }
        };
        let path = path_of(&uri);
        Ok(Redirect {
            listener,
            uri,
            path,
        })
    }

    /// Whether `location` is this redirect (same origin and path).
    fn is_mine(&self, location: &str) -> bool {
        let base = |text: &str| {
            url::Url::parse(text)
                .ok()
                .map(|url| (url.origin(), url.path().to_owned()))
        };
        base(location).is_some_and(|found| Some(found) == base(&self.uri))
    }

    /// The callback when the authorization server approves without a person: it answers the
    /// authorization request itself with a redirect here. `None` when it answers otherwise (a
    /// login page), for a person to see to.
    pub async fn approved_at_once(
        &self,
        url: &str,
    ) -> Result<Option<AuthorizationCallback>, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROBE_TIMEOUT)
            .build()
            .map_err(|error| error.to_string())?;
        let Ok(response) = client.get(url).send().await else {
            return Ok(None);
        };
        if !response.status().is_redirection() {
            return Ok(None);
        }
        let Some(location) = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|value| value.to_str().ok())
        else {
            return Ok(None);
        };
        if !self.is_mine(location) {
            return Ok(None);
        }
        parse(location).map(Some)
    }

    /// Waits for the browser to come back with the code, at most `bound`.
    pub async fn wait(self, bound: Duration) -> Result<AuthorizationCallback, String> {
        let (sender, mut received) = mpsc::channel::<String>(1);
        let Redirect {
            listener,
            uri,
            path,
        } = self;
        let base = uri.clone();
        let accepting = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let sender = sender.clone();
                let path = path.clone();
                let base = base.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: http::Request<_>| {
                        let mine = request.uri().path() == path;
                        if mine {
                            let query = request.uri().query().unwrap_or("");
                            // Only the first callback counts; a full channel drops the rest.
                            let _ = sender.try_send(format!("{base}?{query}"));
                        }
                        let (status, body) = if mine {
                            (StatusCode::OK, DONE_PAGE)
                        } else {
                            (StatusCode::NOT_FOUND, "not here")
                        };
                        let mut response =
                            Response::new(Full::new(Bytes::from_static(body.as_bytes())));
                        *response.status_mut() = status;
                        std::future::ready(Ok::<_, Infallible>(response))
                    });
                    // A browser that goes away mid-request changes nothing: another may come.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let outcome = tokio::time::timeout(bound, received.recv()).await;
        accepting.abort();
        match outcome {
            Ok(Some(location)) => parse(&location),
            Ok(None) | Err(_) => Err(format!(
                "nobody completed the authorization within {} minutes",
                bound.as_secs() / 60
            )),
        }
    }
}

/// The path of a URI (`/callback` of `http://127.0.0.1:8765/callback?x`).
fn path_of(uri: &str) -> String {
    url::Url::parse(uri).map_or_else(|_| "/".to_owned(), |url| url.path().to_owned())
}

/// The code and state of a redirect, or the authorization server's refusal in words.
fn parse(location: &str) -> Result<AuthorizationCallback, String> {
    let url = url::Url::parse(location)
        .map_err(|_| format!("the redirect back to seqc is not an address: {location}"))?;
    let field = |name: &str| {
        url.query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    if let Some(error) = field("error") {
        let detail = field("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(format!(
            "the authorization server refused ({error}{detail})"
        ));
    }
    AuthorizationCallback::from_redirect_url(location)
        .map_err(|_| "the redirect back to seqc carried no authorization code and state".to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_gives_the_code_or_the_refusal_in_words() {
        let ok =
            parse("http://127.0.0.1:1/callback?code=abc&state=xyz&iss=https%3A%2F%2Fas").unwrap();
        assert_eq!((ok.code.as_str(), ok.csrf_token.as_str()), ("abc", "xyz"));
        assert_eq!(ok.issuer.as_deref(), Some("https://as"));
        let refused =
            parse("http://127.0.0.1:1/callback?error=access_denied&error_description=no+thanks%21")
                .err()
                .unwrap();
        assert_eq!(
            refused,
            "the authorization server refused (access_denied: no thanks!)"
        );
        assert!(parse("http://127.0.0.1:1/callback").is_err());
        assert_eq!(path_of("http://127.0.0.1:5/cb/x?y=1"), "/cb/x");
        assert_eq!(path_of("http://localhost:5"), "/");
    }

    #[tokio::test]
    async fn the_browser_coming_back_to_the_loopback_address_brings_the_code() {
        let redirect = Redirect::bind(None).await.unwrap();
        let uri = redirect.uri.clone();
        assert!(redirect.is_mine(&format!("{uri}?code=1")));
        assert!(!redirect.is_mine("http://127.0.0.1:1/elsewhere?code=1"));
        let browser = tokio::spawn(async move {
            let client = reqwest::Client::new();
            let origin = uri.trim_end_matches("/callback").to_owned();
            let missed = client
                .get(format!("{origin}/favicon.ico"))
                .send()
                .await
                .unwrap();
            assert_eq!(missed.status(), 404);
            let page = client
                .get(format!("{uri}?code=c1&state=s1"))
                .send()
                .await
                .unwrap();
            assert_eq!(page.status(), 200);
        });
        let callback = redirect.wait(Duration::from_secs(30)).await.unwrap();
        assert_eq!(
            (callback.code.as_str(), callback.csrf_token.as_str()),
            ("c1", "s1")
        );
        browser.await.unwrap();
    }
}
