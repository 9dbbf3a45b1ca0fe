//! Who may use which tool: the answer a host gives to `can_use`.
//!
//! A policy has a global layer and, optionally, one layer per caller id. Each layer holds `allow`
//! and `deny` patterns on tool names, where `*` matches any run of characters (`files_*`,
//! `*__stdout`, `*`). A tool passes a layer when it matches no `deny` pattern and, if the layer
//! has `allow` patterns, at least one of them: deny wins, and an empty `allow` allows everything.
//! A caller may use a tool when it passes the global layer *and* that caller's layer, so a
//! per-caller layer can only narrow what the global one grants. The default policy allows all.
//! Arguments are not looked at: the policy is about tools, not about what they are given.
//!
//! Two more things live here:
//! - tools that are *off* (`seqc mcp` leaves `cmd_run` and `files_write` off unless enabled):
//!   refused to everyone as a denied tool is, with a hint saying how to turn them on;
//! - the store administrator permission [`STORE_ADMIN`] (`seq_admin`): replacing or deleting a
//!   stored sequence that another caller owns (or that has no owner). No pattern grants it — not
//!   `*`, not `seq_*` — only an `allow` entry spelled exactly `seq_admin`, in the global layer
//!   (every caller) or in a caller's layer; a `deny` pattern that matches it takes it away.
//!
//! As JSON (for a policy file):
//! `{"allow": ["*"], "deny": ["cmd_run"], "enable": ["files_write"],
//!   "callers": {"agent-7": {"deny": ["files_write"]}, "lead": {"allow": ["*", "seq_admin"]}}}`.
//! `enable` lists the tools that are off by default to turn on, as `--enable` does.

use crate::host::Caller;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The permission to replace and delete stored sequences owned by others (module comment).
pub const STORE_ADMIN: &str = "seq_admin";

/// Allow/deny patterns, globally and per caller.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The global layer (the fields of [`Rules`], inline).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Extra layers by caller id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub callers: BTreeMap<String, Rules>,
    /// Tools that are off by default to turn on (read by the command that has such tools).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enable: Vec<String>,
    /// Tools that are off, with how to turn each on: refused to every caller.
    #[serde(skip)]
    pub off: BTreeMap<String, String>,
}

/// One layer of a policy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// A caller's layer only: the hex SHA-256 of the bearer token that is this caller over
    /// `seqc mcp --http` (the hash, so that the file never holds the token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_sha256: Option<String>,
}

impl Policy {
    /// Allows every tool to every caller.
    pub fn allow_all() -> Policy {
        Policy::default()
    }

    /// Adds a global `allow` pattern.
    pub fn allow(mut self, pattern: impl Into<String>) -> Policy {
        self.allow.push(pattern.into());
        self
    }

    /// Adds a global `deny` pattern.
    pub fn deny(mut self, pattern: impl Into<String>) -> Policy {
        self.deny.push(pattern.into());
        self
    }

    /// Sets the layer of the caller with this id.
    pub fn for_caller(mut self, id: impl Into<String>, rules: Rules) -> Policy {
        self.callers.insert(id.into(), rules);
        self
    }

    /// Turns `tool` off for everyone; `how` says how to turn it on (`--enable cmd_run`).
    pub fn turn_off(mut self, tool: impl Into<String>, how: impl Into<String>) -> Policy {
        self.off.insert(tool.into(), how.into());
        self
    }

    /// How to turn `tool` on, when it is off.
    pub fn off_hint(&self, tool: &str) -> Option<&str> {
        self.off.get(tool).map(String::as_str)
    }

    /// The hint of a refusal of `tools` that says how to turn on those that are off: the one
    /// wording of `seq_create`'s refusal (E0901), of a seq tool refused, and of a tool refused at
    /// run time. `None` when none of them is off.
    pub fn turn_on_hint(&self, tools: &[&str]) -> Option<String> {
        let off: Vec<(&str, &str)> = tools
            .iter()
            .filter_map(|&tool| self.off_hint(tool).map(|how| (tool, how)))
            .collect();
        let (names, hows): (Vec<String>, Vec<&str>) = off
            .iter()
            .map(|(tool, how)| (format!("`{tool}`"), *how))
            .unzip();
        let (is, it) = match off.len() {
            0 => return None,
            1 => ("is", "it"),
            _ => ("are", "them"),
        };
        Some(format!(
            "{} {is} off here; whoever starts the server turns {it} on with {}",
            names.join(" and "),
            hows.join(" and ")
        ))
    }

    /// Whether `caller` may use `tool`.
    pub fn allows(&self, caller: &Caller, tool: &str) -> bool {
        !self.off.contains_key(tool)
            && passes(&self.allow, &self.deny, tool)
            && self
                .callers
                .get(&caller.id)
                .is_none_or(|rules| rules.passes(tool))
    }

    /// Whether `caller` holds [`STORE_ADMIN`]: an `allow` entry spelled exactly so, globally or
    /// in the caller's layer, and no `deny` pattern matching it in either.
    pub fn is_store_admin(&self, caller: &Caller) -> bool {
        let layer = self.callers.get(&caller.id);
        let granted = self.allow.iter().any(|p| p == STORE_ADMIN)
            || layer.is_some_and(|rules| rules.allow.iter().any(|p| p == STORE_ADMIN));
        let denied = self
            .deny
            .iter()
            .chain(layer.iter().flat_map(|rules| rules.deny.iter()))
            .any(|p| matches(p, STORE_ADMIN));
        granted && !denied
    }
}

impl Rules {
    pub fn allow(mut self, pattern: impl Into<String>) -> Rules {
        self.allow.push(pattern.into());
        self
    }

    pub fn deny(mut self, pattern: impl Into<String>) -> Rules {
        self.deny.push(pattern.into());
        self
    }

    /// Deny wins; an empty `allow` allows everything.
    pub fn passes(&self, tool: &str) -> bool {
        passes(&self.allow, &self.deny, tool)
    }
}

fn passes(allow: &[String], deny: &[String], tool: &str) -> bool {
    !deny.iter().any(|p| matches(p, tool))
        && (allow.is_empty() || allow.iter().any(|p| matches(p, tool)))
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters (also none) and
/// every other character matches itself. Greedy with one backtrack point: linear in practice,
/// never exponential.
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    // The last `*` seen and the name position it is currently matched up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if name.get(n) == Some(&c) => {
                p += 1;
                n += 1;
            }
            Some(_) | None => match star {
                // Let the last `*` swallow one more character and try again after it.
                Some((star_p, star_n)) => {
                    star = Some((star_p, star_n + 1));
                    p = star_p + 1;
                    n = star_n + 1;
                }
                None => return false,
            },
        }
    }
    pattern
        .get(p..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn star_matches_any_run_of_characters() {
        for (pattern, name) in [
            ("*", ""),
            ("*", "cmd_run"),
            ("cmd_run", "cmd_run"),
            ("files_*", "files_"),
            ("files_*", "files_read"),
            ("*__stdout", "output_send__stdout"),
            ("o*_*__*t", "output_send__stdout"),
            ("**", "x"),
            ("a*a*a", "aaaaa"),
            ("工具*", "工具一"),
        ] {
            assert!(matches(pattern, name), "{pattern} should match {name}");
        }
        for (pattern, name) in [
            ("", "x"),
            ("cmd_run", "cmd_runs"),
            ("cmd_run", "cmd_ru"),
            ("files_*", "file_read"),
            ("*_read", "files_write"),
            ("a*a*a", "aa"),
            ("?", "x"),
        ] {
            assert!(!matches(pattern, name), "{pattern} should not match {name}");
        }
    }
}
