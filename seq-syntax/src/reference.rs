//! References: `$args.PATH` and `$out.PATH`, PATH = identifier (`.identifier` | `[index]`)*,
//! identifiers being Unicode identifiers (XID), so `$args.主机` works.
//!
//! One scanner, `scan_path`, defines PATH for every place a reference can stand: a bare value
//! in an item ([`parse_reference`]), a condition operand (`scan_reference`) and interpolation in
//! a string (`scan_interpolation`). They differ only in what a `$` that does not start a
//! reference means (an error, or literal text) and in whether a `.` after PATH belongs to it.

use crate::ast::{CompactString, Reference, Root, Segment};
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::escape::MapOffset;
use crate::span::{Span, Spanned};

/// Parses one whole reference, `$args.x.y[0]` (as a bare value in an item). `text` is exactly
/// the reference; `map` takes offsets in `text` to the file.
#[allow(
    clippy::result_large_err,
    reason = "the signature the AST builder calls; a diagnostic is built once per bad reference"
)]
pub fn parse_reference(
    text: &str,
    map: &(impl MapOffset + ?Sized),
) -> Result<Reference, Diagnostic> {
    let result = if text.starts_with('$') {
        let (result, end) = scan_reference(text, 0);
        result.and_then(|reference| match text.get(end..) {
            Some(rest) if !rest.is_empty() => Err(Diagnostic::new(
                Code::MalformedReference,
                Span::from_range(end..text.len()),
                format!("unexpected `{rest}` after the reference"),
            )
            .with_help(
                "a reference is `$args.NAME` or `$out.NAME`, then `.field` or `[index]` parts",
            )),
            Some(_) | None => Ok(reference),
        })
    } else {
        Err(Diagnostic::new(
            Code::MalformedReference,
            Span::from_range(0..text.len()),
            format!("expected a reference, found `{text}`"),
        )
        .with_help("a reference starts with `$`: `$args.NAME` or `$out.NAME`"))
    };
    result
        .map(|reference| relocate(reference, map))
        .map_err(|mut d| {
            d.map_spans(|s| map.span(s));
            d
        })
}

/// Whether `text` is one identifier (XID_Start or `_`, then XID_Continue), i.e. a name that
/// `$args.NAME` can reach.
pub fn is_identifier(text: &str) -> bool {
    !text.is_empty() && ident_len(text) == text.len()
}

/// Where the name being typed before `end` of `text` starts: the identifier characters just
/// before `end` (`end` itself when there are none), as in `$args.主机|`.
pub fn name_start_before(text: &str, end: usize) -> usize {
    let before = text.get(..end).unwrap_or("");
    before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| unicode_ident::is_xid_continue(c))
        .last()
        .map_or(end, |(i, _)| i)
}

/// Moves every span of a reference whose spans are offsets in an unescaped string to the file.
pub(crate) fn relocate(reference: Reference, map: &(impl MapOffset + ?Sized)) -> Reference {
    Reference {
        span: map.span(reference.span),
        root: Spanned::new(reference.root.value, map.span(reference.root.span)),
        slot: Spanned::new(reference.slot.value, map.span(reference.slot.span)),
        path: reference
            .path
            .into_iter()
            .map(|s| Spanned::new(s.value, map.span(s.span)))
            .collect(),
    }
}

/// Scans the reference that starts with the `$` at byte `start` of `text`, where only a
/// reference may stand (a value, a condition operand). Returns the reference or the diagnostic,
/// both with spans that are offsets in `text`, and the end of the bytes that belong to it (also
/// of a malformed one, so that a caller can carry on after it). The end is always past `start`.
pub(crate) fn scan_reference(text: &str, start: usize) -> (Result<Reference, Diagnostic>, usize) {
    let after_dollar = start + 1;
    if text
        .get(after_dollar..)
        .is_some_and(|rest| rest.starts_with('{'))
    {
        return scan_braced_where_bare(text, start);
    }
    let word_len = text.get(after_dollar..).map_or(0, ident_len);
    let word_end = after_dollar + word_len;
    let word = text.get(after_dollar..word_end).unwrap_or("");
    let root = match word {
        "args" => Root::Args,
        "out" => Root::Out,
        "each" | "each_index" => return scan_element(text, start, word_end, Dot::Required),
        "" => {
            let d = Diagnostic::new(
                Code::MalformedReference,
                Span::from_range(start..after_dollar),
                "expected `args` or `out` after `$`",
            )
            .with_help(ROOTS_HELP);
            return (Err(d), after_dollar);
        }
        unknown => {
            // Carry on over the path, so that `$arg.x` is one culprit and not two.
            let end = if next_is(text, word_end, '.') {
                scan_path(text, start, word_end + 1, Root::Args, Dot::Required).1
            } else {
                word_end
            };
            let mut d = Diagnostic::new(
                Code::MalformedReference,
                Span::from_range(start..word_end),
                format!("`${unknown}` is not a reference"),
            );
            d = match did_you_mean(unknown, ["args", "out", "each"]) {
                Some(best) => d
                    .with_help(format!("did you mean `${best}`; {ROOTS_HELP}"))
                    .with_replacement(
                        format!("use `${best}`"),
                        Span::from_range(after_dollar..word_end),
                        best,
                    ),
                None => d.with_help(ROOTS_HELP),
            };
            return (Err(d), end);
        }
    };
    if !next_is(text, word_end, '.') {
        let d = Diagnostic::new(
            Code::MalformedReference,
            Span::from_range(start..word_end),
            format!("`${word}` needs a name after it"),
        )
        .with_help(format!(
            "write {} after a dot: `${word}.NAME`",
            what_follows(root)
        ));
        return (Err(d), word_end);
    }
    let (path, end) = scan_path(text, start, word_end + 1, root, Dot::Required);
    let result = path.map(|(slot, path)| Reference {
        span: Span::from_range(start..end),
        root: Spanned::new(root, Span::from_range(after_dollar..word_end)),
        slot,
        path,
    });
    (result, end)
}

/// Scans an interpolation in a string at the `$` at byte `start`: `$args.PATH`, `$out.PATH`,
/// `${args.PATH}` or `${out.PATH}`. `None` when the `$` is literal text (`$HOME`, `${HOME}`,
/// `$$`, `$args` without a dot). Otherwise as [`scan_reference`]: spans are offsets in `text`.
///
/// In the bare form PATH ends where its grammar ends, so a `.` not followed by a name is
/// literal (`Hello $args.name.`); `[` always starts an index.
pub(crate) fn scan_interpolation(
    text: &str,
    start: usize,
) -> Option<(Result<Reference, Diagnostic>, usize)> {
    let braced = text
        .get(start + 1..)
        .is_some_and(|rest| rest.starts_with('{'));
    let word_start = if braced { start + 2 } else { start + 1 };
    let word_end = word_start + text.get(word_start..).map_or(0, ident_len);
    let root = match text.get(word_start..word_end) {
        Some("args") => Root::Args,
        Some("out") => Root::Out,
        Some("each" | "each_index") => return Some(interpolate_element(text, start, word_end)),
        Some(_) | None => return None,
    };
    if !next_is(text, word_end, '.') {
        return None;
    }
    let dot = if braced { Dot::Required } else { Dot::Optional };
    let (path, path_end) = scan_path(text, start, word_end + 1, root, dot);
    let root = Spanned::new(root, Span::from_range(word_start..word_end));
    let (slot, path) = match path {
        Ok(path) => path,
        Err(d) => return Some((Err(d), path_end)),
    };
    if !braced {
        let reference = Reference {
            span: Span::from_range(start..path_end),
            root,
            slot,
            path,
        };
        return Some((Ok(reference), path_end));
    }
    let inner = text.get(start + 2..path_end).unwrap_or("");
    let rest = text.get(path_end..).unwrap_or("");
    if rest.starts_with('}') {
        let end = path_end + 1;
        let reference = Reference {
            span: Span::from_range(start..end),
            root,
            slot,
            path,
        };
        return Some((Ok(reference), end));
    }
    let (d, end) = match rest.find('}') {
        Some(close) => {
            let junk = rest.get(..close).unwrap_or("");
            let lead = junk.len() - junk.trim_start().len();
            let culprit = junk.trim();
            let span = if culprit.is_empty() {
                Span::from_range(path_end..path_end + close)
            } else {
                Span::from_range(path_end + lead..path_end + lead + culprit.len())
            };
            let what = if culprit.is_empty() {
                "whitespace".to_owned()
            } else {
                format!("`{culprit}`")
            };
            let end = path_end + close + 1;
            let d = Diagnostic::new(
                Code::MalformedReference,
                span,
                format!("unexpected {what} inside `${{{inner}…}}`"),
            )
            .with_help(format!(
                "`${{…}}` holds exactly one reference: write `${{{inner}}}` and put other text outside the braces"
            ))
            .with_replacement(
                "remove the extra text",
                Span::from_range(path_end..end - 1),
                "",
            );
            (d, end)
        }
        None => (
            unclosed(text, start, path_end, inner, &slot, &path),
            path_end,
        ),
    };
    Some((Err(d), end))
}

/// `${PATH` with no `}`. Where the reference ends is evident only when PATH is a bare slot
/// name (`${args.f`, `${args.f-old`): with fields (`${args.f.txt`) the author may have meant
/// `${args.f}.txt` as well as a field `txt`, so the fix is only suggested.
fn unclosed(
    text: &str,
    start: usize,
    path_end: usize,
    inner: &str,
    slot: &Spanned<CompactString>,
    path: &[Spanned<Segment>],
) -> Diagnostic {
    let d = Diagnostic::new(
        Code::MalformedReference,
        Span::from_range(start..path_end),
        format!("`${{{inner}` is never closed"),
    );
    if path.is_empty() {
        return d
            .with_help(format!("close the reference with `}}`: `${{{inner}}}`"))
            .with_replacement("insert `}`", Span::from_range(path_end..path_end), "}");
    }
    let slot_end = slot.span.range().end;
    let head = text.get(start + 2..slot_end).unwrap_or("");
    let tail = text.get(slot_end..path_end).unwrap_or("");
    d.with_help(format!(
        "close the reference with `}}`: `${{{head}}}{tail}` when `{tail}` is text after the value, `${{{inner}}}` when it reads a field"
    ))
    .with_replacement(
        format!("close it after `{head}`"),
        Span::from_range(slot_end..slot_end),
        "}",
    )
    .maybe_incorrect()
}

const ROOTS_HELP: &str = "references are `$args.NAME` (the group's inputs) and `$out.NAME` (slots written earlier in the same serial group)";

/// Whether a `.` right after a complete PATH must start another field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dot {
    /// Where only a reference may stand, and inside `${…}`: `$args.x.` is an error.
    Required,
    /// In a string: `$args.x.` ends a sentence, the dot is literal.
    Optional,
}

type Path = (Spanned<CompactString>, Vec<Spanned<Segment>>);

/// Scans PATH from `pos` (just after `$args.`); `start` is the `$`. Returns the slot and the
/// segments, or the diagnostic for the first malformed part, and where the scan stopped.
fn scan_path(
    text: &str,
    start: usize,
    pos: usize,
    root: Root,
    dot: Dot,
) -> (Result<Path, Diagnostic>, usize) {
    let rest = |at: usize| text.get(at..).unwrap_or("");
    let lead = text.get(start..pos).unwrap_or("");
    let slot_len = ident_len(rest(pos));
    if slot_len == 0 {
        let d = not_a_name(text, start, pos, lead, what_follows(root));
        let end = pos + continue_len(rest(pos));
        return (Err(d), end);
    }
    let slot_end = pos + slot_len;
    let slot = Spanned::new(
        CompactString::from(rest(pos).get(..slot_len).unwrap_or("")),
        Span::from_range(pos..slot_end),
    );
    let (path, end) = scan_segments(text, start, slot_end, dot);
    (path.map(|path| (slot, path)), end)
}

/// Scans the `.field` and `[index]` segments from `at`; `start` is the `$`. Returns them, or
/// the diagnostic for the first malformed one, and where the scan stopped.
fn scan_segments(
    text: &str,
    start: usize,
    at: usize,
    dot: Dot,
) -> (Result<Vec<Spanned<Segment>>, Diagnostic>, usize) {
    let rest = |at: usize| text.get(at..).unwrap_or("");
    let mut path = Vec::new();
    let mut at = at;
    loop {
        let here = rest(at);
        if here.starts_with('.') {
            let name_len = ident_len(rest(at + 1));
            if name_len > 0 {
                let name = CompactString::from(rest(at + 1).get(..name_len).unwrap_or(""));
                let end = at + 1 + name_len;
                path.push(Spanned::new(
                    Segment::Field(name),
                    Span::from_range(at..end),
                ));
                at = end;
                continue;
            }
            if dot == Dot::Optional {
                break;
            }
            let lead = text.get(start..at + 1).unwrap_or("");
            let d = not_a_name(text, start, at + 1, lead, "a field name");
            return (Err(d), at + 1 + continue_len(rest(at + 1)));
        }
        if here.starts_with('[') {
            match scan_index(text, start, at, dot) {
                (Ok(index), end) => {
                    path.push(Spanned::new(
                        Segment::Index(index),
                        Span::from_range(at..end),
                    ));
                    at = end;
                    continue;
                }
                (Err(d), end) => return (Err(d), end),
            }
        }
        break;
    }
    (Ok(path), at)
}

/// Scans `$each` (with its path) or `$each_index`, whose word ends at `word_end`; `start` is
/// the `$`. They read no slot: the path follows the word. `$each_index` is a number, so a
/// path after it is an error.
fn scan_element(
    text: &str,
    start: usize,
    word_end: usize,
    dot: Dot,
) -> (Result<Reference, Diagnostic>, usize) {
    let word_start = if text.get(start + 1..).is_some_and(|r| r.starts_with('{')) {
        start + 2
    } else {
        start + 1
    };
    let index = text.get(word_start..word_end) == Some("each_index");
    let root = if index { Root::EachIndex } else { Root::Each };
    let reference = |path, end| Reference {
        span: Span::from_range(start..end),
        root: Spanned::new(root, Span::from_range(word_start..word_end)),
        slot: Spanned::new(
            CompactString::default(),
            Span::from_range(word_end..word_end),
        ),
        path,
    };
    if index {
        let segment = text
            .get(word_end..)
            .is_some_and(|r| r.starts_with('[') || (r.starts_with('.') && ident_len(&r[1..]) > 0));
        let dotted = dot == Dot::Required && next_is(text, word_end, '.');
        if segment || dotted {
            let end = scan_segments(text, start, word_end, dot)
                .1
                .max(word_end + 1);
            let d = Diagnostic::new(
                Code::MalformedReference,
                Span::from_range(word_end..end),
                "`$each_index` is a number: it has no fields or elements",
            )
            .with_help("write `$each_index` alone; `$each` reads the element itself, with a path such as `$each.host`");
            return (Err(d), end);
        }
        return (Ok(reference(Vec::new(), word_end)), word_end);
    }
    let (path, end) = scan_segments(text, start, word_end, dot);
    (path.map(|path| reference(path, end)), end)
}

/// `$each…`/`${each…}` in a string: as [`scan_element`], the bare form ending where its grammar
/// ends, the braced one closed by `}`.
fn interpolate_element(
    text: &str,
    start: usize,
    word_end: usize,
) -> (Result<Reference, Diagnostic>, usize) {
    let braced = text
        .get(start + 1..)
        .is_some_and(|rest| rest.starts_with('{'));
    if !braced {
        return scan_element(text, start, word_end, Dot::Optional);
    }
    match scan_element(text, start, word_end, Dot::Required) {
        (Ok(mut reference), end) if next_is(text, end, '}') => {
            reference.span = Span::from_range(start..end + 1);
            (Ok(reference), end + 1)
        }
        (Ok(_), end) => {
            let inner = text.get(start + 2..end).unwrap_or("");
            let d = Diagnostic::new(
                Code::MalformedReference,
                Span::from_range(start..end),
                format!("`${{{inner}` is never closed"),
            )
            .with_help(format!("close the reference with `}}`: `${{{inner}}}`"))
            .with_replacement("insert `}`", Span::from_range(end..end), "}");
            (Err(d), end)
        }
        (Err(d), end) => (Err(d), end),
    }
}

/// The diagnostic for `$args.` (or `$args.x.`) not followed by a name; `pos` is where the name
/// should start and `lead` the text before it.
fn not_a_name(text: &str, start: usize, pos: usize, lead: &str, what: &str) -> Diagnostic {
    let rest = text.get(pos..).unwrap_or("");
    let bad_len = continue_len(rest);
    let close = if lead.starts_with("${") { "}" } else { "" };
    if bad_len == 0 {
        let found = rest.chars().next().map_or_else(
            || "the end".to_owned(),
            |c| {
                if c.is_whitespace() {
                    "a space".to_owned()
                } else {
                    format!("`{c}`")
                }
            },
        );
        return Diagnostic::new(
            Code::MalformedReference,
            Span::from_range(start..pos),
            format!("expected {what} after `{lead}`, found {found}"),
        )
        .with_help(format!(
            "write {what} after `{lead}`, e.g. `{lead}host{close}`"
        ));
    }
    let bad = rest.get(..bad_len).unwrap_or("");
    let d = Diagnostic::new(
        Code::MalformedReference,
        Span::from_range(pos..pos + bad_len),
        format!("`{bad}` is not a name: names start with a letter or `_`"),
    );
    let before = lead.strip_suffix('.').unwrap_or(lead);
    if bad.bytes().all(|b| b.is_ascii_digit()) && before.contains('.') {
        d.with_help(format!(
            "to index an array, write the index in brackets: `{before}[{bad}]`"
        ))
    } else {
        d.with_help(format!(
            "after `{lead}` comes {what}: letters (any script), digits and `_`, not starting with a digit"
        ))
    }
}

/// Scans `[digits]` at `at` (the `[`). Everything but a complete index is an error, whose end
/// covers the malformed bracket.
fn scan_index(text: &str, start: usize, at: usize, dot: Dot) -> (Result<u64, Diagnostic>, usize) {
    let rest = text.get(at + 1..).unwrap_or("");
    // The bracket's content runs to the `]` if one comes before any whitespace (or `}`, which
    // closes an enclosing `${`).
    let (len, closed) = rest
        .char_indices()
        .find(|&(_, c)| c == ']' || c == '}' || c.is_whitespace())
        .map_or((rest.len(), false), |(i, c)| (i, c == ']'));
    let content = rest.get(..len).unwrap_or("");
    let end = at + 1 + len + usize::from(closed);
    let digits = !content.is_empty() && content.bytes().all(|b| b.is_ascii_digit());
    let delimit = match dot {
        Dot::Optional => format!(
            "; to keep a literal `[` after the reference, write `${{{}}}[`",
            text.get(start + 1..at).unwrap_or("")
        ),
        Dot::Required => String::new(),
    };
    let (span, message, help) = match (closed, digits) {
        (true, true) => match content.parse::<u64>() {
            Ok(index) => return (Ok(index), end),
            Err(_) => (
                Span::from_range(at + 1..at + 1 + len),
                format!("index `{content}` is too large"),
                format!("indexes are at most {}", u64::MAX),
            ),
        },
        (false, true) => (
            Span::from_range(at..end),
            format!("`[{content}` is never closed"),
            format!("close the index with `]`: `[{content}]`{delimit}"),
        ),
        (closed, false) if content.is_empty() => (
            Span::from_range(at..end),
            if closed {
                "empty index `[]`"
            } else {
                "`[` is not followed by an index"
            }
            .to_owned(),
            format!("write a non-negative integer between the brackets, e.g. `[0]`{delimit}"),
        ),
        (_, false) => (
            Span::from_range(at + 1..at + 1 + len),
            format!("`{content}` is not an index"),
            format!("indexes are non-negative integers, e.g. `[0]`{delimit}"),
        ),
    };
    let d = Diagnostic::new(Code::MalformedReference, span, message).with_help(help);
    (Err(d), end)
}

/// `${args.x}` where only a bare reference may stand: an error that offers the bare form.
fn scan_braced_where_bare(text: &str, start: usize) -> (Result<Reference, Diagnostic>, usize) {
    let help = "braces delimit a reference inside a string only; here write the bare reference, e.g. `$args.x`";
    match scan_interpolation(text, start) {
        Some((Ok(reference), end)) => {
            let inner = text
                .get(start + 2..end.saturating_sub(1))
                .unwrap_or("")
                .to_owned();
            let span = reference.span;
            let d = Diagnostic::new(
                Code::MalformedReference,
                span,
                format!("write `${inner}` without braces here"),
            )
            .with_help(help)
            .with_replacement("remove the braces", span, format!("${inner}"));
            (Err(d), end)
        }
        Some((Err(d), end)) => (Err(d), end),
        None => {
            let rest = text.get(start..).unwrap_or("");
            let len = rest.find('}').map_or(2, |close| close + 1);
            let culprit = rest.get(..len).unwrap_or("");
            let d = Diagnostic::new(
                Code::MalformedReference,
                Span::from_range(start..start + len),
                format!("`{culprit}` is not a reference"),
            )
            .with_help(ROOTS_HELP);
            (Err(d), start + len)
        }
    }
}

fn what_follows(root: Root) -> &'static str {
    match root {
        Root::Args => "the input's name",
        Root::Out => "the slot's name",
        Root::Each | Root::EachIndex => "a field name",
    }
}

fn next_is(text: &str, at: usize, c: char) -> bool {
    text.get(at..).is_some_and(|rest| rest.starts_with(c))
}

/// The names `NAME` of what reads like a reference but is not one in literal text: `$NAME.` or
/// `${NAME.`, where `NAME` is neither `args` nor `out` (those are references, not literal
/// text). `$$` is one literal `$`, as in templates. For a rule that tells a literal `$gather.df`
/// (a group's slot, which no reference reaches) from shell text such as `$HOME`.
pub fn lookalike_names(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        if let Some(next) = after.strip_prefix('$') {
            rest = next;
            continue;
        }
        let name_at = after.strip_prefix('{').unwrap_or(after);
        let len = ident_len(name_at);
        if len > 0
            && name_at[len..].starts_with('.')
            && !matches!(&name_at[..len], "args" | "out" | "each")
        {
            found.push(&name_at[..len]);
        }
        rest = after;
    }
    found
}

/// Byte length of the identifier at the start of `text`, 0 if there is none.
pub(crate) fn ident_len(text: &str) -> usize {
    // ASCII, nearly every name, is classified byte by byte without decoding characters; the
    // first other character hands over to Unicode's classes.
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(&first) if first.is_ascii() => {
            if !(first.is_ascii_alphabetic() || first == b'_') {
                return 0;
            }
        }
        Some(_) => return unicode_ident_len(text),
        None => return 0,
    }
    let ascii = bytes
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(bytes.len());
    match text.get(ascii..) {
        Some(rest) if rest.as_bytes().first().is_some_and(|b| !b.is_ascii()) => {
            ascii + continue_len(rest)
        }
        Some(_) | None => ascii,
    }
}

/// [`ident_len`] by Unicode's classes alone.
fn unicode_ident_len(text: &str) -> usize {
    let mut chars = text.char_indices();
    match chars.next() {
        Some((_, c)) if c == '_' || unicode_ident::is_xid_start(c) => {}
        Some(_) | None => return 0,
    }
    chars
        .find(|&(_, c)| !unicode_ident::is_xid_continue(c))
        .map_or(text.len(), |(i, _)| i)
}

/// Byte length of the run of XID_Continue characters at the start of `text` (a would-be name
/// such as `1st`).
fn continue_len(text: &str) -> usize {
    text.char_indices()
        .find(|&(_, c)| !unicode_ident::is_xid_continue(c))
        .map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
pub(crate) mod tests;
