//! The typed AST of a tool sequence: what the checker checks, the engine runs and storage keeps.
//!
//! Every node carries the span of the bytes it came from in the file. The AST holds no error
//! nodes: whatever could not be built is reported as a diagnostic and left out, so later stages
//! never meet a half-parsed node. A parse with error diagnostics is never run.

mod condition;

use crate::fields::key;
use crate::span::{Span, Spanned};
pub use compact_str::CompactString;
pub use condition::{
    CmpOp, Comparison, Condition, ConditionKind, LogicOp, Operand, OperandKind, Test,
};
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
    /// `local`: slots written and read as `out` slots are, but not part of the group's result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locals: Vec<SlotDecl>,
    /// `tools`: the items, in order. The span is the whole `tools` string literal.
    pub items: Vec<Item>,
    pub tools_span: Span,
    pub when: Option<Condition>,
    pub parallel: Option<Spanned<bool>>,
    pub timeout: Option<Spanned<Duration>>,
    pub on_error: Option<Spanned<OnError>>,
    pub retries: Option<Spanned<u32>>,
    /// `retries` written as `"$args.NAME"`: the count is that input's value, held to the bound
    /// when the group's inputs are admitted. The span is the string's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries_from: Option<Spanned<CompactString>>,
    /// `retry_delay`: the pause before the first retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay: Option<Spanned<Duration>>,
    /// `retry_backoff`: each pause is this many times the one before (1 to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_backoff: Option<Spanned<f64>>,
    pub missing: Option<Spanned<Missing>>,
    /// For `missing: degrade`: the value each named `out` slot takes when a tool is missing.
    pub fallback: Option<Spanned<Vec<Member>>>,
    /// `max_parallel`: how many runs of the group's tools (items and `each` elements alike)
    /// may be in flight at once; `None`: no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<Spanned<u32>>,
    /// Fields written but not built whole (`tools` when an item could not be built).
    #[serde(default, skip_serializing_if = "Holes::is_empty")]
    pub holes: Holes,
    /// When `tools` is a hole: how many of `items`, from the first, are exactly as written.
    /// What follows them may be broken, lost or swallowed by the mistake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_as_written: Option<usize>,
}

impl Group {
    /// The timeout of a group that gives none (its home is the field table's defaults).
    pub const DEFAULT_TIMEOUT: Duration = crate::fields::defaults::TIMEOUT;
    /// No retry pause is longer than this, whatever `retry_delay` and `retry_backoff` say.
    pub const MAX_PAUSE: Duration = Duration::from_secs(24 * 3600);

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

    /// Whether items run concurrently. Left out, each of these is the field table's default
    /// (`crate::fields::defaults`).
    pub fn is_parallel(&self) -> bool {
        self.parallel
            .as_ref()
            .map_or(crate::fields::defaults::PARALLEL, |p| p.value)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
            .as_ref()
            .map_or(Group::DEFAULT_TIMEOUT, |t| t.value)
    }

    pub fn on_error(&self) -> OnError {
        self.on_error
            .as_ref()
            .map_or(crate::fields::defaults::ON_ERROR, |o| o.value)
    }

    pub fn retries(&self) -> u32 {
        self.retries
            .as_ref()
            .map_or(crate::fields::defaults::RETRIES, |r| r.value)
    }

    pub fn missing(&self) -> Missing {
        self.missing
            .as_ref()
            .map_or(crate::fields::defaults::MISSING, |m| m.value)
    }

    /// The pause before retry `n` (from 1): `retry_delay × retry_backoff^(n-1)`; zero without
    /// `retry_delay`. Bounded by [`Group::MAX_PAUSE`], so that no product overflows.
    pub fn retry_pause(&self, n: u32) -> Duration {
        let delay = self
            .retry_delay
            .as_ref()
            .map_or(Duration::ZERO, |d| d.value);
        if delay.is_zero() || n == 0 {
            return Duration::ZERO;
        }
        let backoff = self.retry_backoff.as_ref().map_or(1.0, |b| b.value);
        let exponent = i32::try_from(n - 1).unwrap_or(i32::MAX);
        let seconds = delay.as_secs_f64() * backoff.powi(exponent);
        Duration::try_from_secs_f64(seconds)
            .unwrap_or(Group::MAX_PAUSE)
            .min(Group::MAX_PAUSE)
    }

    /// The pauses of all the group's retries together: what its `timeout` must leave room for.
    pub fn retry_pauses(&self) -> Duration {
        (1..=self.retries()).map(|n| self.retry_pause(n)).sum()
    }

    pub fn input(&self, name: &str) -> Option<&SlotDecl> {
        self.inputs.iter().find(|s| s.name.value == name)
    }

    pub fn output(&self, name: &str) -> Option<&SlotDecl> {
        self.outputs.iter().find(|s| s.name.value == name)
    }

    pub fn local(&self, name: &str) -> Option<&SlotDecl> {
        self.locals.iter().find(|s| s.name.value == name)
    }

    /// A slot items write and read as `$out.NAME`: an output, else a local.
    pub fn slot(&self, name: &str) -> Option<&SlotDecl> {
        self.output(name).or_else(|| self.local(name))
    }

    /// Every slot items may write: the outputs, then the locals.
    pub fn slots(&self) -> impl Iterator<Item = &SlotDecl> {
        self.outputs.iter().chain(&self.locals)
    }
}

/// A declared input or output slot: `"NAME": "TYPE"`, or for an input
/// `"NAME": {"type": "TYPE", "default": V, "required": B, "description": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotDecl {
    pub name: Spanned<CompactString>,
    pub ty: Spanned<Type>,
    /// The value an input not passed takes (a literal: references in it are text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Spanned<serde_json::Value>>,
    /// `required: true`: a run or call that leaves the input out fails before anything runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Spanned<bool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Spanned<String>>,
}

impl SlotDecl {
    /// A slot declared by its type name alone.
    pub fn typed(name: Spanned<CompactString>, ty: Spanned<Type>) -> SlotDecl {
        SlotDecl {
            name,
            ty,
            default: None,
            required: None,
            description: None,
        }
    }

    /// Whether a run or call must pass this input.
    pub fn is_required(&self) -> bool {
        self.required.as_ref().is_some_and(|r| r.value)
    }

    /// The input as `seq_list` and hover show it: `string`, `bool, default false`,
    /// `string, required: the branch to deploy`.
    pub fn signature(&self) -> String {
        let mut text = self.ty.value.as_str().to_owned();
        if let Some(default) = &self.default {
            text.push_str(", default ");
            text.push_str(&default.value.to_string());
        } else if self.is_required() {
            text.push_str(", required");
        }
        if let Some(description) = &self.description {
            text.push_str(": ");
            text.push_str(&description.value);
        }
        text
    }
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
    /// `as`: the `out` slot the result is written to. Stored ASTs name it `output`.
    #[serde(rename = "output")]
    pub as_slot: Option<Spanned<CompactString>>,
    /// `unsafe_serial: true`: the author's acknowledgement that a tool which is not parallel-safe
    /// runs in a serial group.
    pub unsafe_serial: Option<Spanned<bool>>,
    /// `error_as`: the `out` slot the item's error is written to when it fails after its
    /// retries (the item is then `caught`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_as: Option<Spanned<CompactString>>,
    /// `each`: the item runs once per element of this value, a literal array
    /// ([`ValueKind::Array`]) or a bare reference ([`ValueKind::Ref`]); lowering builds no other
    /// kind here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub each: Option<Value>,
    /// `max_parallel` of an `each` item: its elements run side by side, at most this many at
    /// once, in a serial group too (the item still ends before the next one starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<Spanned<u32>>,
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
    /// The bound of an `each` item whose elements run side by side (`max_parallel`); `None`
    /// when its elements follow the group, or the item has no `each`.
    pub fn fan_out(&self) -> Option<u32> {
        self.max_parallel
            .as_ref()
            .filter(|_| self.each.is_some())
            .map(|m| m.value)
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

impl Value {
    /// The span of this string value's body `text` when it can be told exactly: inside a
    /// `tools` string the whole literal is `\"` + body + `\"` when the body needs no escapes.
    /// Otherwise the whole literal.
    pub fn string_body(&self, text: &str) -> Span {
        if self.span.len() as usize == text.len() + 4 {
            Span::new(self.span.start + 2, self.span.end - 2)
        } else {
            self.span
        }
    }
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

/// Projections onto one kind each: what is not of that kind, a kind added later included, is
/// `None`, so no caller needs to list the others.
impl ValueKind {
    /// The template of a string value.
    pub fn as_string(&self) -> Option<&Template> {
        if let ValueKind::String(template) = self {
            Some(template)
        } else {
            None
        }
    }

    /// The reference of a bare reference.
    pub fn as_reference(&self) -> Option<&Reference> {
        if let ValueKind::Ref(reference) = self {
            Some(reference)
        } else {
            None
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        if let ValueKind::Array(elements) = self {
            Some(elements)
        } else {
            None
        }
    }

    /// The members of an object.
    pub fn as_object(&self) -> Option<&[Member]> {
        if let ValueKind::Object(members) = self {
            Some(members)
        } else {
            None
        }
    }
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

/// `$args.PATH`, `$out.PATH`, `$each` (with a path) or `$each_index`. The span covers the whole
/// reference, `$` included (and the braces of `${...}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub span: Span,
    pub root: Spanned<Root>,
    /// The slot: the first identifier after the root. Empty, at the end of the root, for the
    /// roots that name no slot (`$each`, `$each_index`: [`Root::has_slot`]).
    pub slot: Spanned<CompactString>,
    /// Field accesses and indexes after the slot.
    pub path: Vec<Spanned<Segment>>,
}

impl Reference {
    /// The reference as written, with only its first `segments` path segments:
    /// `$args.hosts[0]` of `$args.hosts[0].name` for 1.
    pub fn text_until(&self, segments: usize) -> String {
        let mut text = if self.root.value.has_slot() {
            format!("${}.{}", self.root.value.as_str(), self.slot.value)
        } else {
            format!("${}", self.root.value.as_str())
        };
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
    /// `$each`: the element an `each` item runs for.
    Each,
    /// `$each_index`: the element's place in the array, from 0.
    EachIndex,
}

impl Root {
    pub fn as_str(self) -> &'static str {
        match self {
            Root::Args => "args",
            Root::Out => "out",
            Root::Each => "each",
            Root::EachIndex => "each_index",
        }
    }

    /// Whether a slot's name follows the root (`$args.NAME`); `$each` and `$each_index` read
    /// no slot.
    pub fn has_slot(self) -> bool {
        match self {
            Root::Args | Root::Out => true,
            Root::Each | Root::EachIndex => false,
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
