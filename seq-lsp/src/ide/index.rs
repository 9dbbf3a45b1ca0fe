//! Name resolution over the checked sequences: every place a sequence, group or slot is declared
//! or referred to, with the exact bytes of the name in the file and how many JSON strings
//! enclose it. Hover, definition, references and rename are lookups in this one table.

use super::text::{Embedded, touches};
use seq_catalog::Catalog;
use seq_catalog::calls::{ELSE, ELSE_ARGS};
use seq_catalog::{SEQ_RUN, SEQ_WHEN_CALL};
use seq_check::{Check, Source};
use seq_syntax::Span;
use seq_syntax::ast::{Group, Item, Member, Reference, Root, Sequence, SlotDecl, Value, ValueKind};
use seq_syntax::fields::key;
use seq_syntax::json::cursor::group_strings;
use seq_syntax::names::CallTarget;
use seq_syntax::template::parse_template;
use std::collections::HashMap;

/// Something with a name that can be declared, referred to and renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Def {
    Sequence {
        file: usize,
    },
    Group {
        file: usize,
        group: usize,
    },
    Input {
        file: usize,
        group: usize,
        slot: usize,
    },
    Output {
        file: usize,
        group: usize,
        slot: usize,
    },
}

/// What a name in the file stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Name {
    Def(Def),
    /// An item's `tool`: defined by the catalog, not by a file.
    Tool(String),
    /// `$each` or `$each_index` in item `item` of a group (`None`: outside any item, where
    /// they are an error).
    Element {
        file: usize,
        group: usize,
        item: Option<usize>,
        root: Root,
    },
    /// `$args.x` or `$out.x` naming a slot its group does not declare.
    Undeclared {
        file: usize,
        group: usize,
        root: Root,
        slot: String,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Occurrence {
    pub file: usize,
    /// The name's bytes (a `#name` target: the name after `#`).
    pub span: Span,
    /// Where a cursor selects this occurrence (`$args.x`: from the `$` to the slot's end).
    pub region: Span,
    pub name: Name,
    /// A declaration rather than a use.
    pub decl: bool,
    /// How many JSON strings enclose the name: new text is escaped that many times.
    pub depth: u8,
}

#[derive(Debug, Default)]
pub(crate) struct Index {
    occurrences: Vec<Occurrence>,
    /// Sequence names to the file that defines them (the first one, as the checker resolves).
    by_name: HashMap<String, usize>,
}

impl Index {
    pub(crate) fn build(sources: &[Source], check: &Check) -> Index {
        let sequences: Vec<Option<&Sequence>> =
            check.files.iter().map(|f| f.sequence.as_ref()).collect();
        let mut by_name = HashMap::new();
        for (file, sequence) in sequences.iter().enumerate() {
            if let Some(sequence) = sequence
                && !sequence.name.value.is_empty()
            {
                by_name.entry(sequence.name.value.clone()).or_insert(file);
            }
        }
        let mut occurrences = Vec::new();
        for (file, (source, sequence)) in sources.iter().zip(&sequences).enumerate() {
            let Some(sequence) = sequence else { continue };
            let mut builder = Builder {
                file,
                text: &source.text,
                sequence,
                sequences: &sequences,
                by_name: &by_name,
                out: &mut occurrences,
                item: None,
            };
            builder.sequence();
        }
        Index {
            occurrences,
            by_name,
        }
    }

    /// The occurrence under a cursor at `offset` of `file`: one the cursor is inside rather than
    /// just after, then the narrowest.
    pub(crate) fn at(&self, file: usize, offset: u32) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .filter(|o| o.file == file && touches(o.region, offset))
            .min_by_key(|o| (!o.region.contains(offset), o.region.len()))
    }

    /// The occurrence under the cursor and those that share its bytes (a call argument of
    /// `#name` stands for the input of each group that declares it).
    pub(crate) fn all_at(&self, file: usize, offset: u32) -> Vec<&Occurrence> {
        let Some(best) = self.at(file, offset) else {
            return Vec::new();
        };
        self.occurrences
            .iter()
            .filter(|o| o.file == file && o.region == best.region)
            .collect()
    }

    /// Every occurrence of `def`, declarations first, then in file order.
    pub(crate) fn of(&self, def: Def) -> Vec<&Occurrence> {
        let mut found: Vec<&Occurrence> = self
            .occurrences
            .iter()
            .filter(|o| o.name == Name::Def(def))
            .collect();
        found.sort_by_key(|o| (!o.decl, o.file, o.span.start));
        found
    }

    /// The file whose sequence `#name` calls.
    pub(crate) fn sequence(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

/// The callee of a call item, for its arguments' keys.
enum Callee {
    Group { file: usize, group: usize },
    Sequence { file: usize },
}

struct Builder<'a> {
    file: usize,
    text: &'a str,
    sequence: &'a Sequence,
    sequences: &'a [Option<&'a Sequence>],
    by_name: &'a HashMap<String, usize>,
    out: &'a mut Vec<Occurrence>,
    /// The item whose fields are being read, for `$each`.
    item: Option<usize>,
}

impl Builder<'_> {
    fn push(&mut self, span: Span, region: Span, name: Name, decl: bool, depth: u8) {
        self.out.push(Occurrence {
            file: self.file,
            span,
            region,
            name,
            decl,
            depth,
        });
    }

    fn def(&mut self, span: Span, def: Def, decl: bool, depth: u8) {
        self.push(span, span, Name::Def(def), decl, depth);
    }

    fn sequence(&mut self) {
        let sequence = self.sequence;
        if !sequence.name.value.is_empty() {
            let def = Def::Sequence { file: self.file };
            self.def(sequence.name.span, def, true, 1);
        }
        for (g, group) in sequence.groups.iter().enumerate() {
            self.group(g, group);
        }
        self.broken_conditions();
    }

    /// A `when` that does not parse (`$args.a && $args.b`) is not in the AST, but the slots it
    /// names are still references: a rename must reach them too.
    fn broken_conditions(&mut self) {
        // Reading the group strings parses the whole file again: only when there is one.
        let broken = |g: &Group| g.when.is_none() && g.hole(key::WHEN);
        if !self.sequence.groups.iter().any(broken) {
            return;
        }
        for (field, tok) in group_strings(self.text) {
            let body = Span::from_range(tok.body());
            let found = self
                .sequence
                .groups
                .iter()
                .enumerate()
                .find(|(_, g)| g.span.contains(body.start));
            let Some((g, group)) = found else { continue };
            if field != key::WHEN || group.when.is_some() {
                continue;
            }
            let Some(when) = Embedded::file_string(self.text, body) else {
                continue;
            };
            let (template, _) = parse_template(&when.text, &when);
            for reference in template.references() {
                self.reference(g, group, reference, 1);
            }
        }
    }

    fn group(&mut self, g: usize, group: &Group) {
        let file = self.file;
        if !group.name.value.is_empty() {
            self.def(group.name.span, Def::Group { file, group: g }, true, 1);
        }
        for (slot, decl) in group.inputs.iter().enumerate() {
            let def = Def::Input {
                file,
                group: g,
                slot,
            };
            self.def(decl.name.span, def, true, 1);
        }
        // An output's or a local's place in `Group::slots`: both are read as `$out.NAME`.
        for (slot, decl) in group.slots().enumerate() {
            let def = Def::Output {
                file,
                group: g,
                slot,
            };
            self.def(decl.name.span, def, true, 1);
        }
        if let Some(when) = &group.when {
            for reference in when.references() {
                self.reference(g, group, reference, 1);
            }
        }
        if let Some(fallback) = &group.fallback {
            for member in &fallback.value {
                self.output(g, group, member.key.span, &member.key.value, 1);
                self.value(g, group, &member.value, 1);
            }
        }
        for (i, item) in group.items.iter().enumerate() {
            self.item = Some(i);
            self.item(g, group, item);
            self.item = None;
        }
    }

    fn output(&mut self, g: usize, group: &Group, span: Span, name: &str, depth: u8) {
        if let Some(slot) = group.slots().position(|s| s.name.value == name) {
            let def = Def::Output {
                file: self.file,
                group: g,
                slot,
            };
            self.def(span, def, false, depth);
        }
    }

    /// A reference in `group`; `depth` is that of its text (a bare one in an item: 1).
    fn reference(&mut self, g: usize, group: &Group, reference: &Reference, depth: u8) {
        let name = reference.slot.value.as_str();
        let file = self.file;
        let slots: Vec<&SlotDecl> = match reference.root.value {
            Root::Args => group.inputs.iter().collect(),
            Root::Out => group.slots().collect(),
            // The element names no declaration: hover says what it is.
            Root::Each | Root::EachIndex => {
                let element = Name::Element {
                    file,
                    group: g,
                    item: self.item,
                    root: reference.root.value,
                };
                // `$each` or the whole `${each}`; before a path, up to the root's end.
                let span = if reference.path.is_empty() {
                    reference.span
                } else {
                    Span::new(reference.span.start, reference.root.span.end)
                };
                self.push(span, span, element, false, depth);
                return;
            }
        };
        let region = Span::new(reference.span.start, reference.slot.span.end);
        let Some(slot) = slots.iter().position(|s| s.name.value == name) else {
            let undeclared = Name::Undeclared {
                file,
                group: g,
                root: reference.root.value,
                slot: name.to_owned(),
            };
            self.push(reference.slot.span, region, undeclared, false, depth);
            return;
        };
        let def = match reference.root.value {
            Root::Args => Def::Input {
                file,
                group: g,
                slot,
            },
            Root::Out | Root::Each | Root::EachIndex => Def::Output {
                file,
                group: g,
                slot,
            },
        };
        self.push(reference.slot.span, region, Name::Def(def), false, depth);
    }

    /// The references in a value; `string_depth` is the depth of text inside its strings.
    fn value(&mut self, g: usize, group: &Group, value: &Value, string_depth: u8) {
        match &value.kind {
            ValueKind::String(template) => {
                for reference in template.references() {
                    self.reference(g, group, reference, string_depth);
                }
            }
            ValueKind::Ref(reference) => {
                self.reference(g, group, reference, string_depth.saturating_sub(1))
            }
            ValueKind::Array(values) => {
                for value in values {
                    self.value(g, group, value, string_depth);
                }
            }
            ValueKind::Object(members) => {
                for member in members {
                    self.value(g, group, &member.value, string_depth);
                }
            }
            ValueKind::Null | ValueKind::Bool(_) | ValueKind::Number(_) => {}
        }
    }

    fn item(&mut self, g: usize, group: &Group, item: &Item) {
        let tool = item.tool.value.as_str();
        let span = item.tool.span;
        self.push(span, span, Name::Tool(tool.to_owned()), false, 2);
        if let Some(output) = &item.as_slot {
            self.output(g, group, output.span, &output.value, 2);
        }
        if let Some(args) = &item.args {
            for member in &args.value {
                self.value(g, group, &member.value, 2);
            }
        }
        if let Some(each) = &item.each {
            self.value(g, group, each, 2);
        }
        if Catalog::is_call(tool) {
            let target = item.arg("target").or_else(|| item.arg("group"));
            let callee = target.and_then(|t| self.target(t));
            if let (Some(callee), Some(args)) = (callee, item.arg("args"))
                && let ValueKind::Object(members) = &args.kind
            {
                self.call_arguments(&callee, members);
            }
            // `seq_when_call`'s `else`: a target too, given `else_args` (or the same `args`).
            let otherwise = item.arg(ELSE).filter(|_| tool == SEQ_WHEN_CALL);
            let callee = otherwise.and_then(|t| self.target(t));
            if let (Some(callee), Some(args)) =
                (callee, item.arg(ELSE_ARGS).or_else(|| item.arg("args")))
                && let ValueKind::Object(members) = &args.kind
            {
                self.call_arguments(&callee, members);
            }
        } else if tool == SEQ_RUN
            && let Some(name) = item.arg("name")
            && let Some((text, embedded)) = literal(self.text, name)
            && let Some(&file) = self.by_name.get(&text)
        {
            let span = embedded.span_of(0..text.len());
            self.def(span, Def::Sequence { file }, false, 2);
        }
    }

    /// A call's `target`: a group of this sequence, or `#name`.
    fn target(&mut self, value: &Value) -> Option<Callee> {
        let (text, embedded) = literal(self.text, value)?;
        if let CallTarget::Sequence(name) = CallTarget::parse(&text) {
            let file = *self.by_name.get(name)?;
            let span = embedded.span_of(1..text.len());
            let region = embedded.span_of(0..text.len());
            let def = Def::Sequence { file };
            self.push(span, region, Name::Def(def), false, 2);
            return Some(Callee::Sequence { file });
        }
        let group = self
            .sequence
            .groups
            .iter()
            .position(|g| g.name.value == text)?;
        let file = self.file;
        let span = embedded.span_of(0..text.len());
        self.def(span, Def::Group { file, group }, false, 2);
        Some(Callee::Group { file, group })
    }

    /// The keys of a call's `args`: the callee's inputs (for `#name`, those of every group).
    fn call_arguments(&mut self, callee: &Callee, members: &[Member]) {
        let groups: Vec<(usize, usize)> = match *callee {
            Callee::Group { file, group } => vec![(file, group)],
            Callee::Sequence { file } => {
                let count = self
                    .sequences
                    .get(file)
                    .copied()
                    .flatten()
                    .map_or(0, |s| s.groups.len());
                (0..count).map(|g| (file, g)).collect()
            }
        };
        for member in members {
            for &(file, g) in &groups {
                let Some(group) = self
                    .sequences
                    .get(file)
                    .copied()
                    .flatten()
                    .and_then(|s| s.groups.get(g))
                else {
                    continue;
                };
                if let Some(slot) = group
                    .inputs
                    .iter()
                    .position(|s| s.name.value == member.key.value)
                {
                    let def = Def::Input {
                        file,
                        group: g,
                        slot,
                    };
                    self.def(member.key.span, def, false, 2);
                }
            }
        }
    }
}

/// A literal string value inside an item, with its text mapped to the file; `None` when the
/// string interpolates references or its bytes do not read back as its text.
fn literal(file: &str, value: &Value) -> Option<(String, Embedded)> {
    let ValueKind::String(template) = &value.kind else {
        return None;
    };
    let text = template.as_literal()?;
    let embedded = Embedded::item_string(file, value.span)?;
    (embedded.text == text).then(|| (text.to_owned(), embedded))
}
