//! The chumsky grammar of strict JSON over logos tokens, with recovery at separators.
//!
//! [`scan`](super::scan) runs first: it reports malformed tokens, drops comments and trailing
//! commas, and cuts off structures nested too deeply, so the grammar only deals with structure.

use super::lexer::Token;
use super::report::{self, Context};
use super::scan::scan;
use super::tree::{Member, Node, NodeKind};
use crate::diagnostic::{self, Diagnostic};
use std::cell::OnceCell;
use chumsky::input::{Input, MappedInput};
use chumsky::prelude::{
    IterParser, Parser, Rich, SimpleSpan, any, choice, end, extra, just, nested_delimiters,
    recursive, select, skip_then_retry_until, skip_until, via_parser,
};

/// Brackets and braces nested deeper than this are reported (E0006) instead of parsed, so that
/// hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// Which JSON is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The sequence file: strict JSON.
    File,
    /// An item of a `tools` string: JSON plus bare references as values (D-2).
    Item,
}

/// Labels of the grammar's expectations; [`report`] turns them back into what was expected.
pub(super) const VALUE: &str = "a JSON value";
pub(super) const KEY: &str = "a string key";

type Tokens<'tok, 'src> = &'tok [(Token<'src>, SimpleSpan)];
type In<'tok, 'src> = MappedInput<'tok, Token<'src>, SimpleSpan, Tokens<'tok, 'src>>;
type Extra<'tok, 'src> = extra::Err<Rich<'tok, Token<'src>, SimpleSpan>>;

/// Splits a token buffer entry for chumsky (a named fn: a closure trips higher-ranked lifetimes).
fn project<'tok, 'src>(entry: &'tok (Token<'src>, SimpleSpan)) -> (&'tok Token<'src>, &'tok SimpleSpan) {
    (&entry.0, &entry.1)
}

/// Parses `text`. Never fails wholesale: returns the tree it could build (with error nodes where
/// recovery skipped input; `None` only when nothing resembling a value was found) and every
/// syntax diagnostic, with spans relative to `text`.
///
/// In [`Mode::Item`] the text of a fix is escaped for the JSON string the item was written in.
pub fn parse(text: &str, mode: Mode) -> (Option<Node<'_>>, Vec<Diagnostic>) {
    let scanned = scan(text, mode);
    let mut diagnostics = scanned.diagnostics;
    if scanned.tokens.is_empty() {
        diagnostics.push(report::no_value(text.len(), mode));
        diagnostic::sort(&mut diagnostics);
        return (None, diagnostics);
    }

    let eoi = SimpleSpan::from(text.len()..text.len());
    let input = scanned.tokens.as_slice().map(eoi, project as fn(_) -> _);
    let (output, errors) = document().parse(input).into_output_errors();

    let cx = Context {
        mode,
        tokens: &scanned.tokens,
        unclosed: &scanned.unclosed,
        parents: OnceCell::new(),
    };
    // Recovery can meet one mistake several times (each unclosed level at the end of input):
    // one diagnostic per position is enough.
    let mut reported = Vec::with_capacity(errors.len());
    for error in &errors {
        let at = error.span().start;
        // A token the scan replaced has been reported already.
        let replaced = matches!(error.found(), Some(Token::Invalid(_)));
        if !replaced && !reported.contains(&at) {
            reported.push(at);
            diagnostics.push(report::syntax_error(error, &cx));
        }
    }
    let node = output.and_then(|(node, trailing)| {
        let trailing = trailing.into_range();
        // Recovery that consumed nothing: no value was found at all.
        let nothing = matches!(node.kind, NodeKind::Error)
            && !trailing.is_empty()
            && trailing.start <= node.span.start;
        let known = reported.contains(&trailing.start)
            || diagnostics.iter().any(|d| d.span.start as usize == trailing.start);
        if !trailing.is_empty() && !nothing && !known {
            diagnostics.push(report::trailing(trailing, &cx));
        }
        (!nothing).then_some(node)
    });
    diagnostic::sort(&mut diagnostics);
    (node, diagnostics)
}

/// One value, and the span of whatever follows it (empty if nothing does).
fn document<'tok, 'src: 'tok>()
-> impl Parser<'tok, In<'tok, 'src>, (Node<'src>, SimpleSpan), Extra<'tok, 'src>> {
    value().then(any().repeated().to_span())
}

fn value<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, Node<'src>, Extra<'tok, 'src>> + Clone
{
    recursive(|value| {
        let scalar = select! {
            Token::Null => NodeKind::Null,
            Token::True => NodeKind::Bool(true),
            Token::False => NodeKind::Bool(false),
            Token::Number(text) => NodeKind::Number(text),
            Token::String(text) => NodeKind::String(body(text)),
            // Only item mode lets references through the scan.
            Token::Ref(text) => NodeKind::Ref(text),
            // Already reported by the scan.
            Token::Invalid(_) => NodeKind::Error,
        };

        let elements = value
            .clone()
            .separated_by(separator())
            .at_least(1)
            // Only before the end of input: the scan dropped every other trailing comma.
            .allow_trailing()
            .collect::<Vec<_>>()
            .then_ignore(closer(Token::RBrack, Token::RBrace));
        let array = just(Token::LBrack)
            .ignore_then(just(Token::RBrack).to(Vec::new()).or(elements))
            .map(NodeKind::Array);

        let key = select! {
            Token::String(text) = e => {
                let span: SimpleSpan = e.span();
                Some((body(text), span.into_range()))
            },
            Token::Invalid(_) => None,
        }
        .labelled(KEY);
        let member = key
            .then_ignore(colon())
            .then(value)
            .map(|(key, value)| {
                key.map(|(key, key_span)| Member {
                    key,
                    key_span,
                    value,
                })
            })
            .recover_with(skip_until(any().ignored(), boundary(), || None));
        let members = member
            .separated_by(separator())
            .at_least(1)
            // Only before the end of input: the scan dropped every other trailing comma.
            .allow_trailing()
            .collect::<Members>()
            .then_ignore(closer(Token::RBrace, Token::RBrack));
        let object = just(Token::LBrace)
            .ignore_then(just(Token::RBrace).to(Members::default()).or(members))
            .map(|members| NodeKind::Object(members.0));

        choice((scalar, object, array))
            .map_with(|kind, e| Node {
                kind,
                span: e.span().into_range(),
            })
            .labelled(VALUE)
            .recover_with(via_parser(nested_delimiters(
                Token::LBrace,
                Token::RBrace,
                [(Token::LBrack, Token::RBrack)],
                error_node,
            )))
            .recover_with(via_parser(nested_delimiters(
                Token::LBrack,
                Token::RBrack,
                [(Token::LBrace, Token::RBrace)],
                error_node,
            )))
            .recover_with(skip_until(any().ignored(), boundary(), || Node {
                kind: NodeKind::Error,
                span: 0..0,
            }))
            .map_with(|mut node, e| {
                // Recovery that skipped tokens (or none) covers what it skipped.
                if node.span.is_empty() {
                    node.span = e.span().into_range();
                }
                node
            })
    })
}

/// `,` between elements or members. A missing one (the next element follows directly) and junk
/// before one are reported and recovered from, so the elements after them are still parsed.
fn separator<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    just(Token::Comma)
        .ignored()
        // Not before a replaced token: it may well be junk rather than the next element.
        .recover_with(via_parser(
            any()
                .filter(|t: &Token<'_>| t.starts_value() && !matches!(t, Token::Invalid(_)))
                .ignored()
                .rewind(),
        ))
        .recover_with(skip_then_retry_until(any().ignored(), boundary()))
}

/// `:` between a key and its value; a missing one, `,` or `=` in its place are recovered from.
fn colon<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    let not_colon = any().filter(|t: &Token<'_>| *t != Token::Colon).ignored().or(end());
    just(Token::Colon).ignored().recover_with(via_parser(choice((
        select! { Token::Unknown("=" | "=>") => () },
        just(Token::Comma)
            .then(starts_value().then(not_colon).rewind())
            .ignored(),
        starts_value().rewind(),
    ))))
}

/// The closer of an array or object. At the end of input, or at the other kind of closer (the
/// enclosing structure's, most likely), the structure is taken as closed and the error reported;
/// flat junk before the closer is skipped.
fn closer<'tok, 'src: 'tok>(
    close: Token<'src>,
    other: Token<'src>,
) -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    let flat = any().filter(|t: &Token<'_>| !t.is_opener() && !t.is_closer()).ignored();
    just(close)
        .ignored()
        .recover_with(via_parser(end().or(just(other).rewind().ignored())))
        // Junk before the closer, within this structure's own level.
        .recover_with(skip_then_retry_until(flat, end()))
}

fn starts_value<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    any().filter(|t: &Token<'_>| t.starts_value()).ignored()
}

/// Where recovery stops skipping: a separator or a closer, left in place.
fn boundary<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    any()
        .filter(|t: &Token<'_>| matches!(t, Token::Comma | Token::RBrack | Token::RBrace))
        .ignored()
        .rewind()
}

fn error_node<'src>(span: SimpleSpan) -> Node<'src> {
    Node {
        kind: NodeKind::Error,
        span: span.into_range(),
    }
}

/// The body of a string token, between its quotes.
fn body(token: &str) -> &str {
    token.get(1..token.len().saturating_sub(1)).unwrap_or_default()
}

/// An object's members; those whose key was malformed (and reported) are left out.
#[derive(Clone, Debug, Default)]
struct Members<'src>(Vec<Member<'src>>);

impl<'src> FromIterator<Option<Member<'src>>> for Members<'src> {
    fn from_iter<I: IntoIterator<Item = Option<Member<'src>>>>(iter: I) -> Self {
        Members(iter.into_iter().flatten().collect())
    }
}
