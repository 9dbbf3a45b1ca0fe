//! The policy file of `seqc mcp` and `seqc worker`, as written: the rights (seq-exec's
//! [`Policy`], which the engine's authorizer holds and which travels with a durable run), and
//! beside them the service's own settings ([`Settings`]), which stay here: each caller's bearer
//! token hash and OAuth scope and the OAuth issuer (for [`crate::token`] and [`crate::oauth`]),
//! and the stored-set quotas (for seq-store's `seq_create`).
//!
//! `{"allow": [...], "deny": [...], "enable": [...], "quota": {...}, "oauth": {...},
//!   "callers": {"ID": {"allow": [...], "deny": [...], "quota": {...}, "token_sha256": "...",
//!   "scope": "..."}}}`, every key optional, nothing else accepted.

use seq_exec::policy::{Policy, Rules};
use seq_store::quota::{Quota, Quotas};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The authorization server whose access tokens `seqc mcp --http` accepts, and what it is to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSettings {
    /// The issuer (`iss`), whose metadata names its keys.
    pub issuer: String,
    /// This server's URL as the issuer knows it: the audience (`aud`) its tokens must carry.
    pub resource: String,
    /// The issuer's keys (JWKS), when its metadata is not to be asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

/// Who a caller is over HTTP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallerSettings {
    /// The hex SHA-256 of the bearer token that is this caller over `seqc mcp --http` (the
    /// hash, so that the file never holds the token).
    pub token_sha256: Option<String>,
    /// The OAuth scope that makes an access token this caller.
    pub scope: Option<String>,
}

/// What a policy file holds besides rights.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// By caller id, in the file's order of ids.
    pub callers: BTreeMap<String, CallerSettings>,
    /// `seqc mcp --http` as an OAuth resource server.
    pub oauth: Option<OAuthSettings>,
    /// What each caller may keep stored.
    pub quotas: Quotas,
}

/// A policy file, parted into its rights and the settings beside them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyFile {
    pub policy: Policy,
    pub settings: Settings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    enable: Vec<String>,
    #[serde(default)]
    callers: BTreeMap<String, CallerForm>,
    #[serde(default)]
    quota: Quota,
    #[serde(default)]
    oauth: Option<OAuthSettings>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallerForm {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    token_sha256: Option<String>,
    #[serde(default)]
    quota: Option<Quota>,
    #[serde(default)]
    scope: Option<String>,
}

impl PolicyFile {
    /// The file's text read; an unknown key anywhere is an error.
    pub fn parse(text: &str) -> Result<PolicyFile, serde_json::Error> {
        let form: FileForm = serde_json::from_str(text)?;
        let mut file = PolicyFile {
            policy: Policy {
                allow: form.allow,
                deny: form.deny,
                enable: form.enable,
                ..Policy::allow_all()
            },
            settings: Settings {
                oauth: form.oauth,
                quotas: Quotas {
                    global: form.quota,
                    callers: BTreeMap::new(),
                },
                callers: BTreeMap::new(),
            },
        };
        for (id, caller) in form.callers {
            let rules = Rules {
                allow: caller.allow,
                deny: caller.deny,
            };
            file.policy.callers.insert(id.clone(), rules);
            if let Some(quota) = caller.quota {
                file.settings.quotas.callers.insert(id.clone(), quota);
            }
            file.settings.callers.insert(
                id,
                CallerSettings {
                    token_sha256: caller.token_sha256,
                    scope: caller.scope,
                },
            );
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seq_exec::Caller;
    use serde_json::json;

    /// Each part goes where it is used: the rights to the policy, the rest to the settings.
    #[test]
    fn a_file_parts_into_rights_and_settings() {
        let text = json!({
            "deny": ["cmd_run"], "quota": {"sequences": 5},
            "oauth": {"issuer": "https://issuer.example", "resource": "https://seqc.example"},
            "callers": {"bot": {"deny": ["files_write"], "token_sha256": "ab12", "scope": "bots",
                                "quota": {"sequences": 1, "bytes": 4096}}}
        })
        .to_string();
        let file = PolicyFile::parse(&text).unwrap();
        assert_eq!(
            file.policy,
            Policy::allow_all()
                .deny("cmd_run")
                .for_caller("bot", Rules::default().deny("files_write"))
        );
        let quotas = &file.settings.quotas;
        assert_eq!(quotas.of(&Caller::new("someone")).sequences, 5);
        assert_eq!(quotas.of(&Caller::new("someone")).bytes, 64 << 20);
        assert_eq!(quotas.of(&Caller::new("bot")).bytes, 4096);
        assert_eq!(file.settings.callers["bot"].scope.as_deref(), Some("bots"));
        assert_eq!(
            file.settings.callers["bot"].token_sha256.as_deref(),
            Some("ab12")
        );
        assert!(file.settings.oauth.is_some());
        assert!(PolicyFile::parse(r#"{"quota": {"count": 5}}"#).is_err());
        assert!(PolicyFile::parse(r#"{"callers": {"a": {"tokens": "x"}}}"#).is_err());
    }
}
