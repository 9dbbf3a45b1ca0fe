//! Semantic tokens for the languages inside strings: the items of a `tools` string and the
//! conditions of `when`. The editor's JSON grammar sees one long string; these tokens show its
//! structure. They are read from the text (not the AST), so a half-written item still gets them.

use super::text::{Embedded, Shift};
use super::{SemanticToken, TokenKind};
use seq_check::catalog::SEQ_WHEN_CALL;
use seq_syntax::Span;
use seq_syntax::ast::{OperandKind, Reference, Root, Segment};
use seq_syntax::condition::parse_condition;
use seq_syntax::escape::MapOffset;
use seq_syntax::fields::key;
use seq_syntax::json::lenient::{Kind, Role, Tok, Walker, group_strings, tokenize};
use seq_syntax::reference::parse_reference;
use seq_syntax::template::parse_template;

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

    /// The items of a `tools` string.
    fn items(&mut self, file: &str, tools: &Embedded) {
        let mut walker = Walker::default();
        for tok in tokenize(&tools.text) {
            let depth = walker.frames.len();
            let key = walker
                .frames
                .last()
                .and_then(|f| f.key.clone())
                .unwrap_or_default();
            let in_args = depth == 2
                && walker
                    .frames
                    .first()
                    .is_some_and(|f| f.key.as_deref() == Some(key::ARGS));
            let when_call = walker
                .frames
                .first()
                .and_then(|f| f.member(key::TOOL))
                .and_then(|m| m.text.as_deref())
                == Some(SEQ_WHEN_CALL);
            let role = walker.feed(&tools.text, &tok);
            let span = tools.span_of(tok.range.clone());
            match role {
                Role::Key(_) => self.push(span, TokenKind::Key),
                Role::Value => match tok.kind {
                    Kind::String { .. } if depth == 1 && key == key::TOOL => {
                        self.push(span, TokenKind::Tool)
                    }
                    Kind::String { closed: true } if in_args && key == "when" && when_call => {
                        match Embedded::item_string(file, span) {
                            Some(condition) => self.condition(&condition),
                            None => self.push(span, TokenKind::String),
                        }
                    }
                    Kind::String { closed } => self.string(file, span, closed),
                    Kind::Number => self.push(span, TokenKind::Number),
                    Kind::Word => {
                        let word = tools.text.get(tok.range.clone()).unwrap_or("");
                        if matches!(word, "true" | "false" | "null") {
                            self.push(span, TokenKind::Keyword);
                        }
                    }
                    Kind::Ref => self.bare_reference(tools, &tok),
                    Kind::LBrace
                    | Kind::RBrace
                    | Kind::LBrack
                    | Kind::RBrack
                    | Kind::Colon
                    | Kind::Comma
                    | Kind::Other => {}
                },
                Role::Other => {}
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

    fn bare_reference(&mut self, tools: &Embedded, tok: &Tok) {
        let text = tools.text.get(tok.range.clone()).unwrap_or("");
        let map = Shift {
            by: super::text::offset(tok.range.start),
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
            Root::Args => TokenKind::Input,
            Root::Out => TokenKind::Output,
        };
        self.push(reference.slot.span, slot);
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
        let operands =
            std::iter::once(&condition.lhs).chain(condition.comparison.iter().map(|c| &c.rhs));
        for operand in operands {
            match &operand.kind {
                OperandKind::Ref(reference) => self.reference(reference),
                OperandKind::Null | OperandKind::Bool(_) => {
                    self.push(operand.span, TokenKind::Keyword)
                }
                OperandKind::Number(_) => self.push(operand.span, TokenKind::Number),
                OperandKind::String(_) => self.push(operand.span, TokenKind::String),
            }
        }
        if let Some(comparison) = &condition.comparison {
            self.push(comparison.op.span, TokenKind::Operator);
        }
    }
}
