//! A group's `tools` string: unescaped once with a map for every span in it, split into items,
//! and each item parsed in item mode and lowered.

use super::Lower;
use super::diagnostics::{kind_name, too_many};
use super::maps::{Identity, ToolsMap, span_in};
use super::scalars::body_start;
use crate::ast::Item;
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::escape::{MapOffset, unescape_text};
use crate::json::{self, Mode, Node, NodeKind};
use crate::limits::MAX_ITEMS;
use crate::span::Span;
use crate::split::{SplitErrorKind, split_items};

impl Lower {
    /// A group's `tools`: unescape, split, and parse each item in item mode. Also, when not every
    /// item written was built whole (one was dropped, or the split or an item's syntax failed),
    /// how many items from the first are as written; `None` when all are.
    pub(super) fn tools(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
    ) -> (Vec<Item>, Option<usize>) {
        let NodeKind::String(body) = node.kind else {
            let mut d = Diagnostic::new(
                Code::WrongJsonType,
                span_in(map, &node.span),
                format!("`tools` must be a string, found {}", kind_name(&node.kind)),
            )
            .with_help("write the items as one string, each followed by `;`: \"{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{\\\"value\\\":1}} ;\"");
            if let NodeKind::Array(elements) = &node.kind {
                d = d.with_label(span_in(map, &node.span), "an array would let a malformed item vanish silently; a string with `;` after every item cannot");
                // Objects only: the equivalent string is written once the file's text is at hand.
                if !elements.is_empty()
                    && elements
                        .iter()
                        .all(|e| matches!(e.kind, NodeKind::Object(_)))
                {
                    self.tools_arrays.push((
                        self.diagnostics.len(),
                        elements.iter().map(|e| span_in(map, &e.span)).collect(),
                    ));
                }
            }
            if !matches!(node.kind, NodeKind::Error) {
                self.report(d);
            }
            return (Vec::new(), Some(0));
        };
        // Every span of every item goes through this map: `unescape_text` picks the map that
        // makes those lookups cheap, in buffers kept from the last group.
        let mut buffers = std::mem::take(&mut self.tools_buffers);
        let (text, text_map, lone) = unescape_text(body, body_start(node), &mut buffers);
        self.lone_surrogates(lone, map);
        let tools_map = ToolsMap {
            by: 0,
            text: text_map,
            outer: map,
        };
        let split = split_items(&text);
        let mut whole = split.errors.is_empty() && split.items.len() <= MAX_ITEMS;
        // Items that start past the first split error may hold what the mistake displaced.
        let first_error = split.errors.iter().map(|e| e.span.start).min();
        let mut as_written = None;
        for error in &split.errors {
            let span = tools_map.span(Span::from_range(error.span.clone()));
            self.nested(1, vec![split_diagnostic(error.kind, span)], &Identity);
        }
        if split.items.is_empty() && split.errors.is_empty() {
            self.report(
                Diagnostic::new(Code::NoItems, span_in(map, &node.span), "`tools` holds no items")
                    .with_help("add at least one item, each followed by `;`: {\"tool\":\"echo\",\"args\":{\"value\":1}} ;"),
            );
        }
        if let Some(excess) = split.items.get(MAX_ITEMS) {
            let span = tools_map.span(Span::from_range(excess.clone()));
            self.nested(
                1,
                vec![too_many(span, "items", MAX_ITEMS, "group")],
                &Identity,
            );
        }
        let mut items = Vec::with_capacity(split.items.len().min(MAX_ITEMS));
        let mut tokens = json::TokenBuffer::default();
        for range in split.items.iter().take(MAX_ITEMS) {
            if as_written.is_none() && first_error.is_some_and(|at| range.start >= at) {
                as_written = Some(items.len());
            }
            let Some(slice) = text.get(range.clone()) else {
                whole = false;
                as_written.get_or_insert(items.len());
                continue;
            };
            let item_map = ToolsMap {
                by: u32::try_from(range.start).unwrap_or(u32::MAX),
                ..tools_map
            };
            let (root, diagnostics) = json::parse_reusing(slice, Mode::Item, &mut tokens);
            let broken = diagnostics.iter().any(Diagnostic::is_error);
            self.nested(1, diagnostics, &item_map);
            let quiet = self.quiet_missing;
            self.quiet_missing |= broken;
            self.depth += 1;
            whole &= !broken;
            let built = root.and_then(|root| self.item(&root, &item_map, broken));
            if broken || built.is_none() {
                as_written.get_or_insert(items.len());
            }
            match built {
                Some(item) => items.push(item),
                None => whole = false,
            }
            self.depth -= 1;
            self.quiet_missing = quiet;
        }
        self.tools_buffers = buffers;
        let as_written = (!whole).then(|| as_written.unwrap_or(items.len()));
        (items, as_written)
    }
}

fn split_diagnostic(kind: SplitErrorKind, span: Span) -> Diagnostic {
    match kind {
        SplitErrorKind::EmptyItem => Diagnostic::new(
            Code::EmptyItem,
            span,
            "empty item: `;` with no item before it",
        )
        .with_help("remove the extra `;`")
        .with_replacement("remove the extra `;`", span, ""),
        SplitErrorKind::MissingSemicolon => {
            Diagnostic::new(Code::MissingSemicolon, span, "missing `;` before this item")
                .with_help(
                    "every item is followed by `;`; without it the next item could be swallowed",
                )
                .with_replacement("insert `;`", Span::new(span.start, span.start), "; ")
        }
        SplitErrorKind::MissingFinalSemicolon => Diagnostic::new(
            Code::MissingFinalSemicolon,
            span,
            "missing `;` after the last item",
        )
        .with_help("the last item is followed by `;` too")
        .with_replacement("insert `;`", span, " ;"),
        SplitErrorKind::Unclosed => Diagnostic::new(Code::Unclosed, span, "this is never closed")
            .with_help("close it; check the item's braces, brackets and quotes"),
        SplitErrorKind::Unopened => {
            Diagnostic::new(Code::Unclosed, span, "this closes nothing that was opened")
                .with_help("remove it, or add the `{` or `[` it was meant to close")
        }
        SplitErrorKind::NotObject => {
            Diagnostic::new(Code::ItemNotObject, span, "an item must be an object").with_help(
                "write the item as {\"tool\": \"NAME\", \"args\": {...}} followed by `;`",
            )
        }
    }
}

/// The fix of `tools` written as the array of item objects at `items` (spans in `text`): the
/// equivalent string, each item written compactly and followed by ` ;`. None when an item does
/// not read back as JSON.
pub(super) fn array_as_string(
    text: &str,
    array: Span,
    items: &[Span],
) -> Option<crate::diagnostic::Fix> {
    let mut body = String::new();
    for span in items {
        let item = text.get(span.range())?;
        serde_json::from_str::<serde::de::IgnoredAny>(item).ok()?;
        if !body.is_empty() {
            body.push(' ');
        }
        compact(item, &mut body);
        body.push_str(" ;");
    }
    let literal = format!("\"{}\"", crate::escape::escape(&body));
    Some(crate::diagnostic::Fix::new(
        "write the items as one string, each followed by `;`",
        vec![crate::diagnostic::Edit {
            span: array,
            text: literal,
        }],
    ))
}

/// Appends valid JSON `json` without the whitespace between its tokens, keys in their order.
fn compact(json: &str, out: &mut String) {
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c.is_ascii_whitespace() {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
}
