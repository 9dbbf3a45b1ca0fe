//! The condition's tokens: a logos lexer, then one pass that turns each lexeme into a parser
//! token and reports what is wrong inside single tokens (a misspelt operator, a bad string,
//! number or reference, an operator of another language). A bad operand becomes a placeholder
//! operand, and a misspelt operator the operator it most likely meant, so that the parser reports
//! only the structure and nothing twice.

#![allow(
    clippy::result_large_err,
    reason = "the error of a token is its diagnostic, built once per bad token"
)]

use crate::ast::{CmpOp, LogicOp, OperandKind, Reference};
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::reference::scan_reference;
use crate::span::Span;
use chumsky::span::SimpleSpan;
use logos::Logos;

/// A token as the parser sees it. Spans are offsets in the condition's text.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok<'s> {
    Operand(OperandKind),
    /// An identifier: `contains` in operator position, a bare word (an error) in operand position.
    Word(&'s str),
    Op(CmpOp),
    Logic(LogicOp),
    Not,
    Open,
    Close,
    /// A character that starts no token.
    Junk(&'s str),
}

/// What lexing found: the tokens and the diagnostics of single tokens.
#[derive(Debug)]
pub(super) struct Lexed<'s> {
    pub tokens: Vec<(Tok<'s>, SimpleSpan)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The outcome of scanning a reference, carried by its lexeme.
#[derive(Clone, Debug, PartialEq)]
struct Scanned(Result<Reference, Diagnostic>);

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n]+")]
enum Lexeme {
    #[token("==")]
    Eq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    /// Operators of other languages, each with the one meant.
    #[token("=", |_| CmpOp::Eq)]
    #[token("===", |_| CmpOp::Eq)]
    #[token("!==", |_| CmpOp::Ne)]
    #[token("<>", |_| CmpOp::Ne)]
    #[token("=>", |_| CmpOp::Ge)]
    #[token("=<", |_| CmpOp::Le)]
    Misspelt(CmpOp),
    #[token("&&", |_| LogicOp::And)]
    #[token("||", |_| LogicOp::Or)]
    Logic(LogicOp),
    /// `&` and `|` of other languages, each with the one meant.
    #[token("&", |_| LogicOp::And)]
    #[token("|", |_| LogicOp::Or)]
    MisspeltLogic(LogicOp),
    #[token("!")]
    Not,
    #[token("(")]
    Open,
    #[token(")")]
    Close,
    #[regex(r"[\p{XID_Start}_]\p{XID_Continue}*")]
    Word,
    /// Anything number-like; checked against JSON's grammar after lexing.
    #[regex(r"[-+]?[.]?[0-9]([0-9A-Za-z_.]|[eE][+-])*")]
    Number,
    #[token("\"", |lex| quoted(lex, b'"'))]
    String,
    #[token("'", |lex| quoted(lex, b'\''))]
    SingleQuoted,
    #[token("$", reference)]
    Reference(Scanned),
}

/// Extends a string lexeme to its closing quote (an escaped quote does not close it), or to the
/// end of the text when there is none.
fn quoted(lex: &mut logos::Lexer<'_, Lexeme>, quote: u8) {
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    while let Some(&b) = rest.get(i) {
        if b == b'\\' {
            i += 2;
            continue;
        }
        i += 1;
        if b == quote {
            break;
        }
    }
    lex.bump(i.min(rest.len()));
}

fn reference(lex: &mut logos::Lexer<'_, Lexeme>) -> Scanned {
    let start = lex.span().start;
    let (result, end) = scan_reference(lex.source(), start);
    lex.bump(end.saturating_sub(lex.span().end));
    Scanned(result)
}

pub(super) fn lex(text: &str) -> Lexed<'_> {
    let mut lexed = Lexed {
        tokens: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut lexer = Lexeme::lexer(text);
    while let Some(lexeme) = lexer.next() {
        let range = lexer.span();
        let slice = lexer.slice();
        let span = Span::from_range(range.clone());
        let token = match lexeme {
            Ok(lexeme) => token(lexeme, slice, span, &mut lexed),
            Err(()) => Tok::Junk(slice),
        };
        lexed.tokens.push((token, SimpleSpan::from(range)));
    }
    lexed
}

fn token<'s>(lexeme: Lexeme, slice: &'s str, span: Span, lexed: &mut Lexed<'_>) -> Tok<'s> {
    let mut report = |d: Diagnostic| lexed.diagnostics.push(d);
    match lexeme {
        Lexeme::Eq => Tok::Op(CmpOp::Eq),
        Lexeme::Ne => Tok::Op(CmpOp::Ne),
        Lexeme::Lt => Tok::Op(CmpOp::Lt),
        Lexeme::Le => Tok::Op(CmpOp::Le),
        Lexeme::Gt => Tok::Op(CmpOp::Gt),
        Lexeme::Ge => Tok::Op(CmpOp::Ge),
        Lexeme::Misspelt(op) => {
            let meant = op.as_str();
            report(
                Diagnostic::new(
                    Code::ConditionSyntax,
                    span,
                    format!("`{slice}` is not an operator"),
                )
                .with_help(format!(
                    "use `{meant}`; the operators are `==`, `!=`, `<`, `<=`, `>`, `>=` and `contains`"
                ))
                .with_replacement(format!("use `{meant}`"), span, meant),
            );
            Tok::Op(op)
        }
        Lexeme::Logic(op) => Tok::Logic(op),
        Lexeme::MisspeltLogic(op) => {
            report(misspelt_logic(slice, op.as_str(), span));
            Tok::Logic(op)
        }
        Lexeme::Not => Tok::Not,
        Lexeme::Open => Tok::Open,
        Lexeme::Close => Tok::Close,
        Lexeme::Word => match slice {
            "true" => Tok::Operand(OperandKind::Bool(true)),
            "false" => Tok::Operand(OperandKind::Bool(false)),
            "null" => Tok::Operand(OperandKind::Null),
            word => match word.to_ascii_lowercase().as_str() {
                // The words of other languages: surely these operators, never a value.
                "and" => {
                    report(misspelt_logic(slice, "&&", span));
                    Tok::Logic(LogicOp::And)
                }
                "or" => {
                    report(misspelt_logic(slice, "||", span));
                    Tok::Logic(LogicOp::Or)
                }
                "not" => {
                    report(misspelt_logic(slice, "!", span));
                    Tok::Not
                }
                _ => Tok::Word(word),
            },
        },
        Lexeme::Number => Tok::Operand(match number(slice, span) {
            Ok(n) => OperandKind::Number(n),
            Err(d) => {
                report(d);
                OperandKind::Null
            }
        }),
        Lexeme::String => Tok::Operand(match string(slice, span) {
            Ok(s) => OperandKind::String(s),
            Err(d) => {
                report(d);
                OperandKind::Null
            }
        }),
        Lexeme::SingleQuoted => {
            let body = slice.trim_start_matches('\'');
            let body = body.strip_suffix('\'').unwrap_or(body);
            let quoted = serde_json::to_string(body).unwrap_or_default();
            report(
                Diagnostic::new(
                    Code::ConditionSyntax,
                    span,
                    "strings in conditions are written in double quotes",
                )
                .with_help(format!(
                    "write {quoted}, as in JSON (inside the `when` string of the file the quotes are escaped: `\\\"`)"
                )),
            );
            Tok::Operand(OperandKind::Null)
        }
        Lexeme::Reference(Scanned(result)) => Tok::Operand(match result {
            Ok(reference) => OperandKind::Ref(reference),
            Err(d) => {
                report(d);
                OperandKind::Null
            }
        }),
    }
}

fn misspelt_logic(slice: &str, meant: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::ConditionSyntax,
        span,
        format!("`{slice}` is not an operator"),
    )
    .with_help(format!(
        "use `{meant}`; tests combine with `&&` (and), `||` (or) and `!` (not)"
    ))
    .with_replacement(format!("use `{meant}`"), span, meant)
}

fn number(slice: &str, span: Span) -> Result<serde_json::Number, Diagnostic> {
    if !is_json_number(slice) {
        return Err(Diagnostic::new(
            Code::ConditionSyntax,
            span,
            format!("`{slice}` is not a number"),
        )
        .with_help(
            "write numbers as in JSON: `0`, `-1`, `2.5`, `1e3` (no `+` sign, no leading zeros, digits on both sides of a dot)",
        ));
    }
    slice.parse::<serde_json::Number>().map_err(|_| {
        Diagnostic::new(
            Code::ConditionSyntax,
            span,
            format!("the number `{slice}` is out of range"),
        )
        .with_help("numbers must fit a 64-bit float")
    })
}

/// JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        Some(_) | None => return false,
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == bytes.len()
}

/// Decodes a JSON string literal, quotes included; `span` is where it sits in the condition.
fn string(slice: &str, span: Span) -> Result<String, Diagnostic> {
    let at = |from: usize, to: usize| {
        Span::new(
            span.start
                .saturating_add(u32::try_from(from).unwrap_or(u32::MAX)),
            span.start
                .saturating_add(u32::try_from(to).unwrap_or(u32::MAX)),
        )
    };
    let bad = |from: usize, to: usize, message: String, help: &str| {
        Err(Diagnostic::new(Code::ConditionSyntax, at(from, to), message).with_help(help))
    };
    let mut out = String::new();
    let mut chars = slice.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok(out),
            '\\' => {
                let Some((j, e)) = chars.next() else { break };
                let simple = match e {
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '/' => Some('/'),
                    'b' => Some('\u{8}'),
                    'f' => Some('\u{c}'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    _ => None,
                };
                if let Some(ch) = simple {
                    out.push(ch);
                    continue;
                }
                if e != 'u' {
                    return bad(
                        i,
                        j + e.len_utf8(),
                        format!("unknown escape `\\{e}` in a string"),
                        ESCAPES,
                    );
                }
                let Some(high) = hex4(slice, j + 1) else {
                    let digits = slice.get(j + 1..).map_or(0, |r| {
                        r.bytes().take(4).take_while(u8::is_ascii_hexdigit).count()
                    });
                    return bad(
                        i,
                        j + 1 + digits,
                        "`\\u` needs four hex digits".to_owned(),
                        ESCAPES,
                    );
                };
                let mut end = j + 5;
                let mut code = high;
                if (0xD800..0xDC00).contains(&high)
                    && slice.get(end..end + 2) == Some("\\u")
                    && let Some(low) = hex4(slice, end + 2).filter(|l| (0xDC00..0xE000).contains(l))
                {
                    code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    end += 6;
                }
                let Some(ch) = char::from_u32(code) else {
                    return bad(
                        i,
                        end,
                        "a lone surrogate escape is not a character".to_owned(),
                        "pair a high surrogate `\\uD800`..`\\uDBFF` with a low one `\\uDC00`..`\\uDFFF`, or write the character itself",
                    );
                };
                out.push(ch);
                while chars.peek().is_some_and(|&(k, _)| k < end) {
                    chars.next();
                }
            }
            c if u32::from(c) < 0x20 => {
                return bad(
                    i,
                    i + c.len_utf8(),
                    "control character in a string".to_owned(),
                    "escape it (`\\n`, `\\t`, `\\u0001`); the condition is itself a JSON string, so in the file that is `\\\\n`",
                );
            }
            c => out.push(c),
        }
    }
    Err(
        Diagnostic::new(Code::ConditionSyntax, span, "this string is never closed")
            .with_help("end the string with `\"` (in the file, `\\\"`)"),
    )
}

const ESCAPES: &str =
    "JSON escapes are `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\uXXXX`";

fn hex4(text: &str, at: usize) -> Option<u32> {
    let digits = text.get(at..at + 4)?;
    u32::from_str_radix(digits, 16)
        .ok()
        .filter(|_| digits.bytes().all(|b| b.is_ascii_hexdigit()))
}
