//! The fields of one object: duplicates and unknown keys reported once, lookups by name after.

use super::Lower;
use super::maps::span_in;
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean, list};
use crate::escape::MapOffset;
use crate::fields::{self, Level};
use crate::json::{Key, Member, Node};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

/// The most fields a level may have (as many as `Holes` has bits); a fixed array saves an
/// allocation per object.
pub(super) const MAX_FIELDS: usize = 16;

pub(super) struct Fields<'a, 'n> {
    legal: &'static [&'static str],
    found: [Option<&'a Node<'n>>; MAX_FIELDS],
    /// The legal fields an unknown key was taken for ("did you mean"): written, but misspelt.
    pub(super) misspelt: Vec<&'static str>,
}

impl<'a, 'n> Fields<'a, 'n> {
    /// Sorts `members` into the `legal` fields of `owner` ("a group"), reporting duplicate and
    /// unknown keys.
    pub(super) fn new(
        lower: &mut Lower,
        members: &'a [Member<'n>],
        legal: &'static [&'static str],
        owner: &str,
        map: &impl MapOffset,
    ) -> Fields<'a, 'n> {
        if let Some(found) = plain_fields(members, legal) {
            return Fields {
                legal,
                found,
                misspelt: Vec::new(),
            };
        }
        let mut found = [None; MAX_FIELDS];
        let mut misspelt = Vec::new();
        for (member, key) in unique_members(lower, members, map) {
            match legal.iter().position(|&field| field == key) {
                Some(i) if i < MAX_FIELDS => found[i] = Some(&member.value),
                Some(_) | None => {
                    let span = span_in(map, &key_body(member));
                    let mut d = Diagnostic::new(
                        Code::UnknownField,
                        span,
                        format!("unknown field `{key}` in {owner}"),
                    );
                    // Renaming to a field the object already has would write it twice.
                    let best = did_you_mean(
                        &key,
                        legal
                            .iter()
                            .copied()
                            .filter(|field| members.iter().all(|m| m.key != Key::String(field))),
                    );
                    misspelt.extend(best);
                    d = match best {
                        Some(best) => d
                            .with_help(format!(
                                "did you mean `{best}`? The fields of {owner} are {}",
                                list(legal)
                            ))
                            .with_replacement(format!("rename to `{best}`"), span, best),
                        None => d.with_help(match elsewhere(&key) {
                            Some(level) => misplaced_help(&key, level, owner),
                            None => format!("remove it; the fields of {owner} are {}", list(legal)),
                        }),
                    };
                    lower.report(d);
                }
            }
        }
        Fields {
            legal,
            found,
            misspelt,
        }
    }

    /// The legal fields written only misspelt: holes, since what they held is not known.
    pub(super) fn misspelt_absent(&self) -> Vec<&'static str> {
        self.misspelt
            .iter()
            .copied()
            .filter(|&f| self.get(f).is_none())
            .collect()
    }

    pub(super) fn get(&self, field: &str) -> Option<&'a Node<'n>> {
        let i = self.legal.iter().position(|&f| f == field)?;
        self.found.get(i).copied().flatten()
    }
}

/// The level that has a field `key`, when it is written at the wrong one.
fn elsewhere(key: &str) -> Option<Level> {
    fields::ALL
        .iter()
        .flat_map(|level| level.iter())
        .find(|field| field.name == key)
        .map(|field| field.level)
}

/// What to do with a field written at the wrong level: removing it would lose what it says.
fn misplaced_help(key: &str, level: Level, owner: &str) -> String {
    match level {
        Level::Group if owner == "an item" => format!(
            "`{key}` is a field of a group, not of an item: set it on the group, or move this item into a group of its own that has `\"{key}\"`"
        ),
        Level::Group => {
            format!("`{key}` is a field of a group: write it in an element of `groups`")
        }
        Level::Item => format!(
            "`{key}` is a field of an item: items are written in a group's `tools` string, as `{{\"tool\": \"NAME\", \"args\": {{…}}}} ;`"
        ),
        Level::Sequence => {
            format!("`{key}` is a field of the sequence, the file's top-level object")
        }
        Level::Input => format!(
            "`{key}` is a field of an input's declaration: write it in `in`, as `\"in\": {{\"name\": {{\"type\": \"string\", \"{key}\": …}}}}`"
        ),
    }
}

/// The fields of an object with nothing to report, the common case, found without unescaping
/// or collecting its keys: every key is legal (so written without escapes) and written once.
fn plain_fields<'a, 'n>(
    members: &'a [Member<'n>],
    legal: &'static [&'static str],
) -> Option<[Option<&'a Node<'n>>; MAX_FIELDS]> {
    let mut found = [None; MAX_FIELDS];
    for member in members {
        let i = legal
            .iter()
            .position(|&field| Key::String(field) == member.key)?;
        let slot = found.get_mut(i)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some(&member.value);
    }
    Some(found)
}

/// Whether every key of `members` is a string key written without an escape and once: then
/// every key is its raw body and there is nothing to report, and [`unique_members`] need not
/// collect them. Compared pairwise, so only for small objects.
pub(super) fn plainly_unique(members: &[Member<'_>]) -> bool {
    members.len() <= LINEAR
        && members.iter().enumerate().all(|(j, member)| {
            member.key.text().is_some_and(|key| !key.contains('\\'))
                && members
                    .get(..j)
                    .is_some_and(|before| before.iter().all(|other| other.key != member.key))
        })
}

/// Objects up to this many members are checked for repeated keys pairwise; larger ones through
/// a hash map, so that an object of many keys is not quadratic.
const LINEAR: usize = 16;

/// The members of an object without repeated keys (duplicate keys are an error), each with
/// its unescaped key; the first occurrence is kept and each repeat reported with a label on the
/// first. Members with an error key (reported by the parser) are left out.
pub(super) fn unique_members<'a, 'n>(
    lower: &mut Lower,
    members: &'a [Member<'n>],
    map: &impl MapOffset,
) -> Vec<(&'a Member<'n>, Cow<'n, str>)> {
    let mut kept: Vec<(&'a Member<'n>, Cow<'n, str>)> = Vec::with_capacity(members.len());
    let mut index: HashMap<Cow<'n, str>, usize> = HashMap::new();
    for member in members {
        let Key::String(raw) = member.key else {
            continue;
        };
        let key = key_text(lower, member, raw, map);
        let first = if members.len() <= LINEAR {
            kept.iter().position(|(_, k)| *k == key)
        } else {
            index.get(&key).copied()
        };
        match first.and_then(|i| kept.get(i)) {
            Some((first, _)) => {
                let first_span = span_in(map, &first.key_span);
                let span = span_in(map, &member.key_span);
                lower.report(
                    Diagnostic::new(Code::DuplicateKey, span, format!("duplicate key `{key}`"))
                        .with_label(first_span, "first written here")
                        .with_help("keep one of them; JSON readers disagree on which would win"),
                );
            }
            None => {
                if members.len() > LINEAR {
                    index.insert(key.clone(), kept.len());
                }
                kept.push((member, key));
            }
        }
    }
    kept
}

/// The key's body, without its quotes.
pub(super) fn key_body(member: &Member<'_>) -> Range<usize> {
    let start = (member.key_span.start + 1).min(member.key_span.end);
    start..member.key_span.end.saturating_sub(1).max(start)
}

/// The key `raw` of `member`, unescaped.
fn key_text<'n>(
    lower: &mut Lower,
    member: &Member<'n>,
    raw: &'n str,
    map: &impl MapOffset,
) -> Cow<'n, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let base = u32::try_from(key_body(member).start).unwrap_or(u32::MAX);
    let (text, lone) = crate::escape::unescape(raw, base);
    lower.lone_surrogates(lone, map);
    text.text
}
