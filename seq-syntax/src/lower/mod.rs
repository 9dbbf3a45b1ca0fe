//! Lowering: the untyped JSON tree into the typed AST.
//!
//! Each object is checked against its level's legal fields (unknown ones are errors with a "did
//! you mean"), each field against its kind of value. `tools` and `when` strings are unescaped
//! with an offset map and handed to the item and condition parsers, so every span that comes out
//! of here — however deep inside a string — points at the file's bytes.
//!
//! This module holds the entry point and the three levels (sequence, group, item); the rest is
//! by job: [`fields`] sorts an object's members into its level's fields, [`scalars`] and
//! [`slots`] lower single fields, [`values`] the values of `args` and `fallback`, [`tools`] runs
//! the `tools` pipeline, [`maps`] holds the offset maps spans go through, and [`report`] the
//! diagnostics lowering makes and how nested ones reach the file.

mod fields;
mod maps;
mod report;
mod scalars;

pub(crate) use scalars::MAX_RETRIES;
mod slots;
mod tools;
mod values;

use crate::Parse;
use crate::ast::{Group, Item, Missing, OnError, Sequence};
use crate::code::Code;
use crate::condition::parse_condition;
use crate::diagnostic::{self, Diagnostic};
use crate::escape::{Composed, MapOffset, OffsetMap, TextBuffers};
use crate::json::{self, Mode, Node, NodeKind};
use crate::limits::MAX_GROUPS;
use crate::names;
use crate::span::{Span, Spanned};
use fields::Fields;
use maps::{Identity, span_in};
use report::kind_name;

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

pub(crate) fn lower_file(text: &str) -> Parse {
    let (root, diagnostics) = json::parse(text, Mode::File);
    // Recovery may drop a member, so "missing field" after a syntax error is likely a cascade.
    let quiet_missing = diagnostics.iter().any(Diagnostic::is_error);
    let mut lower = Lower {
        diagnostics,
        quiet_missing,
        depth: 0,
        tools_buffers: TextBuffers::default(),
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
    /// The buffers of the current `tools` string's text and map, reused from group to group.
    tools_buffers: TextBuffers,
}

impl Lower {
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
}
