//! Who may use which tool: the patterns the engine's [`crate::Authorizer`] holds every
//! dispatch to.
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
//! Policy names (one right covers its routes): denying `seq_run` denies running a stored
//! sequence by any route, so a `seq_call`/`seq_when_call` whose target is `#name` needs
//! `seq_run` too ([`rights`]); denying `seq_call` denies `seq_when_call`, a call with a
//! condition. A pattern that matches no tool a server knows is a mistake to refuse when the
//! server starts ([`Policy::unmatched`]), never a rule that silently guards nothing.
//!
//! As JSON (for a policy file):
//! `{"allow": ["*"], "deny": ["cmd_run"], "enable": ["files_write"],
//!   "callers": {"agent-7": {"deny": ["files_write"]}, "lead": {"allow": ["*", "seq_admin"]}}}`.
//! `enable` lists the tools that are off by default to turn on, as `--enable` does.
//!
//! Only rights live here. What else a policy file holds is the service's, read where it is used:
//! a caller's `token_sha256` and `scope` and the `oauth` settings by seq-mcp's HTTP server, the
//! `quota`s by seq-store.

use crate::host::Caller;
use seq_catalog::{SEQ_CALL, SEQ_RUN, SEQ_WHEN_CALL};
use seq_syntax::names::CallTarget;
use serde::{Deserialize, Serialize};
use serde_json::Value;
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

    /// Whether `caller` may use `tool` (`seq_when_call` only with `seq_call`: module comment).
    pub fn allows(&self, caller: &Caller, tool: &str) -> bool {
        if tool == SEQ_WHEN_CALL && !self.allows(caller, SEQ_CALL) {
            return false;
        }
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

impl Policy {
    /// This policy as it bears on the callers `ids` alone, with its tools that are off denied:
    /// what travels with a run to a place that does not know this policy (a durable worker),
    /// so that there every dispatch is held to it. A caller not among `ids` gets its global
    /// layer, as here. Rights only (a policy holds nothing else): what travels is kept where
    /// the run is (a durable engine's journal).
    pub fn effective_for<'i>(&self, ids: impl IntoIterator<Item = &'i str>) -> Policy {
        let callers = ids
            .into_iter()
            .filter_map(|id| Some((id.to_owned(), self.callers.get(id)?.clone())))
            .collect();
        Policy {
            allow: self.allow.clone(),
            deny: self.deny.iter().chain(self.off.keys()).cloned().collect(),
            callers,
            enable: Vec::new(),
            off: BTreeMap::new(),
        }
    }

    /// The patterns (of every layer, and `enable`) that match none of `known`, each with the
    /// known names nearest to it: a server refuses to start with one.
    pub fn unmatched<'k>(&self, known: &[&'k str]) -> Vec<(String, Vec<&'k str>)> {
        let patterns = self
            .allow
            .iter()
            .chain(&self.deny)
            .chain(&self.enable)
            .chain(
                self.callers
                    .values()
                    .flat_map(|rules| rules.allow.iter().chain(&rules.deny)),
            );
        let mut found: Vec<(String, Vec<&'k str>)> = Vec::new();
        for pattern in patterns {
            // `seq_admin` is a permission, not a tool.
            if pattern == STORE_ADMIN
                || known.iter().any(|tool| matches(pattern, tool))
                || found.iter().any(|(p, _)| p == pattern)
            {
                continue;
            }
            // A pattern meant for the permission gets it as its suggestion.
            let mut near = nearest(pattern, known);
            if matches(pattern, STORE_ADMIN) || pattern.eq_ignore_ascii_case(STORE_ADMIN) {
                near.insert(0, STORE_ADMIN);
            }
            found.push((pattern.clone(), near));
        }
        found
    }
}

/// The known names nearest to `pattern`: those it matches once case and the spaces at its ends
/// are set aside, else the one `did_you_mean` picks.
fn nearest<'k>(pattern: &str, known: &[&'k str]) -> Vec<&'k str> {
    let folded = pattern.trim().to_lowercase();
    let close: Vec<&'k str> = known
        .iter()
        .copied()
        .filter(|tool| matches(&folded, &tool.to_lowercase()))
        .take(3)
        .collect();
    if !close.is_empty() {
        return close;
    }
    seq_syntax::diagnostic::did_you_mean(&folded, known.iter().copied())
        .into_iter()
        .collect()
}

/// The tools whose use a dispatch of `tool` with `args` needs (module comment): `tool` itself,
/// `seq_call` for `seq_when_call`, and `seq_run` for a call whose target is a stored sequence.
pub fn rights<'t>(tool: &'t str, args: &Value) -> Vec<&'t str> {
    let mut rights = vec![tool];
    if tool == SEQ_WHEN_CALL {
        rights.push(SEQ_CALL);
    }
    // Either target of a `seq_when_call` may be the one called.
    let calls_stored = ["target", seq_catalog::calls::ELSE].iter().any(|key| {
        args.get(key)
            .and_then(Value::as_str)
            .is_some_and(|target| CallTarget::parse(target).is_sequence())
    });
    if (tool == SEQ_CALL || tool == SEQ_WHEN_CALL) && calls_stored {
        rights.push(SEQ_RUN);
    }
    rights
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
    use super::{Caller, Policy, matches, rights};
    use serde_json::json;

    /// Denying `seq_run` denies `#name` targets; denying `seq_call` denies `seq_when_call`.
    #[test]
    fn one_right_covers_its_routes() {
        assert_eq!(
            rights("seq_call", &json!({"target": "#x"})),
            ["seq_call", "seq_run"]
        );
        assert_eq!(rights("seq_call", &json!({"target": "g"})), ["seq_call"]);
        assert_eq!(
            rights("seq_when_call", &json!({"target": "#x", "when": "true"})),
            ["seq_when_call", "seq_call", "seq_run"]
        );
        let policy = Policy::allow_all().deny("seq_call");
        assert!(!policy.allows(&Caller::new("a"), "seq_when_call"));
    }

    /// What travels with a durable run carries the named callers' rights, and the tools that
    /// are off as denied; a policy holds nothing that identifies a caller.
    #[test]
    fn the_travelling_policy_holds_rights_alone() {
        let policy: Policy = serde_json::from_value(json!({
            "callers": {"bob": {"deny": ["files_write"]}, "carol": {"deny": ["echo"]}}
        }))
        .unwrap_or_default();
        let policy = policy.turn_off("cmd_run", "`--enable cmd_run`");
        let travelling = policy.effective_for(["bob"]);
        let text = serde_json::to_string(&travelling).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"deny":["cmd_run"],"callers":{"bob":{"deny":["files_write"]}}}"#
        );
        assert!(!travelling.allows(&Caller::new("bob"), "files_write"));
        let with_secret = json!({"callers": {"bob": {"token_sha256": "ab12"}}});
        assert!(serde_json::from_value::<Policy>(with_secret).is_err());
    }

    /// A pattern that guards nothing is named, with the tools it was probably meant for.
    #[test]
    fn patterns_matching_no_tool_are_found() {
        let known = ["cmd_run", "files_read", "files_write", "seq_run"];
        let policy = Policy::allow_all()
            .deny("CMD_RUN")
            .deny("cmd_run ")
            .deny("files_*")
            .allow("seq_admin")
            .allow("seq_adm*");
        assert_eq!(
            policy.unmatched(&known),
            [
                // The permission counts only spelled out: the glob is pointed at it.
                ("seq_adm*".to_owned(), vec!["seq_admin"]),
                ("CMD_RUN".to_owned(), vec!["cmd_run"]),
                ("cmd_run ".to_owned(), vec!["cmd_run"])
            ]
        );
    }

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
