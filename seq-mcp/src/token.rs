//! Bearer tokens for `seqc mcp --http`: a policy file keeps each caller's token as the hex of
//! its SHA-256 (`"callers": {"alice": {"token_sha256": "…"}}`), never the token itself, so the
//! file can be read by those who run the service without handing out anyone's identity.

use crate::oauth::OAuth;
use crate::policy_file::Settings;
use seq_exec::Caller;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// Bytes of randomness in a fresh token (256 bits).
const TOKEN_BYTES: usize = 32;

/// The lowercase hex of the SHA-256 of `token`.
pub fn sha256_hex(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// A fresh token from the operating system's random source, as hex.
pub fn fresh() -> Result<String, String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes)
        .map_err(|error| format!("the system's random source failed: {error}"))?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// Which caller a token is: the policy's `token_sha256` entries, and the OAuth access tokens
/// of the issuer it names.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    by_hash: HashMap<String, Caller>,
    pub oauth: Option<Arc<OAuth>>,
}

impl Tokens {
    /// The tokens of the callers of a policy file's `settings`. A hash that is not 64 hex
    /// digits, or one given to two callers, is an error: either would let a token mean nobody,
    /// or the wrong one.
    pub fn from_settings(settings: &Settings) -> Result<Tokens, String> {
        let mut by_hash = HashMap::new();
        for (id, caller) in &settings.callers {
            let Some(hash) = &caller.token_sha256 else {
                continue;
            };
            let hash = hash.to_ascii_lowercase();
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "the policy gives caller `{id}` a `token_sha256` that is not the 64 hex \
                     digits of a SHA-256 (`seqc token` prints a token and its hash)"
                ));
            }
            if let Some(other) = by_hash.insert(hash, Caller::new(id.clone())) {
                return Err(format!(
                    "the policy gives callers `{}` and `{id}` the same `token_sha256`: one token \
                     names one caller",
                    other.id
                ));
            }
        }
        let oauth = OAuth::from_settings(settings)?.map(Arc::new);
        Ok(Tokens { by_hash, oauth })
    }

    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty() && self.oauth.is_none()
    }

    /// The caller whose token this is.
    pub fn caller(&self, token: &str) -> Option<&Caller> {
        self.by_hash.get(&sha256_hex(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy_file::CallerSettings;

    #[test]
    fn the_hash_is_sha256_hex() {
        // The SHA-256 of "abc" (FIPS 180-2's example).
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_fresh_token_is_64_hex_digits_and_new() {
        let (a, b) = (fresh().unwrap(), fresh().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn a_token_names_its_caller() {
        let settings = |callers: &[(&str, &str)]| Settings {
            callers: callers
                .iter()
                .map(|&(id, hash)| {
                    let caller = CallerSettings {
                        token_sha256: Some(hash.to_owned()),
                        scope: None,
                    };
                    (id.to_owned(), caller)
                })
                .collect(),
            ..Settings::default()
        };
        let (a, b) = (sha256_hex("a-token"), sha256_hex("b-token"));
        let tokens = Tokens::from_settings(&settings(&[("alice", &a), ("bob", &b)])).unwrap();
        assert_eq!(tokens.caller("a-token").unwrap().id, "alice");
        assert_eq!(tokens.caller("b-token").unwrap().id, "bob");
        assert!(tokens.caller("c-token").is_none());
        let same = sha256_hex("same");
        let twice = settings(&[("alice", &same), ("bob", &same)]);
        assert!(Tokens::from_settings(&twice).unwrap_err().contains("same"));
        assert!(Tokens::from_settings(&settings(&[("alice", "abc")])).is_err());
    }
}
