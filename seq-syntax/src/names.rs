//! What may name a sequence, a group and a slot, and how a call names its target
//! ("The file", "Groups" and "Calls" in docs/reference.md). The front end, storage, the
//! checker, the engine and the editor all ask here, so the rules cannot drift apart.

use std::borrow::Cow;

/// Longest sequence name, in characters.
pub const MAX_SEQUENCE_NAME_LEN: usize = 64;

/// Longest sequence name, in bytes of UTF-8: `<name>.json`, and storage's temporary
/// `.<name>.json.<pid>-<n>.tmp`, fit the 255 bytes a file name may take (64 four-byte
/// characters would not).
pub const MAX_SEQUENCE_NAME_BYTES: usize = 200;

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
    } else if name.len() > MAX_SEQUENCE_NAME_BYTES {
        Some(Cow::Owned(format!(
            "a sequence name is at most {MAX_SEQUENCE_NAME_BYTES} bytes of UTF-8 (this one is {})",
            name.len()
        )))
    } else {
        unicode_problem(name, "sequence").map(Cow::Owned)
    }
}

/// What makes a name read as something it is not: a space at either end, a character that
/// shows as nothing (zero-width space, joiners, soft hyphen...), a bidirectional control that
/// reorders what is shown (U+202E), or a spelling that is not Unicode's composed form (NFC), so
/// that two names that look the same would be stored apart.
fn unicode_problem(name: &str, what: &str) -> Option<String> {
    use icu_properties::CodePointSetData;
    use icu_properties::props::{BidiControl, DefaultIgnorableCodePoint};
    use unicode_normalization::UnicodeNormalization;
    if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
        return Some(format!("a {what} name cannot start or end with a space"));
    }
    let bidi = CodePointSetData::new::<BidiControl>();
    if let Some(c) = name.chars().find(|&c| bidi.contains(c)) {
        return Some(format!(
            "a {what} name cannot hold the bidirectional control U+{:04X}, which changes the \
             order in which it is shown",
            u32::from(c)
        ));
    }
    let invisible = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    if let Some(c) = name.chars().find(|&c| invisible.contains(c)) {
        return Some(format!(
            "a {what} name cannot hold U+{:04X}, a character that shows as nothing",
            u32::from(c)
        ));
    }
    if !unicode_normalization::is_nfc(name) {
        let composed: String = name.nfc().collect();
        return Some(format!(
            "a {what} name must be in Unicode's composed form (NFC): write `{composed}`"
        ));
    }
    None
}

/// The UTS #39 skeleton of a name: two names with the same skeleton look alike (`deploy` and
/// `dеploy` with a Cyrillic `е`). Only for comparing; never shown or stored.
pub fn confusable_skeleton(name: &str) -> String {
    unicode_security::skeleton(name).collect()
}

/// The first of `stored` other than `name` itself that looks like it (the same skeleton): the
/// one rule by which every storage refuses a new sequence name.
///
/// ```
/// use seq_syntax::names::looks_alike;
///
/// assert_eq!(looks_alike("dеploy", ["build", "deploy"]), Some("deploy"));
/// assert_eq!(looks_alike("deploy", ["deploy", "build"]), None);
/// ```
pub fn looks_alike<S: AsRef<str>>(name: &str, stored: impl IntoIterator<Item = S>) -> Option<S> {
    let skeleton = confusable_skeleton(name);
    stored.into_iter().find(|other| {
        let other = other.as_ref();
        other != name && confusable_skeleton(other) == skeleton
    })
}

/// Why `name` cannot name a group, or `None` when it can: a group is a call's `target`, so it
/// cannot look like a `#name` sequence call.
pub fn group_name_problem(name: &str) -> Option<Cow<'static, str>> {
    if name.is_empty() {
        Some(Cow::Borrowed("a group name cannot be empty"))
    } else if name.starts_with(SEQUENCE_PREFIX) {
        Some(Cow::Borrowed(
            "a group name cannot start with `#` (that prefix calls a sequence)",
        ))
    } else if name.chars().any(char::is_control) {
        Some(Cow::Borrowed("a group name cannot hold control characters"))
    } else {
        unicode_problem(name, "group").map(Cow::Owned)
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

    /// Names that list like `deploy` but are not it.
    #[test]
    fn names_that_read_as_something_else_are_refused() {
        for (name, problem) in [
            (
                "deploy\u{200B}",
                "U+200B, a character that shows as nothing",
            ),
            ("de\u{202E}ploy", "the bidirectional control U+202E"),
            ("deploy ", "cannot start or end with a space"),
            (" deploy", "cannot start or end with a space"),
            ("cafe\u{301}", "composed form (NFC): write `caf\u{e9}`"),
        ] {
            let found = sequence_name_problem(name).unwrap_or_default();
            assert!(found.contains(problem), "{name:?}: {found}");
            let found = group_name_problem(name).unwrap_or_default();
            assert!(found.contains(problem), "{name:?}: {found}");
        }
        assert_eq!(sequence_name_problem("caf\u{e9}"), None);
        assert_eq!(sequence_name_problem("部署 prod"), None);
    }

    #[test]
    fn look_alikes_share_a_skeleton() {
        assert_eq!(
            confusable_skeleton("d\u{435}ploy"),
            confusable_skeleton("deploy")
        );
        assert_ne!(confusable_skeleton("deploy"), confusable_skeleton("deplay"));
    }

    #[test]
    fn the_sequence_bound_counts_bytes_too() {
        let wide = "\u{1F680}".repeat(MAX_SEQUENCE_NAME_LEN);
        assert_eq!(wide.chars().count(), MAX_SEQUENCE_NAME_LEN);
        assert!(
            sequence_name_problem(&wide)
                .unwrap_or_default()
                .contains("at most 200 bytes")
        );
    }

    #[test]
    fn the_sequence_bound_counts_characters() {
        // 64 three-byte characters: 192 bytes, within both bounds.
        assert_eq!(
            sequence_name_problem(&"巡".repeat(MAX_SEQUENCE_NAME_LEN)),
            None
        );
        assert!(sequence_name_problem(&"x".repeat(MAX_SEQUENCE_NAME_LEN + 1)).is_some());
    }
}
