//! Semantic tokens for the languages inside strings: the items of a `tools` string and the
//! conditions of `when`. The editor's JSON grammar sees one long string; these tokens show its
//! structure. They are read from the grammar's tree of each item (not the AST), which keeps a half-written
//! item, so it still gets them.

use super::text::{Embedded, Shift};
use super::{SemanticToken, TokenKind};
use seq_catalog::SEQ_WHEN_CALL;
use seq_catalog::jq::Piece;
use seq_syntax::Span;
use seq_syntax::ast::{Condition, ConditionKind, OperandKind, Reference, Root, Segment};
use seq_syntax::condition::parse_condition;
use seq_syntax::escape::MapOffset;
use seq_syntax::fields::key;
use seq_syntax::json::cursor::{
    self, Kind, group_strings, key_text, roots, string_token, tokenize,
};
use seq_syntax::json::{Mode, Node, NodeKind};
use seq_syntax::reference::parse_reference;
use seq_syntax::template::parse_template;
use std::ops::Range;

/// An item of a `tools` string being read: the file, the unescaped string, the item's tree.
struct Item<'a> {
    file: &'a str,
    tools: &'a Embedded,
    root: &'a cursor::Root<'a>,
}

impl Item<'_> {
    /// A span of the item's tree, in the file.
    fn span(&self, span: &Range<usize>) -> Span {
        self.tools.span_of(self.root.range(span))
    }
}

pub(crate) fn semantic_tokens(text: &str) -> Vec<SemanticToken> {
    let mut out = Tokens::default();
    for (field, tok) in group_strings(text) {
        let Some(string) = Embedded::file_string(text, Span::from_range(tok.body())) else {
            continue;
        };
        match field.as_str() {
            key::TOOLS => out.items(text, &string),
            key::WHEN => out.condition(&string),
            _ => {}
        }
    }
    let mut tokens = out.0;
    tokens.sort();
    tokens
}

#[derive(Default)]
struct Tokens(Vec<SemanticToken>);

impl Tokens {
    fn push(&mut self, span: Span, kind: TokenKind) {
        if !span.is_empty() {
            self.0.push(SemanticToken { span, kind });
        }
    }

    /// The items of a `tools` string, read from the item grammar's trees (also an item still
    /// being typed).
    fn items(&mut self, file: &str, tools: &Embedded) {
        let text = tools.text.as_str();
        let tokens = tokenize(text);
        for root in roots(text, Mode::Item, &tokens) {
            let item = Item {
                file,
                tools,
                root: &root,
            };
            let NodeKind::Object(members) = &root.node.kind else {
                self.value(&item, &root.node);
                continue;
            };
            let tool = members
                .iter()
                .find(|m| key_text(text, &root, m) == key::TOOL)
                .and_then(|m| string_token(text, root.range(&m.value.span)));
            let tool_is = |name: &str| {
                tool.as_ref()
                    .is_some_and(|t| text.get(t.body()) == Some(name))
            };
            let when_call = tool_is(SEQ_WHEN_CALL);
            let jq = tool_is(seq_syntax::jq::TOOL);
            for member in members {
                self.key(&item, member);
                match key_text(text, &root, member).as_str() {
                    key::TOOL if tool.is_some() => {
                        self.push(item.span(&member.value.span), TokenKind::Tool);
                    }
                    key::ARGS if let NodeKind::Object(args) = &member.value.kind => {
                        for arg in args {
                            self.key(&item, arg);
                            let condition = when_call
                                && key_text(text, &root, arg) == "when"
                                && matches!(arg.value.kind, NodeKind::String(_));
                            let span = item.span(&arg.value.span);
                            let filter = jq
                                && key_text(text, &root, arg) == seq_syntax::jq::FILTER
                                && matches!(arg.value.kind, NodeKind::String(_));
                            if filter && self.filter(file, span) {
                                continue;
                            }
                            match condition.then(|| Embedded::item_string(file, span)) {
                                Some(Some(condition)) => self.condition(&condition),
                                Some(None) => self.push(span, TokenKind::String),
                                None => self.value(&item, &arg.value),
                            }
                        }
                    }
                    _ => self.value(&item, &member.value),
                }
            }
        }
    }

    /// A `jq` item's literal filter, piece by piece; false (nothing pushed) when it does not
    /// lex or interpolates a reference, which the checker reports.
    fn filter(&mut self, file: &str, literal: Span) -> bool {
        let Some(filter) = Embedded::item_string(file, literal) else {
            return false;
        };
        let (template, _) = parse_template(&filter.text, &filter);
        let pieces = seq_catalog::jq::pieces(&filter.text);
        if template.references().next().is_some() || pieces.is_empty() {
            return false;
        }
        for (range, piece) in pieces {
            let kind = match piece {
                Piece::Keyword => TokenKind::Keyword,
                Piece::Function => TokenKind::Tool,
                Piece::Field => TokenKind::Field,
                Piece::Variable => TokenKind::Variable,
                Piece::Number => TokenKind::Number,
                Piece::String => TokenKind::String,
                Piece::Operator => TokenKind::Operator,
            };
            self.push(filter.span_of(range), kind);
        }
        true
    }

    fn key(&mut self, item: &Item<'_>, member: &seq_syntax::json::Member<'_>) {
        self.push(item.span(&member.key_span), TokenKind::Key);
    }

    /// A value inside an item, and the values inside it. What recovery kept as an error is
    /// read token by token: a string being typed is still a string.
    fn value(&mut self, item: &Item<'_>, node: &Node<'_>) {
        let text = item.tools.text.as_str();
        match &node.kind {
            NodeKind::Object(members) => {
                for member in members {
                    self.key(item, member);
                    self.value(item, &member.value);
                }
            }
            NodeKind::Array(elements) => {
                for element in elements {
                    self.value(item, element);
                }
            }
            NodeKind::String(_) => self.string(item.file, item.span(&node.span), true),
            NodeKind::Number(_) => self.push(item.span(&node.span), TokenKind::Number),
            NodeKind::Null | NodeKind::Bool(_) => {
                self.push(item.span(&node.span), TokenKind::Keyword)
            }
            NodeKind::Ref(_) => self.bare_reference(item.tools, item.root.range(&node.span)),
            NodeKind::Error => {
                let range = item.root.range(&node.span);
                let Some(skipped) = text.get(range.clone()) else {
                    return;
                };
                for tok in cursor::Tokens::new(skipped) {
                    let tok = range.start + tok.range.start..range.start + tok.range.end;
                    let span = item.tools.span_of(tok.clone());
                    match tokenize(text.get(tok.clone()).unwrap_or(""))
                        .first()
                        .map(|t| t.kind)
                    {
                        Some(Kind::String { closed }) => self.string(item.file, span, closed),
                        Some(Kind::Number) => self.push(span, TokenKind::Number),
                        Some(Kind::Word) => {
                            if matches!(text.get(tok), Some("true" | "false" | "null")) {
                                self.push(span, TokenKind::Keyword);
                            }
                        }
                        Some(Kind::Ref) => self.bare_reference(item.tools, tok),
                        Some(
                            Kind::LBrace
                            | Kind::RBrace
                            | Kind::LBrack
                            | Kind::RBrack
                            | Kind::Colon
                            | Kind::Comma
                            | Kind::Other,
                        )
                        | None => {}
                    }
                }
            }
        }
    }

    /// A string inside an item: a template, split around the references it interpolates.
    fn string(&mut self, file: &str, literal: Span, closed: bool) {
        let template = closed
            .then(|| Embedded::item_string(file, literal))
            .flatten()
            .map(|text| parse_template(&text.text, &text).0);
        let Some(template) = template else {
            self.push(literal, TokenKind::String);
            return;
        };
        let mut at = literal.start;
        for reference in template.references() {
            self.push(Span::new(at, reference.span.start), TokenKind::String);
            self.reference(reference);
            at = reference.span.end;
        }
        self.push(Span::new(at, literal.end), TokenKind::String);
    }

    fn bare_reference(&mut self, tools: &Embedded, range: Range<usize>) {
        let text = tools.text.get(range.clone()).unwrap_or("");
        let map = Shift {
            by: super::text::offset(range.start),
            map: tools,
        };
        if let Ok(reference) = parse_reference(text, &map) {
            self.reference(&reference);
        }
    }

    fn reference(&mut self, reference: &Reference) {
        let root = Span::new(reference.span.start, reference.root.span.end);
        self.push(root, TokenKind::RefRoot);
        let slot = match reference.root.value {
            Root::Args => Some(TokenKind::Input),
            Root::Out => Some(TokenKind::Output),
            // `$each` and `$each_index` are the root alone.
            Root::Each | Root::EachIndex => None,
        };
        if let Some(slot) = slot {
            self.push(reference.slot.span, slot);
        }
        for segment in &reference.path {
            let span = segment.span;
            // `.` and `[`/`]` are one byte in the file at any depth.
            match segment.value {
                Segment::Field(_) => {
                    self.push(Span::new(span.start + 1, span.end), TokenKind::Field)
                }
                Segment::Index(_) => self.push(
                    Span::new(span.start + 1, span.end.saturating_sub(1)),
                    TokenKind::Index,
                ),
            }
        }
    }

    /// A condition; when it does not parse, its references still get tokens.
    fn condition(&mut self, text: &Embedded) {
        let map: &dyn MapOffset = text;
        let (condition, _) = parse_condition(&text.text, map);
        let Some(condition) = condition else {
            let (template, _) = parse_template(&text.text, map);
            for reference in template.references() {
                self.reference(reference);
            }
            return;
        };
        self.condition_part(&condition);
    }

    /// The operands and operators of a parsed condition (`!`, `&&`, `||` and the comparisons).
    fn condition_part(&mut self, condition: &Condition) {
        match &condition.kind {
            ConditionKind::Test(test) => {
                for operand in test.operands() {
                    match &operand.kind {
                        OperandKind::Ref(reference) => self.reference(reference),
                        OperandKind::Null | OperandKind::Bool(_) => {
                            self.push(operand.span, TokenKind::Keyword)
                        }
                        OperandKind::Number(_) => self.push(operand.span, TokenKind::Number),
                        OperandKind::String(_) => self.push(operand.span, TokenKind::String),
                    }
                }
                if let Some(comparison) = &test.comparison {
                    self.push(comparison.op.span, TokenKind::Operator);
                }
            }
            ConditionKind::Not(op, inner) => {
                self.push(*op, TokenKind::Operator);
                self.condition_part(inner);
            }
            ConditionKind::Logic { op, lhs, rhs } => {
                self.condition_part(lhs);
                self.push(op.span, TokenKind::Operator);
                self.condition_part(rhs);
            }
        }
    }
}
