//! The checker's diagnostics as `seq_create` reports them: structured (for MCP's structured
//! content and the success value's `warnings`) and as text (for the error's `detail`).
//!
//! Positions: a file given as `file` gets 1-based `line` and `column` (in characters, as
//! `seqc check --format json` counts). The parameter form has no text the model wrote — the
//! front end parses a rendering of `{name, description, groups}` — so it gets no position; the
//! `excerpt` (the culprit's text) says where. A finding in *another* stored sequence, one that
//! the new sequence would break (a cycle or a chain too deep through it), names that sequence.

use seq_syntax::ast::{Group, Item, Member, Sequence, Value, ValueKind};
use seq_syntax::{Diagnostic, LineIndex, Severity, Span};
use serde::Serialize;

/// Longest excerpt quoted, in characters.
const EXCERPT: usize = 80;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// The stable code (`seqc explain CODE`).
    pub code: &'static str,
    pub message: String,
    /// Set when the finding is in another stored sequence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// Where in the sequence, as its author wrote it: `group `report` (groups[1]), item 2
    /// (`cmd_run`), args.command`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Where the diagnostics' spans point.
pub(super) enum Origin<'a> {
    /// The text of a file, with its line index (built once for all its diagnostics):
    /// positions are meaningful.
    File(&'a str, LineIndex),
    /// The rendering of the parameter form: only excerpts are.
    Value(&'a str),
    /// A stored sequence, whose text is not kept.
    Stored(&'a str),
}

impl Finding {
    pub(super) fn new(diagnostic: &Diagnostic, origin: &Origin<'_>) -> Finding {
        let mut finding = Finding {
            severity: diagnostic.severity,
            code: diagnostic.code.as_str(),
            message: diagnostic.message.clone(),
            sequence: None,
            line: None,
            column: None,
            excerpt: None,
            path: None,
            hint: diagnostic.help.clone(),
        };
        match origin {
            Origin::File(text, index) => {
                let at = index.line_col(text, diagnostic.span.start);
                finding.line = Some(at.line);
                finding.column = Some(at.column);
                finding.excerpt = excerpt(text, diagnostic);
            }
            Origin::Value(text) => finding.excerpt = excerpt(text, diagnostic),
            Origin::Stored(name) => finding.sequence = Some((*name).to_owned()),
        }
        finding
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `E0502 at 3:14: message (help: ...)`, one line.
    pub fn to_line(&self) -> String {
        let mut line = format!("{} {}", self.severity.as_str(), self.code);
        match (&self.sequence, self.line, self.column, &self.excerpt) {
            (Some(sequence), ..) => line.push_str(&format!(" in `#{sequence}`")),
            (None, Some(l), Some(c), _) => line.push_str(&format!(" at {l}:{c}")),
            (None, _, _, Some(excerpt)) => line.push_str(&format!(" at `{excerpt}`")),
            (None, ..) => {}
        }
        if let (None, Some(path)) = (&self.sequence, &self.path) {
            line.push_str(&format!(" in {path}"));
        }
        line.push_str(&format!(": {}", self.message));
        if let Some(hint) = &self.hint {
            line.push_str(&format!(" (help: {hint})"));
        }
        line
    }
}

fn excerpt(text: &str, diagnostic: &Diagnostic) -> Option<String> {
    let quoted = text.get(diagnostic.span.range())?;
    if quoted.is_empty() {
        return None;
    }
    let mut chars = quoted.chars();
    let mut out: String = chars.by_ref().take(EXCERPT).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    Some(out)
}

/// The detail of a refusal: the count of errors, in one line; the findings themselves travel
/// beside it, structured ([`super::SeqOutcome::diagnostics`]), and [`lines`] renders them.
pub(super) fn render(findings: &[Finding]) -> String {
    let errors = findings.iter().filter(|f| f.is_error()).count();
    format!(
        "the sequence has {errors} error{} (listed in `diagnostics`)",
        if errors == 1 { "" } else { "s" }
    )
}

/// One line per finding, errors first, for a reader of text.
pub fn lines(findings: &[Finding]) -> String {
    let ordered = findings
        .iter()
        .filter(|f| f.is_error())
        .chain(findings.iter().filter(|f| !f.is_error()));
    let mut text = String::new();
    for finding in ordered {
        text.push_str("\n- ");
        text.push_str(&finding.to_line());
    }
    text
}

/// Where `span` lies in `sequence`, in the words of its JSON: the group (its name, and its index
/// in `groups` when every group was built, so that indexes are the author's), the item of
/// `tools` (numbered from 1, as run reports number them) and the field. `None` outside every
/// group.
pub(super) fn locate(sequence: &Sequence, span: Span) -> Option<String> {
    let at = span.start;
    let (index, group) = sequence
        .groups
        .iter()
        .enumerate()
        .find(|(_, g)| g.span.contains(at))?;
    let mut path = match (group.name.value.as_str(), sequence.hole("groups")) {
        ("", true) => "a group".to_owned(),
        ("", false) => format!("groups[{index}]"),
        (name, true) => format!("group `{name}`"),
        (name, false) => format!("group `{name}` (groups[{index}])"),
    };
    let item = group
        .items
        .iter()
        .enumerate()
        .find(|(_, item)| item.span.contains(at));
    let field = match item {
        Some((i, item)) => {
            path.push_str(&format!(", item {} (`{}`)", i + 1, item.tool.value));
            item_field(item, at)
        }
        None => group_field(group, at),
    };
    if let Some(field) = field {
        path.push_str(", ");
        path.push_str(&field);
    }
    Some(path)
}

fn item_field(item: &Item, at: u32) -> Option<String> {
    if let Some(args) = item.args.as_ref().filter(|a| a.span.contains(at)) {
        return Some(members_path("args", &args.value, at));
    }
    [
        (item.tool.span, "tool"),
        (
            item.as_slot.as_ref().map_or(Span::default(), |o| o.span),
            "as",
        ),
        (
            item.unsafe_serial
                .as_ref()
                .map_or(Span::default(), |u| u.span),
            "unsafe_serial",
        ),
    ]
    .into_iter()
    .find(|(span, _)| span.contains(at))
    .map(|(_, field)| field.to_owned())
}

/// `args.command`, `args.args.host`, `args.paths[1]`: the member path down to the value at `at`.
fn members_path(prefix: &str, members: &[Member], at: u32) -> String {
    let mut path = prefix.to_owned();
    let mut members = members;
    loop {
        let Some(member) = members
            .iter()
            .find(|m| m.key.span.contains(at) || m.value.span.contains(at))
        else {
            return path;
        };
        path.push('.');
        path.push_str(&member.key.value);
        let mut value: &Value = &member.value;
        loop {
            match &value.kind {
                ValueKind::Object(inner) if value.span.contains(at) => {
                    members = inner;
                    break;
                }
                ValueKind::Array(values) => {
                    let Some((i, inner)) =
                        values.iter().enumerate().find(|(_, v)| v.span.contains(at))
                    else {
                        return path;
                    };
                    path.push_str(&format!("[{i}]"));
                    value = inner;
                }
                ValueKind::Object(_)
                | ValueKind::Null
                | ValueKind::Bool(_)
                | ValueKind::Number(_)
                | ValueKind::String(_)
                | ValueKind::Ref(_) => return path,
            }
        }
    }
}

fn group_field(group: &Group, at: u32) -> Option<String> {
    for (field, slots) in [("in", &group.inputs), ("out", &group.outputs)] {
        if let Some(slot) = slots
            .iter()
            .find(|s| s.name.span.contains(at) || s.ty.span.contains(at))
        {
            return Some(format!("{field}.{}", slot.name.value));
        }
    }
    let spans = [
        (Some(group.name.span), "name"),
        (group.description.as_ref().map(|d| d.span), "description"),
        (Some(group.tools_span), "tools"),
        (group.when.as_ref().map(|w| w.span), "when"),
        (group.parallel.as_ref().map(|p| p.span), "parallel"),
        (group.timeout.as_ref().map(|t| t.span), "timeout"),
        (group.on_error.as_ref().map(|o| o.span), "on_error"),
        (group.retries.as_ref().map(|r| r.span), "retries"),
        (group.missing.as_ref().map(|m| m.span), "missing"),
        (group.fallback.as_ref().map(|f| f.span), "fallback"),
    ];
    spans
        .into_iter()
        .find(|(span, _)| span.is_some_and(|s| s.contains(at)))
        .map(|(_, field)| field.to_owned())
}
