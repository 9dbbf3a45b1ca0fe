//! The same grammar as [`parser`](super::parser) without recovery, for the common case: input the
//! scan found nothing wrong with. It stops at the first error with chumsky's zero-cost
//! `EmptyErr`, builds no `Rich` errors for the alternatives it rules out and needs no
//! memoization, since without recovery nothing is ever retried. When it fails, the recovering
//! grammar parses the same tokens again and reports every error; on input it accepts, both build
//! the same tree (`tests::plain_and_recovering_grammars_agree`).

use super::parser::{In, body, push, scalar};
use super::scan::range;
use super::tree::{Member, Node, NodeKind};
use chumsky::prelude::{IterParser, Parser, end, extra, just, recursive, select};

type Extra = extra::Default;

/// One value and nothing after it, or `Err` at the first token that does not fit.
pub(super) fn document<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, Node<'src>, Extra> {
    value().then_ignore(end())
}

fn value<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, Node<'src>, Extra> + Clone {
    use super::lexer::Token;
    recursive(|value| {
        let array = just(Token::LBrack)
            .ignore_then(
                just(Token::RBrack).to(Vec::new()).or(value
                    .clone()
                    .separated_by(just(Token::Comma))
                    .at_least(1)
                    .fold(Vec::new(), push)
                    .then_ignore(just(Token::RBrack))),
            )
            .map(NodeKind::Array);

        let key = select! {
            Token::String(text) = e => (body(text), range(e.span())),
        };
        let member =
            key.then_ignore(just(Token::Colon))
                .then(value)
                .map(|((key, key_span), value)| Member {
                    key,
                    key_span,
                    value,
                });
        let object = just(Token::LBrace)
            .ignore_then(
                just(Token::RBrace).to(Vec::new()).or(member
                    .separated_by(just(Token::Comma))
                    .at_least(1)
                    .fold(Vec::new(), push)
                    .then_ignore(just(Token::RBrace))),
            )
            .map(NodeKind::Object);

        scalar().or(object).or(array).map_with(|kind, e| Node {
            kind,
            span: range(e.span()),
        })
    })
}
