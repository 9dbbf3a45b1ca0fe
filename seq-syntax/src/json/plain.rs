//! The same grammar as [`parser`](super::parser) without recovery, for the common case: input the
//! scan found nothing wrong with. It stops at the first error with chumsky's zero-cost
//! `EmptyErr`, builds no `Rich` errors for the alternatives it rules out and needs no
//! memoization, since without recovery nothing is ever retried. When it fails, the recovering
//! grammar parses the same tokens again and reports every error; on input it accepts, both build
//! the same tree (`assert_grammars_agree` in the tests).
//!
//! It reads the scan's `(token, span)` pairs as they are, without the projection the recovering
//! grammar's input goes through for every token, and takes each node's span from its first and
//! last tokens.

use super::lexer::{Token, body};
use super::scan::{TokenSpan, range};
use super::tree::{Key, Member, Node, NodeKind};
use chumsky::prelude::{IterParser, Parser, any, end, extra, recursive, select};

type In<'tok, 'src> = &'tok [(Token<'src>, TokenSpan)];
type Extra = extra::Default;

/// One value and nothing after it, or `Err` at the first token that does not fit.
pub(super) fn document<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, Node<'src>, Extra> {
    value().then_ignore(end())
}

/// The token `want`, giving its span.
fn punct<'tok, 'src: 'tok>(
    want: Token<'static>,
) -> impl Parser<'tok, In<'tok, 'src>, TokenSpan, Extra> + Clone {
    any()
        .filter(move |(token, _): &(Token<'src>, TokenSpan)| *token == want)
        .map(|(_, span)| span)
}

fn value<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, Node<'src>, Extra> + Clone {
    let scalar = select! {
        (Token::Null, span) => (NodeKind::Null, span),
        (Token::True, span) => (NodeKind::Bool(true), span),
        (Token::False, span) => (NodeKind::Bool(false), span),
        (Token::Number(text), span) => (NodeKind::Number(text), span),
        (Token::String(text), span) => (NodeKind::String(body(text)), span),
        (Token::Ref(text), span) => (NodeKind::Ref(text), span),
    }
    .map(|(kind, span)| Node {
        kind,
        span: range(span),
    });
    // Only objects and arrays recurse: a scalar, most values, is parsed without going through
    // the recursive parser's indirection.
    let structure = recursive(|structure| {
        let value = scalar.or(structure);
        let array =
            delimited(Token::LBrack, value.clone(), Token::RBrack).map(|(elements, span)| Node {
                kind: NodeKind::Array(elements),
                span,
            });

        let key = select! {
            (Token::String(text), span) => (body(text), range(span)),
        };
        let member =
            key.then_ignore(punct(Token::Colon))
                .then(value)
                .map(|((key, key_span), value)| Member {
                    key: Key::String(key),
                    key_span,
                    value,
                });
        let object = delimited(Token::LBrace, member, Token::RBrace).map(|(members, span)| Node {
            kind: NodeKind::Object(members),
            span,
        });
        object.or(array)
    });
    scalar.or(structure)
}

/// `open`, then `close` or `element`s separated by commas and then `close`: the elements and
/// the span from `open` to `close`.
fn delimited<'tok, 'src: 'tok, T: Clone>(
    open: Token<'static>,
    element: impl Parser<'tok, In<'tok, 'src>, T, Extra> + Clone,
    close: Token<'static>,
) -> impl Parser<'tok, In<'tok, 'src>, (Vec<T>, std::ops::Range<usize>), Extra> + Clone {
    // Elements first: most structures have some, and no element starts with a closer.
    punct(open)
        .then(
            element
                .separated_by(punct(Token::Comma))
                .at_least(1)
                .collect::<Vec<T>>()
                .then(punct(close))
                .or(punct(close).map(|end| (Vec::new(), end))),
        )
        .map(|(start, (elements, end))| (elements, range(start).start..range(end).end))
}
