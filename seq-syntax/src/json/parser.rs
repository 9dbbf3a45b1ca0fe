//! The chumsky grammar of strict JSON over logos tokens, with recovery at separators.
//!
//! [`scan`](super::scan) runs first: it reports malformed tokens, drops comments and trailing
//! commas, and cuts off structures nested too deeply, so the grammar only deals with structure.

use super::diagnostics::{self, Context};
use super::lexer::{Token, body};
use super::plain;
use super::scan::{Scanned, TokenSpan, range, scan, token_span};
use super::tree::{Key, Member, Node, NodeKind};
use super::{KEY, Mode, VALUE};
use crate::diagnostic::{self, Diagnostic};
use chumsky::input::{Input, MappedInput};
use chumsky::prelude::{
    IterParser, Parser, Rich, any, choice, end, extra, just, nested_delimiters, recursive, select,
    skip_then_retry_until, via_parser,
};
use std::cell::OnceCell;

type Tokens<'tok, 'src> = &'tok [(Token<'src>, TokenSpan)];
type In<'tok, 'src> = MappedInput<'tok, Token<'src>, TokenSpan, Tokens<'tok, 'src>>;
type Extra<'tok, 'src> = extra::Err<Rich<'tok, Token<'src>, TokenSpan>>;

/// Splits a token buffer entry for chumsky (a named fn: a closure trips higher-ranked lifetimes).
fn project<'tok, 'src>(
    entry: &'tok (Token<'src>, TokenSpan),
) -> (&'tok Token<'src>, &'tok TokenSpan) {
    (&entry.0, &entry.1)
}

/// Parses `text`. Never fails wholesale: returns the tree it could build (with error nodes where
/// recovery skipped input; `None` only when nothing resembling a value was found) and every
/// syntax diagnostic, with spans relative to `text`.
///
/// Fixes are edits of `text` too: whoever maps the spans into an enclosing string also escapes
/// the replacement texts for it.
pub fn parse(text: &str, mode: Mode) -> (Option<Node<'_>>, Vec<Diagnostic>) {
    parse_reusing(text, mode, &mut TokenBuffer::default())
}

/// The buffers of [`parse_reusing`]: the tokens, and the stack of structures open while lexing.
#[derive(Debug, Default)]
pub(crate) struct TokenBuffer<'src> {
    tokens: Vec<(Token<'src>, TokenSpan)>,
    open: Vec<(Token<'src>, std::ops::Range<usize>)>,
}

/// [`parse`], lexing into `buffer`: its allocations serve all the items of a `tools` string
/// instead of being made again for each.
pub(crate) fn parse_reusing<'src>(
    text: &'src str,
    mode: Mode,
    buffer: &mut TokenBuffer<'src>,
) -> (Option<Node<'src>>, Vec<Diagnostic>) {
    let scanned = scan(
        text,
        mode,
        std::mem::take(&mut buffer.tokens),
        std::mem::take(&mut buffer.open),
    );
    // Valid input, the common case, takes the grammar without recovery; anything it rejects is
    // parsed again, with recovery, for the diagnostics.
    if scanned.diagnostics.is_empty()
        && scanned.unclosed.is_empty()
        && let Some(node) = plain(&scanned.tokens)
    {
        buffer.tokens = scanned.tokens;
        buffer.open = scanned.unclosed;
        return (Some(node), Vec::new());
    }
    recover(text, mode, scanned)
}

fn input<'tok, 'src>(text: &str, tokens: Tokens<'tok, 'src>) -> In<'tok, 'src> {
    let eoi = token_span(text.len()..text.len());
    tokens.map(eoi, project as fn(_) -> _)
}

/// The tree of `tokens` if they are one valid value, by the [`plain`](mod@plain) grammar.
pub(super) fn plain<'src>(tokens: Tokens<'_, 'src>) -> Option<Node<'src>> {
    plain::document().parse(tokens).into_result().ok()
}

/// Parses with recovery, reporting every error.
pub(super) fn recover<'src>(
    text: &'src str,
    mode: Mode,
    scanned: Scanned<'src>,
) -> (Option<Node<'src>>, Vec<Diagnostic>) {
    let mut diagnostics = scanned.diagnostics;
    if scanned.tokens.is_empty() {
        diagnostics.push(diagnostics::no_value(text.len(), mode));
        diagnostic::sort(&mut diagnostics);
        return (None, diagnostics);
    }
    let input = input(text, &scanned.tokens);
    let (output, mut errors) = document().parse(input).into_output_errors();
    errors.sort_by_key(|error| error.span().start);

    let cx = Context {
        mode,
        tokens: &scanned.tokens,
        unclosed: &scanned.unclosed,
        parents: OnceCell::new(),
    };
    // Recovery can meet one mistake several times (each unclosed level at the end of input):
    // one diagnostic per position is enough. Errors are sorted by position, first come first.
    let mut reported = Vec::with_capacity(errors.len());
    for error in &errors {
        let at = error.span().start as usize;
        // A token the scan replaced has been reported already.
        let replaced = matches!(error.found(), Some(Token::Invalid(_)));
        if !replaced && reported.last() != Some(&at) {
            reported.push(at);
            diagnostics.push(diagnostics::syntax_error(error, &cx));
        }
    }
    let node = output.and_then(|(node, trailing)| {
        let trailing = range(trailing);
        // Recovery that consumed nothing: no value was found at all.
        let nothing = matches!(node.kind, NodeKind::Error)
            && !trailing.is_empty()
            && trailing.start <= node.span.start;
        let known = reported.binary_search(&trailing.start).is_ok()
            || diagnostics
                .iter()
                .any(|d| d.span.start as usize == trailing.start);
        if !trailing.is_empty() && !nothing && !known {
            diagnostics.push(diagnostics::trailing(trailing, &cx));
        }
        (!nothing).then_some(node)
    });
    diagnostic::sort(&mut diagnostics);
    (node, diagnostics)
}

/// One value, and the span of whatever follows it (empty if nothing does).
fn document<'tok, 'src: 'tok>()
-> impl Parser<'tok, In<'tok, 'src>, (Node<'src>, TokenSpan), Extra<'tok, 'src>> {
    value().then(any().repeated().to_span())
}

fn value<'tok, 'src: 'tok>()
-> impl Parser<'tok, In<'tok, 'src>, Node<'src>, Extra<'tok, 'src>> + Clone {
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
            // `fold` rather than `collect`: no iterator adapters on the stack of every level.
            .fold(Vec::new(), push)
            .then_ignore(closer(Token::RBrack, Token::RBrace));
        // Memoized, as are `members`: when recovery fails deep inside unclosed structures,
        // every enclosing level retried the levels inside it, exponentially in the nesting
        // (found by fuzzing: 104 bytes of `[[[{"x",i` and an unclosed string took 9 s).
        let array = just(Token::LBrack)
            .ignore_then(just(Token::RBrack).to(Vec::new()).or(elements.memoized()))
            .map(NodeKind::Array);

        let key = select! {
            Token::String(text) = e => (Key::String(body(text)), range(e.span())),
            // A malformed key, reported by the scan: kept, as an error key.
            Token::Invalid(_) = e => (Key::Error, range(e.span())),
        }
        .labelled(KEY);
        let member = key
            .then_ignore(colon())
            .then(value)
            .map(|((key, key_span), value)| {
                Some(Member {
                    key,
                    key_span,
                    value,
                })
            })
            .recover_with(via_parser(skipped_member()));
        let members = member
            .separated_by(separator())
            .at_least(1)
            // Only before the end of input: the scan dropped every other trailing comma.
            .allow_trailing()
            .fold(Vec::new(), push_some)
            .then_ignore(closer(Token::RBrace, Token::RBrack));
        let object = just(Token::LBrace)
            .ignore_then(just(Token::RBrace).to(Vec::new()).or(members.memoized()))
            .map(NodeKind::Object);

        // One recovery layer (not three): every layer is a frame on each level of nesting.
        let recovery = choice((
            nested_delimiters(
                Token::LBrace,
                Token::RBrace,
                [(Token::LBrack, Token::RBrack)],
                error_node,
            ),
            nested_delimiters(
                Token::LBrack,
                Token::RBrack,
                [(Token::LBrace, Token::RBrace)],
                error_node,
            ),
            // Skip to the next separator or closer; a value missing before one becomes an
            // empty error node.
            any()
                .and_is(boundary().not())
                .repeated()
                .map_with(|(), e| error_node(e.span())),
        ));
        choice((scalar, object, array))
            .map_with(|kind, e| Node {
                kind,
                span: range(e.span()),
            })
            .labelled(VALUE)
            .recover_with(via_parser(recovery))
    })
}

/// `,` between elements or members. A missing one (the next element follows directly) and junk
/// before one are reported and recovered from, so the elements after them are still parsed.
fn separator<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone
{
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
    let not_colon = any()
        .filter(|t: &Token<'_>| *t != Token::Colon)
        .ignored()
        .or(end());
    just(Token::Colon)
        .ignored()
        .recover_with(via_parser(choice((
            select! { Token::Unknown("=" | "=>") => () },
            just(Token::Comma)
                .then(starts_value().then(not_colon).rewind())
                .ignored(),
            // Not the next member's key: the member being typed is left without a value.
            starts_value().and_is(member_start().not()).rewind(),
        ))))
}

/// A key and its `:`, left in place: where the next member starts.
fn member_start<'tok, 'src: 'tok>()
-> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    any()
        .filter(|t: &Token<'_>| matches!(t, Token::String(_) | Token::Invalid(_)))
        .then(just(Token::Colon))
        .ignored()
        .rewind()
}

/// The closer of an array or object. At the end of input, or at the other kind of closer (the
/// enclosing structure's, most likely), the structure is taken as closed and the error reported;
/// flat junk before the closer is skipped.
fn closer<'tok, 'src: 'tok>(
    close: Token<'src>,
    other: Token<'src>,
) -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    let flat = any()
        .filter(|t: &Token<'_>| !t.is_opener() && !t.is_closer())
        .ignored();
    just(close)
        .ignored()
        .recover_with(via_parser(end().or(just(other).rewind().ignored())))
        // Junk before the closer, within this structure's own level.
        .recover_with(skip_then_retry_until(flat, end()))
}

fn starts_value<'tok, 'src: 'tok>()
-> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone {
    any().filter(|t: &Token<'_>| t.starts_value()).ignored()
}

/// Where recovery stops skipping: a separator or a closer, left in place.
fn boundary<'tok, 'src: 'tok>() -> impl Parser<'tok, In<'tok, 'src>, (), Extra<'tok, 'src>> + Clone
{
    any()
        .filter(|t: &Token<'_>| matches!(t, Token::Comma | Token::RBrack | Token::RBrace))
        .ignored()
        .rewind()
}

/// A member the grammar could not read, skipped to the next separator, closer or member (or to
/// the end of the text, where a member being typed usually is): its first
/// token as an error key, the rest as an error value (empty when there is none), so that what
/// was typed stays in the tree. Nothing skipped, no member.
fn skipped_member<'tok, 'src: 'tok>()
-> impl Parser<'tok, In<'tok, 'src>, Option<Member<'src>>, Extra<'tok, 'src>> + Clone {
    let skip = any().and_is(boundary().not());
    let member = skip
        .clone()
        .map_with(|_, e| range(e.span()))
        .then(
            skip.and_is(member_start().not())
                .repeated()
                .map_with(|(), e| e.span()),
        )
        .then_ignore(choice((boundary(), member_start(), end())))
        .map(|(key_span, rest)| {
            Some(Member {
                key: Key::Error,
                key_span,
                value: error_node(rest),
            })
        });
    member.or(boundary().to(None))
}

/// An error node over `span`; an empty one (a value missing between two tokens, whose span
/// runs from the next token back to the end of the last) is put at the end of the last.
fn error_node<'src>(span: TokenSpan) -> Node<'src> {
    let span = range(span);
    let start = span.start.min(span.end);
    Node {
        kind: NodeKind::Error,
        span: start..span.end.max(start),
    }
}

pub(super) fn push<T>(mut items: Vec<T>, item: T) -> Vec<T> {
    items.push(item);
    items
}

/// Where recovery made no member (it skipped nothing), there is none to keep.
fn push_some<T>(mut items: Vec<T>, item: Option<T>) -> Vec<T> {
    items.extend(item);
    items
}
