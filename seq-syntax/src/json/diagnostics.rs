//! Turns the grammar's errors into diagnostics: "expected `,` or `}`, found `\"b\"`", with a help
//! chosen from what was expected and what was found, and a fix where the repair is certain.

use super::lexer::{Token, shorten};
use super::scan::{TokenSpan, range};
use super::{KEY, Mode, VALUE};
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::span::Span;
use chumsky::error::{Rich, RichPattern};
use std::cell::OnceCell;
use std::ops::Range;

/// What the grammar knows beyond one error.
#[derive(Debug)]
pub(super) struct Context<'a, 'src> {
    pub mode: Mode,
    pub tokens: &'a [(Token<'src>, TokenSpan)],
    /// Brackets and braces never closed, outermost first.
    pub unclosed: &'a [(Token<'src>, Range<usize>)],
    /// For each token (and the end of input), the index of the opener it sits in: computed on
    /// the first error that needs it, so valid input never pays for it.
    pub parents: OnceCell<Vec<u32>>,
}

impl Context<'_, '_> {
    fn code(&self) -> Code {
        match self.mode {
            Mode::File => Code::JsonSyntax,
            Mode::Item => Code::ItemSyntax,
        }
    }

    /// The opener of the structure that offset `at` sits in.
    fn enclosing(&self, at: usize) -> Option<(Token<'_>, Range<usize>)> {
        let parents = self.parents.get_or_init(|| {
            let mut open: Vec<u32> = Vec::new();
            let mut parents = Vec::with_capacity(self.tokens.len() + 1);
            for (i, (token, _)) in self.tokens.iter().enumerate() {
                parents.push(open.last().copied().unwrap_or(u32::MAX));
                if token.is_opener() {
                    open.push(u32::try_from(i).unwrap_or(u32::MAX));
                } else if token.is_closer() {
                    open.pop();
                }
            }
            parents.push(open.last().copied().unwrap_or(u32::MAX));
            parents
        });
        let index = self
            .tokens
            .partition_point(|(_, span)| (span.start as usize) < at);
        let parent = *parents.get(index)?;
        let (token, span) = self.tokens.get(parent as usize)?;
        Some((*token, range(*span)))
    }

    /// The span of the token that starts at offset `at`.
    fn token_at(&self, at: usize) -> Option<Range<usize>> {
        let index = self
            .tokens
            .partition_point(|(_, span)| (span.start as usize) < at);
        let (_, span) = self.tokens.get(index)?;
        (span.start as usize == at).then(|| range(*span))
    }

    /// Where the token before offset `at` ends: where a missing `,` or `:` belongs.
    fn end_before(&self, at: usize) -> Option<usize> {
        let index = self
            .tokens
            .partition_point(|(_, span)| (span.start as usize) < at);
        let (_, span) = self.tokens.get(index.checked_sub(1)?)?;
        Some(span.end as usize)
    }
}

/// An expectation, in the order messages list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Expected {
    Value,
    Key,
    Colon,
    Comma,
    RBrack,
    RBrace,
    End,
}

impl Expected {
    fn describe(self) -> &'static str {
        match self {
            Expected::Value => VALUE,
            Expected::Key => KEY,
            Expected::Colon => "`:`",
            Expected::Comma => "`,`",
            Expected::RBrack => "`]`",
            Expected::RBrace => "`}`",
            Expected::End => "end of input",
        }
    }
}

fn expectations(error: &Rich<'_, Token<'_>, TokenSpan>) -> Vec<Expected> {
    let mut expected: Vec<Expected> = error
        .expected()
        .filter_map(|pattern| match pattern {
            RichPattern::Label(label) if label == VALUE => Some(Expected::Value),
            RichPattern::Label(label) if label == KEY => Some(Expected::Key),
            // The grammar asks for no other token by itself (values go by their label).
            RichPattern::Token(token) => [
                (Token::Colon, Expected::Colon),
                (Token::Comma, Expected::Comma),
                (Token::RBrack, Expected::RBrack),
                (Token::RBrace, Expected::RBrace),
            ]
            .into_iter()
            .find_map(|(punctuation, expected)| (**token == punctuation).then_some(expected)),
            RichPattern::EndOfInput => Some(Expected::End),
            // The grammar produces none of these (`RichPattern` is non-exhaustive, hence `_`).
            RichPattern::Label(_)
            | RichPattern::Identifier(_)
            | RichPattern::Any
            | RichPattern::SomethingElse
            | _ => None,
        })
        .collect();
    expected.sort_unstable();
    expected.dedup();
    expected
}

fn list(expected: &[Expected]) -> String {
    let mut text = String::new();
    for (i, e) in expected.iter().enumerate() {
        if i > 0 {
            text.push_str(if i + 1 == expected.len() {
                " or "
            } else {
                ", "
            });
        }
        text.push_str(e.describe());
    }
    if text.is_empty() {
        text.push_str("something else");
    }
    text
}

pub(super) fn syntax_error(
    error: &Rich<'_, Token<'_>, TokenSpan>,
    cx: &Context<'_, '_>,
) -> Diagnostic {
    let range = range(*error.span());
    // Recovery can leave an error's span reversed (ending at the token before): the found
    // token's own span is meant (found by fuzzing: `{"":: ]`).
    let range = if range.end < range.start {
        cx.token_at(range.start).unwrap_or(range.start..range.start)
    } else {
        range
    };
    let span = Span::from_range(range.clone());
    let mut expected = expectations(error);
    let inside = cx.enclosing(range.start);
    // A separator that failed knows only itself; the closer was just as welcome.
    if expected == [Expected::Comma] {
        match inside {
            Some((Token::LBrack, _)) => expected.push(Expected::RBrack),
            Some((Token::LBrace, _)) => expected.push(Expected::RBrace),
            Some(_) | None => {}
        }
    }
    let found = error.found().copied();
    let found_text = match found {
        Some(token) => token.to_string(),
        None => "end of input".to_owned(),
    };
    let diagnostic = Diagnostic::new(
        cx.code(),
        span,
        format!("expected {}, found {found_text}", list(&expected)),
    );
    let expects = |e: Expected| expected.contains(&e);
    // Beside unquoted text the structure is a guess (a quote left unescaped splits a string
    // into pieces that a `,` and a `:` would make into members): the author decides.
    let guessed = cx
        .tokens
        .iter()
        .any(|(token, _)| matches!(token, Token::Invalid(_)));
    let insert = |diagnostic: Diagnostic, text: &str| match cx.end_before(range.start) {
        Some(at) => {
            let d = diagnostic.with_replacement(
                format!("insert `{text}`"),
                Span::from_range(at..at),
                text,
            );
            if guessed { d.maybe_incorrect() } else { d }
        }
        None => diagnostic,
    };

    let Some(found) = found else {
        return match cx.unclosed.last() {
            Some((opener, at)) => {
                let closer = if *opener == Token::LBrack { "]" } else { "}" };
                diagnostic
                    .with_label(
                        Span::from_range(at.clone()),
                        format!("this {opener} is never closed"),
                    )
                    .with_help(format!(
                        "the text ends inside a structure: complete it and close it with `{closer}`"
                    ))
            }
            None => diagnostic.with_help("the text ends before the JSON value is complete"),
        };
    };
    match found {
        Token::Unknown(text) if text.starts_with('\u{feff}') => {
            let bom = Span::from_range(range.start..range.start + '\u{feff}'.len_utf8());
            diagnostic
                .with_help("remove the stray byte order mark (U+FEFF)")
                .with_replacement("remove the byte order mark", bom, "")
        }
        Token::Unknown("=" | "=>") if expects(Expected::Colon) => diagnostic
            .with_help("a key and its value are separated by `:`")
            .with_replacement("write `:`", span, ":"),
        Token::Unknown(text) => diagnostic.with_help(format!(
            "`{}` is not JSON syntax outside a string: remove it, or put the text in a string",
            shorten(text)
        )),
        Token::Comma if expects(Expected::Colon) => diagnostic
            .with_help("a key and its value are separated by `:`")
            .with_replacement("write `:`", span, ":"),
        Token::Comma if expects(Expected::Value) || expects(Expected::Key) => diagnostic
            .with_help("remove the extra `,`, or write what is missing before it")
            .with_replacement("remove the `,`", span, ""),
        Token::Colon if expects(Expected::Key) => {
            diagnostic.with_help("the key is missing: write a string in double quotes before `:`")
        }
        Token::RBrace if expects(Expected::Colon) => {
            diagnostic.with_help("a key must be followed by `:` and a value")
        }
        Token::Colon if expects(Expected::Value) => diagnostic
            .with_help("remove the extra `:`")
            .with_replacement("remove the `:`", span, ""),
        Token::Number(text) | Token::Ref(text) if expects(Expected::Key) => {
            let quoted = format!("\"{text}\"");
            diagnostic
                .with_help(format!("keys must be quoted: `{}`", shorten(&quoted)))
                .with_replacement("quote the key", span, quoted)
        }
        Token::True | Token::False | Token::Null if expects(Expected::Key) => {
            let quoted = format!("\"{}\"", found.to_string().trim_matches('`'));
            diagnostic
                .with_help(format!("keys must be quoted: `{quoted}`"))
                .with_replacement("quote the key", span, quoted)
        }
        Token::LBrace | Token::LBrack if expects(Expected::Key) => {
            diagnostic.with_help("object keys are strings in double quotes")
        }
        token if token.starts_value() && expects(Expected::Colon) => insert(
            diagnostic.with_help("a key and its value are separated by `:`"),
            ":",
        ),
        token if token.starts_value() && expects(Expected::Comma) => {
            let what = match inside {
                Some((Token::LBrace, _)) => "members",
                Some(_) | None => "elements",
            };
            insert(
                diagnostic.with_help(format!("separate {what} with `,`")),
                ",",
            )
        }
        Token::RBrack | Token::RBrace if expects(Expected::Value) => {
            diagnostic.with_help("a value is missing here: write one, such as `null`")
        }
        Token::RBrace | Token::RBrack if expects(Expected::RBrack) || expects(Expected::RBrace) => {
            let (what, closer) = if expects(Expected::RBrack) {
                ("array", "]")
            } else {
                ("object", "}")
            };
            let diagnostic = diagnostic.with_help(format!(
                "{found} does not close this {what}: close it with `{closer}` first"
            ));
            match inside {
                Some((_, at)) => {
                    diagnostic.with_label(Span::from_range(at), format!("the {what} opened here"))
                }
                None => diagnostic,
            }
        }
        Token::LBrace
        | Token::RBrace
        | Token::LBrack
        | Token::RBrack
        | Token::Colon
        | Token::Comma
        | Token::True
        | Token::False
        | Token::Null
        | Token::String(_)
        | Token::Number(_)
        | Token::Ref(_)
        | Token::BadRef(_)
        | Token::LineComment(_)
        | Token::BlockComment(_)
        | Token::UnclosedComment(_)
        | Token::BadString(_)
        | Token::BadNumber(_)
        | Token::Word(_)
        | Token::SingleQuoted(_)
        | Token::Invalid(_) => diagnostic.with_help(generic_help(cx.mode)),
    }
}

fn generic_help(mode: Mode) -> &'static str {
    match mode {
        Mode::File => {
            "JSON values are objects `{\"key\": value, …}`, arrays `[value, …]`, strings in \
             double quotes, numbers, `true`, `false` and `null`"
        }
        Mode::Item => {
            "an item is a JSON object such as `{\"tool\": \"echo\", \"args\": {\"value\": 1}}`; \
             references such as `$args.x` may stand where a value may"
        }
    }
}

/// Text after the one value a document holds.
pub(super) fn trailing(range: Range<usize>, cx: &Context<'_, '_>) -> Diagnostic {
    let first = cx
        .tokens
        .iter()
        .find(|(_, span)| span.start as usize >= range.start)
        .map_or_else(|| "text".to_owned(), |(token, _)| token.to_string());
    let help = match cx.mode {
        Mode::File => "a sequence file holds exactly one JSON value: remove what follows it",
        Mode::Item => {
            "an item is exactly one JSON object: remove what follows it, or end the item with `;`"
        }
    };
    Diagnostic::new(
        cx.code(),
        Span::from_range(range),
        format!("unexpected {first} after the end of the JSON value"),
    )
    .with_help(help)
}

/// Input that holds no token at all.
pub(super) fn no_value(len: usize, mode: Mode) -> Diagnostic {
    let (code, help) = match mode {
        Mode::File => (
            Code::JsonSyntax,
            "a sequence file is one JSON object, such as `{\"name\": \"demo\", \"groups\": […]}`",
        ),
        Mode::Item => (
            Code::ItemSyntax,
            "an item is one JSON object, such as `{\"tool\": \"echo\"}`",
        ),
    };
    Diagnostic::new(code, Span::from_range(len..len), "expected a JSON value").with_help(help)
}
