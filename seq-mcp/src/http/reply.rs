//! The answers the gate gives itself, without rmcp: refusals (401, 404, 408, 413, 503), the
//! protected resource metadata, a parse error and a lost stream's last event.

use crate::bound::MAX_MESSAGE_BYTES;
use crate::framing;
use crate::oauth::{OAuth, Refusal};
use crate::resume::Lost;
use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use std::convert::Infallible;

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// 413: the body is past the bound (`declared`: as its `Content-Length` says).
pub(super) fn too_large(declared: Option<u64>) -> Response<Body> {
    let bound = MAX_MESSAGE_BYTES;
    let size = match declared {
        Some(bytes) => format!("is {bytes} bytes, more than"),
        None => "is longer than".to_owned(),
    };
    closing(plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request's body {size} the {bound} bytes ({} MiB) a request may have",
            bound / (1024 * 1024)
        ),
    ))
}

/// `response`, after which the connection closes.
pub(super) fn closing(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The answer to a resumption whose events are no longer kept: the request's own error, as an
/// SSE stream of one event, so that the client's call ends with the reason; 410 when the
/// request is not known.
pub(super) fn lost_answer(lost: &Lost) -> Response<Body> {
    let Some(request) = &lost.request else {
        return plain(StatusCode::GONE, lost.text());
    };
    let error = serde_json::json!({"jsonrpc": "2.0", "id": request, "error": {
        "code": -32603, "message": lost.text()}});
    let mut response = Response::new(Full::new(Bytes::from(format!("data: {error}\n\n"))).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// 503 with `Retry-After`: a bound on sessions, connections or calls is reached.
pub(super) fn busy(text: String) -> Response<Body> {
    let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, text);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// Why a request has no caller: answered 401 (403 for a valid access token that names no
/// caller, or several).
#[derive(Clone, Debug)]
pub(super) enum Unauthorized {
    NoToken,
    WrongToken,
    OAuth(Refusal),
}

impl Unauthorized {
    /// The answer, whose challenge names the resource metadata when OAuth is configured.
    pub(super) fn answer(self, oauth: Option<&OAuth>) -> Response<Body> {
        let challenge = |error: Option<&str>| match oauth {
            Some(oauth) => oauth.challenge(error),
            None => match error {
                Some(error) => format!("Bearer realm=\"seqc\", error=\"{error}\""),
                None => "Bearer realm=\"seqc\"".to_owned(),
            },
        };
        let (status, error, text) = match self {
            Unauthorized::NoToken => (
                StatusCode::UNAUTHORIZED,
                None,
                "this server needs `Authorization: Bearer TOKEN`".to_owned(),
            ),
            Unauthorized::WrongToken => (
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                "the bearer token names no caller here".to_owned(),
            ),
            Unauthorized::OAuth(Refusal::Invalid(why)) => (
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                format!("the bearer token names no caller here: {why}"),
            ),
            Unauthorized::OAuth(Refusal::NoCallerScope) => (
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                "the access token has no scope that is a caller here".to_owned(),
            ),
            Unauthorized::OAuth(Refusal::SeveralCallers(callers)) => (
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                format!(
                    "the access token's scopes name several callers ({}): ask for one",
                    callers.join(", ")
                ),
            ),
        };
        let mut response = plain(status, text);
        if let Ok(value) = HeaderValue::from_str(&challenge(error)) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The protected resource metadata document.
pub(super) fn metadata(oauth: &OAuth) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(oauth.metadata().to_string())).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON POST whose body is not JSON gets JSON-RPC's parse error (400), as over stdio
/// ([`framing::judge`]); rmcp would answer 415, which says the media type was wrong.
pub(super) fn unparsable(parts: &http::request::Parts, body: &Bytes) -> Option<Response<Body>> {
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"));
    if parts.method != Method::POST || !json {
        return None;
    }
    let framing::Verdict::Answer(answer) = framing::judge(body) else {
        return None;
    };
    if answer["error"]["code"] != framing::PARSE_ERROR {
        return None;
    }
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Some(response)
}

pub(super) fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
