//! rmcp's HTTP client with the [`Authorizer`]'s token on every request: a refusal (401, or 403
//! for a scope) is authorized and the same request sent again, so that the session goes on
//! whether the server asks at `initialize`, at `tools/list` or at one tool's call.

use super::{Authorizer, MAX_AUTHORIZATIONS};
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

type Failure = StreamableHttpError<reqwest::Error>;

/// A reqwest client that signs in for the requests it sends.
#[derive(Clone, Debug)]
pub(crate) struct OAuthHttp {
    http: reqwest::Client,
    authorizer: Arc<Authorizer>,
}

impl OAuthHttp {
    pub fn new(authorizer: Arc<Authorizer>) -> OAuthHttp {
        OAuthHttp {
            http: reqwest::Client::default(),
            authorizer,
        }
    }

    /// Runs `send` with the token, authorizing after each refusal, [`MAX_AUTHORIZATIONS`] times
    /// at most: a server that keeps refusing has the last word.
    async fn signed<T, F, Fut>(&self, send: F) -> Result<T, Failure>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut token = self.authorizer.token().await;
        let mut authorizations = 0;
        loop {
            let (challenge, insufficient_scope) = match send(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(refusal)) => {
                    (refusal.www_authenticate_header.clone(), false)
                }
                Err(StreamableHttpError::InsufficientScope(refusal)) => {
                    (refusal.www_authenticate_header.clone(), true)
                }
                other => return other,
            };
            if authorizations == MAX_AUTHORIZATIONS {
                let said = if insufficient_scope {
                    "still asks for more scope"
                } else {
                    "still refuses the token"
                };
                return Err(refused(format!(
                    "the server {said} after {MAX_AUTHORIZATIONS} authorizations ({challenge})"
                )));
            }
            authorizations += 1;
            token = Some(
                self.authorizer
                    .authorize(&challenge, token.as_deref(), insufficient_scope)
                    .await
                    .map_err(refused)?,
            );
        }
    }
}

/// A failure to sign in, as the transport's error (its text is the sentence).
fn refused(sentence: String) -> Failure {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(sentence))
}

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        let headers = custom_headers;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.signed(|token| {
            self.http.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        self.signed(|token| {
            self.http.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        let limit = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            limit,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.signed(|token| {
            self.http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
