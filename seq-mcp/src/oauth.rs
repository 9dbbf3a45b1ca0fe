//! `seqc mcp --http` as an OAuth 2.1 resource server (MCP's authorization): an access token is a
//! JWT from the issuer the policy names, checked against the issuer's published keys (JWKS),
//! bound to this server by its audience, and mapped to a caller by its scopes.
//!
//! The policy file says `"oauth": {"issuer": URL, "resource": URL, "jwks_uri": URL?}` and gives
//! callers a `"scope"`. The keys are found through the issuer's metadata (RFC 8414, then OpenID
//! discovery) unless `jwks_uri` names them, fetched on first use and again when a token names a
//! key not yet seen (at most every [`REFETCH_AFTER`]). Only asymmetric algorithms are accepted: a
//! public key must never verify an HMAC. The protected resource metadata (RFC 9728) is served at
//! [`METADATA_PATH`] and named in every 401's challenge.

use crate::policy_file::Settings;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use seq_exec::Caller;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Where the protected resource metadata is served.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The least time between two fetches of the keys prompted by an unknown key id.
pub const REFETCH_AFTER: Duration = Duration::from_secs(30);

/// How long a fetch of metadata or keys may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The issuer, this resource, the keys and which scope is which caller.
#[derive(Debug)]
pub struct OAuth {
    issuer: String,
    resource: String,
    jwks_uri: Option<String>,
    /// `(scope, caller)` in the policy's order.
    scopes: Vec<(String, Caller)>,
    keys: Mutex<Keys>,
    http: reqwest::Client,
}

#[derive(Debug, Default)]
struct Keys {
    set: Option<JwkSet>,
    fetched: Option<Instant>,
}

/// Why a token names no caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a valid access token for this server (401, `invalid_token`).
    Invalid(String),
    /// Valid, but none of its scopes is a caller's (403, `insufficient_scope`).
    NoCallerScope,
    /// Valid, and its scopes name several callers (403): which one it is cannot be told.
    SeveralCallers(Vec<String>),
}

/// The claims read from an access token (the rest are checked by the validation).
#[derive(Debug, Deserialize)]
struct Claims {
    /// Space-separated scopes (RFC 8693 and 9068).
    #[serde(default)]
    scope: Option<String>,
    /// Scopes as a list, as some issuers write them.
    #[serde(default)]
    scp: Option<Vec<String>>,
}

impl OAuth {
    /// The resource server a policy file's `settings` configure, if any. A scope given to two
    /// callers, or an issuer or resource that are not http(s) URLs, is an error.
    pub fn from_settings(file: &Settings) -> Result<Option<OAuth>, String> {
        let Some(settings) = &file.oauth else {
            return Ok(None);
        };
        for (what, url) in [
            ("issuer", Some(&settings.issuer)),
            ("resource", Some(&settings.resource)),
            ("jwks_uri", settings.jwks_uri.as_ref()),
        ] {
            if let Some(url) = url
                && !(url.starts_with("https://") || url.starts_with("http://"))
            {
                return Err(format!(
                    "the policy's `oauth.{what}` must be an http(s) URL, not `{url}`"
                ));
            }
        }
        let mut scopes: Vec<(String, Caller)> = Vec::new();
        for (id, caller) in &file.callers {
            let Some(scope) = &caller.scope else { continue };
            if scope.is_empty() || scope.contains(char::is_whitespace) {
                return Err(format!(
                    "the policy gives caller `{id}` the scope `{scope}`: a scope is one word"
                ));
            }
            if let Some((_, other)) = scopes.iter().find(|(s, _)| s == scope) {
                return Err(format!(
                    "the policy gives callers `{}` and `{id}` the same scope `{scope}`: one scope \
                     names one caller",
                    other.id
                ));
            }
            scopes.push((scope.clone(), Caller::new(id.clone())));
        }
        if scopes.is_empty() {
            return Err(
                "the policy's `oauth` needs callers with a `scope`: a token's scope says which \
                 caller it is"
                    .to_owned(),
            );
        }
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .map_err(|error| format!("cannot make the HTTP client for OAuth keys: {error}"))?;
        Ok(Some(OAuth {
            issuer: settings.issuer.clone(),
            resource: settings.resource.clone(),
            jwks_uri: settings.jwks_uri.clone(),
            scopes,
            keys: Mutex::new(Keys::default()),
            http,
        }))
    }

    /// The caller `token` is, checked against the issuer's keys.
    pub async fn caller(&self, token: &str) -> Result<Caller, Refusal> {
        let invalid = |why: &str| Refusal::Invalid(why.to_owned());
        let header = decode_header(token).map_err(|_| invalid("not a JWT"))?;
        if !asymmetric(header.alg) {
            return Err(invalid(
                "the token is not signed with a public-key algorithm",
            ));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        // A token is not good before its `nbf` either, with the leeway `exp` has.
        validation.validate_nbf = true;
        let data = decode::<Claims>(token, &key, &validation).map_err(|error| {
            Refusal::Invalid(format!(
                "the token does not hold here: {}",
                error.kind_text()
            ))
        })?;
        let granted: Vec<&str> = match (&data.claims.scope, &data.claims.scp) {
            (Some(scope), _) => scope.split_whitespace().collect(),
            (None, Some(list)) => list.iter().map(String::as_str).collect(),
            (None, None) => Vec::new(),
        };
        let mut callers = self
            .scopes
            .iter()
            .filter(|(scope, _)| granted.contains(&scope.as_str()));
        match (callers.next(), callers.next()) {
            (Some((_, caller)), None) => Ok(caller.clone()),
            (None, _) => Err(Refusal::NoCallerScope),
            (Some(first), Some(second)) => {
                let mut named = vec![first.1.id.clone(), second.1.id.clone()];
                named.extend(callers.map(|(_, c)| c.id.clone()));
                Err(Refusal::SeveralCallers(named))
            }
        }
    }

    /// The key `kid` names (or the only key, when the token names none), fetching the keys
    /// when they are not known yet or `kid` is new to them.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Refusal> {
        let mut keys = self.keys.lock().await;
        let stale = keys.fetched.is_none_or(|at| at.elapsed() >= REFETCH_AFTER);
        let known = keys
            .set
            .as_ref()
            .is_some_and(|set| pick(set, kid).is_some());
        if !known && stale {
            keys.fetched = Some(Instant::now());
            match self.fetch_keys().await {
                Ok(set) => keys.set = Some(set),
                Err(why) => return Err(Refusal::Invalid(why)),
            }
        }
        let set = keys
            .set
            .as_ref()
            .ok_or_else(|| Refusal::Invalid("the issuer's keys are not known".to_owned()))?;
        let jwk = pick(set, kid).ok_or_else(|| {
            Refusal::Invalid("the token's key is not among the issuer's keys".to_owned())
        })?;
        if let Some(declared) = jwk.common.key_algorithm
            && declared.to_string() != format!("{alg:?}")
        {
            return Err(Refusal::Invalid(
                "the token's algorithm is not its key's".to_owned(),
            ));
        }
        DecodingKey::from_jwk(jwk)
            .map_err(|_| Refusal::Invalid("the issuer's key cannot be used".to_owned()))
    }

    async fn fetch_keys(&self) -> Result<JwkSet, String> {
        let uri = match &self.jwks_uri {
            Some(uri) => uri.clone(),
            None => self.discover().await?,
        };
        let set: JwkSet = self
            .get_json(&uri)
            .await
            .and_then(|value| serde_json::from_value(value).map_err(|e| e.to_string()))
            .map_err(|why| format!("cannot read the issuer's keys at {uri}: {why}"))?;
        Ok(set)
    }

    /// The issuer's `jwks_uri`, from its authorization server metadata or OpenID discovery.
    async fn discover(&self) -> Result<String, String> {
        let mut tried = Vec::new();
        for url in well_known(&self.issuer) {
            match self.get_json(&url).await {
                Ok(metadata) => {
                    if let Some(uri) = metadata.get("jwks_uri").and_then(Value::as_str) {
                        return Ok(uri.to_owned());
                    }
                    tried.push(format!("{url}: no `jwks_uri`"));
                }
                Err(why) => tried.push(format!("{url}: {why}")),
            }
        }
        Err(format!(
            "cannot find the issuer's keys ({})",
            tried.join("; ")
        ))
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let response = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }

    /// The protected resource metadata (RFC 9728).
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.scopes.iter().map(|(s, _)| s).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
        })
    }

    /// Where [`OAuth::metadata`] is, as a client reaches it: the resource's origin and
    /// [`METADATA_PATH`].
    pub fn metadata_url(&self) -> String {
        let rest = self.resource.split_once("://").map_or("", |(_, rest)| rest);
        let origin_len = self.resource.len() - rest.len() + rest.find('/').unwrap_or(rest.len());
        format!("{}{METADATA_PATH}", &self.resource[..origin_len])
    }

    /// The `WWW-Authenticate` challenge for `error` (none when no token came).
    pub fn challenge(&self, error: Option<&str>) -> String {
        let mut challenge = format!(
            "Bearer realm=\"seqc\", resource_metadata=\"{}\"",
            self.metadata_url()
        );
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\""));
        }
        if error == Some("insufficient_scope") {
            let scopes: Vec<&str> = self.scopes.iter().map(|(s, _)| s.as_str()).collect();
            challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        challenge
    }
}

/// The public-key algorithms (never HMAC: its key would be the issuer's public key).
fn asymmetric(alg: Algorithm) -> bool {
    match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => false,
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512
        | Algorithm::ES256
        | Algorithm::ES384
        | Algorithm::EdDSA => true,
    }
}

fn pick<'a>(set: &'a JwkSet, kid: Option<&str>) -> Option<&'a jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(kid) => set.find(kid),
        None => match set.keys.as_slice() {
            [only] => Some(only),
            _ => None,
        },
    }
}

/// The metadata documents of `issuer`: RFC 8414's (the well-known path inserted before the
/// issuer's own path), then OpenID discovery's (appended).
fn well_known(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let rest = trimmed.split_once("://").map_or("", |(_, rest)| rest);
    let split = trimmed.len() - rest.len() + rest.find('/').unwrap_or(rest.len());
    let (origin, path) = trimmed.split_at(split);
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{trimmed}/.well-known/openid-configuration"),
    ]
}

/// A short reason for a refused token, without echoing it.
trait KindText {
    fn kind_text(&self) -> String;
}

impl KindText for jsonwebtoken::errors::Error {
    #[allow(
        clippy::wildcard_enum_match_arm,
        reason = "jsonwebtoken's ErrorKind is non-exhaustive: the rest are named as they are"
    )]
    fn kind_text(&self) -> String {
        use jsonwebtoken::errors::ErrorKind;
        match self.kind() {
            ErrorKind::ExpiredSignature => "it has expired".to_owned(),
            ErrorKind::ImmatureSignature => "it is not valid yet".to_owned(),
            ErrorKind::InvalidAudience => "its audience is not this server".to_owned(),
            ErrorKind::InvalidIssuer => "its issuer is not the one configured".to_owned(),
            ErrorKind::InvalidSignature => "its signature does not verify".to_owned(),
            ErrorKind::MissingRequiredClaim(claim) => format!("it has no `{claim}`"),
            other => format!("{other:?}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn well_known_documents_follow_rfc_8414_and_openid() {
        assert_eq!(
            well_known("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            well_known("https://auth.example.com/tenant1/"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn hmac_is_never_accepted() {
        assert!(!asymmetric(Algorithm::HS256));
        assert!(asymmetric(Algorithm::ES256));
    }
}
