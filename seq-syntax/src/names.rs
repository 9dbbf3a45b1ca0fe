//! What may name a sequence, a group and a slot, and how a call names its target
//! ("The file", "Groups" and "Calls" in docs/reference.md). The front end, storage, the
//! checker, the engine and the editor all ask here, so the rules cannot drift apart.

use std::borrow::Cow;

/// Longest sequence name, in characters, so that `<name>.json` always fits a file name.
pub const MAX_SEQUENCE_NAME_LEN: usize = 64;

/// The prefix by which a call's `target` names a sequence rather than a group: `#name`.
pub const SEQUENCE_PREFIX: char = '#';

/// Why `name` cannot name a sequence, or `None` when it can. Sequence names become file names:
/// the rule keeps them inside the storage directory.
pub fn sequence_name_problem(name: &str) -> Option<Cow<'static, str>> {
    if name.is_empty() {
        Some(Cow::Borrowed("a sequence name cannot be empty"))
    } else if name == "." || name == ".." {
        Some(Cow::Owned(format!("`{name}` cannot name a sequence")))
    } else if name.contains(['/', '\\']) {
        Some(Cow::Borrowed("a sequence name cannot hold path separators"))
    } else if name.chars().any(char::is_control) {
        Some(Cow::Borrowed(
            "a sequence name cannot hold control characters",
        ))
    } else if name.starts_with(SEQUENCE_PREFIX) {
        Some(Cow::Borrowed(
            "a sequence name cannot start with `#` (callers write `#name`)",
        ))
    } else if name.chars().count() > MAX_SEQUENCE_NAME_LEN {
        Some(Cow::Owned(format!(
            "a sequence name is at most {MAX_SEQUENCE_NAME_LEN} characters"
        )))
    } else {
        None
    }
}

/// Why `name` cannot name a group, or `None` when it can: a group is a call's `target`, so it
/// cannot look like a `#name` sequence call.
pub fn group_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a group name cannot be empty")
    } else if name.starts_with(SEQUENCE_PREFIX) {
        Some("a group name cannot start with `#` (that prefix calls a sequence)")
    } else if name.chars().any(char::is_control) {
        Some("a group name cannot hold control characters")
    } else {
        None
    }
}

/// Whether `name` can name a slot: an identifier, so that `$args.NAME` / `$out.NAME` reach it.
pub fn is_slot_name(name: &str) -> bool {
    crate::reference::is_identifier(name)
}

/// What a call's `target` text names: a group of the caller's sequence, or `#name` of a
/// sequence. The name may be empty (`""`, `"#"`): such a target names nothing, and each user
/// reports that in its own terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallTarget<'a> {
    Group(&'a str),
    Sequence(&'a str),
}

impl<'a> CallTarget<'a> {
    /// Reads a target text: `#name` names a sequence, anything else a group.
    pub fn parse(text: &'a str) -> CallTarget<'a> {
        match text.strip_prefix(SEQUENCE_PREFIX) {
            Some(name) => CallTarget::Sequence(name),
            None => CallTarget::Group(text),
        }
    }

    /// The group's or the sequence's name, without the `#`.
    pub fn name(self) -> &'a str {
        match self {
            CallTarget::Group(name) | CallTarget::Sequence(name) => name,
        }
    }

    pub fn is_sequence(self) -> bool {
        matches!(self, CallTarget::Sequence(_))
    }
}

/// The target as a call writes it: `name` or `#name`.
impl std::fmt::Display for CallTarget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallTarget::Group(name) => f.write_str(name),
            CallTarget::Sequence(name) => write!(f, "{SEQUENCE_PREFIX}{name}"),
        }
    }
}

/// A sequence's name without the `#` a caller writes before it (`#deploy` and `deploy` both
/// give `deploy`).
pub fn strip_sequence_prefix(text: &str) -> &str {
    text.strip_prefix(SEQUENCE_PREFIX).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_groups_or_sequences() {
        assert_eq!(CallTarget::parse("fetch"), CallTarget::Group("fetch"));
        assert_eq!(CallTarget::parse("#deploy"), CallTarget::Sequence("deploy"));
        assert_eq!(CallTarget::parse("#"), CallTarget::Sequence(""));
        assert_eq!(CallTarget::parse(""), CallTarget::Group(""));
    }

    #[test]
    fn the_sequence_bound_counts_characters() {
        assert_eq!(
            sequence_name_problem(&"巡".repeat(MAX_SEQUENCE_NAME_LEN)),
            None
        );
        assert!(sequence_name_problem(&"x".repeat(MAX_SEQUENCE_NAME_LEN + 1)).is_some());
    }
}
