//! Tokens bought outside rmcp's authorization manager, kept as it keeps its own
//! ([`StoredCredentials`]), so that sending the token and noticing its end stay rmcp's:
//! - a machine client that proves itself with its private key (`private_key_jwt`: the client
//!   credentials grant, RFC 6749 section 4.4, with a client assertion, RFC 7523 section 2.2), a request seqc
//!   makes itself: rmcp has one, but the future it returns holds a form serializer that is not
//!   `Send` across the request, and seqc's requests run on any thread;
//! - cross-app access ([`enterprise_managed`]): rmcp's two exchanges, the user's ID token for an
//!   ID-JAG at the identity provider (RFC 8693), the ID-JAG for the token at the server's
//!   authorization server (RFC 7523 section 2.1).

use super::{key, read_body};
use crate::authorize::settings::{IdentityProvider, SigningAlgorithm};
use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthorizationMetadata, OAuthTokenResponse, StoredCredentials, default_oauth_http_client,
};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use url::{Host, Url};

/// How long the token request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The client assertion's type (RFC 7523 section 2.2).
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A token for `resource` bought with an assertion of `client_id` signed with `pem`; the error
/// is a sentence.
pub(super) async fn private_key_jwt(
    metadata: &AuthorizationMetadata,
    resource: &str,
    client_id: &str,
    pem: &str,
    algorithm: SigningAlgorithm,
    scopes: &[String],
) -> Result<StoredCredentials, String> {
    let issuer = metadata.issuer.as_deref().ok_or(
        "the authorization server's metadata names no issuer, and a private key assertion is \
         addressed to one",
    )?;
    let endpoint = Url::parse(&metadata.token_endpoint).map_err(|_| {
        format!(
            "the token endpoint `{}` is not an address",
            metadata.token_endpoint
        )
    })?;
    if !private(&endpoint) {
        return Err(format!(
            "the token endpoint {endpoint} is not https:// (nor http:// on this machine), and \
             a client's credentials go to no other"
        ));
    }
    let assertion = key::assertion(pem, algorithm, client_id, issuer)?;
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials")
            .append_pair("client_assertion_type", JWT_BEARER)
            .append_pair("client_assertion", &assertion)
            .append_pair("resource", resource);
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.join(" "));
        }
        form.finish()
    };
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|error| error.to_string())?;
    let response = http
        .post(endpoint.clone())
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|error| format!("the token request to {endpoint} failed: {error}"))?;
    let status = response.status();
    let body = read_body(response)
        .await
        .map_err(|why| format!("the token endpoint's answer {why}"))?;
    if !status.is_success() {
        return Err(refusal(status, &body));
    }
    let token: OAuthTokenResponse = serde_json::from_slice(&body)
        .map_err(|error| format!("the token endpoint's answer is not a token ({error})"))?;
    // The scope granted, where the answer says (RFC 6749 section 5.1), else the one asked for.
    let granted = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|answer| answer.get("scope")?.as_str().map(str::to_owned))
        .map_or_else(
            || scopes.to_vec(),
            |granted| granted.split_whitespace().map(str::to_owned).collect(),
        );
    Ok(
        StoredCredentials::new(client_id.to_owned(), Some(token), granted, Some(now()))
            .with_issuer(Some(issuer.to_owned())),
    )
}

/// A token for `resource` bought with the user's ID token from `provider` (cross-app access):
/// exchanged there for an ID-JAG addressed to the authorization server of `metadata`, which
/// `client_id` (with `client_secret`) redeems; the error is a sentence.
pub(super) async fn enterprise_managed(
    metadata: &AuthorizationMetadata,
    resource: &str,
    client_id: &str,
    client_secret: Option<&str>,
    provider: &IdentityProvider,
    scopes: &[String],
) -> Result<StoredCredentials, String> {
    let issuer = metadata.issuer.as_deref().ok_or(
        "the authorization server's metadata names no issuer, and an ID-JAG is addressed to one",
    )?;
    let secret = |secret: Option<&str>, post: bool| match secret {
        Some(secret) if post => {
            EmaClientAuthentication::ClientSecretPost(ClientSecret::new(secret.to_owned()))
        }
        Some(secret) => {
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.to_owned()))
        }
        None => EmaClientAuthentication::None,
    };
    let identity_provider = EmaAuthorizationServer::new(
        &provider.issuer,
        &provider.token_endpoint,
        &provider.client_id,
    )
    .with_client_authentication(secret(provider.client_secret.as_deref(), false));
    let authorization_server =
        EmaAuthorizationServer::new(issuer, &metadata.token_endpoint, client_id)
            .with_client_authentication(secret(client_secret, secret_in_body(metadata)));
    let http = default_oauth_http_client().map_err(|error| error.to_string())?;
    let token = EmaExchangeRequest::new_with_id_token(
        identity_provider,
        authorization_server,
        resource,
        &provider.id_token,
    )
    .with_scopes(scopes.iter().cloned())
    .exchange(&http, &http)
    .await
    .map_err(|error| format!("cross-app access failed: {error}"))?;
    let granted: Vec<String> = token.scopes.into_iter().collect();
    let mut answer = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(lifetime) = token.expires_in {
        answer["expires_in"] = lifetime.as_secs().into();
    }
    if !granted.is_empty() {
        answer["scope"] = granted.join(" ").into();
    }
    let token: OAuthTokenResponse = serde_json::from_value(answer)
        .map_err(|error| format!("the token could not be kept ({error})"))?;
    Ok(
        StoredCredentials::new(client_id.to_owned(), Some(token), granted, Some(now()))
            .with_issuer(Some(issuer.to_owned())),
    )
}

/// Whether a client secret goes in the request body: where the authorization server takes only
/// that (`client_secret_post`); else by HTTP Basic, OAuth's default.
fn secret_in_body(metadata: &AuthorizationMetadata) -> bool {
    let methods = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array);
    let offers = |method: &str| methods.is_some_and(|all| all.iter().any(|m| m == method));
    offers("client_secret_post") && !offers("client_secret_basic")
}

/// Seconds since 1970, as rmcp keeps when a token came.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Whether credentials may go to `endpoint`: HTTPS, or plain HTTP to this machine.
fn private(endpoint: &Url) -> bool {
    let loopback = match endpoint.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    };
    endpoint.scheme() == "https" || (endpoint.scheme() == "http" && loopback)
}

/// The token endpoint's refusal in words: its `error` and `error_description`, else the status.
fn refusal(status: reqwest::StatusCode, body: &[u8]) -> String {
    let said = serde_json::from_slice::<serde_json::Value>(body).ok();
    let field = |name: &str| {
        said.as_ref()
            .and_then(|said| said.get(name))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    match (field("error"), field("error_description")) {
        (Some(error), Some(description)) => {
            format!("the token endpoint refused ({error}: {description})")
        }
        (Some(error), None) => format!("the token endpoint refused ({error})"),
        (None, _) => format!("the token endpoint answered {status}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_only_to_https_or_this_machine() {
        let private = |text: &str| private(&Url::parse(text).unwrap());
        assert!(private("https://as.example/token"));
        assert!(private("http://127.0.0.1:8080/token"));
        assert!(private("http://localhost/token"));
        assert!(private("http://[::1]:9/token"));
        assert!(!private("http://as.example/token"));
        assert!(!private("ftp://127.0.0.1/token"));
    }

    #[test]
    fn a_refusal_is_said_in_words() {
        let status = reqwest::StatusCode::UNAUTHORIZED;
        assert_eq!(
            refusal(
                status,
                br#"{"error": "invalid_client", "error_description": "bad jwt"}"#
            ),
            "the token endpoint refused (invalid_client: bad jwt)"
        );
        assert_eq!(
            refusal(status, b"<html>"),
            "the token endpoint answered 401 Unauthorized"
        );
    }
}
