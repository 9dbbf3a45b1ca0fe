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
//! the `tools` pipeline, [`maps`] holds the offset maps spans go through, and [`diagnostics`] the
//! diagnostics lowering makes and how nested ones reach the file.

mod diagnostics;
mod fields;
mod maps;
mod scalars;

mod slots;
mod tools;
mod unescaped;
mod values;

use crate::Parse;
use crate::ast::{Group, Holes, Item, Missing, OnError, Sequence};
use crate::code::Code;
use crate::condition::parse_condition_in;
use crate::diagnostic::{self, Diagnostic};
use crate::escape::{Composed, MapOffset, TextBuffers};
use crate::fields::key;
use crate::json::{self, Mode, Node, NodeKind};
use crate::limits::MAX_GROUPS;
use crate::names;
use crate::span::{Span, Spanned};
use diagnostics::kind_name;
use fields::Fields;
use maps::{FileMap, Identity, span_in};
use scalars::Retries;

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
    // Only a file with syntax errors can hold a string with raw quotes or line breaks.
    if diagnostics.iter().any(Diagnostic::is_error)
        && let Some(repair) = unescaped::find(text)
    {
        return lower_repaired(text, repair);
    }
    lower_tree(text, root, diagnostics, &FileMap::default(), &[])
}

/// Lowers the file with its broken `tools` and `when` strings escaped: each is one diagnostic
/// instead of the syntax errors it caused, and the rest of the file is lowered as it reads.
fn lower_repaired(text: &str, repair: unescaped::Repair) -> Parse {
    let (root, mut diagnostics) = json::parse(&repair.text, Mode::File);
    for d in &mut diagnostics {
        d.map_spans(|s| repair.map.span(s));
    }
    // A string that does not parse escaped may have been read wrong: its group is incomplete,
    // and nothing is reported or fixed inside it but the string itself.
    let unsure: Vec<Span> = repair
        .sites
        .iter()
        .filter(|site| !site.parses)
        .map(|site| site.diagnostic.span)
        .collect();
    let mut parse = lower_tree(text, root, diagnostics, &repair.map, &unsure);
    for site in repair.sites.iter().filter(|site| !site.parses) {
        let inside = |span: Span| site.region.start <= span.start && span.start < site.region.end;
        parse.diagnostics.retain(|d| !inside(d.span));
        for d in &mut parse.diagnostics {
            let touches = d.fix.as_ref().is_some_and(|fix| {
                fix.edits.iter().any(|e| {
                    e.span.start < site.region.end
                        && site.region.start < e.span.end.max(e.span.start + 1)
                })
            });
            if touches {
                d.fix = None;
            }
        }
    }
    parse
        .diagnostics
        .extend(repair.sites.into_iter().map(|site| site.diagnostic));
    diagnostic::sort(&mut parse.diagnostics);
    parse
}

/// Lowers the tree of the file's JSON. `map` takes the tree's offsets to the file's; `unsure`
/// holds places where the tree may have lost or misread members, besides the syntax errors.
fn lower_tree(
    text: &str,
    root: Option<Node<'_>>,
    diagnostics: Vec<Diagnostic>,
    file: &FileMap,
    unsure: &[Span],
) -> Parse {
    // Recovery may drop a member, so "missing field" after a syntax error is likely a cascade.
    let quiet_missing = !unsure.is_empty() || diagnostics.iter().any(Diagnostic::is_error);
    let syntax = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.span)
        .chain(unsure.iter().copied())
        .collect();
    let mut lower = Lower {
        diagnostics,
        syntax,
        quiet_missing,
        depth: 0,
        tools_buffers: TextBuffers::default(),
        tools_arrays: Vec::new(),
    };
    let sequence = root.and_then(|root| lower.sequence(&root, file));
    let mut diagnostics = lower.diagnostics;
    for (at, items) in lower.tools_arrays {
        if let Some(d) = diagnostics.get_mut(at) {
            let fixed = tools::array_as_string(text, d.span, &items);
            d.fix = fixed;
        }
    }
    diagnostic::sort(&mut diagnostics);
    Parse {
        sequence,
        diagnostics,
    }
}

struct Lower {
    diagnostics: Vec<Diagnostic>,
    /// The file's syntax errors: an object holding one may have lost members to recovery.
    syntax: Vec<Span>,
    /// Set while lowering an object whose text had syntax errors: its missing fields are not
    /// reported, since recovery may have dropped them.
    quiet_missing: bool,
    /// How many JSON strings enclose the text being lowered: 0 in the file, 1 inside `tools`.
    /// Fix texts are escaped that many times so that they land correctly inside the strings.
    depth: usize,
    /// The buffers of the current `tools` string's text and map, reused from group to group.
    tools_buffers: TextBuffers,
    /// `tools` written as an array of item objects: the index of its diagnostic and the spans
    /// of the items, for the fix that writes the string.
    tools_arrays: Vec<(usize, Vec<Span>)>,
}

/// One level's holes as they are found, with the table their fields come from.
struct Found {
    level: &'static [crate::fields::Field],
    holes: Holes,
}

impl Found {
    fn new(level: &'static [crate::fields::Field], incomplete: bool) -> Found {
        let holes = if incomplete {
            Holes::ALL
        } else {
            Holes::default()
        };
        Found { level, holes }
    }

    fn hole(&mut self, field: &str) {
        self.holes.insert(self.level, field);
    }
}

impl Lower {
    /// Lowers the written field `name` with `f`: a field that yields nothing, or whose lowering
    /// reported something, is a hole.
    fn field<'n, T>(
        &mut self,
        found: &mut Found,
        name: &str,
        node: Option<&Node<'n>>,
        f: impl FnOnce(&mut Lower, &Node<'n>) -> Option<T>,
    ) -> Option<T> {
        let node = node?;
        let before = self.diagnostics.len();
        let value = f(self, node);
        if value.is_none() || self.diagnostics.len() > before {
            found.hole(name);
        }
        value
    }

    /// Whether a syntax error of the file lies inside `node` (spans of the file's own tree).
    fn incomplete(&self, node: &Node<'_>, map: &impl MapOffset) -> bool {
        if self.syntax.is_empty() {
            return false;
        }
        let span = span_in(map, &node.span);
        self.syntax
            .iter()
            .any(|s| span.start <= s.start && s.end <= span.end)
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
        let mut found = Found::new(crate::fields::SEQUENCE, self.incomplete(root, map));
        let fields = Fields::new(self, members, SEQUENCE_FIELDS, "a sequence", map);
        for field in fields.misspelt_absent() {
            found.hole(field);
        }
        let name = match fields.get(key::NAME) {
            Some(node) => self.field(&mut found, key::NAME, Some(node), |l, n| {
                l.string_field(n, map, key::NAME)
            }),
            None => {
                self.missing_field(
                    map.span(open),
                    key::NAME,
                    "the sequence",
                    "\"name\": \"my-sequence\"",
                );
                None
            }
        };
        let name = name.unwrap_or_else(|| Spanned::new(String::new(), map.span(open)));
        if !name.value.is_empty() || fields.get(key::NAME).is_some() {
            self.check_sequence_name(&name);
        }
        let description = self.field(
            &mut found,
            key::DESCRIPTION,
            fields.get(key::DESCRIPTION),
            |l, n| l.string_field(n, map, key::DESCRIPTION),
        );
        let mut groups = Vec::new();
        match fields.get(key::GROUPS) {
            Some(node) => match node.kind.as_array() {
                Some(elements) => {
                    if let Some(excess) = elements.get(MAX_GROUPS) {
                        self.too_many(excess, map, key::GROUPS, MAX_GROUPS, "sequence");
                        found.hole(key::GROUPS);
                    }
                    for element in elements.iter().take(MAX_GROUPS) {
                        match self.group(element, map) {
                            Some(group) => groups.push(group),
                            None => found.hole(key::GROUPS),
                        }
                    }
                }
                None => {
                    found.hole(key::GROUPS);
                    self.wrong_kind(node, map, key::GROUPS, "an array of group objects");
                }
            },
            None => self.missing_field(
                map.span(open),
                key::GROUPS,
                "the sequence",
                "\"groups\": []",
            ),
        }
        Some(Sequence {
            span: span_in(map, &root.span),
            name,
            description,
            groups,
            holes: found.holes,
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
            if !matches!(node.kind, NodeKind::Error) {
                self.report(
                    Diagnostic::new(
                        Code::WrongJsonType,
                        span_in(map, &node.span),
                        format!(
                            "each element of `groups` must be a group object, found {}",
                            kind_name(&node.kind)
                        ),
                    )
                    .with_help("write the group as {\"name\": \"...\", \"tools\": \"...\"}"),
                );
            }
            return None;
        };
        let open = map.span(Span::from_range(node.span.start..node.span.start + 1));
        let mut found = Found::new(crate::fields::GROUP, self.incomplete(node, map));
        let fields = Fields::new(self, members, GROUP_FIELDS, "a group", map);
        for field in fields.misspelt_absent() {
            found.hole(field);
        }

        let name = match fields.get(key::NAME) {
            Some(n) => self.field(&mut found, key::NAME, Some(n), |l, n| {
                l.string_field(n, map, key::NAME)
            }),
            None => {
                // Calls cannot name it, so a call to a group "not found" may mean this one.
                found.hole(key::NAME);
                self.missing_field(open, key::NAME, "this group", "\"name\": \"my-group\"");
                None
            }
        };
        if let Some(name) = &name {
            self.check_group_name(name);
        }
        let name = name.unwrap_or_else(|| Spanned::new(String::new(), open));
        let description = self.field(
            &mut found,
            key::DESCRIPTION,
            fields.get(key::DESCRIPTION),
            |l, n| l.string_field(n, map, key::DESCRIPTION),
        );
        let inputs = self
            .field(&mut found, key::IN, fields.get(key::IN), |l, n| {
                Some(l.slots(n, map, key::IN))
            })
            .unwrap_or_default();
        let outputs = self
            .field(&mut found, key::OUT, fields.get(key::OUT), |l, n| {
                Some(l.slots(n, map, key::OUT))
            })
            .unwrap_or_default();
        let locals = self
            .field(&mut found, key::LOCAL, fields.get(key::LOCAL), |l, n| {
                Some(l.slots(n, map, key::LOCAL))
            })
            .unwrap_or_default();

        let (items, items_as_written, tools_span) = match fields.get(key::TOOLS) {
            Some(n) => {
                let (items, as_written) = self.tools(n, map);
                if as_written.is_some() {
                    found.hole(key::TOOLS);
                }
                (items, as_written, span_in(map, &n.span))
            }
            None => {
                self.missing_field(
                    open,
                    key::TOOLS,
                    "this group",
                    "\"tools\": \"{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{\\\"value\\\":1}} ;\"",
                );
                (Vec::new(), None, open)
            }
        };
        let when = self.field(&mut found, key::WHEN, fields.get(key::WHEN), |this, n| {
            let Some(body) = n.kind.as_string() else {
                this.wrong_kind(
                    n,
                    map,
                    key::WHEN,
                    "a condition string such as \"$args.x == true\"",
                );
                return None;
            };
            let (text, inner) = this.unescape(n, body, map);
            let composed = Composed {
                inner: &inner,
                outer: map,
            };
            let declared = |word: &str| inputs.iter().any(|i| i.name.value == word);
            let (condition, diagnostics) = parse_condition_in(&text, &composed, Some(&declared));
            this.nested(1, diagnostics, &Identity);
            condition
        });
        let parallel = self.field(
            &mut found,
            key::PARALLEL,
            fields.get(key::PARALLEL),
            |l, n| l.bool_field(n, map, key::PARALLEL),
        );
        let timeout = self.field(
            &mut found,
            key::TIMEOUT,
            fields.get(key::TIMEOUT),
            |l, n| l.duration(n, map, key::TIMEOUT),
        );
        let on_error = self.field(
            &mut found,
            key::ON_ERROR,
            fields.get(key::ON_ERROR),
            |l, n| l.enumeration(n, map, key::ON_ERROR, OnError::NAMES, OnError::parse),
        );
        let (retries, retries_from) = match self.field(
            &mut found,
            key::RETRIES,
            fields.get(key::RETRIES),
            |l, n| l.retries(n, map),
        ) {
            Some(Retries::Count(count)) => (Some(count), None),
            Some(Retries::Input(input)) => (None, Some(input)),
            None => (None, None),
        };
        let retry_delay = self.field(
            &mut found,
            key::RETRY_DELAY,
            fields.get(key::RETRY_DELAY),
            |l, n| l.duration(n, map, key::RETRY_DELAY),
        );
        let retry_backoff = self.field(
            &mut found,
            key::RETRY_BACKOFF,
            fields.get(key::RETRY_BACKOFF),
            |l, n| l.backoff(n, map),
        );
        let missing = self.field(
            &mut found,
            key::MISSING,
            fields.get(key::MISSING),
            |l, n| l.enumeration(n, map, key::MISSING, Missing::NAMES, Missing::parse),
        );
        let fallback = self.field(
            &mut found,
            key::FALLBACK,
            fields.get(key::FALLBACK),
            |l, n| {
                l.object(
                    n,
                    map,
                    key::FALLBACK,
                    "an object from `out` slots to values",
                )
            },
        );
        let max_parallel = self.field(
            &mut found,
            key::MAX_PARALLEL,
            fields.get(key::MAX_PARALLEL),
            |l, n| l.max_parallel(n, map, "for no bound"),
        );
        Some(Group {
            span: span_in(map, &node.span),
            name,
            description,
            inputs,
            outputs,
            locals,
            items,
            tools_span,
            when,
            parallel,
            timeout,
            on_error,
            retries,
            retries_from,
            retry_delay,
            retry_backoff,
            missing,
            fallback,
            max_parallel,
            holes: found.holes,
            items_as_written,
        })
    }

    /// An item; `broken` when its text had syntax errors (any member may be lost).
    fn item(&mut self, node: &Node<'_>, map: &impl MapOffset, broken: bool) -> Option<Item> {
        let NodeKind::Object(members) = &node.kind else {
            return None;
        };
        let open = map.span(Span::from_range(node.span.start..node.span.start + 1));
        let mut found = Found::new(crate::fields::ITEM, broken);
        let fields = Fields::new(self, members, ITEM_FIELDS, "an item", map);
        for field in fields.misspelt_absent() {
            found.hole(field);
        }
        let tool = match fields.get(key::TOOL) {
            Some(n) => self.field(&mut found, key::TOOL, Some(n), |l, n| {
                l.string_field(n, map, key::TOOL)
            }),
            None => {
                self.missing_field(open, key::TOOL, "this item", "\"tool\": \"echo\"");
                None
            }
        };
        let args = self.field(&mut found, key::ARGS, fields.get(key::ARGS), |l, n| {
            l.object(n, map, key::ARGS, "an object of arguments")
        });
        let as_slot = self.field(&mut found, key::AS, fields.get(key::AS), |l, n| {
            l.string_field(n, map, key::AS)
        });
        let unsafe_serial = self.field(
            &mut found,
            key::UNSAFE_SERIAL,
            fields.get(key::UNSAFE_SERIAL),
            |l, n| l.bool_field(n, map, key::UNSAFE_SERIAL),
        );
        let error_as = self.field(
            &mut found,
            key::ERROR_AS,
            fields.get(key::ERROR_AS),
            |l, n| l.string_field(n, map, key::ERROR_AS),
        );
        let each = self.field(&mut found, key::EACH, fields.get(key::EACH), |l, n| {
            l.each(n, map)
        });
        let max_parallel = self.field(
            &mut found,
            key::MAX_PARALLEL,
            fields.get(key::MAX_PARALLEL),
            |l, n| l.max_parallel(n, map, "to run the elements as the group runs its items"),
        );
        let tool = tool?;
        let filter_offsets = if tool.value == crate::jq::TOOL {
            fields.get(key::ARGS).and_then(|n| filter_offsets(n, map))
        } else {
            None
        };
        Some(Item {
            span: span_in(map, &node.span),
            tool,
            args,
            as_slot,
            unsafe_serial,
            error_as,
            each,
            max_parallel,
            holes: found.holes,
            filter_offsets,
        })
    }
}

/// Where the bytes of a `jq` item's literal `filter` land in the file, through the item's and
/// the `tools` string's escapes (`args` is the item's `args` node).
fn filter_offsets(args: &Node<'_>, map: &impl MapOffset) -> Option<crate::jq::TextOffsets> {
    let NodeKind::Object(members) = &args.kind else {
        return None;
    };
    let member = members
        .iter()
        .find(|m| m.key.text() == Some(crate::jq::FILTER))?;
    let NodeKind::String(body) = member.value.kind else {
        return None;
    };
    if body.len() > crate::jq::MAX_MAPPED {
        return None;
    }
    // Lone surrogates were reported when the value was lowered; here only the map counts.
    let (unescaped, _) = crate::escape::unescape(body, scalars::body_start(&member.value));
    let composed = Composed {
        inner: &unescaped.map,
        outer: map,
    };
    let len = u32::try_from(unescaped.text.len()).ok()?;
    Some(crate::jq::TextOffsets::new(
        (0..=len).map(|i| composed.to_raw(i)).collect(),
    ))
}
