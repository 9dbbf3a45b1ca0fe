//! The typed AST of a tool sequence: what the checker checks, the engine runs and storage keeps.
//!
//! Every node carries the span of the bytes it came from in the file. The AST holds no error
//! nodes: whatever could not be built is reported as a diagnostic and left out, so later stages
//! never meet a half-parsed node. A parse with error diagnostics is never run.

use crate::fields::key;
use crate::span::{Span, Spanned};
pub use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A named, stored list of groups, run in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    pub span: Span,
    pub name: Spanned<String>,
    pub description: Option<Spanned<String>>,
    pub groups: Vec<Group>,
    /// Fields written but not built whole (`groups` when a group could not be built).
    #[serde(default, skip_serializing_if = "Holes::is_empty")]
    pub holes: Holes,
}

impl Sequence {
    /// Whether `field` (of the sequence's fields) was written but not built whole.
    pub fn hole(&self, field: &str) -> bool {
        self.holes.has(crate::fields::SEQUENCE, field)
    }

    /// Whether every group the file defines is in [`Sequence::groups`] under its name: when not,
    /// a target that names no group may name one that was left out.
    pub fn groups_whole(&self) -> bool {
        !self.hole(key::GROUPS) && self.groups.iter().all(|g| !g.hole(key::NAME))
    }
}

/// The fields of a node that were written but could not be built whole, each reported by the
/// front end: a value left out (a bad enum, duration or type), an element dropped (a broken item
/// or group), members a syntax error may have swallowed. A rule that needs such a field stays
/// quiet instead of reporting a consequence of what was left out. Empty in a sequence without
/// errors, so never stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Holes(u16);

impl Holes {
    /// Every field: a node whose text had a syntax error, which may have dropped any member.
    pub const ALL: Holes = Holes(u16::MAX);

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Whether `field`, one of `level`'s fields, is a hole.
    pub fn has(self, level: &[crate::fields::Field], field: &str) -> bool {
        self.0 & Holes::bit(level, field) != 0
    }

    /// Marks `field`, one of `level`'s fields, as a hole.
    pub fn insert(&mut self, level: &[crate::fields::Field], field: &str) {
        self.0 |= Holes::bit(level, field);
    }

    fn bit(level: &[crate::fields::Field], field: &str) -> u16 {
        let position = level.iter().position(|f| f.name == field);
        debug_assert!(position.is_some(), "`{field}` is no field of its level");
        position
            .and_then(|i| 1u16.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)))
            .unwrap_or(0)
    }
}

/// One layer of a sequence: a callable unit with a signature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub span: Span,
    pub name: Spanned<String>,
    pub description: Option<Spanned<String>>,
    /// `in`: the inputs, read as `$args.NAME`.
    pub inputs: Vec<SlotDecl>,
    /// `out`: the slots written by `as`.
    pub outputs: Vec<SlotDecl>,
    /// `tools`: the items, in order. The span is the whole `tools` string literal.
    pub items: Vec<Item>,
    pub tools_span: Span,
    pub when: Option<Condition>,
    pub parallel: Option<Spanned<bool>>,
    pub timeout: Option<Spanned<Duration>>,
    pub on_error: Option<Spanned<OnError>>,
    pub retries: Option<Spanned<u32>>,
    pub missing: Option<Spanned<Missing>>,
    /// For `missing: degrade`: the value each named `out` slot takes when a tool is missing.
    pub fallback: Option<Spanned<Vec<Member>>>,
    /// Fields written but not built whole (`tools` when an item could not be built).
    #[serde(default, skip_serializing_if = "Holes::is_empty")]
    pub holes: Holes,
    /// When `tools` is a hole: how many of `items`, from the first, are exactly as written.
    /// What follows them may be broken, lost or swallowed by the mistake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_as_written: Option<usize>,
}

impl Group {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// Whether `field` (of a group's fields) was written but not built whole.
    pub fn hole(&self, field: &str) -> bool {
        self.holes.has(crate::fields::GROUP, field)
    }

    /// The items known to be as written, from the first: all of them unless `tools` is a hole.
    /// A rule about an item and the items before it holds for these whatever follows them.
    pub fn known_items(&self) -> &[Item] {
        match self.items_as_written {
            Some(n) => self.items.get(..n).unwrap_or(&self.items),
            None => &self.items,
        }
    }

    /// Whether items run concurrently (default `true`).
    pub fn is_parallel(&self) -> bool {
        self.parallel.as_ref().is_none_or(|p| p.value)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
            .as_ref()
            .map_or(Group::DEFAULT_TIMEOUT, |t| t.value)
    }

    pub fn on_error(&self) -> OnError {
        self.on_error.as_ref().map_or(OnError::Abort, |o| o.value)
    }

    pub fn retries(&self) -> u32 {
        self.retries.as_ref().map_or(0, |r| r.value)
    }

    pub fn missing(&self) -> Missing {
        self.missing.as_ref().map_or(Missing::Fail, |m| m.value)
    }

    pub fn input(&self, name: &str) -> Option<&SlotDecl> {
        self.inputs.iter().find(|s| s.name.value == name)
    }

    pub fn output(&self, name: &str) -> Option<&SlotDecl> {
        self.outputs.iter().find(|s| s.name.value == name)
    }
}

/// A declared input or output slot: `"NAME": "TYPE"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotDecl {
    pub name: Spanned<CompactString>,
    pub ty: Spanned<Type>,
}

/// The types of slots and inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Type {
    String,
    Number,
    Integer,
    Bool,
    Array,
    Object,
    Any,
}

impl Type {
    /// The legal spellings, as listed in diagnostics.
    pub const NAMES: &'static [&'static str] = &[
        "string", "number", "integer", "bool", "boolean", "array", "object", "any",
    ];

    pub fn parse(name: &str) -> Option<Type> {
        Some(match name {
            "string" => Type::String,
            "number" => Type::Number,
            "integer" => Type::Integer,
            "bool" | "boolean" => Type::Bool,
            "array" => Type::Array,
            "object" => Type::Object,
            "any" => Type::Any,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Number => "number",
            Type::Integer => "integer",
            Type::Bool => "bool",
            Type::Array => "array",
            Type::Object => "object",
            Type::Any => "any",
        }
    }
}

/// `on_error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    Abort,
    Continue,
    Retry,
}

impl OnError {
    pub const NAMES: &'static [&'static str] = &["abort", "continue", "retry"];

    pub fn parse(name: &str) -> Option<OnError> {
        Some(match name {
            "abort" => OnError::Abort,
            "continue" => OnError::Continue,
            "retry" => OnError::Retry,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Abort => "abort",
            OnError::Continue => "continue",
            OnError::Retry => "retry",
        }
    }
}

/// `missing`: what happens when a tool is not there at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Missing {
    Fail,
    Skip,
    Degrade,
}

impl Missing {
    pub const NAMES: &'static [&'static str] = &["fail", "skip", "degrade"];

    pub fn parse(name: &str) -> Option<Missing> {
        Some(match name {
            "fail" => Missing::Fail,
            "skip" => Missing::Skip,
            "degrade" => Missing::Degrade,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Missing::Fail => "fail",
            Missing::Skip => "skip",
            Missing::Degrade => "degrade",
        }
    }
}

/// One tool call of a group's `tools` string: `{"tool": ..., "args": {...}, "as": ...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The item's object, from `{` to `}`.
    pub span: Span,
    pub tool: Spanned<CompactString>,
    /// `args`; `None` when the item has no `args` field.
    pub args: Option<Spanned<Vec<Member>>>,
    /// `as`: the `out` slot the result is written to.
    pub output: Option<Spanned<CompactString>>,
    /// `unsafe_serial: true`: the author's acknowledgement that a tool which is not parallel-safe
    /// runs in a serial group.
    pub unsafe_serial: Option<Spanned<bool>>,
    /// Fields written but not built whole.
    #[serde(default, skip_serializing_if = "Holes::is_empty")]
    pub holes: Holes,
    /// For a `jq` item whose `filter` is a literal string: where its bytes are in the file.
    /// Not stored: a sequence read back from storage has none, and its filter's diagnostics
    /// cover the whole string.
    #[serde(skip)]
    pub filter_offsets: Option<crate::jq::TextOffsets>,
}

impl Item {
    /// Every tool call is cut off after this long, whatever its own `timeout` says.
    pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

    /// Whether `field` (of an item's fields) was written but not built whole.
    pub fn hole(&self, field: &str) -> bool {
        self.holes.has(crate::fields::ITEM, field)
    }
    /// The argument named `key`, if present.
    pub fn arg(&self, key: &str) -> Option<&Value> {
        self.args
            .as_ref()
            .and_then(|args| args.value.iter().find(|m| m.key.value == key))
            .map(|m| &m.value)
    }
}

/// A key and its value in an object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub key: Spanned<CompactString>,
    pub value: Value,
}

/// A JSON value inside an item's `args` (or a `fallback`), extended with references.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub kind: ValueKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ValueKind {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    /// A string, with the references it interpolates.
    String(Template),
    /// A bare reference where a value stands: `"host": $args.hosts[0]`. Boxed, as in
    /// [`TemplatePart::Ref`]: inline it would make every value its size.
    Ref(Box<Reference>),
    Array(Vec<Value>),
    Object(Vec<Member>),
}

/// A string literal split into literal text and interpolated references.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

impl Template {
    pub fn literal(text: impl Into<CompactString>) -> Template {
        Template {
            parts: vec![TemplatePart::Text(text.into())],
        }
    }

    /// The text, when the template interpolates nothing.
    pub fn as_literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [TemplatePart::Text(text)] => Some(text),
            _ => None,
        }
    }

    pub fn references(&self) -> impl Iterator<Item = &Reference> {
        self.parts.iter().filter_map(|part| match part {
            TemplatePart::Text(_) => None,
            TemplatePart::Ref(reference) => Some(&**reference),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TemplatePart {
    /// Literal text, unescaped (a literal `$` stays `$`).
    Text(CompactString),
    /// `$args.x` or `${args.x}`: replaced by the value rendered per 5.2. Boxed: a reference is
    /// several times the size of a text, and most parts are texts.
    Ref(Box<Reference>),
}

/// `$args.PATH` or `$out.PATH`. The span covers the whole reference, `$` included (and the
/// braces of `${...}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub span: Span,
    pub root: Spanned<Root>,
    /// The slot: the first identifier after the root.
    pub slot: Spanned<CompactString>,
    /// Field accesses and indexes after the slot.
    pub path: Vec<Spanned<Segment>>,
}

impl Reference {
    /// The reference as written, with only its first `segments` path segments:
    /// `$args.hosts[0]` of `$args.hosts[0].name` for 1.
    pub fn text_until(&self, segments: usize) -> String {
        let mut text = format!("${}.{}", self.root.value.as_str(), self.slot.value);
        for segment in self.path.iter().take(segments) {
            match &segment.value {
                Segment::Field(name) => {
                    text.push('.');
                    text.push_str(name);
                }
                Segment::Index(i) => text.push_str(&format!("[{i}]")),
            }
        }
        text
    }
}

/// The reference as written, without the braces of `${...}`: `$args.hosts[0].name`.
impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text_until(self.path.len()))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Root {
    /// `$args`: the group's own inputs.
    Args,
    /// `$out`: a slot written earlier in the same serial group.
    Out,
}

impl Root {
    pub fn as_str(self) -> &'static str {
        match self {
            Root::Args => "args",
            Root::Out => "out",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Segment {
    /// `.name`
    Field(CompactString),
    /// `[index]`
    Index(u64),
}

/// A `when` condition (L1 + L2): an operand, or two compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// The condition's text in the file (inside the string's quotes).
    pub span: Span,
    pub lhs: Operand,
    pub comparison: Option<Comparison>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub op: Spanned<CmpOp>,
    pub rhs: Operand,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operand {
    pub kind: OperandKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OperandKind {
    Ref(Reference),
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Contains => "contains",
        }
    }
}
