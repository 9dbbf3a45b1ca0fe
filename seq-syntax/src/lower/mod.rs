//! Lowering: the untyped JSON tree into the typed AST.
//!
//! Each object is checked against its level's legal fields (unknown ones are errors with a "did
//! you mean"), each field against its kind of value. `tools` and `when` strings are unescaped
//! with an offset map and handed to the item and condition parsers, so every span that comes out
//! of here — however deep inside a string — points at the file's bytes.

mod fields;

use crate::Parse;
use crate::ast::{
    CompactString, Group, Item, Member as AstMember, Missing, OnError, Sequence, SlotDecl, Type,
    Value, ValueKind,
};
use crate::code::Code;
use crate::condition::parse_condition;
use crate::diagnostic::{self, Diagnostic, did_you_mean, list};
use crate::escape::{
    Composed, DenseBuffers, DenseMap, LoneSurrogate, MapOffset, OffsetMap, unescape, unescape_dense,
};
use crate::json::{self, Mode, Node, NodeKind};
use crate::limits::{MAX_GROUPS, MAX_ITEMS, MAX_SLOTS};
use crate::names;
use crate::reference::parse_reference;
use crate::span::{Span, Spanned};
use crate::split::{SplitErrorKind, split_items};
use crate::template::parse_template_cow;
use fields::Fields;
use std::borrow::Cow;
use std::ops::Range;

// The legal fields of each level, in the order of their one table.
const SEQUENCE_FIELDS: &[&str] =
    &crate::fields::names::<{ crate::fields::SEQUENCE.len() }>(crate::fields::SEQUENCE);
const GROUP_FIELDS: &[&str] =
    &crate::fields::names::<{ crate::fields::GROUP.len() }>(crate::fields::GROUP);
const ITEM_FIELDS: &[&str] =
    &crate::fields::names::<{ crate::fields::ITEM.len() }>(crate::fields::ITEM);
const _: () = assert!(
    SEQUENCE_FIELDS.len() <= fields::MAX_FIELDS
        && GROUP_FIELDS.len() <= fields::MAX_FIELDS
        && ITEM_FIELDS.len() <= fields::MAX_FIELDS
);

/// `retries` is bounded so that a typo cannot make a group retry for hours.
pub(crate) const MAX_RETRIES: u32 = 10;

/// The longest `tools` text whose offset map is spelled out (four bytes per byte).
const DENSE_MAP_BYTES: usize = 1 << 20;

pub(crate) fn lower_file(text: &str) -> Parse {
    let (root, diagnostics) = json::parse(text, Mode::File);
    // Recovery may drop a member, so "missing field" after a syntax error is likely a cascade.
    let quiet_missing = diagnostics.iter().any(Diagnostic::is_error);
    let mut lower = Lower {
        diagnostics,
        quiet_missing,
        depth: 0,
        dense: DenseBuffers::default(),
    };
    let file = OffsetMap::identity(0);
    let sequence = root.and_then(|root| lower.sequence(&root, &file));
    let mut diagnostics = lower.diagnostics;
    diagnostic::sort(&mut diagnostics);
    Parse {
        sequence,
        diagnostics,
    }
}

struct Lower {
    diagnostics: Vec<Diagnostic>,
    /// Set while lowering an object whose text had syntax errors: its missing fields are not
    /// reported, since recovery may have dropped them.
    quiet_missing: bool,
    /// How many JSON strings enclose the text being lowered: 0 in the file, 1 inside `tools`.
    /// Fix texts are escaped that many times so that they land correctly inside the strings.
    depth: usize,
    /// The buffers of the current `tools` string's text and [`DenseMap`], reused from group to group.
    dense: DenseBuffers,
}

/// Where a text's offsets land in the file: a `MapOffset` shifted by the start of a slice.
struct Shifted<'a> {
    by: u32,
    outer: &'a dyn MapOffset,
}

impl MapOffset for Shifted<'_> {
    fn to_raw(&self, offset: u32) -> u32 {
        self.outer.to_raw(offset + self.by)
    }
}

/// How offsets in a `tools` string's unescaped text, or shifted by `by` in one of its items,
/// land in the file: through the text's map, then `outer`. One concrete map rather than a chain
/// of `dyn` ones, since every span of every item goes through it.
struct ToolsMap<'a, O> {
    by: u32,
    text: TextMap<'a>,
    outer: &'a O,
}

#[derive(Clone, Copy)]
enum TextMap<'a> {
    Dense(DenseMap<'a>),
    Sparse(&'a OffsetMap),
}

impl<O: MapOffset> MapOffset for ToolsMap<'_, O> {
    fn to_raw(&self, offset: u32) -> u32 {
        let offset = offset.saturating_add(self.by);
        self.outer.to_raw(match self.text {
            TextMap::Dense(map) => map.to_raw(offset),
            TextMap::Sparse(map) => map.to_raw(offset),
        })
    }
}

fn span_in(map: &(impl MapOffset + ?Sized), range: &Range<usize>) -> Span {
    map.span(Span::from_range(range.clone()))
}

/// The offset of a string literal's body (just inside the opening quote).
fn body_start(node: &Node<'_>) -> u32 {
    u32::try_from(body_range(node).start).unwrap_or(u32::MAX)
}

/// The span of a string literal's body (inside the quotes).
fn body_range(node: &Node<'_>) -> Range<usize> {
    let start = (node.span.start + 1).min(node.span.end);
    start..node.span.end.saturating_sub(1).max(start)
}

fn kind_name(kind: &NodeKind<'_>) -> &'static str {
    match kind {
        NodeKind::Null => "null",
        NodeKind::Bool(_) => "a boolean",
        NodeKind::Number(_) => "a number",
        NodeKind::String(_) => "a string",
        NodeKind::Ref(_) => "a reference",
        NodeKind::Array(_) => "an array",
        NodeKind::Object(_) => "an object",
        NodeKind::Error => "invalid input",
    }
}

impl Lower {
    fn report(&mut self, mut diagnostic: Diagnostic) {
        escape_fix(&mut diagnostic, self.depth);
        self.diagnostics.push(diagnostic);
    }

    /// Takes diagnostics made inside a string `levels` deeper than the current text: maps their
    /// spans through `map` to the file and escapes their fix texts for every enclosing string.
    fn nested(&mut self, levels: usize, diagnostics: Vec<Diagnostic>, map: &dyn MapOffset) {
        for mut d in diagnostics {
            d.map_spans(|s| map.span(s));
            escape_fix(&mut d, self.depth + levels);
            self.diagnostics.push(d);
        }
    }

    /// Reports a value of the wrong JSON kind for `field`, unless it is an error node (already
    /// reported by the parser).
    fn wrong_kind(&mut self, node: &Node<'_>, map: &dyn MapOffset, field: &str, expected: &str) {
        if matches!(node.kind, NodeKind::Error) {
            return;
        }
        let found = kind_name(&node.kind);
        self.report(
            Diagnostic::new(
                Code::WrongJsonType,
                span_in(map, &node.span),
                format!("`{field}` must be {expected}, found {found}"),
            )
            .with_help(format!("write `{field}` as {expected}")),
        );
    }

    /// Unescapes a string node's body. Returns the text and the map from its offsets to the
    /// coordinates `node.span` is in.
    fn unescape<'n>(
        &mut self,
        node: &Node<'n>,
        body: &'n str,
        map: &impl MapOffset,
    ) -> (Cow<'n, str>, OffsetMap) {
        let (unescaped, lone) = unescape(body, body_start(node));
        self.lone_surrogates(lone, map);
        (unescaped.text, unescaped.map)
    }

    fn lone_surrogates(&mut self, lone: Vec<LoneSurrogate>, map: &dyn MapOffset) {
        for surrogate in lone {
            self.report(
                Diagnostic::new(
                    Code::JsonString,
                    map.span(surrogate.span),
                    "lone UTF-16 surrogate in a string escape",
                )
                .with_help("a `\\uD800`–`\\uDFFF` escape must be half of a surrogate pair; write the character itself or its full pair"),
            );
        }
    }

    /// A string field's text, as a `String` or a [`CompactString`] for a short name, and the span
    /// of its body in the file.
    fn string_field<'n, S: From<Cow<'n, str>>>(
        &mut self,
        node: &Node<'n>,
        map: &impl MapOffset,
        field: &str,
    ) -> Option<Spanned<S>> {
        match node.kind {
            NodeKind::String(body) => {
                let (text, _) = self.unescape(node, body, map);
                Some(Spanned::new(S::from(text), span_in(map, &body_range(node))))
            }
            NodeKind::Null
            | NodeKind::Bool(_)
            | NodeKind::Number(_)
            | NodeKind::Ref(_)
            | NodeKind::Array(_)
            | NodeKind::Object(_)
            | NodeKind::Error => {
                self.wrong_kind(node, map, field, "a string");
                None
            }
        }
    }

    fn bool_field(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
    ) -> Option<Spanned<bool>> {
        match node.kind {
            NodeKind::Bool(value) => Some(Spanned::new(value, span_in(map, &node.span))),
            NodeKind::String(body @ ("true" | "false")) => {
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
            NodeKind::Null
            | NodeKind::Number(_)
            | NodeKind::String(_)
            | NodeKind::Ref(_)
            | NodeKind::Array(_)
            | NodeKind::Object(_)
            | NodeKind::Error => {
                self.wrong_kind(node, map, field, "a boolean (`true` or `false`)");
                None
            }
        }
    }

    fn sequence(&mut self, root: &Node<'_>, map: &impl MapOffset) -> Option<Sequence> {
        let NodeKind::Object(members) = &root.kind else {
            if !matches!(root.kind, NodeKind::Error) {
                self.report(
                    Diagnostic::new(
                        Code::WrongJsonType,
                        span_in(map, &root.span),
                        format!(
                            "a sequence file must hold an object, found {}",
                            kind_name(&root.kind)
                        ),
                    )
                    .with_help("write `{\"name\": \"...\", \"groups\": [...]}`"),
                );
            }
            return None;
        };
        let open = Span::from_range(root.span.start..root.span.start + 1);
        let fields = Fields::new(self, members, SEQUENCE_FIELDS, "a sequence", map);
        let name = match fields.get("name") {
            Some(node) => self.string_field(node, map, "name"),
            None => {
                self.missing_field(
                    map.span(open),
                    "name",
                    "the sequence",
                    "\"name\": \"my-sequence\"",
                );
                None
            }
        };
        let name = name.unwrap_or_else(|| Spanned::new(String::new(), map.span(open)));
        if !name.value.is_empty() || fields.get("name").is_some() {
            self.check_sequence_name(&name);
        }
        let description = fields
            .get("description")
            .and_then(|n| self.string_field(n, map, "description"));
        let mut groups = Vec::new();
        match fields.get("groups") {
            Some(node) => match &node.kind {
                NodeKind::Array(elements) => {
                    if let Some(excess) = elements.get(MAX_GROUPS) {
                        self.too_many(excess, map, "groups", MAX_GROUPS, "sequence");
                    }
                    for element in elements.iter().take(MAX_GROUPS) {
                        if let Some(group) = self.group(element, map) {
                            groups.push(group);
                        }
                    }
                }
                NodeKind::Null
                | NodeKind::Bool(_)
                | NodeKind::Number(_)
                | NodeKind::String(_)
                | NodeKind::Ref(_)
                | NodeKind::Object(_)
                | NodeKind::Error => {
                    self.wrong_kind(node, map, "groups", "an array of group objects")
                }
            },
            None => self.missing_field(map.span(open), "groups", "the sequence", "\"groups\": []"),
        }
        Some(Sequence {
            span: span_in(map, &root.span),
            name,
            description,
            groups,
        })
    }

    /// `node` is the first element past a count bound (E0009); it and those after it are not
    /// lowered.
    fn too_many(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        what: &str,
        bound: usize,
        owner: &str,
    ) {
        self.report(too_many(span_in(map, &node.span), what, bound, owner));
    }

    fn missing_field(&mut self, at: Span, field: &str, owner: &str, example: &str) {
        if self.quiet_missing {
            return;
        }
        self.report(
            Diagnostic::new(
                Code::MissingField,
                at,
                format!("{owner} has no `{field}` field"),
            )
            .with_help(format!("add `{example}`")),
        );
    }

    /// Sequence names become file names: checked before they touch the file system.
    fn check_sequence_name(&mut self, name: &Spanned<String>) {
        if let Some(problem) = names::sequence_name_problem(&name.value) {
            self.report(
                Diagnostic::new(Code::InvalidName, name.span, problem).with_help(
                    "use a short name without `/`, `\\`, control characters or a leading `#`",
                ),
            );
        }
    }

    fn check_group_name(&mut self, name: &Spanned<String>) {
        if let Some(problem) = names::group_name_problem(&name.value) {
            self.report(
                Diagnostic::new(Code::InvalidName, name.span, problem)
                    .with_help("give the group a name that `seq_call` can use as its `target`"),
            );
        }
    }

    fn group(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Group> {
        let NodeKind::Object(members) = &node.kind else {
            self.wrong_kind(node, map, "groups", "an array of group objects");
            return None;
        };
        let open = map.span(Span::from_range(node.span.start..node.span.start + 1));
        let fields = Fields::new(self, members, GROUP_FIELDS, "a group", map);

        let name = match fields.get("name") {
            Some(n) => self.string_field(n, map, "name"),
            None => {
                self.missing_field(open, "name", "this group", "\"name\": \"my-group\"");
                None
            }
        };
        if let Some(name) = &name {
            self.check_group_name(name);
        }
        let name = name.unwrap_or_else(|| Spanned::new(String::new(), open));
        let description = fields
            .get("description")
            .and_then(|n| self.string_field(n, map, "description"));
        let inputs = fields
            .get("in")
            .map(|n| self.slots(n, map, "in"))
            .unwrap_or_default();
        let outputs = fields
            .get("out")
            .map(|n| self.slots(n, map, "out"))
            .unwrap_or_default();

        let (items, tools_span) = match fields.get("tools") {
            Some(n) => (self.tools(n, map), span_in(map, &n.span)),
            None => {
                self.missing_field(
                    open,
                    "tools",
                    "this group",
                    "\"tools\": \"{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{\\\"value\\\":1}} ;\"",
                );
                (Vec::new(), open)
            }
        };
        let when = fields.get("when").and_then(|n| match n.kind {
            NodeKind::String(body) => {
                let (text, inner) = self.unescape(n, body, map);
                let composed = Composed {
                    inner: &inner,
                    outer: map,
                };
                let (condition, diagnostics) = parse_condition(&text, &composed);
                self.nested(1, diagnostics, &Identity);
                condition
            }
            NodeKind::Null
            | NodeKind::Bool(_)
            | NodeKind::Number(_)
            | NodeKind::Ref(_)
            | NodeKind::Array(_)
            | NodeKind::Object(_)
            | NodeKind::Error => {
                self.wrong_kind(
                    n,
                    map,
                    "when",
                    "a condition string such as \"$args.x == true\"",
                );
                None
            }
        });
        let parallel = fields
            .get("parallel")
            .and_then(|n| self.bool_field(n, map, "parallel"));
        let timeout = fields.get("timeout").and_then(|n| self.duration(n, map));
        let on_error = fields
            .get("on_error")
            .and_then(|n| self.enumeration(n, map, "on_error", OnError::NAMES, OnError::parse));
        let retries = fields.get("retries").and_then(|n| self.retries(n, map));
        let missing = fields
            .get("missing")
            .and_then(|n| self.enumeration(n, map, "missing", Missing::NAMES, Missing::parse));
        let fallback = fields
            .get("fallback")
            .and_then(|n| self.object(n, map, "fallback", "an object from `out` slots to values"));
        Some(Group {
            span: span_in(map, &node.span),
            name,
            description,
            inputs,
            outputs,
            items,
            tools_span,
            when,
            parallel,
            timeout,
            on_error,
            retries,
            missing,
            fallback,
        })
    }

    /// `in` / `out`: `{"name": "type", ...}`.
    fn slots(&mut self, node: &Node<'_>, map: &impl MapOffset, field: &str) -> Vec<SlotDecl> {
        let NodeKind::Object(members) = &node.kind else {
            self.wrong_kind(
                node,
                map,
                field,
                "an object from slot names to types, such as {\"host\": \"string\"}",
            );
            return Vec::new();
        };
        let keys = fields::unique_members(self, members, map);
        if let Some((excess, _)) = keys.get(MAX_SLOTS) {
            self.too_many(
                &excess.value,
                map,
                &format!("`{field}` slots"),
                MAX_SLOTS,
                "group",
            );
        }
        let mut slots = Vec::with_capacity(keys.len().min(MAX_SLOTS));
        for (member, key) in keys.into_iter().take(MAX_SLOTS) {
            let key_range = fields::key_body(member);
            let name = Spanned::new(CompactString::from(key), span_in(map, &key_range));
            if !names::is_slot_name(&name.value) {
                self.report(
                    Diagnostic::new(
                        Code::InvalidName,
                        name.span,
                        format!("`{}` cannot name a slot: `$args.{}` could not refer to it", name.value, name.value),
                    )
                    .with_help("slot names are identifiers: letters, digits and `_`, not starting with a digit"),
                );
            }
            let ty = match member.value.kind {
                NodeKind::String(body) => {
                    let (text, _) = self.unescape(&member.value, body, map);
                    let span = span_in(map, &body_range(&member.value));
                    match Type::parse(&text) {
                        Some(ty) => Spanned::new(ty, span),
                        None => {
                            let mut d = Diagnostic::new(
                                Code::UnknownType,
                                span,
                                format!("unknown type `{text}`"),
                            );
                            d = match did_you_mean(&text, Type::NAMES.iter().copied()) {
                                Some(best) => d
                                    .with_help(format!(
                                        "did you mean `{best}`? The types are {}",
                                        list(Type::NAMES)
                                    ))
                                    .with_replacement(format!("use `{best}`"), span, best),
                                None => d.with_help(format!("the types are {}", list(Type::NAMES))),
                            };
                            self.report(d);
                            // Keep the slot so that its uses are not reported as undeclared.
                            Spanned::new(Type::Any, span)
                        }
                    }
                }
                NodeKind::Null
                | NodeKind::Bool(_)
                | NodeKind::Number(_)
                | NodeKind::Ref(_)
                | NodeKind::Array(_)
                | NodeKind::Object(_)
                | NodeKind::Error => {
                    self.wrong_kind(
                        &member.value,
                        map,
                        &format!("{field}.{}", name.value),
                        "a type name such as \"string\"",
                    );
                    Spanned::new(Type::Any, span_in(map, &member.value.span))
                }
            };
            slots.push(SlotDecl { name, ty });
        }
        slots
    }

    fn duration(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
    ) -> Option<Spanned<std::time::Duration>> {
        match node.kind {
            NodeKind::String(body) => {
                let span = span_in(map, &body_range(node));
                match crate::duration::parse(body) {
                    Ok(d) => Some(Spanned::new(d, span)),
                    Err(problem) => {
                        self.report(
                            Diagnostic::new(Code::InvalidDuration, span, format!("invalid duration `{body}`: {problem}"))
                                .with_help("write a positive duration such as \"500ms\", \"30s\" or \"1m30s\" (units: h, m, s, ms)"),
                        );
                        None
                    }
                }
            }
            NodeKind::Number(raw) => {
                let span = span_in(map, &node.span);
                let quoted = format!("\"{raw}s\"");
                self.report(
                    Diagnostic::new(
                        Code::InvalidDuration,
                        span,
                        format!(
                            "`timeout` is a bare number `{raw}`; durations are strings with a unit"
                        ),
                    )
                    .with_help(format!(
                        "write {quoted} (seconds) or another unit: \"500ms\", \"1m30s\""
                    ))
                    .with_replacement(
                        format!("write {quoted}"),
                        span,
                        quoted.clone(),
                    ),
                );
                None
            }
            NodeKind::Null
            | NodeKind::Bool(_)
            | NodeKind::Ref(_)
            | NodeKind::Array(_)
            | NodeKind::Object(_)
            | NodeKind::Error => {
                self.wrong_kind(node, map, "timeout", "a duration string such as \"30s\"");
                None
            }
        }
    }

    fn enumeration<T>(
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

    fn retries(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Spanned<u32>> {
        let span = span_in(map, &node.span);
        let NodeKind::Number(raw) = node.kind else {
            self.wrong_kind(
                node,
                map,
                "retries",
                &format!("an integer from 0 to {MAX_RETRIES}"),
            );
            return None;
        };
        match raw.parse::<u32>() {
            Ok(n) if n <= MAX_RETRIES => Some(Spanned::new(n, span)),
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

    /// A group's `tools`: unescape, split, and parse each item in item mode.
    fn tools(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Vec<Item> {
        let NodeKind::String(body) = node.kind else {
            let mut d = Diagnostic::new(
                Code::WrongJsonType,
                span_in(map, &node.span),
                format!("`tools` must be a string, found {}", kind_name(&node.kind)),
            )
            .with_help("write the items as one string, each followed by `;`: \"{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{\\\"value\\\":1}} ;\"");
            if matches!(node.kind, NodeKind::Array(_)) {
                d = d.with_label(span_in(map, &node.span), "an array would let a malformed item vanish silently (7.1); a string with `;` after every item cannot");
            }
            if !matches!(node.kind, NodeKind::Error) {
                self.report(d);
            }
            return Vec::new();
        };
        // Every span of every item goes through this map: spelled out, a lookup is one load.
        // Past a bound the buffer would outweigh the text, and the binary search is kept.
        let mut dense = std::mem::take(&mut self.dense);
        let (text, sparse);
        let text_map = if body.len() <= DENSE_MAP_BYTES {
            let (dense_text, dense_map, lone) = unescape_dense(body, body_start(node), &mut dense);
            self.lone_surrogates(lone, map);
            text = dense_text;
            TextMap::Dense(dense_map)
        } else {
            (text, sparse) = self.unescape(node, body, map);
            TextMap::Sparse(&sparse)
        };
        let tools_map = ToolsMap {
            by: 0,
            text: text_map,
            outer: map,
        };
        let split = split_items(&text);
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
            let Some(slice) = text.get(range.clone()) else {
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
            if let Some(item) = root.and_then(|root| self.item(&root, &item_map)) {
                items.push(item);
            }
            self.depth -= 1;
            self.quiet_missing = quiet;
        }
        self.dense = dense;
        items
    }

    fn item(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Item> {
        let NodeKind::Object(members) = &node.kind else {
            return None;
        };
        let open = map.span(Span::from_range(node.span.start..node.span.start + 1));
        let fields = Fields::new(self, members, ITEM_FIELDS, "an item", map);
        let tool = match fields.get("tool") {
            Some(n) => self.string_field(n, map, "tool"),
            None => {
                self.missing_field(open, "tool", "this item", "\"tool\": \"echo\"");
                None
            }
        };
        let args = fields
            .get("args")
            .and_then(|n| self.object(n, map, "args", "an object of arguments"));
        let output = fields
            .get("as")
            .and_then(|n| self.string_field(n, map, "as"));
        let unsafe_serial = fields
            .get("unsafe_serial")
            .and_then(|n| self.bool_field(n, map, "unsafe_serial"));
        let tool = tool?;
        Some(Item {
            span: span_in(map, &node.span),
            tool,
            args,
            output,
            unsafe_serial,
        })
    }

    fn members(&mut self, members: &[json::Member<'_>], map: &impl MapOffset) -> Vec<AstMember> {
        let mut out = Vec::with_capacity(members.len());
        if fields::plainly_unique(members) {
            for member in members {
                out.extend(self.member(member, member.key.into(), map));
            }
        } else {
            for (member, key) in fields::unique_members(self, members, map) {
                out.extend(self.member(member, key.into(), map));
            }
        }
        out
    }

    /// A member whose key, unescaped, is `key`.
    fn member(
        &mut self,
        member: &json::Member<'_>,
        key: CompactString,
        map: &impl MapOffset,
    ) -> Option<AstMember> {
        let key = Spanned::new(key, span_in(map, &fields::key_body(member)));
        let value = self.value(&member.value, map)?;
        Some(AstMember { key, value })
    }

    /// An object field (`args`, `fallback`) as members; anything else is reported.
    fn object(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
        expected: &str,
    ) -> Option<Spanned<Vec<AstMember>>> {
        if let NodeKind::Object(members) = &node.kind {
            return Some(Spanned::new(
                self.members(members, map),
                span_in(map, &node.span),
            ));
        }
        self.wrong_kind(node, map, field, expected);
        None
    }

    /// A value in `args` or `fallback`. Strings become templates; error nodes are left out.
    fn value(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Value> {
        let span = span_in(map, &node.span);
        let kind = match &node.kind {
            NodeKind::Null => ValueKind::Null,
            NodeKind::Bool(b) => ValueKind::Bool(*b),
            NodeKind::Number(raw) => match raw.parse::<serde_json::Number>() {
                Ok(n) => ValueKind::Number(n),
                Err(_) => {
                    self.report(
                        Diagnostic::new(
                            Code::JsonNumber,
                            span,
                            format!("the number `{raw}` is out of range"),
                        )
                        .with_help("numbers must fit a 64-bit float"),
                    );
                    return None;
                }
            },
            NodeKind::String(body) => {
                let (text, inner) = self.unescape(node, body, map);
                let composed = Composed {
                    inner: &inner,
                    outer: map,
                };
                let (template, diagnostics) = parse_template_cow(text, &composed);
                self.nested(1, diagnostics, &Identity);
                ValueKind::String(template)
            }
            NodeKind::Ref(raw) => {
                let at = Shifted {
                    by: u32::try_from(node.span.start).unwrap_or(u32::MAX),
                    outer: map,
                };
                match parse_reference(raw, &at) {
                    Ok(reference) => ValueKind::Ref(Box::new(reference)),
                    Err(d) => {
                        self.report(d);
                        return None;
                    }
                }
            }
            NodeKind::Array(elements) => {
                ValueKind::Array(elements.iter().filter_map(|e| self.value(e, map)).collect())
            }
            NodeKind::Object(members) => ValueKind::Object(self.members(members, map)),
            NodeKind::Error => return None,
        };
        Some(Value { kind, span })
    }
}

/// Spans already in file coordinates.
struct Identity;

impl MapOffset for Identity {
    fn to_raw(&self, offset: u32) -> u32 {
        offset
    }
}

/// Escapes a fix's texts for `depth` enclosing JSON strings.
fn escape_fix(diagnostic: &mut Diagnostic, depth: usize) {
    let Some(fix) = &mut diagnostic.fix else {
        return;
    };
    for edit in &mut fix.edits {
        for _ in 0..depth {
            edit.text = crate::escape::escape(&edit.text);
        }
    }
}

fn too_many(span: Span, what: &str, bound: usize, owner: &str) -> Diagnostic {
    Diagnostic::new(
        Code::TooLarge,
        span,
        format!(
            "more than {bound} {what} in one {owner}; this one and those after it are not read"
        ),
    )
    .with_help("split the sequence into several that call each other as `#name`")
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
