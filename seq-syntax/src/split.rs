//! The splitter of the item language: a group's `tools` string, once unescaped, is a list of
//! JSON objects each followed by `;`. A `;` separates only at brace/bracket depth 0 and outside
//! strings, so shell commands full of `;` stay inside their item.
//!
//! The splitter never drops an item silently: every input either splits into exactly its
//! top-level objects, or yields at least one error.

use crate::swar::{self, WORD};
use std::ops::Range;

/// The result of splitting: the byte ranges of the items found (each from `{` to its `}`), and
/// the errors met on the way. Splitting goes on after an error so one run reports them all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub items: Vec<Range<usize>>,
    pub errors: Vec<SplitError>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitError {
    pub kind: SplitErrorKind,
    /// The bytes the error is about, in the split text.
    pub span: Range<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitErrorKind {
    /// `;` with no item before it (`{…} ; ; {…} ;`, or a leading `;`). Span: the extra `;`.
    EmptyItem,
    /// Another item, or stray text, where a `;` must come (`{…} {…} ;`). Span: what stands
    /// there.
    MissingSemicolon,
    /// The last item has no `;` after it. Span: empty, just after the item's `}`.
    MissingFinalSemicolon,
    /// A `{`/`[` never closed (span: the opener) or a string never closed (span: its quote).
    Unclosed,
    /// A closer `}`/`]` with no opener. Span: the closer.
    Unopened,
    /// A top-level value that is not an object (`"x" ;`, `[1] ;`). Span: the value.
    NotObject,
}

/// Splits an unescaped `tools` string into its items.
///
/// The text must be a sequence of JSON objects, each followed by `;`, with whitespace (space, tab,
/// CR, LF) allowed between them. The scan is a byte-level state machine (every structural
/// character is ASCII, so it never cuts a UTF-8 character):
///
/// - a `;` separates only at brace/bracket depth 0 and outside strings;
/// - inside a string, `\x` consumes the next byte, so `\"` does not end it;
/// - `{`/`[` push onto a stack of openers and `}`/`]` pop it; an item is the range from its `{`
///   to the `}` that empties the stack, inclusive.
///
/// The item's content is not checked here: the item parser does that. Every mistake in the list
/// itself is reported, and the scan goes on so that one run reports them all:
///
/// | input | error | items |
/// | --- | --- | --- |
/// | `{…} ; ; {…} ;` | [`EmptyItem`] at the extra `;` | both |
/// | `{…} {…} ;` | [`MissingSemicolon`] at the second `{` | both |
/// | `{…} x ;` | [`MissingSemicolon`] at `x` | the first |
/// | `{…}` at the end | [`MissingFinalSemicolon`], empty, after the `}` | kept |
/// | `{` / `[` / `"` never closed | [`Unclosed`] at the innermost opener or the quote | dropped |
/// | `{ "a": [1 }` | [`Unclosed`] at the `[` that the `}` skips | dropped |
/// | `{ "a": 1] }`, `{…} } ;` | [`Unopened`] at the closer that closes nothing | the one holding it dropped |
/// | `"x" ;`, `[1] ;`, `abc ;`, `42 ;` | [`NotObject`] over the value | none |
///
/// An item that holds an unclosed or unopened bracket is dropped: its errors are reported, and
/// the item parser would only repeat them. Empty or whitespace-only text has no items and no
/// errors (the caller reports the empty group).
///
/// [`EmptyItem`]: SplitErrorKind::EmptyItem
/// [`MissingSemicolon`]: SplitErrorKind::MissingSemicolon
/// [`MissingFinalSemicolon`]: SplitErrorKind::MissingFinalSemicolon
/// [`Unclosed`]: SplitErrorKind::Unclosed
/// [`Unopened`]: SplitErrorKind::Unopened
/// [`NotObject`]: SplitErrorKind::NotObject
pub fn split_items(text: &str) -> Split {
    let mut splitter = Splitter {
        bytes: text.as_bytes(),
        split: Split::default(),
        stack: Vec::new(),
    };
    splitter.run();
    splitter.split
}

/// What the list expects next.
#[derive(Clone, Copy)]
enum State {
    /// At the start or after a `;`: an item (or the end).
    Item,
    /// After an item ending at the offset: its `;`.
    Semicolon(usize),
    /// After input already reported: a `;` (or the end), silently.
    Recover,
}

struct Splitter<'a> {
    bytes: &'a [u8],
    split: Split,
    /// Open `{`/`[`: their offset and byte.
    stack: Vec<(usize, u8)>,
}

/// How a value's scan ended: where, and whether it met errors (reported already).
struct Scanned {
    end: usize,
    clean: bool,
}

impl Splitter<'_> {
    fn run(&mut self) {
        let mut state = State::Item;
        let mut pos = 0;
        loop {
            pos = self.skip_whitespace(pos);
            let Some(&byte) = self.bytes.get(pos) else {
                break;
            };
            match byte {
                b';' => {
                    if let State::Item = state {
                        self.error(SplitErrorKind::EmptyItem, pos..pos + 1);
                    }
                    state = State::Item;
                    pos += 1;
                }
                b'{' => {
                    if let State::Semicolon(_) = state {
                        self.error(SplitErrorKind::MissingSemicolon, pos..pos + 1);
                    }
                    let scanned = self.scan(pos, Stop::Closed);
                    state = if scanned.clean {
                        self.split.items.push(pos..scanned.end);
                        State::Semicolon(scanned.end)
                    } else {
                        State::Recover
                    };
                    pos = scanned.end;
                }
                b'}' | b']' => {
                    // Likely one closer too many after an item: its `;` may still follow.
                    self.error(SplitErrorKind::Unopened, pos..pos + 1);
                    if let State::Item = state {
                        state = State::Recover;
                    }
                    pos += 1;
                }
                _ => {
                    let scanned = self.scan(pos, Stop::Semicolon);
                    if scanned.clean {
                        let kind = match state {
                            State::Semicolon(_) => SplitErrorKind::MissingSemicolon,
                            State::Item | State::Recover => SplitErrorKind::NotObject,
                        };
                        let end = self.trim_end(pos, scanned.end);
                        self.error(kind, pos..end);
                    }
                    state = State::Recover;
                    pos = scanned.end;
                }
            }
        }
        if let State::Semicolon(end) = state {
            self.error(SplitErrorKind::MissingFinalSemicolon, end..end);
        }
    }

    /// Scans the value starting at `start` (not whitespace, `;` or a closer) until `stop`.
    fn scan(&mut self, start: usize, stop: Stop) -> Scanned {
        self.stack.clear();
        let mut clean = true;
        let mut i = start;
        while let Some(&byte) = self.bytes.get(i) {
            match byte {
                b'"' => match self.string_end(i) {
                    Some(end) => i = end,
                    None => {
                        self.error(SplitErrorKind::Unclosed, i..i + 1);
                        return self.scanned_to_end(false);
                    }
                },
                b'{' | b'[' => {
                    self.stack.push((i, byte));
                    i += 1;
                }
                b'}' | b']' => {
                    let opener = if byte == b'}' { b'{' } else { b'[' };
                    match self.stack.iter().rposition(|&(_, b)| b == opener) {
                        Some(depth) => {
                            // The closer skips openers above its match: the innermost of them
                            // is where a closer is missing.
                            if let Some(&(skipped, _)) =
                                self.stack.get(depth + 1..).and_then(<[_]>::last)
                            {
                                self.error(SplitErrorKind::Unclosed, skipped..skipped + 1);
                                clean = false;
                            }
                            self.stack.truncate(depth);
                        }
                        // At depth 0 of a non-object value it is part of that value, reported
                        // as a whole.
                        None if self.stack.is_empty() => {}
                        None => {
                            self.error(SplitErrorKind::Unopened, i..i + 1);
                            clean = false;
                        }
                    }
                    i += 1;
                    if self.stack.is_empty() && stop == Stop::Closed {
                        return Scanned { end: i, clean };
                    }
                }
                b';' if self.stack.is_empty() && stop == Stop::Semicolon => {
                    return Scanned { end: i, clean };
                }
                _ => i += 1,
            }
        }
        // Only the innermost: it is where the first closer is missing, and hostile nesting must
        // not yield one error per level.
        if let Some(&(opener, _)) = self.stack.last() {
            self.error(SplitErrorKind::Unclosed, opener..opener + 1);
            return self.scanned_to_end(false);
        }
        self.scanned_to_end(clean)
    }

    /// The offset just after the string whose opening quote is at `quote`, if it is closed.
    fn string_end(&self, quote: usize) -> Option<usize> {
        let mut i = quote + 1;
        loop {
            let rest = self.bytes.get(i..)?;
            let at = first_quote_or_backslash(rest)?;
            match rest.get(at) {
                Some(b'"') => return Some(i + at + 1),
                // A backslash: it and the byte it escapes.
                _ => i += at + 2,
            }
        }
    }

    fn scanned_to_end(&self, clean: bool) -> Scanned {
        Scanned {
            end: self.bytes.len(),
            clean,
        }
    }

    fn skip_whitespace(&self, mut pos: usize) -> usize {
        while self.bytes.get(pos).is_some_and(|&b| is_whitespace(b)) {
            pos += 1;
        }
        pos
    }

    /// `end` moved back over whitespace, but not before `start + 1`.
    fn trim_end(&self, start: usize, mut end: usize) -> usize {
        while end > start + 1 && self.bytes.get(end - 1).is_some_and(|&b| is_whitespace(b)) {
            end -= 1;
        }
        end
    }

    fn error(&mut self, kind: SplitErrorKind, span: Range<usize>) {
        self.split.errors.push(SplitError { kind, span });
    }
}

/// Where a scan ends (besides the end of the text).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Once the opening `{` is closed: an item.
    Closed,
    /// At a `;` at depth 0: a value that is not an object.
    Semicolon,
}

/// The index of the first `"` or `\` in `bytes`, a word at a time.
fn first_quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(word) = bytes.get(at..).and_then(|rest| rest.first_chunk::<WORD>()) {
        let n = swar::first_quote_or_backslash(word);
        if n < WORD {
            return Some(at + n);
        }
        at += WORD;
    }
    let tail = bytes.get(at..)?;
    Some(at + tail.iter().position(|&b| b == b'"' || b == b'\\')?)
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

#[cfg(test)]
mod tests {
    use super::SplitErrorKind::*;
    use super::*;

    const A: &str = r#"{"tool":"echo","args":{"value":1}}"#;
    const B: &str = r#"{"tool":"echo","args":{"value":[2, {"x": "}"}]}}"#;

    fn texts(text: &str) -> Vec<&str> {
        split_items(text)
            .items
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    /// The errors as `(kind, the text of their span)`, and the item texts.
    fn run(text: &str) -> (Vec<(SplitErrorKind, &str)>, Vec<&str>) {
        let split = split_items(text);
        let errors = split
            .errors
            .iter()
            .map(|e| (e.kind, &text[e.span.clone()]))
            .collect();
        (errors, split.items.into_iter().map(|r| &text[r]).collect())
    }

    #[test]
    fn well_formed_lists_split_into_their_objects() {
        assert_eq!(texts(&format!("{A};{B};")), [A, B]);
        let spaced = format!(" \n\t{A} \r\n ;\n {B}\t;\n ");
        assert_eq!(split_items(&spaced).errors, []);
        assert_eq!(texts(&spaced), [A, B]);
        let nested = r#"{"a":{"b":[{"c":";"},[";"]]},"d":"\"};{\\"} ;"#;
        assert_eq!(run(nested), (vec![], vec![&nested[..nested.len() - 2]]));
    }

    #[test]
    fn empty_text_has_no_items_and_no_errors() {
        for text in ["", " ", " \t\r\n "] {
            assert_eq!(split_items(text), Split::default());
        }
    }

    #[test]
    fn semicolons_inside_a_command_stay_in_one_item() {
        // A real model output, cut after 3 and 5 of its `;`, and
        // whole.
        let command = r#"echo \"=== raw (471B) ===\"; cat /tmp/x.json; echo; echo \"=== ps ===\"; ps aux | grep -c \"[r]un.py\"; echo \"=== log ===\"; cat /tmp/run.log"#;
        let cut = |semicolons: usize| {
            let end = command
                .match_indices(';')
                .nth(semicolons)
                .map_or(command.len(), |(i, _)| i);
            &command[..end]
        };
        assert_eq!(cut(3).matches(';').count(), 3);
        assert_eq!(cut(5).matches(';').count(), 5);
        let items: Vec<String> = [cut(3), cut(5), command]
            .iter()
            .map(|c| {
                format!(r#"{{"tool":"cmd_run","args":{{"command": "{c}", "timeout": "30s"}}}}"#)
            })
            .collect();
        for item in &items {
            assert_eq!(run(&format!("{item} ;")), (vec![], vec![item.as_str()]));
        }
        let all = items
            .iter()
            .map(|item| format!("{item} ;\n"))
            .collect::<String>();
        assert_eq!(
            run(&all),
            (vec![], items.iter().map(String::as_str).collect())
        );
    }

    #[test]
    fn bare_references_with_indexes_are_part_of_the_item() {
        let item =
            r#"{"tool":"seq_call","args":{"target":"g","args":{"host":$args.hosts[0]}},"as":"r"}"#;
        assert_eq!(run(&format!("{item} ;")), (vec![], vec![item]));
    }

    #[test]
    fn double_semicolon_is_an_empty_item() {
        let text = format!("{A} ; ; {B} ;");
        let split = split_items(&text);
        let extra = A.len() + 3;
        assert_eq!(
            split.errors,
            [SplitError {
                kind: EmptyItem,
                span: extra..extra + 1
            }]
        );
        assert_eq!(texts(&text), [A, B]);
        assert_eq!(run(&format!("; {A} ;")), (vec![(EmptyItem, ";")], vec![A]));
        assert_eq!(
            run(";;"),
            (vec![(EmptyItem, ";"), (EmptyItem, ";")], vec![])
        );
    }

    #[test]
    fn missing_semicolon_keeps_both_items() {
        let text = format!("{A} {B} ;");
        let split = split_items(&text);
        let second = A.len() + 1;
        assert_eq!(
            split.errors,
            [SplitError {
                kind: MissingSemicolon,
                span: second..second + 1
            }]
        );
        assert_eq!(texts(&text), [A, B]);
        assert_eq!(run(&format!("{A}{B}{A};")).1, [A, B, A]);
        assert_eq!(
            run(&format!("{A} \"x\" ; {B} ;")),
            (vec![(MissingSemicolon, "\"x\"")], vec![A, B])
        );
    }

    #[test]
    fn missing_final_semicolon_keeps_the_item() {
        let text = format!("{A} ; {B}  \n");
        let split = split_items(&text);
        let end = text.trim_end().len();
        assert_eq!(
            split.errors,
            [SplitError {
                kind: MissingFinalSemicolon,
                span: end..end
            }]
        );
        assert_eq!(texts(&text), [A, B]);
        assert_eq!(run(A), (vec![(MissingFinalSemicolon, "")], vec![A]));
    }

    #[test]
    fn unclosed_structures_and_strings_are_reported_at_their_opener() {
        // A missing `}` swallows the next item: reported at the item that lacks it.
        let text = r#"{"tool":"a","args":{"x":1} ; {"tool":"b"} ;"#;
        assert_eq!(
            split_items(text).errors,
            [SplitError {
                kind: Unclosed,
                span: 0..1
            }]
        );
        assert!(split_items(text).items.is_empty());
        let inner = r#"{"tool":"a","args":{"x":1 ;"#;
        let at = inner.len() - r#"{"x":1 ;"#.len();
        assert_eq!(
            split_items(inner).errors,
            [SplitError {
                kind: Unclosed,
                span: at..at + 1
            }]
        );
        let string = format!(r#"{A} ; {{"tool":"b ;"#);
        let quote = string.len() - r#""b ;"#.len();
        assert_eq!(run(&string), (vec![(Unclosed, "\"")], vec![A]));
        assert_eq!(split_items(&string).errors[0].span, quote..quote + 1);
        assert_eq!(run(r#"{"a":"x\"} ;"#).0, [(Unclosed, "\"")]);
        assert_eq!(run(r#"{"a":"x\"#).0, [(Unclosed, "\"")]);
        assert_eq!(run(r#"[1, 2 ;"#), (vec![(Unclosed, "[")], vec![]));
    }

    #[test]
    fn mismatched_closers_are_reported_and_the_list_goes_on() {
        // `}` closes the `{` below an unclosed `[`: the `[` is reported, the item dropped, the
        // next item still found.
        let text = format!(r#"{{"a":[1,2}} ; {A} ;"#);
        let (errors, items) = run(&text);
        assert_eq!(errors, [(Unclosed, "[")]);
        assert_eq!(items, [A]);
        // `]` with no `[` open: reported, skipped; the item is dropped.
        assert_eq!(
            run(&format!(r#"{{"a":1]}} ; {A} ;"#)),
            (vec![(Unopened, "]")], vec![A])
        );
        assert_eq!(run("{ ] ;").0, [(Unopened, "]"), (Unclosed, "{")]);
    }

    #[test]
    fn stray_closers_are_unopened() {
        assert_eq!(
            run(&format!("{A}}} ; {B} ;")),
            (vec![(Unopened, "}")], vec![A, B])
        );
        assert_eq!(run(&format!("] ; {B} ;")), (vec![(Unopened, "]")], vec![B]));
        assert_eq!(run("}"), (vec![(Unopened, "}")], vec![]));
    }

    #[test]
    fn values_that_are_not_objects_are_reported_whole() {
        for value in [
            "\"x\"",
            "[1]",
            "abc",
            "42",
            "[1, {\"a\": \";\"}]",
            "$args.x",
            "\"a;b\" c",
        ] {
            for text in [
                format!("{value} ;"),
                format!("{value}\n"),
                format!("{A} ; {value};{B};"),
            ] {
                let (errors, items) = run(&text);
                assert_eq!(errors, [(NotObject, value)], "{text}");
                assert_eq!(
                    items.len(),
                    text.matches(A).count() + text.matches(B).count()
                );
            }
        }
        // Text after a non-object value belongs to it until the `;`.
        assert_eq!(
            run(&format!("abc {A} ;")).0,
            [(NotObject, format!("abc {A}").as_str())]
        );
    }
}
