//! The tokens seqc was given, kept between runs in one file only its user can read.
//!
//! The file is JSON, `{"servers": {URL: credentials}}`, written whole to a temporary file in the
//! same folder (mode 0600) and renamed over the old one, so that a crash leaves the old file or
//! the new one, never half of either. Its folder is made 0700. Two seqc processes that sign in
//! at the same moment may each write; the later file wins and the other process signs in again
//! next time. A file that others can read or write is refused, as ssh refuses a key: it is the
//! user's to fix.

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The variable naming the token file.
pub const TOKENS_VAR: &str = "SEQC_OAUTH_TOKENS";

/// Where tokens are kept when [`TOKENS_VAR`] is not set: `$XDG_STATE_HOME/seqc/oauth-tokens.json`,
/// else `~/.local/state/seqc/oauth-tokens.json`; none without a home (tokens then last one run).
pub fn default_path() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(path) = var(TOKENS_VAR) {
        return Some(PathBuf::from(path));
    }
    let state = var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".local/state")))?;
    Some(state.join("seqc").join("oauth-tokens.json"))
}

#[derive(Default, Serialize, Deserialize)]
struct Contents {
    servers: BTreeMap<String, StoredCredentials>,
}

/// The token file, read once, written through on every change.
pub struct TokenFile {
    /// None: kept in memory only.
    path: Option<PathBuf>,
    servers: Mutex<BTreeMap<String, StoredCredentials>>,
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl TokenFile {
    /// Tokens kept for this run only.
    pub fn in_memory() -> TokenFile {
        TokenFile {
            path: None,
            servers: Mutex::new(BTreeMap::new()),
        }
    }

    /// Reads the file at `path` (none there is no tokens yet). The error is a sentence.
    pub fn open(path: &Path) -> Result<TokenFile, String> {
        let servers = match std::fs::read_to_string(path) {
            Ok(text) => {
                refuse_if_shared(path)?;
                serde_json::from_str::<Contents>(&text)
                    .map_err(|error| {
                        format!(
                            "the OAuth token file {} is not readable as tokens ({error}); \
                             delete it to sign in again",
                            path.display()
                        )
                    })?
                    .servers
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(error) => {
                return Err(format!(
                    "cannot read the OAuth token file {}: {error}",
                    path.display()
                ));
            }
        };
        Ok(TokenFile {
            path: Some(path.to_owned()),
            servers: Mutex::new(servers),
        })
    }

    /// Whether tokens are kept for `url`.
    pub fn has(&self, url: &str) -> bool {
        self.lock().contains_key(url)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, StoredCredentials>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, url: &str, credentials: Option<StoredCredentials>) -> Result<(), AuthError> {
        let text = {
            let mut servers = self.lock();
            match credentials {
                Some(credentials) => servers.insert(url.to_owned(), credentials),
                None => servers.remove(url),
            };
            let Some(_) = &self.path else {
                return Ok(());
            };
            serde_json::to_string_pretty(&Contents {
                servers: servers.clone(),
            })
        };
        let text = text.map_err(|error| AuthError::CredentialStoreError(error.to_string()))?;
        match &self.path {
            Some(path) => write_private(path, &text).map_err(|error| {
                AuthError::CredentialStoreError(format!(
                    "cannot write the OAuth token file {}: {error}",
                    path.display()
                ))
            }),
            None => Ok(()),
        }
    }

    /// The store of one server's tokens, for rmcp's authorization manager.
    pub(crate) fn store(self: &Arc<TokenFile>, url: &str) -> ServerTokens {
        ServerTokens {
            file: Arc::clone(self),
            url: url.to_owned(),
        }
    }
}

#[cfg(unix)]
fn refuse_if_shared(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|error| {
            format!(
                "cannot read the OAuth token file {}: {error}",
                path.display()
            )
        })?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(format!(
            "the OAuth token file {} can be read or written by others (mode {:o}); \
             run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn refuse_if_shared(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// Writes `text` to `path` through a temporary file of mode 0600 in the same folder.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(folder) = folder {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(folder)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// One server's entry of the token file.
pub(crate) struct ServerTokens {
    file: Arc<TokenFile>,
    url: String,
}

#[async_trait]
impl CredentialStore for ServerTokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.file.lock().get(&self.url).cloned())
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.file.set(&self.url, Some(credentials))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.file.set(&self.url, None)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_owned(), None, vec!["read".to_owned()], Some(1))
    }

    #[tokio::test]
    async fn tokens_are_kept_per_server_in_a_file_only_the_user_can_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/seqc/tokens.json");
        let file = Arc::new(TokenFile::open(&path).unwrap());
        assert!(!file.has("http://a/mcp"));
        file.store("http://a/mcp")
            .save(credentials("ca"))
            .await
            .unwrap();
        file.store("http://b/mcp")
            .save(credentials("cb"))
            .await
            .unwrap();
        file.store("http://b/mcp").clear().await.unwrap();

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let again = Arc::new(TokenFile::open(&path).unwrap());
        assert!(again.has("http://a/mcp") && !again.has("http://b/mcp"));
        let kept = again.store("http://a/mcp").load().await.unwrap().unwrap();
        assert_eq!(kept.client_id, "ca");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_read_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        std::fs::write(&path, r#"{"servers": {}}"#).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = TokenFile::open(&path).unwrap_err();
        assert!(error.contains("chmod 600"), "{error}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(TokenFile::open(&path).is_ok());
        std::fs::write(&path, "not json").unwrap();
        assert!(TokenFile::open(&path).unwrap_err().contains("delete it"));
    }
}
