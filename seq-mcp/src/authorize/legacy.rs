//! The 2025-03-26 specification's discovery, where rmcp's refuses metadata for its issuer.
//!
//! A server of that version publishes no protected resource metadata: the client takes the
//! server's origin as the authorization base URL and reads the authorization server's metadata
//! at `/.well-known/oauth-authorization-server` there (falling back to `/authorize`, `/token`,
//! `/register` where there is none, which rmcp does). RFC 8414 has a client refuse metadata
//! whose `issuer` differs from the identifier the metadata was looked up under, because there the
//! client starts from an issuer it was given. A 2025-03-26 client starts from the MCP server
//! instead, and that specification names no issuer to compare: the server's origin is what is
//! trusted. So seqc accepts such metadata on that path alone, and only within that origin:
//! - the challenge names no `resource_metadata`, and neither well-known protected resource
//!   metadata address answers (a server of a later version is held to RFC 8414);
//! - the metadata is the one at the server's own origin;
//! - its `issuer` and its endpoints are on that origin (`…/oauth` on the server's host, say).
//!
//! Anything else keeps rmcp's refusal.

use super::read_body;
use rmcp::transport::auth::AuthorizationMetadata;
use std::time::Duration;
use url::Url;

/// How long each lookup may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The version whose discovery this is, sent as that specification asks.
const PROTOCOL_VERSION: &str = "2025-03-26";

/// The server's own authorization metadata, when `server` is of the 2025-03-26 specification and
/// its metadata stays on its origin (module comment); `None` otherwise.
pub(super) async fn metadata(server: &str, challenge: &str) -> Option<AuthorizationMetadata> {
    if challenge.to_ascii_lowercase().contains("resource_metadata") {
        return None;
    }
    let server = Url::parse(server).ok()?;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT)
        .build()
        .ok()?;
    let at = |path: &str| {
        let mut url = server.clone();
        url.set_path(path);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    let path = server.path().trim_end_matches('/');
    for resource_metadata in [
        at(&format!("/.well-known/oauth-protected-resource{path}")),
        at("/.well-known/oauth-protected-resource"),
    ] {
        if fetch(&http, resource_metadata).await.is_some() {
            return None;
        }
    }
    let body = fetch(&http, at("/.well-known/oauth-authorization-server")).await?;
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body).ok()?;
    on_origin(&server, &metadata).then_some(metadata)
}

/// Whether the metadata's issuer and endpoints are all on `server`'s origin.
fn on_origin(server: &Url, metadata: &AuthorizationMetadata) -> bool {
    let origin = server.origin();
    let mine = |address: &str| Url::parse(address).is_ok_and(|url| url.origin() == origin);
    metadata.issuer.as_deref().is_some_and(mine)
        && mine(&metadata.authorization_endpoint)
        && mine(&metadata.token_endpoint)
        && metadata.registration_endpoint.as_deref().is_none_or(mine)
}

/// The body of a 200 answer to a GET of `url`; `None` for any other answer or none.
async fn fetch(http: &reqwest::Client, url: Url) -> Option<Vec<u8>> {
    let response = http
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .header("mcp-protocol-version", PROTOCOL_VERSION)
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::OK {
        return None;
    }
    read_body(response).await.ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    fn metadata(issuer: &str, token: &str) -> AuthorizationMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": "http://127.0.0.1:9/oauth/authorize",
            "token_endpoint": token,
            "registration_endpoint": "http://127.0.0.1:9/oauth/register",
        }))
        .unwrap()
    }

    #[test]
    fn metadata_is_accepted_only_within_the_server_s_origin() {
        let server = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        let token = "http://127.0.0.1:9/oauth/token";
        assert!(on_origin(
            &server,
            &metadata("http://127.0.0.1:9/oauth", token)
        ));
        assert!(!on_origin(
            &server,
            &metadata("http://127.0.0.1:10/oauth", token)
        ));
        assert!(!on_origin(
            &server,
            &metadata("https://127.0.0.1:9/oauth", token)
        ));
        assert!(!on_origin(
            &server,
            &metadata("http://127.0.0.1:9/oauth", "http://elsewhere.example/token")
        ));
    }
}
