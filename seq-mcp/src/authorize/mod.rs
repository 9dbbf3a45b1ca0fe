//! The OAuth 2.1 client for remote MCP servers (MCP's authorization, client side), on rmcp's
//! `auth` support: a server that answers 401 (or 403 for a scope it wants) gets a token.
//!
//! - Discovery: the challenge's `resource_metadata`, then the protected resource metadata at
//!   both well-known forms, then the authorization server's metadata (RFC 8414, OpenID), then
//!   the 2025-03-26 fallbacks (`/authorize`, `/token`, `/register` at the server's root). A
//!   2025-03-26 server's metadata may name an issuer elsewhere on its origin (`legacy`).
//! - The client: one registered beforehand (`oauth.client_id`, `client_secret`), else a client
//!   ID metadata document (`oauth.client_metadata_url`) where the authorization server accepts
//!   those, else dynamic registration. The token endpoint's authentication method follows what
//!   the authorization server supports and registered.
//! - Scopes: the challenge's `scope`, else the resource's `scopes_supported`, else none asked;
//!   a 403 `insufficient_scope` asks again for the union (step-up), at most
//!   [`MAX_AUTHORIZATIONS`] times for one request.
//! - The approval: PKCE (S256) and a state; the browser comes back to a loopback address
//!   ([`callback`]). An authorization server that approves without a person (it answers the
//!   request with the redirect itself) is followed at once; otherwise the address is opened
//!   in a browser (`$BROWSER`, else the system's opener: `browser`) and printed for a person
//!   on a terminal, who has [`AUTHORIZE_TIMEOUT`]. Without a terminal the
//!   connection fails with what to do.
//! - Machine clients: `"grant": "client_credentials"` buys the token with the client's own
//!   credentials, nobody approving: its secret, or an assertion signed with its private key
//!   (`private_key_jwt`, RFC 7523; the key is read and checked with the config, `key`; the
//!   token request is seqc's own, `grant`).
//! - Cross-app access: `"grant": "enterprise_managed"` exchanges the user's ID token from an
//!   enterprise identity provider for an ID-JAG there, which seqc's client redeems at the server's
//!   authorization server (rmcp's exchanges; the token kept by `grant`).
//! - Tokens are kept in the token file ([`tokens`]) and refreshed when they near their end or
//!   the server refuses them.

mod browser;
pub mod callback;
mod grant;
mod http;
pub(crate) mod key;
mod legacy;
pub mod settings;
pub mod tokens;

pub(crate) use self::http::OAuthHttp;
pub use settings::{Grant, OAuthSettings, SigningAlgorithm};
pub use tokens::TokenFile;

use callback::Redirect;
use rmcp::transport::AuthorizationManager;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, ClientCredentialsConfig, CredentialStore, OAuthClientConfig,
};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How many authorizations one request may cause before its refusal stands.
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// How long a person has to approve in the browser.
pub const AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);

/// The name seqc registers under.
const CLIENT_NAME: &str = "seqc";

/// Signs in to one server and holds its tokens.
pub(crate) struct Authorizer {
    /// The server's name, for messages.
    server: String,
    url: String,
    settings: OAuthSettings,
    tokens: Arc<TokenFile>,
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
    /// Authorizations under way: a connection's start waits for them beyond its own timeout.
    under_way: AtomicUsize,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.server)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Counts an authorization under way while it lives.
struct UnderWay<'a>(&'a AtomicUsize);

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Authorizer {
    pub fn new(
        server: &str,
        url: &str,
        settings: OAuthSettings,
        tokens: Arc<TokenFile>,
    ) -> Authorizer {
        Authorizer {
            server: server.to_owned(),
            url: url.to_owned(),
            settings,
            tokens,
            manager: tokio::sync::Mutex::new(None),
            under_way: AtomicUsize::new(0),
        }
    }

    /// Whether an authorization is under way (a person may be at it).
    pub fn busy(&self) -> bool {
        self.under_way.load(Ordering::Acquire) > 0
    }

    /// The token to send, refreshed if it nears its end; none before the first authorization.
    pub async fn token(&self) -> Option<String> {
        let mut manager = self.manager.lock().await;
        if manager.is_none() {
            if !self.tokens.has(&self.url) {
                return None;
            }
            // Kept from an earlier run: the client it was issued to can refresh it.
            let mut restored = self.fresh_manager().await.ok()?;
            match restored.initialize_from_store().await {
                Ok(true) => {
                    if let Some(config) = self.preregistered("") {
                        // A confidential client refreshes with its secret.
                        let _ = restored.configure_client(config);
                    }
                }
                Ok(false) | Err(_) => return None,
            }
            *manager = Some(restored);
        }
        // A token that cannot be had or refreshed goes unsent: the server's 401 says what next.
        manager.as_ref()?.get_access_token().await.ok()
    }

    /// After the server refused `sent` with `challenge` (a 401, or a 403 naming a scope):
    /// a refreshed token where that is the cure, else a new authorization.
    pub async fn authorize(
        &self,
        challenge: &str,
        sent: Option<&str>,
        insufficient_scope: bool,
    ) -> Result<String, String> {
        self.under_way.fetch_add(1, Ordering::AcqRel);
        let _under_way = UnderWay(&self.under_way);
        let mut guard = self.manager.lock().await;
        if let (Some(manager), Some(sent), false) = (guard.as_ref(), sent, insufficient_scope)
            && manager.refresh_token().await.is_ok()
            && let Ok(fresh) = manager.get_access_token().await
            && fresh != sent
        {
            return Ok(fresh);
        }
        let manager = match guard.take() {
            Some(manager) => manager,
            None => self.fresh_manager().await.map_err(|e| self.failed(&e))?,
        };
        let manager = guard.insert(manager);
        let metadata = match manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
        {
            Ok(resolution) => resolution.metadata,
            // A 2025-03-26 server's metadata names an issuer of its own origin (`legacy`).
            Err(refusal @ AuthError::AuthorizationServerMismatch { .. }) => {
                legacy::metadata(&self.url, challenge)
                    .await
                    .ok_or_else(|| self.failed(&refusal))?
            }
            Err(other) => return Err(self.failed(&other)),
        };
        manager.set_metadata(metadata.clone());
        match self.settings.grant {
            Grant::ClientCredentials => self.client_credentials(manager, &metadata).await?,
            Grant::EnterpriseManaged => self.enterprise_managed(manager, &metadata).await?,
            Grant::AuthorizationCode => self.authorization_code(manager, &metadata).await?,
        }
        manager
            .get_access_token()
            .await
            .map_err(|e| self.failed(&e))
    }

    async fn fresh_manager(&self) -> Result<AuthorizationManager, AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.tokens.store(&self.url));
        Ok(manager)
    }

    async fn client_credentials(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), String> {
        let scopes = manager.select_scopes(None, &self.scope_refs());
        let settings = &self.settings;
        let Some(client_id) = &settings.client_id else {
            return Err(self.sentence("client credentials need `client_id`"));
        };
        if let (Some(key), Some(algorithm)) = (&settings.private_key, settings.signing_algorithm) {
            // rmcp's own private_key_jwt request is not `Send`; seqc makes it ([`grant`]).
            let credentials =
                grant::private_key_jwt(metadata, &self.url, client_id, key, algorithm, &scopes)
                    .await
                    .map_err(|e| self.sentence(&e))?;
            return self
                .tokens
                .store(&self.url)
                .save(credentials)
                .await
                .map_err(|e| self.failed(&e));
        }
        let Some(client_secret) = &settings.client_secret else {
            return Err(self.sentence(
                "client credentials need `client_secret` or `private_key` with `client_id`",
            ));
        };
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            scopes,
            resource: Some(self.url.clone()),
        };
        manager
            .configure_client_credentials(&config)
            .map_err(|e| self.failed(&e))?;
        manager
            .exchange_client_credentials(&config)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    async fn enterprise_managed(
        &self,
        manager: &AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), String> {
        let (Some(client_id), Some(provider)) =
            (&self.settings.client_id, &self.settings.identity_provider)
        else {
            return Err(self.sentence("cross-app access needs `client_id` and `identity_provider`"));
        };
        let scopes = manager.select_scopes(None, &self.scope_refs());
        let credentials = grant::enterprise_managed(
            metadata,
            &self.url,
            client_id,
            self.settings.client_secret.as_deref(),
            provider,
            &scopes,
        )
        .await
        .map_err(|e| self.sentence(&e))?;
        self.tokens
            .store(&self.url)
            .save(credentials)
            .await
            .map_err(|e| self.failed(&e))
    }

    async fn authorization_code(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), String> {
        let redirect = Redirect::bind(self.settings.redirect_uri.as_deref())
            .await
            .map_err(|e| self.sentence(&e))?;
        let scopes = manager.select_scopes(None, &self.scope_refs());
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = self
            .client(manager, metadata, &redirect.uri, &scope_refs)
            .await?
            .with_scopes(scopes.clone());
        manager
            .configure_client(config)
            .map_err(|e| self.failed(&e))?;
        let address = manager
            .get_authorization_url(&scope_refs)
            .await
            .map_err(|e| self.failed(&e))?;
        let callback = match redirect
            .approved_at_once(&address)
            .await
            .map_err(|e| self.sentence(&e))?
        {
            Some(callback) => callback,
            None => {
                if !std::io::stderr().is_terminal() {
                    return Err(self.sentence(&format!(
                        "a person must approve seqc at {address}, and there is no terminal to \
                         ask one; run seqc once on a terminal (the token is kept), or give it \
                         client credentials in an --mcp-config file"
                    )));
                }
                let opened = browser::open(address.as_str());
                eprintln!(
                    "seqc: MCP server `{}` asks you to sign in. {} this address in a browser \
                     (waiting {} minutes):\n  {address}",
                    self.server,
                    if opened { "Opening" } else { "Open" },
                    AUTHORIZE_TIMEOUT.as_secs() / 60
                );
                redirect
                    .wait(AUTHORIZE_TIMEOUT)
                    .await
                    .map_err(|e| self.sentence(&e))?
            }
        };
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    /// Who seqc is to the authorization server: registered beforehand, a client ID metadata
    /// document, or registered now.
    async fn client(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        redirect_uri: &str,
        scopes: &[&str],
    ) -> Result<OAuthClientConfig, String> {
        if let Some(config) = self.preregistered(redirect_uri) {
            return Ok(config);
        }
        let accepts_documents = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if let Some(document) = &self.settings.client_metadata_url
            && accepts_documents
        {
            return Ok(OAuthClientConfig::new(document.clone(), redirect_uri));
        }
        if metadata.registration_endpoint.is_none() {
            return Err(self.sentence(
                "the authorization server registers no clients itself; register seqc there \
                 and give its id as `oauth.client_id` in an --mcp-config file",
            ));
        }
        manager
            .register_client(CLIENT_NAME, redirect_uri, scopes)
            .await
            .map_err(|e| self.failed(&e))
    }

    /// The client registered beforehand, from the settings.
    fn preregistered(&self, redirect_uri: &str) -> Option<OAuthClientConfig> {
        let id = self.settings.client_id.as_ref()?;
        let config = OAuthClientConfig::new(id.clone(), redirect_uri);
        Some(match &self.settings.client_secret {
            Some(secret) => config.with_client_secret(secret.clone()),
            None => config,
        })
    }

    fn scope_refs(&self) -> Vec<&str> {
        self.settings.scopes.iter().map(String::as_str).collect()
    }

    /// `problem` as the sentence a connection fails with.
    fn sentence(&self, problem: &str) -> String {
        format!("signing in to `{}` failed: {problem}", self.url)
    }

    /// rmcp's error in words.
    fn failed(&self, error: &AuthError) -> String {
        self.sentence(&in_words(error))
    }
}

/// The most of an authorization server's answer read (metadata, a token): a larger one is none.
const MAX_ANSWER: usize = 64 * 1024;

/// The body of `response`, at most [`MAX_ANSWER`] bytes; the error completes "the answer …".
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("broke off ({error})"))?
    {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(format!("is longer than {MAX_ANSWER} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What went wrong in signing in, as a sentence (rmcp's own texts name no types), with the
/// causes behind it (a discovery failure's is the HTTP error).
fn in_words(error: &AuthError) -> String {
    #[allow(
        clippy::wildcard_enum_match_arm,
        reason = "rmcp's enum is non_exhaustive; its own text says the rest"
    )]
    let mut said = match error {
        AuthError::PkceUnsupported => {
            "the authorization server does not offer PKCE with S256, which OAuth 2.1 requires"
                .to_owned()
        }
        other => {
            let text = other.to_string();
            // rmcp's messages start with a capital; they sit inside a sentence here.
            let mut chars = text.chars();
            chars.next().map_or(text.clone(), |first| {
                first.to_lowercase().chain(chars).collect()
            })
        }
    };
    let mut next = std::error::Error::source(error);
    while let Some(cause) = next {
        let text = cause.to_string();
        if !said.contains(&text) {
            said = format!("{said}: {text}");
        }
        next = cause.source();
    }
    said
}
