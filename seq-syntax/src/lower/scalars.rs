//! Fields whose value is one string, boolean or number: names and descriptions, flags,
//! enumerations, durations and `retries`, each checked against its kind.

use super::Lower;
use super::maps::span_in;
use crate::ast::CompactString;
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean, list};
use crate::escape::{MapOffset, OffsetMap, unescape};
use crate::fields::key;
use crate::json::{Node, NodeKind};
use crate::limits::{MAX_EACH, MAX_RETRIES, MAX_RETRY_BACKOFF};
use crate::span::Spanned;
use std::borrow::Cow;
use std::ops::Range;

/// `retries` as written: a count, or the input that gives it.
pub(super) enum Retries {
    Count(Spanned<u32>),
    Input(Spanned<CompactString>),
}

impl Lower {
    /// Unescapes a string node's body. Returns the text and the map from its offsets to the
    /// coordinates `node.span` is in.
    pub(super) fn unescape<'n>(
        &mut self,
        node: &Node<'n>,
        body: &'n str,
        map: &impl MapOffset,
    ) -> (Cow<'n, str>, OffsetMap) {
        let (unescaped, lone) = unescape(body, body_start(node));
        self.lone_surrogates(lone, map);
        (unescaped.text, unescaped.map)
    }

    /// A string field's text, as a `String` or a [`crate::ast::CompactString`] for a short
    /// name, and the span of its body in the file.
    pub(super) fn string_field<'n, S: From<Cow<'n, str>>>(
        &mut self,
        node: &Node<'n>,
        map: &impl MapOffset,
        field: &str,
    ) -> Option<Spanned<S>> {
        let Some(body) = node.kind.as_string() else {
            self.wrong_kind(node, map, field, "a string");
            return None;
        };
        let (text, _) = self.unescape(node, body, map);
        Some(Spanned::new(S::from(text), span_in(map, &body_range(node))))
    }

    pub(super) fn bool_field(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
    ) -> Option<Spanned<bool>> {
        if let NodeKind::Bool(value) = node.kind {
            return Some(Spanned::new(value, span_in(map, &node.span)));
        }
        match node.kind.as_string() {
            Some(body @ ("true" | "false")) => {
                let span = span_in(map, &node.span);
                self.report(
                    Diagnostic::new(
                        Code::WrongJsonType,
                        span,
                        format!("`{field}` must be a boolean, found the string \"{body}\""),
                    )
                    .with_help(format!("write `{body}` without quotes"))
                    .with_replacement(
                        format!("write `{body}` without quotes"),
                        span,
                        body,
                    ),
                );
                None
            }
            Some(_) | None => {
                self.wrong_kind(node, map, field, "a boolean (`true` or `false`)");
                None
            }
        }
    }

    /// A duration field: `timeout`, or `retry_delay` (which may be `"0s"`).
    pub(super) fn duration(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
    ) -> Option<Spanned<std::time::Duration>> {
        let read = if field == key::RETRY_DELAY {
            crate::duration::parse_zero_allowed
        } else {
            crate::duration::parse
        };
        if let NodeKind::Number(raw) = node.kind {
            let span = span_in(map, &node.span);
            let d = Diagnostic::new(
                Code::InvalidDuration,
                span,
                format!("`{field}` is a bare number `{raw}`; durations are strings with a unit"),
            );
            let whole = raw.parse::<u64>().ok().filter(|n| *n > 0);
            let d = match whole {
                // Which unit was meant is a guess: a large number is more often milliseconds.
                Some(n) => {
                    let (guess, other) = if n >= 1000 {
                        (format!("\"{n}ms\""), format!("\"{n}s\""))
                    } else {
                        (format!("\"{n}s\""), format!("\"{n}ms\""))
                    };
                    d.with_help(format!("write {guess} or {other}, whichever unit you meant"))
                        .with_replacement(format!("write {guess}"), span, guess.clone())
                        .maybe_incorrect()
                }
                None => d.with_help("write a positive duration such as \"500ms\", \"30s\" or \"1m30s\" (units: h, m, s, ms)"),
            };
            self.report(d);
            return None;
        }
        let Some(body) = node.kind.as_string() else {
            self.wrong_kind(node, map, field, "a duration string such as \"30s\"");
            return None;
        };
        let span = span_in(map, &body_range(node));
        match read(body) {
            Ok(d) => Some(Spanned::new(d, span)),
            Err(problem) => {
                let d = Diagnostic::new(
                    Code::InvalidDuration,
                    span,
                    format!("invalid duration `{body}`: {problem}"),
                );
                let d = match crate::duration::from_fraction(body) {
                    // The same length in whole units: nothing about it is a guess.
                    Some(exact) => {
                        let written = crate::duration::format(exact);
                        d.with_help(format!("write \"{written}\", the same duration in whole units"))
                            .with_replacement(format!("write \"{written}\""), span, written)
                    }
                    None => d.with_help("write a positive duration such as \"500ms\", \"30s\" or \"1m30s\" (units: h, m, s, ms)"),
                };
                self.report(d);
                None
            }
        }
    }

    pub(super) fn enumeration<T>(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
        names: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Option<Spanned<T>> {
        let NodeKind::String(body) = node.kind else {
            self.wrong_kind(node, map, field, &format!("one of {}", list(names)));
            return None;
        };
        let span = span_in(map, &body_range(node));
        let (text, _) = self.unescape(node, body, map);
        if let Some(value) = parse(&text) {
            return Some(Spanned::new(value, span));
        }
        let mut d = Diagnostic::new(
            Code::InvalidEnumValue,
            span,
            format!("invalid `{field}` value `{text}`"),
        );
        d = match did_you_mean(&text, names.iter().copied()) {
            Some(best) => d
                .with_help(format!(
                    "did you mean `{best}`? `{field}` is one of {}",
                    list(names)
                ))
                .with_replacement(format!("use `{best}`"), span, best),
            None => d.with_help(format!("`{field}` is one of {}", list(names))),
        };
        self.report(d);
        None
    }

    pub(super) fn retries(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Retries> {
        let span = span_in(map, &node.span);
        // `"$args.NAME"`: the count comes from an input (the checker holds it to `integer`).
        if let NodeKind::String(body) = node.kind
            && let Some(name) = body.strip_prefix("$args.")
            && crate::names::is_slot_name(name)
        {
            return Some(Retries::Input(Spanned::new(
                CompactString::from(name),
                span,
            )));
        }
        // `"3"`: the number meant is plain, so is the fix (as for `"true"` in a flag).
        if let NodeKind::String(body) = node.kind
            && body
                .parse::<u32>()
                .is_ok_and(|n| n <= MAX_RETRIES && n.to_string() == body)
        {
            self.report(
                Diagnostic::new(
                    Code::WrongJsonType,
                    span,
                    format!("`retries` must be a number, found the string \"{body}\""),
                )
                .with_help(format!("write `{body}` without quotes"))
                .with_replacement(
                    format!("write `{body}` without quotes"),
                    span,
                    body,
                ),
            );
            return None;
        }
        let NodeKind::Number(raw) = node.kind else {
            self.wrong_kind(
                node,
                map,
                key::RETRIES,
                &format!(
                    "an integer from 0 to {MAX_RETRIES}, or an integer input as \"$args.NAME\""
                ),
            );
            return None;
        };
        match raw.parse::<u32>() {
            Ok(n) if n <= MAX_RETRIES => Some(Retries::Count(Spanned::new(n, span))),
            Ok(_) | Err(_) => {
                self.report(
                    Diagnostic::new(
                        Code::RetriesOutOfRange,
                        span,
                        format!("`retries` is `{raw}`, outside 0..={MAX_RETRIES}"),
                    )
                    .with_help(format!("write a whole number from 0 to {MAX_RETRIES}")),
                );
                None
            }
        }
    }

    /// `max_parallel`: a whole number from 1 to [`MAX_EACH`]; `left_out` says what leaving it
    /// out means where it is written.
    pub(super) fn max_parallel(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        left_out: &str,
    ) -> Option<Spanned<u32>> {
        let span = span_in(map, &node.span);
        let NodeKind::Number(raw) = node.kind else {
            self.wrong_kind(
                node,
                map,
                key::MAX_PARALLEL,
                &format!("an integer from 1 to {MAX_EACH}"),
            );
            return None;
        };
        match raw.parse::<u32>() {
            Ok(n) if (1..=MAX_EACH).contains(&n) => Some(Spanned::new(n, span)),
            Ok(_) | Err(_) => {
                self.report(
                    Diagnostic::new(
                        Code::MaxParallelOutOfRange,
                        span,
                        format!("`max_parallel` is `{raw}`, outside 1..={MAX_EACH}"),
                    )
                    .with_help(format!(
                        "write a whole number from 1 to {MAX_EACH}, or leave `max_parallel` out {left_out}"
                    )),
                );
                None
            }
        }
    }
}

impl Lower {
    /// `retry_backoff`: a number from 1 to [`MAX_RETRY_BACKOFF`].
    pub(super) fn backoff(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
    ) -> Option<Spanned<f64>> {
        let span = span_in(map, &node.span);
        let NodeKind::Number(raw) = node.kind else {
            self.wrong_kind(
                node,
                map,
                key::RETRY_BACKOFF,
                &format!("a number from 1 to {MAX_RETRY_BACKOFF}"),
            );
            return None;
        };
        match raw.parse::<f64>() {
            Ok(n) if (1.0..=f64::from(MAX_RETRY_BACKOFF)).contains(&n) => {
                Some(Spanned::new(n, span))
            }
            Ok(_) | Err(_) => {
                self.report(
                    Diagnostic::new(
                        Code::BackoffOutOfRange,
                        span,
                        format!("`retry_backoff` is `{raw}`, outside 1..={MAX_RETRY_BACKOFF}"),
                    )
                    .with_help(format!(
                        "write a number from 1 (the same pause every time) to {MAX_RETRY_BACKOFF}"
                    )),
                );
                None
            }
        }
    }
}

/// The offset of a string literal's body (just inside the opening quote).
pub(super) fn body_start(node: &Node<'_>) -> u32 {
    u32::try_from(body_range(node).start).unwrap_or(u32::MAX)
}

/// The span of a string literal's body (inside the quotes).
pub(super) fn body_range(node: &Node<'_>) -> Range<usize> {
    let start = (node.span.start + 1).min(node.span.end);
    start..node.span.end.saturating_sub(1).max(start)
}
