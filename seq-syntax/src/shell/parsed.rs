//! The shell parser's reading of where each value stands (tree-sitter-bash).
//!
//! The text parsed is the author's literal text with each reference replaced by the expansion of
//! its own variable, `${SEQ_V1}`, `${SEQ_V2}`, ...: the text the shell will read, up to the
//! quotes the engine adds around a word. Each reference's context is read from the node that
//! holds its expansion and the nodes around it. Anything the parser cannot place for certain —
//! a syntax error anywhere, an expansion that did not come out as one — is a problem, never a
//! guess.

use super::{Context, Place, Problem, Uncertain, value_variable};
use crate::ast::TemplatePart;
use std::cell::RefCell;
use tree_sitter::{Node, Parser, Tree};

thread_local! {
    /// One parser per thread: making one loads the grammar's tables.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The parser's context for each reference of `parts`, in order.
pub(super) fn contexts(parts: &[TemplatePart]) -> Vec<Result<Context, Problem>> {
    let mut text = String::new();
    let mut spans = Vec::new();
    for part in parts {
        match part {
            TemplatePart::Text(t) => text.push_str(t),
            TemplatePart::Ref(_) => {
                let start = text.len();
                text.push_str("${");
                text.push_str(&value_variable(spans.len()));
                text.push('}');
                spans.push((start, text.len()));
            }
        }
    }
    let unplaced = Err(Problem::Uncertain(Uncertain::Unparsed));
    let Some(tree) = parse(&text) else {
        return vec![unplaced; spans.len()];
    };
    let root = tree.root_node();
    // An error node anywhere: the parser guessed at the text's structure, so no place is sure.
    if root.has_error() {
        return vec![unplaced; spans.len()];
    }
    spans
        .iter()
        .map(|&(start, end)| place(root, &text, start, end))
        .collect()
}

fn parse(text: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(text, None)
    })
}

/// The context of the expansion written at `start..end`.
fn place(root: Node<'_>, text: &str, start: usize, end: usize) -> Result<Context, Problem> {
    let Some(node) = root.descendant_for_byte_range(start, end) else {
        return Err(Problem::Uncertain(Uncertain::Unparsed));
    };
    // Inside double quotes the grammar lets an expansion's node take the blanks before it
    // (`" ${SEQ_V1}"`): they are the string's text, not part of the expansion.
    let whole = node.end_byte() == end
        && text
            .get(node.start_byte()..start)
            .is_some_and(|gap| gap.bytes().all(|b| b == b' ' || b == b'\t'));
    if !(whole && node.kind() == "expansion") {
        // The expansion did not come out as one: it is text of whatever holds it. (In a
        // here-document that is a quoted delimiter's body, which the scan refuses, or a body
        // the grammar reads as text where shells expand: not certain either way.)
        return Err(match node.kind() {
            "comment" => Problem::Unsafe(Place::Comment),
            "raw_string" => return Ok(Context::Single),
            "ansi_c_string" => Problem::Unsafe(Place::DollarQuote),
            _ => Problem::Uncertain(Uncertain::Unparsed),
        });
    }
    // The first level up that sets quoting decides the context; every level is then checked
    // for places where the shell evaluates or re-reads the text.
    let mut context = None;
    // The expansion is an unquoted operand of a `${...}`.
    let mut operand = false;
    let mut node = node;
    while let Some(parent) = node.parent() {
        match parent.kind() {
            "arithmetic_expansion" | "subscript" | "c_style_for_statement" => {
                return Err(Problem::Uncertain(Uncertain::Arithmetic));
            }
            // `((...))` is a compound statement opened by `((`.
            "compound_statement" if opens_with(parent, "((") => {
                return Err(Problem::Uncertain(Uncertain::Arithmetic));
            }
            "command_substitution" if opens_with(parent, "`") => {
                return Err(Problem::Unsafe(Place::Backquotes));
            }
            // A substitution of its own inside a body: a level the engine does not place.
            "heredoc_body" if context.is_some() => {
                return Err(Problem::Unsafe(Place::HereDocument));
            }
            "string" | "heredoc_body" if context.is_none() => {
                if operand {
                    // Unquoted inside a quoted `${...}`: shells differ on its quoting.
                    return Err(Problem::Uncertain(Uncertain::BareInQuotedBrace));
                }
                context = Some(Context::Double);
            }
            "expansion" if context.is_none() => operand = true,
            "command_substitution" | "process_substitution" | "program" if context.is_none() => {
                context = Some(Context::Word);
            }
            _ => {}
        }
        node = parent;
    }
    context.ok_or(Problem::Uncertain(Uncertain::Unparsed))
}

/// Whether the first token of `node` is `token` (`((` or a backquote).
fn opens_with(node: Node<'_>, token: &str) -> bool {
    node.child(0).is_some_and(|c| c.kind() == token)
}
