//! Completion, worked out from the text around the cursor rather than from the AST: the file is
//! being typed, so it is usually broken exactly where the cursor is. The front end's tree, which
//! keeps what a half-written file holds ([`seq_syntax::json::cursor`]), tells where the cursor
//! stands in the file; inside a `tools` string the same is done again on the unescaped string,
//! by the item grammar.

mod fields;
mod snippet;

use super::hover::{code, signature, tool_markdown};
use super::text::{Embedded, escape_depth};
use super::{Analysis, CompletionItem, CompletionKind, FileId};
use seq_catalog::calls::{ELSE, ELSE_ARGS};
use seq_catalog::{Catalog, ToolDef};
use seq_catalog::{JsonType, SEQ_RUN, SEQ_WHEN_CALL};
use seq_syntax::Span;
use seq_syntax::ast::{Missing, OnError, Sequence, Type};
use seq_syntax::escape::MapOffset;
use seq_syntax::fields::key;
use seq_syntax::json::Mode;
use seq_syntax::json::cursor::{Context, Kind, Place, Seg, context, tokenize};
use seq_syntax::names::CallTarget;
use seq_syntax::reference::name_start_before;
use std::ops::Range;

pub(crate) fn complete(analysis: &Analysis, file: FileId, offset: u32) -> Vec<CompletionItem> {
    let Some(text) = analysis.text(file) else {
        return Vec::new();
    };
    let cursor = offset as usize;
    if !text.is_char_boundary(cursor) {
        return Vec::new();
    }
    let tokens = tokenize(text);
    let cx = context(text, Mode::File, &tokens, cursor);
    let site = Site {
        text,
        cx: &cx,
        cursor,
        map: None,
        depth: 0,
    };
    let mut out = Vec::new();
    let work = Work {
        analysis,
        file,
        out: &mut out,
    };
    work.file_level(&site);
    out
}

/// Where the cursor is, in one layer of text: the file, or the unescaped `tools` string.
struct Site<'a> {
    text: &'a str,
    cx: &'a Context,
    /// The cursor, as an offset of `text`.
    cursor: usize,
    /// Offsets of `text` to the file (`None`: `text` is the file).
    map: Option<&'a Embedded>,
    /// How many JSON strings enclose `text`.
    depth: u8,
}

/// How a proposed name is written where the cursor is not yet inside quotes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `"name": `
    Key,
    /// `"name"`
    String,
    /// `true`, a reference: as it is.
    Bare,
}

impl Site<'_> {
    fn span(&self, range: Range<usize>) -> Span {
        match self.map {
            Some(map) => map.span_of(range),
            None => Span::from_range(range),
        }
    }

    fn in_string(&self) -> bool {
        matches!(
            self.cx.token.as_ref().map(|t| t.kind),
            Some(Kind::String { .. })
        )
    }

    /// The range a proposal replaces: the string body or the word the cursor is in.
    fn edit_range(&self) -> Range<usize> {
        match &self.cx.token {
            Some(tok) if matches!(tok.kind, Kind::String { .. }) => tok.body(),
            Some(tok) => tok.range.clone(),
            None => self.cursor..self.cursor,
        }
    }

    /// A proposal of `name` written as `shape` (inside quotes already: just the name).
    fn item(&self, name: &str, kind: CompletionKind, shape: Shape) -> CompletionItem {
        let in_string = self.in_string();
        let raw = match (shape, in_string) {
            (_, true) | (Shape::Bare, false) => name.to_owned(),
            (Shape::Key, false) => format!("\"{name}\": "),
            (Shape::String, false) => format!("\"{name}\""),
        };
        CompletionItem {
            label: name.to_owned(),
            kind,
            detail: None,
            documentation: None,
            insert_text: escape_depth(&raw, self.depth + u8::from(in_string)),
            edit: self.span(self.edit_range()),
            snippet: false,
        }
    }
}

trait Describe {
    fn detail(self, detail: impl Into<Option<String>>) -> Self;
    fn doc(self, documentation: impl Into<Option<String>>) -> Self;
}

impl Describe for CompletionItem {
    fn detail(mut self, detail: impl Into<Option<String>>) -> Self {
        self.detail = detail.into();
        self
    }

    fn doc(mut self, documentation: impl Into<Option<String>>) -> Self {
        self.documentation = documentation.into();
        self
    }
}

/// The group the cursor is in, as far as its text can be read: its name and its `in` and `out`
/// declarations (name, type).
#[derive(Default)]
struct GroupInfo {
    name: String,
    inputs: Vec<(String, Option<String>)>,
    outputs: Vec<(String, Option<String>)>,
}

impl GroupInfo {
    fn of(cx: &Context) -> GroupInfo {
        let in_group = matches!(
            cx.path.as_slice(),
            [Seg::Key(groups), Seg::Index(_), ..] if groups == key::GROUPS
        );
        let Some(frame) = cx.frames.get(2).filter(|_| in_group) else {
            return GroupInfo::default();
        };
        let slots = |key: &str| {
            frame
                .member(key)
                .map_or_else(Vec::new, |m| m.children.clone())
        };
        GroupInfo {
            name: frame
                .member(key::NAME)
                .and_then(|m| m.text.clone())
                .unwrap_or_default(),
            inputs: slots(key::IN),
            // Local slots are written and read as outputs are.
            outputs: slots(key::OUT)
                .into_iter()
                .chain(slots(key::LOCAL))
                .collect(),
        }
    }
}

struct Work<'a> {
    analysis: &'a Analysis,
    file: FileId,
    out: &'a mut Vec<CompletionItem>,
}

impl<'a> Work<'a> {
    fn sequence(&self) -> Option<&'a Sequence> {
        self.analysis
            .check
            .files
            .get(self.file.index())?
            .sequence
            .as_ref()
    }

    fn catalog(&self) -> &'a Catalog {
        &self.analysis.catalog
    }

    fn file_level(mut self, site: &Site<'_>) {
        let cx = site.cx;
        let group = GroupInfo::of(cx);
        let path = path_shape(&cx.path);
        match (&cx.place, path.as_slice()) {
            (Place::Key, []) => self.fields(site, fields::FILE),
            (Place::Key, [key::GROUPS, "[]"]) => self.fields(site, fields::GROUP),
            (Place::Key, [key::GROUPS, "[]", key::FALLBACK]) => {
                self.slots(site, &group.outputs, "output", &group.name, Shape::Key)
            }
            (Place::Value(_), [key::GROUPS, "[]", key::IN | key::OUT | key::LOCAL, _]) => {
                self.values(site, Type::NAMES, "a slot type")
            }
            // Inside an input's declaration object.
            (Place::Key, [key::GROUPS, "[]", key::IN, _]) => self.fields(site, fields::INPUT),
            (Place::Value(_), [key::GROUPS, "[]", key::IN, _, key::TYPE]) => {
                self.values(site, Type::NAMES, "a slot type")
            }
            (Place::Value(_), [key::GROUPS, "[]", key::IN, _, key::REQUIRED]) => {
                self.booleans(site)
            }
            (Place::Value(_), [key::GROUPS, "[]", key::ON_ERROR]) => {
                self.values(site, OnError::NAMES, "`on_error`")
            }
            (Place::Value(_), [key::GROUPS, "[]", key::MISSING]) => {
                self.values(site, Missing::NAMES, "`missing`")
            }
            (Place::Value(_), [key::GROUPS, "[]", key::PARALLEL]) => self.booleans(site),
            (Place::Value(_), [key::GROUPS, "[]", key::TOOLS]) if site.in_string() => {
                self.tools(site, &group)
            }
            (
                Place::Value(_),
                [key::GROUPS, "[]", key::WHEN] | [key::GROUPS, "[]", key::FALLBACK, _],
            ) if site.in_string() => {
                self.references(site, &group);
            }
            _ => {}
        }
    }

    fn push(&mut self, item: CompletionItem) {
        self.out.push(item);
    }

    /// The fields of one level, minus those already written.
    fn fields(&mut self, site: &Site<'_>, fields: &[fields::Field]) {
        let taken = site.cx.sibling_keys();
        for field in fields.iter().filter(|f| !taken.contains(&f.name)) {
            let detail = if field.required {
                "required field"
            } else {
                "field"
            };
            let item = site
                .item(field.name, CompletionKind::Field, Shape::Key)
                .detail(detail.to_owned())
                .doc(field.doc.to_owned());
            self.push(item);
        }
    }

    fn values(&mut self, site: &Site<'_>, names: &[&str], what: &str) {
        for name in names {
            let item = site
                .item(name, CompletionKind::EnumValue, Shape::String)
                .detail(what.to_owned());
            self.push(item);
        }
    }

    fn booleans(&mut self, site: &Site<'_>) {
        if site.in_string() {
            return;
        }
        for value in ["true", "false"] {
            self.push(site.item(value, CompletionKind::EnumValue, Shape::Bare));
        }
    }

    fn slots(
        &mut self,
        site: &Site<'_>,
        slots: &[(String, Option<String>)],
        role: &str,
        group: &str,
        shape: Shape,
    ) {
        let taken = if shape == Shape::Key {
            site.cx.sibling_keys()
        } else {
            Vec::new()
        };
        for (name, ty) in slots.iter().filter(|(n, _)| !taken.contains(&n.as_str())) {
            let item = site
                .item(name, CompletionKind::Slot, shape)
                .detail(ty.clone())
                .doc(format!("{role} of group {}", code(group)));
            self.push(item);
        }
    }

    /// `$args.`/`$out.` slots when the text before the cursor ends in a reference being typed
    /// (in a string, or a bare reference in an item). Returns whether it did.
    fn references(&mut self, site: &Site<'_>, group: &GroupInfo) -> bool {
        let Some(tok) = &site.cx.token else {
            return false;
        };
        let start = if let Kind::String { .. } = tok.kind {
            tok.body().start
        } else if tok.kind == Kind::Ref {
            tok.range.start
        } else {
            return false;
        };
        let before = site.text.get(start..site.cursor).unwrap_or("");
        let Some(dollar) = before.rfind('$') else {
            return false;
        };
        let dollar = start + dollar;
        let after = site.text.get(dollar + 1..site.cursor).unwrap_or("");
        let braced = after.starts_with('{');
        let after = after.strip_prefix('{').unwrap_or(after);
        let depth = site.depth + u8::from(site.in_string());
        let name_start = name_start_before(site.text, site.cursor);
        let typed = site.text.get(name_start..site.cursor).unwrap_or("");
        let roots = [
            ("args", &group.inputs, "input"),
            ("out", &group.outputs, "output"),
        ];
        match after.split_once('.') {
            Some((root, rest)) if rest == typed => {
                let Some((_, slots, role)) = roots.iter().find(|(r, ..)| *r == root) else {
                    return false;
                };
                for (name, ty) in slots.iter() {
                    self.push(CompletionItem {
                        label: name.clone(),
                        kind: CompletionKind::Slot,
                        detail: ty.clone(),
                        documentation: Some(format!("{role} of group {}", code(&group.name))),
                        insert_text: escape_depth(name, depth),
                        edit: site.span(name_start..site.cursor),
                        snippet: false,
                    });
                }
                true
            }
            None if after == typed => {
                for (root, slots, role) in roots {
                    for (name, ty) in slots.iter() {
                        let text = if braced {
                            format!("${{{root}.{name}}}")
                        } else {
                            format!("${root}.{name}")
                        };
                        self.push(CompletionItem {
                            label: text.clone(),
                            kind: CompletionKind::Slot,
                            detail: ty.clone(),
                            documentation: Some(format!("{role} of group {}", code(&group.name))),
                            insert_text: escape_depth(&text, depth),
                            edit: site.span(dollar..site.cursor),
                            snippet: false,
                        });
                    }
                }
                // The element, in the arguments of an item with `each`.
                let in_each = site
                    .map
                    .is_some()
                    .then(|| site.cx.frames.first())
                    .flatten()
                    .is_some_and(|item| item.object && item.member(key::EACH).is_some());
                let elements = [
                    ("each", "any", "the element this run of the item is for"),
                    (
                        "each_index",
                        "integer",
                        "the element's place in the array, from 0",
                    ),
                ];
                for (root, ty, doc) in elements.into_iter().filter(|_| in_each) {
                    let text = if braced {
                        format!("${{{root}}}")
                    } else {
                        format!("${root}")
                    };
                    self.push(CompletionItem {
                        label: text.clone(),
                        kind: CompletionKind::Slot,
                        detail: Some(ty.to_owned()),
                        documentation: Some(doc.to_owned()),
                        insert_text: escape_depth(&text, depth),
                        edit: site.span(dollar..site.cursor),
                        snippet: false,
                    });
                }
                true
            }
            Some(_) | None => false,
        }
    }

    /// Inside a `tools` string: the item language.
    fn tools(&mut self, site: &Site<'_>, group: &GroupInfo) {
        let Some(tok) = &site.cx.token else { return };
        let Some(tools) = Embedded::file_string(site.text, Span::from_range(tok.body())) else {
            return;
        };
        let raw = super::text::offset(site.cursor);
        let cursor = tools.offset_of(raw);
        if tools.to_raw(super::text::offset(cursor)) != raw {
            // Inside an escape such as `\"`: nothing can be inserted there.
            return;
        }
        let tokens = tokenize(&tools.text);
        let cx = context(&tools.text, Mode::Item, &tokens, cursor);
        let inner = Site {
            text: &tools.text,
            cx: &cx,
            cursor,
            map: Some(&tools),
            depth: 1,
        };
        let value_token = matches!(cx.place, Place::Value(_) | Place::Element);
        if value_token && self.references(&inner, group) {
            return;
        }
        let tool = cx
            .frames
            .first()
            .and_then(|f| f.member(key::TOOL))
            .and_then(|m| m.text.clone())
            .unwrap_or_default();
        let path = path_shape(&cx.path);
        let call = Catalog::is_call(&tool);
        match (&cx.place, path.as_slice()) {
            (Place::Top, []) => self.item_snippets(&inner),
            (Place::Key, []) => self.fields(&inner, fields::ITEM),
            (Place::Key, [key::ARGS]) => self.parameters(&inner, &tool),
            (Place::Key, [key::ARGS, "args"]) if call => {
                let target = cx
                    .frames
                    .get(1)
                    .and_then(|f| f.member("target").or_else(|| f.member("group")))
                    .and_then(|m| m.text.clone())
                    .unwrap_or_default();
                self.callee_inputs(&inner, &target);
            }
            (Place::Key, [key::ARGS, ELSE_ARGS]) if tool == SEQ_WHEN_CALL => {
                let target = cx
                    .frames
                    .get(1)
                    .and_then(|f| f.member(ELSE))
                    .and_then(|m| m.text.clone())
                    .unwrap_or_default();
                self.callee_inputs(&inner, &target);
            }
            (Place::Value(_), [key::TOOL]) => self.tool_names(&inner),
            (Place::Value(_), [key::AS]) => {
                self.slots(&inner, &group.outputs, "output", &group.name, Shape::String)
            }
            (Place::Value(_), [key::UNSAFE_SERIAL]) => self.booleans(&inner),
            (Place::Value(_), [key::ARGS, "target" | "group"]) if call => self.targets(&inner),
            (Place::Value(_), [key::ARGS, ELSE]) if tool == SEQ_WHEN_CALL => self.targets(&inner),
            (Place::Value(_), [key::ARGS, "name"]) if tool == SEQ_RUN => {
                self.sequences(&inner, false)
            }
            (Place::Value(_), [key::ARGS, name]) => {
                let boolean = self
                    .catalog()
                    .get(&tool)
                    .and_then(|t| t.parameters.property(name))
                    .is_some_and(|p| p.types == [JsonType::Boolean]);
                if boolean {
                    self.booleans(&inner);
                }
            }
            _ => {}
        }
    }

    /// Between items: a whole item per tool, with its required arguments as tab stops.
    fn item_snippets(&mut self, site: &Site<'_>) {
        let edit = site.span(site.edit_range());
        for tool in self.catalog().tools() {
            self.push(CompletionItem {
                label: tool.name.clone(),
                kind: CompletionKind::Snippet,
                detail: Some(format!("item: {}", tool_signature(tool))),
                documentation: Some(tool_markdown(tool)),
                insert_text: snippet::item(tool, site.depth),
                edit,
                snippet: true,
            });
        }
    }

    fn tool_names(&mut self, site: &Site<'_>) {
        for tool in self.catalog().tools() {
            let item = site
                .item(&tool.name, CompletionKind::Tool, Shape::String)
                .detail(tool_signature(tool))
                .doc(tool_markdown(tool));
            self.push(item);
        }
    }

    fn parameters(&mut self, site: &Site<'_>, tool: &str) {
        let Some(def) = self.catalog().get(tool) else {
            return;
        };
        let taken = site.cx.sibling_keys();
        let schema = &def.parameters;
        for (name, param) in &schema.properties {
            if taken.contains(&name.as_str()) {
                continue;
            }
            let required = if schema.is_required(name) {
                ", required"
            } else {
                ""
            };
            let item = site
                .item(name, CompletionKind::Field, Shape::Key)
                .detail(format!("{}{required}", param.type_text()))
                .doc(param.description.clone());
            self.push(item);
        }
    }

    /// The inputs of the group or sequence a call's `target` names.
    fn callee_inputs(&mut self, site: &Site<'_>, target: &str) {
        let analysis = self.analysis;
        let groups: Vec<&seq_syntax::ast::Group> = match CallTarget::parse(target) {
            CallTarget::Sequence(name) => analysis
                .index()
                .sequence(name)
                .and_then(|file| analysis.check.files.get(file)?.sequence.as_ref())
                .map_or_else(Vec::new, |s| s.groups.iter().collect()),
            CallTarget::Group(name) => self.sequence().map_or_else(Vec::new, |s| {
                s.groups.iter().filter(|g| g.name.value == name).collect()
            }),
        };
        let taken = site.cx.sibling_keys();
        let mut seen: Vec<&str> = Vec::new();
        for group in groups {
            for input in &group.inputs {
                let name = input.name.value.as_str();
                if seen.contains(&name) || taken.contains(&name) {
                    continue;
                }
                seen.push(name);
                let item = site
                    .item(name, CompletionKind::Slot, Shape::Key)
                    .detail(input.ty.value.as_str().to_owned())
                    .doc(format!("input of group {}", code(&group.name.value)));
                self.out.push(item);
            }
        }
    }

    /// Group names of this sequence and `#name` of the others.
    fn targets(&mut self, site: &Site<'_>) {
        let items: Vec<CompletionItem> = self
            .sequence()
            .map_or(&[][..], |s| s.groups.as_slice())
            .iter()
            .filter(|g| !g.name.value.is_empty())
            .map(|g| {
                site.item(&g.name.value, CompletionKind::Group, Shape::String)
                    .detail(format!("group {}", signature(g)))
                    .doc(g.description.as_ref().map(|d| d.value.clone()))
            })
            .collect();
        self.out.extend(items);
        self.sequences(site, true);
    }

    /// The other files' sequences, as `#name` or as plain names.
    fn sequences(&mut self, site: &Site<'_>, hash: bool) {
        let analysis = self.analysis;
        for (i, file) in analysis.check.files.iter().enumerate() {
            let Some(sequence) = &file.sequence else {
                continue;
            };
            let name = &sequence.name.value;
            // A sequence calling itself would be a cycle; later duplicates are never called.
            if i == self.file.index()
                || name.is_empty()
                || analysis.index().sequence(name) != Some(i)
            {
                continue;
            }
            let label = if hash {
                CallTarget::Sequence(name).to_string()
            } else {
                name.clone()
            };
            let item = site
                .item(&label, CompletionKind::Sequence, Shape::String)
                .detail(format!("sequence in {}", file.path))
                .doc(sequence.description.as_ref().map(|d| d.value.clone()));
            self.push(item);
        }
    }
}

/// A path as keys, with `[]` for every index: what the completions are chosen by.
fn path_shape(path: &[Seg]) -> Vec<&str> {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => k.as_str(),
            Seg::Index(_) => "[]",
        })
        .collect()
}

/// `cmd_run(command: string, timeout?: string)`.
fn tool_signature(tool: &ToolDef) -> String {
    let schema = &tool.parameters;
    let params: Vec<String> = schema
        .properties
        .iter()
        .map(|(name, param)| {
            let optional = if schema.is_required(name) { "" } else { "?" };
            format!("{name}{optional}: {}", param.type_text())
        })
        .collect();
    format!("{}({})", tool.name, params.join(", "))
}
