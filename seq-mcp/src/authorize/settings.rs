//! What a config file says of signing in to one server: its `"oauth"` object.

use serde::Deserialize;

/// How seqc identifies itself to a server's authorization server. Every field is optional: with
/// none, seqc registers itself dynamically where the server allows it. Values take `${VAR}` like
/// the rest of a config file, so that a secret stays in the environment.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// That client's secret (a confidential client).
    pub client_secret: Option<String>,
    /// A machine client's private key, in place of a secret (`private_key_jwt`): PEM text, or
    /// the path of a PEM file (relative to the config file's folder). Once the config is read,
    /// the PEM text (`key::load`).
    pub private_key: Option<String>,
    /// The algorithm the client signs its assertions with; the key's own where not given
    /// (filled in by `key::load`).
    pub signing_algorithm: Option<SigningAlgorithm>,
    /// The HTTPS address of a client ID metadata document describing seqc for this deployment:
    /// used as the client id where the authorization server accepts such documents.
    pub client_metadata_url: Option<String>,
    /// How tokens are had: a person approves (the default), or the client's own credentials.
    #[serde(default)]
    pub grant: Grant,
    /// Scopes asked for besides those the server names.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Where the browser comes back, `http://127.0.0.1:PORT/PATH` or `http://localhost:…`, for a
    /// client registered with a fixed one; else a free loopback port is taken.
    pub redirect_uri: Option<String>,
    /// The enterprise identity provider whose ID token buys the token
    /// (`"grant": "enterprise_managed"`); boxed, being large and rare.
    pub identity_provider: Option<Box<IdentityProvider>>,
}

/// An enterprise identity provider (`"oauth": {"identity_provider": …}`): seqc's client there
/// and the ID token it issued to the user, exchanged for an ID-JAG (cross-app access).
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityProvider {
    /// Its issuer identifier, which the ID token and the ID-JAG name.
    pub issuer: String,
    /// Its token endpoint, where the ID token is exchanged.
    pub token_endpoint: String,
    /// seqc's client at the identity provider.
    pub client_id: String,
    /// That client's secret, where it has one (sent by HTTP Basic).
    pub client_secret: Option<String>,
    /// The user's ID token from the identity provider (an OpenID Connect sign-in seqc does not
    /// make itself).
    pub id_token: String,
}

/// The secret and the ID token stay out of debug output.
impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("id_token", &"…")
            .finish()
    }
}

/// How an access token is obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// The authorization code flow with PKCE: a person approves in a browser.
    #[default]
    AuthorizationCode,
    /// A machine client: `client_id` and its `client_secret` or `private_key` buy the token,
    /// nobody approves.
    ClientCredentials,
    /// Cross-app access: the user's ID token from an enterprise identity provider is exchanged
    /// there for an ID-JAG (RFC 8693), which `client_id` and its `client_secret` redeem at the
    /// server's authorization server for the token (RFC 7523), nobody approving.
    EnterpriseManaged,
}

/// The JWS algorithms a client assertion may be signed with (RFC 7518).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum SigningAlgorithm {
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
}

/// The secret stays out of debug output (logs, panics).
impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("private_key", &self.private_key.as_ref().map(|_| "…"))
            .field("signing_algorithm", &self.signing_algorithm)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("scopes", &self.scopes)
            .field("redirect_uri", &self.redirect_uri)
            .field("identity_provider", &self.identity_provider)
            .finish()
    }
}

impl OAuthSettings {
    /// The text fields, by name, for variable expansion.
    pub(crate) fn texts_mut(&mut self) -> impl Iterator<Item = (&'static str, &mut String)> {
        [
            ("client_id", self.client_id.as_mut()),
            ("client_secret", self.client_secret.as_mut()),
            ("private_key", self.private_key.as_mut()),
            ("client_metadata_url", self.client_metadata_url.as_mut()),
            ("redirect_uri", self.redirect_uri.as_mut()),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|value| (name, value)))
        .chain(self.scopes.iter_mut().map(|scope| ("scopes", scope)))
        .chain(self.identity_provider.iter_mut().flat_map(|provider| {
            [
                ("identity_provider.issuer", Some(&mut provider.issuer)),
                (
                    "identity_provider.token_endpoint",
                    Some(&mut provider.token_endpoint),
                ),
                ("identity_provider.client_id", Some(&mut provider.client_id)),
                (
                    "identity_provider.client_secret",
                    provider.client_secret.as_mut(),
                ),
                ("identity_provider.id_token", Some(&mut provider.id_token)),
            ]
            .into_iter()
            .filter_map(|(name, value)| value.map(|value| (name, value)))
        }))
    }

    /// What does not go together, in words.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.client_secret.is_some() && self.client_id.is_none() {
            return Some("`client_secret` needs the `client_id` it belongs to".to_owned());
        }
        if self.private_key.is_some() && self.client_secret.is_some() {
            return Some(
                "give `client_secret` or `private_key`, not both: the client proves itself one way"
                    .to_owned(),
            );
        }
        if self.grant == Grant::ClientCredentials
            && (self.client_id.is_none()
                || (self.client_secret.is_none() && self.private_key.is_none()))
        {
            return Some(
                "`\"grant\": \"client_credentials\"` needs `client_id` and its `client_secret` \
                 or `private_key`"
                    .to_owned(),
            );
        }
        if self.private_key.is_some() && self.grant != Grant::ClientCredentials {
            return Some(
                "`private_key` signs a machine client in: it needs \
                 `\"grant\": \"client_credentials\"`"
                    .to_owned(),
            );
        }
        if (self.grant == Grant::EnterpriseManaged) != self.identity_provider.is_some() {
            return Some(
                "`\"grant\": \"enterprise_managed\"` and `identity_provider` go together"
                    .to_owned(),
            );
        }
        if self.grant == Grant::EnterpriseManaged && self.client_id.is_none() {
            return Some(
                "`\"grant\": \"enterprise_managed\"` needs the `client_id` (and its \
                 `client_secret`) seqc has at the server's authorization server"
                    .to_owned(),
            );
        }
        if self.signing_algorithm.is_some() && self.private_key.is_none() {
            return Some("`signing_algorithm` needs the `private_key` it signs with".to_owned());
        }
        if let Some(url) = &self.client_metadata_url
            && !url.starts_with("https://")
        {
            return Some(format!(
                "`client_metadata_url` must be an https:// address, not `{url}`"
            ));
        }
        if let Some(uri) = &self.redirect_uri
            && redirect_port(uri).is_none()
        {
            return Some(format!(
                "`redirect_uri` must be http://127.0.0.1:PORT/… or http://localhost:PORT/…, not `{uri}`"
            ));
        }
        None
    }
}

/// The port of a loopback redirect URI (`http://127.0.0.1:PORT/…`, `http://localhost:PORT/…`).
pub(crate) fn redirect_port(uri: &str) -> Option<u16> {
    let rest = uri
        .strip_prefix("http://127.0.0.1:")
        .or_else(|| uri.strip_prefix("http://localhost:"))?;
    let end = rest.find('/').unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn settings_that_do_not_go_together_are_named() {
        let read = |text: &str| {
            serde_json::from_str::<OAuthSettings>(text)
                .unwrap()
                .problem()
        };
        assert_eq!(read("{}"), None);
        assert_eq!(
            read(r#"{"client_id": "a", "client_secret": "s", "grant": "client_credentials"}"#),
            None
        );
        assert!(
            read(r#"{"client_secret": "s"}"#)
                .unwrap()
                .contains("`client_id`")
        );
        assert!(
            read(r#"{"client_id": "a", "grant": "client_credentials"}"#)
                .unwrap()
                .contains("client_secret")
        );
        assert_eq!(
            read(r#"{"client_id": "a", "private_key": "k.pem", "grant": "client_credentials"}"#),
            None
        );
        assert!(
            read(r#"{"client_id": "a", "client_secret": "s", "private_key": "k.pem"}"#)
                .unwrap()
                .contains("not both")
        );
        assert!(
            read(r#"{"client_id": "a", "private_key": "k.pem"}"#)
                .unwrap()
                .contains("needs `\"grant\": \"client_credentials\"`")
        );
        let provider = r#""identity_provider": {"issuer": "https://idp", "token_endpoint":
            "https://idp/token", "client_id": "seqc", "id_token": "eyJ…"}"#;
        assert_eq!(
            read(&format!(
                r#"{{"grant": "enterprise_managed", "client_id": "a", {provider}}}"#
            )),
            None
        );
        assert!(
            read(&format!(r#"{{"client_id": "a", {provider}}}"#))
                .unwrap()
                .contains("go together")
        );
        assert!(
            read(r#"{"grant": "enterprise_managed", "client_id": "a"}"#)
                .unwrap()
                .contains("go together")
        );
        assert!(
            read(&format!(r#"{{"grant": "enterprise_managed", {provider}}}"#))
                .unwrap()
                .contains("needs the `client_id`")
        );
        assert!(
            read(r#"{"signing_algorithm": "ES256"}"#)
                .unwrap()
                .contains("needs the `private_key`")
        );
        assert!(
            read(r#"{"client_metadata_url": "http://x/c.json"}"#)
                .unwrap()
                .contains("https://")
        );
        assert!(
            read(r#"{"redirect_uri": "http://example.com/cb"}"#)
                .unwrap()
                .contains("127.0.0.1")
        );
        assert_eq!(redirect_port("http://localhost:8765/callback"), Some(8765));
        assert_eq!(redirect_port("http://127.0.0.1:80"), Some(80));
    }

    #[test]
    fn the_secret_is_not_in_debug_output() {
        let settings = OAuthSettings {
            client_id: Some("id".to_owned()),
            client_secret: Some("hunter2".to_owned()),
            private_key: Some("-----BEGIN PRIVATE KEY-----".to_owned()),
            identity_provider: Some(Box::new(IdentityProvider {
                client_secret: Some("hunter3".to_owned()),
                id_token: "eyJsecret".to_owned(),
                ..IdentityProvider::default()
            })),
            ..OAuthSettings::default()
        };
        let shown = format!("{settings:?}");
        for secret in ["hunter2", "BEGIN", "hunter3", "eyJsecret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
