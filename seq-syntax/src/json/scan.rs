//! The pass between the lexer and the grammar. It reports everything that is wrong with single
//! tokens (comments, malformed strings and numbers, bare words, references outside items,
//! trailing commas) with a code of its own, and bounds the nesting depth, so that the grammar
//! only sees well-formed tokens and never recurses more than [`MAX_DEPTH`] levels.

use super::lexer::{Token, shorten};
use super::{MAX_DEPTH, Mode};
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::limits::MAX_STRING_BYTES;
use crate::span::Span;
use chumsky::span::SimpleSpan;
use logos::Logos;
use std::ops::Range;

/// A token's span: `u32` offsets keep the token buffer small (the front end bounds files well
/// below 4 GiB; larger offsets saturate).
pub(super) type TokenSpan = SimpleSpan<u32>;

pub(super) fn token_span(range: Range<usize>) -> TokenSpan {
    let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    SimpleSpan::from(clamp(range.start)..clamp(range.end))
}

pub(super) fn range(span: TokenSpan) -> Range<usize> {
    span.start as usize..span.end as usize
}

/// The tokens the grammar parses, and what the scan found.
#[derive(Debug)]
pub(super) struct Scanned<'src> {
    pub tokens: Vec<(Token<'src>, TokenSpan)>,
    /// Brackets and braces never closed, outermost first.
    pub unclosed: Vec<(Token<'src>, Range<usize>)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes and checks `text`. Its tokens go into `tokens` and the stack of open structures into
/// `open` (both cleared first): buffers to reuse, coming back as [`Scanned::tokens`] and
/// [`Scanned::unclosed`].
pub(super) fn scan<'src>(
    text: &'src str,
    mode: Mode,
    mut tokens: Vec<(Token<'src>, TokenSpan)>,
    mut open: Vec<(Token<'src>, Range<usize>)>,
) -> Scanned<'src> {
    tokens.clear();
    // Plain JSON has a token every 5–10 bytes, a sequence file one every 50 or so (its `tools`
    // strings are long tokens). Reserving for the first would hold a 10 MB file's tokens in
    // 56 MB; growing from a quarter of them costs two copies of a few megabytes.
    tokens.reserve(text.len() / 32 + 16);
    open.clear();
    let mut scanner = Scanner {
        mode,
        tokens,
        open: Open {
            items: open,
            brackets: 0,
        },
        diagnostics: Vec::new(),
        words: false,
    };
    let mut lexer = Token::lexer(text);
    if text.starts_with('\u{feff}') {
        scanner.byte_order_mark();
        lexer.bump('\u{feff}'.len_utf8());
    }
    while let Some(token) = lexer.next() {
        let span = lexer.span();
        match token {
            Ok(token @ (Token::LBrack | Token::LBrace))
                if scanner.open.items.len() >= MAX_DEPTH =>
            {
                let end = skip_nested(&mut lexer, token).unwrap_or(span.end);
                scanner.too_deep(text, token, span.start..end);
            }
            Ok(token) => scanner.token(token, span),
            Err(()) => scanner.unknown(text, span),
        }
    }
    if scanner.words {
        scanner.report_words();
    }
    Scanned {
        tokens: scanner.tokens,
        unclosed: scanner.open.items,
        diagnostics: scanner.diagnostics,
    }
}

/// Consumes the rest of a structure whose opener has just been read, returning where it ends
/// (`None` if that was its only token). Closers match as in [`Open::close`].
fn skip_nested<'src>(
    lexer: &mut logos::Lexer<'src, Token<'src>>,
    opener: Token<'src>,
) -> Option<usize> {
    let mut open = Open::default();
    open.push(opener, ());
    let mut end = None;
    while let Some(token) = lexer.next() {
        end = Some(lexer.span().end);
        match token {
            Ok(token @ (Token::LBrack | Token::LBrace)) => open.push(token, ()),
            Ok(Token::RBrack) => open.close(Token::LBrack),
            Ok(Token::RBrace) => open.close(Token::LBrace),
            Ok(_) | Err(()) => {}
        }
        if open.items.is_empty() {
            break;
        }
    }
    end
}

/// The structures open at a point of the input, innermost last.
#[derive(Debug)]
struct Open<'src, T> {
    items: Vec<(Token<'src>, T)>,
    /// How many of `items` are `[` (the others are `{`), so that a closer matching nothing is
    /// ignored without a search: hostile input full of those stays linear.
    brackets: usize,
}

impl<T> Default for Open<'_, T> {
    fn default() -> Self {
        Open {
            items: Vec::new(),
            brackets: 0,
        }
    }
}

impl<'src, T> Open<'src, T> {
    fn push(&mut self, opener: Token<'src>, extra: T) {
        self.brackets += usize::from(opener == Token::LBrack);
        self.items.push((opener, extra));
    }

    /// Closes the last `opener` and any structure still open inside it (those were never
    /// closed). A closer that matches no open structure is ignored: the grammar reports it.
    fn close(&mut self, opener: Token<'src>) {
        let brackets = opener == Token::LBrack;
        let any_open = if brackets {
            self.brackets > 0
        } else {
            self.brackets < self.items.len()
        };
        if !any_open {
            return;
        }
        if let Some(at) = self.items.iter().rposition(|(t, _)| *t == opener) {
            let closed = self
                .items
                .drain(at..)
                .filter(|(t, _)| *t == Token::LBrack)
                .count();
            self.brackets -= closed;
        }
    }
}

struct Scanner<'src> {
    mode: Mode,
    tokens: Vec<(Token<'src>, TokenSpan)>,
    open: Open<'src, Range<usize>>,
    diagnostics: Vec<Diagnostic>,
    /// Whether a bare word was seen: whether it is a key depends on the token after it.
    words: bool,
}

impl<'src> Scanner<'src> {
    fn push(&mut self, token: Token<'src>, span: Range<usize>) {
        self.tokens.push((token, token_span(span)));
    }

    fn syntax_code(&self) -> Code {
        match self.mode {
            Mode::File => Code::JsonSyntax,
            Mode::Item => Code::ItemSyntax,
        }
    }

    fn token(&mut self, token: Token<'src>, span: Range<usize>) {
        match token {
            Token::LBrack | Token::LBrace => {
                self.open.push(token, span.clone());
                self.push(token, span);
            }
            Token::RBrack => {
                self.trailing_comma();
                self.open.close(Token::LBrack);
                self.push(token, span);
            }
            Token::RBrace => {
                self.trailing_comma();
                self.open.close(Token::LBrace);
                self.push(token, span);
            }
            Token::String(text) if text.len() > MAX_STRING_BYTES => {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::TooLarge,
                        Span::from_range(span.start..span.start + 1),
                        format!(
                            "this string has {} bytes, more than one may have ({} MiB)",
                            text.len(),
                            MAX_STRING_BYTES / (1024 * 1024)
                        ),
                    )
                    .with_help("pass large data to a tool as a file path, not as text"),
                );
                self.push(Token::Invalid(text), span);
            }
            Token::Colon
            | Token::Comma
            | Token::True
            | Token::False
            | Token::Null
            | Token::String(_)
            | Token::Number(_)
            | Token::Invalid(_) => self.push(token, span),
            Token::Ref(text) => match self.mode {
                Mode::Item => self.push(token, span),
                Mode::File => self.reference_in_file(text, span),
            },
            Token::BadRef(text) => match self.mode {
                Mode::Item => {
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::MalformedReference,
                            Span::from_range(span.clone()),
                            format!("malformed reference `{}`", shorten(text)),
                        )
                        .with_help(
                            "a reference is `$args` or `$out` followed by `.name` and `[index]` \
                             parts, as in `$args.hosts[0]`",
                        ),
                    );
                    self.push(Token::Invalid(text), span);
                }
                Mode::File => {
                    let quoted = format!("\"{text}\"");
                    let at = Span::from_range(span.clone());
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::JsonSyntax,
                            at,
                            format!("unquoted text `{}`", shorten(text)),
                        )
                        .with_help(format!(
                            "strings must be in double quotes: `{}`",
                            shorten(&quoted)
                        ))
                        // Whether it was meant as a string, or a quote went missing, is a guess.
                        .with_replacement("quote the text", at, quoted)
                        .maybe_incorrect(),
                    );
                    self.push(Token::Invalid(text), span);
                }
            },
            Token::LineComment(_) | Token::BlockComment(_) => {
                self.comment(span, "comments are not allowed in JSON");
            }
            Token::UnclosedComment(_) => self.comment(span, "unclosed comment"),
            Token::BadString(text) => {
                string_errors(text, span.start, &mut self.diagnostics);
                self.push(Token::Invalid(text), span);
            }
            Token::BadNumber(text) => {
                self.diagnostics.push(number_error(text, span.clone()));
                self.push(Token::Invalid(text), span);
            }
            Token::SingleQuoted(text) => {
                self.diagnostics.push(single_quoted(text, span.clone()));
                self.push(Token::Invalid(text), span);
            }
            Token::Word(_) => {
                self.words = true;
                self.push(token, span);
            }
            Token::Unknown(_) => self.push(token, span),
        }
    }

    fn reference_in_file(&mut self, text: &'src str, span: Range<usize>) {
        self.diagnostics.push(
            Diagnostic::new(
                Code::JsonSyntax,
                Span::from_range(span.clone()),
                format!("reference `{}` outside a `tools` item", shorten(text)),
            )
            .with_help(
                "references exist only inside the items of a group's `tools` string; write a \
                 JSON value here, or quote the text to keep it",
            ),
        );
        self.push(Token::Invalid(text), span);
    }

    /// Runs of characters no token starts with become one token, reported by the grammar.
    fn unknown(&mut self, text: &'src str, span: Range<usize>) {
        if let Some((Token::Unknown(prev), prev_span)) = self.tokens.last_mut()
            && range(*prev_span).end == span.start
            && let Some(joined) = text.get(range(*prev_span).start..span.end)
        {
            *prev = joined;
            *prev_span = token_span(range(*prev_span).start..span.end);
            return;
        }
        let slice = text.get(span.clone()).unwrap_or("");
        self.push(Token::Unknown(slice), span);
    }

    /// A leading byte order mark is not JSON whitespace (RFC 8259, section 8.1): reported, then
    /// skipped
    /// so that the value after it is still parsed.
    fn byte_order_mark(&mut self) {
        let span = Span::from_range(0..'\u{feff}'.len_utf8());
        self.diagnostics.push(
            Diagnostic::new(
                self.syntax_code(),
                span,
                "byte order mark before the JSON text",
            )
            .with_help("remove the byte order mark (U+FEFF): JSON text must not begin with one")
            .with_replacement("remove the byte order mark", span, ""),
        );
    }

    fn comment(&mut self, span: Range<usize>, message: &str) {
        let span = Span::from_range(span);
        self.diagnostics.push(
            Diagnostic::new(Code::JsonComment, span, message)
                .with_help("strict JSON (RFC 8259) has no comments: remove it")
                .with_replacement("remove the comment", span, ""),
        );
    }

    /// A `,` right before a closer, after a value, is trailing: reported and dropped, so that
    /// the grammar does not report it again.
    fn trailing_comma(&mut self) {
        let [.., (before, _), (Token::Comma, comma)] = self.tokens.as_slice() else {
            return;
        };
        if !before.ends_value() {
            return;
        }
        let span = Span::from_range(range(*comma));
        self.diagnostics.push(
            Diagnostic::new(Code::JsonTrailingComma, span, "trailing comma")
                .with_help("remove the trailing comma: strict JSON (RFC 8259) does not allow one")
                .with_replacement("remove the trailing comma", span, ""),
        );
        self.tokens.pop();
    }

    fn too_deep(&mut self, text: &'src str, opener: Token<'src>, span: Range<usize>) {
        let at = Span::from_range(span.start..span.start + 1);
        self.diagnostics.push(
            Diagnostic::new(
                Code::TooDeep,
                at,
                format!("{opener} nested more than {MAX_DEPTH} levels deep"),
            )
            .with_help(format!(
                "flatten the structure: at most {MAX_DEPTH} arrays and objects may be nested"
            )),
        );
        let slice = text.get(span.clone()).unwrap_or("");
        self.push(Token::Invalid(slice), span);
    }

    /// Reports every bare word: a key if a `:` follows it, else a value.
    fn report_words(&mut self) {
        let code = self.syntax_code();
        for i in 0..self.tokens.len() {
            let Some(&(Token::Word(word), span)) = self.tokens.get(i) else {
                continue;
            };
            let is_key = matches!(self.tokens.get(i + 1), Some((Token::Colon, _)));
            self.diagnostics
                .push(word_error(word, range(span), is_key, code));
            if let Some(token) = self.tokens.get_mut(i) {
                token.0 = Token::Invalid(word);
            }
        }
    }
}

fn word_error(word: &str, span: Range<usize>, is_key: bool, code: Code) -> Diagnostic {
    let span = Span::from_range(span);
    let quoted = format!("\"{word}\"");
    if is_key {
        return Diagnostic::new(code, span, format!("unquoted key `{}`", shorten(word)))
            .with_help(format!("keys must be quoted: `{}`", shorten(&quoted)))
            .with_replacement("quote the key", span, quoted);
    }
    let literal = match word {
        "True" | "TRUE" => Some("true"),
        "False" | "FALSE" => Some("false"),
        "Null" | "NULL" | "None" | "nil" | "undefined" => Some("null"),
        _ => None,
    };
    if let Some(literal) = literal {
        return Diagnostic::new(code, span, format!("`{word}` is not a JSON literal"))
            .with_help(format!(
                "write `{literal}`: JSON's literals are `true`, `false` and `null`"
            ))
            .with_replacement(format!("write `{literal}`"), span, literal);
    }
    if matches!(word, "NaN" | "Infinity" | "inf") {
        return Diagnostic::new(code, span, format!("`{word}` is not a JSON number"))
            .with_help("JSON has no NaN or infinity: use `null`, or a string");
    }
    Diagnostic::new(code, span, format!("unquoted string `{}`", shorten(word)))
        .with_help(format!(
            "strings must be in double quotes: `{}`",
            shorten(&quoted)
        ))
        // Whether it was meant as a string, or a quote went missing, is a guess.
        .with_replacement("quote the string", span, quoted)
        .maybe_incorrect()
}

/// Reports what is wrong in a string literal that the strict pattern rejected: each bad escape,
/// each raw control character, and a missing closing quote.
fn string_errors(text: &str, start: usize, out: &mut Vec<Diagnostic>) {
    let at = |range: Range<usize>| Span::from_range(start + range.start..start + range.end);
    let mut chars = text.char_indices().skip(1).peekable();
    let mut closed = false;
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => closed = true,
            '\\' => {
                let Some((j, escaped)) = chars.next() else {
                    break;
                };
                match escaped {
                    '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' => {}
                    'u' => {
                        let mut end = j + 1;
                        for _ in 0..4 {
                            match chars.peek() {
                                Some(&(k, h)) if h.is_ascii_hexdigit() => {
                                    end = k + 1;
                                    chars.next();
                                }
                                Some(_) | None => break,
                            }
                        }
                        if end - j < 5 {
                            let bad = text.get(i..end).unwrap_or_default();
                            out.push(
                                Diagnostic::new(
                                    Code::JsonString,
                                    at(i..end),
                                    format!("invalid unicode escape `{bad}`"),
                                )
                                .with_help(
                                    "`\\u` takes exactly four hexadecimal digits, as in `\\u00e9`",
                                ),
                            );
                        }
                    }
                    _ => {
                        let end = j + escaped.len_utf8();
                        let bad = text.get(i..end).unwrap_or_default();
                        let span = at(i..i + 1);
                        out.push(
                            Diagnostic::new(
                                Code::JsonString,
                                at(i..end),
                                format!("invalid escape `{bad}`"),
                            )
                            .with_help(
                                "JSON's escapes are `\\\"` `\\\\` `\\/` `\\b` `\\f` `\\n` `\\r` \
                                     `\\t` and `\\uXXXX`; a backslash itself is written `\\\\`",
                            )
                            .with_replacement(
                                "escape the backslash",
                                span,
                                "\\\\",
                            ),
                        );
                    }
                }
            }
            '\0'..='\x1f' => {
                let escape = match c {
                    '\t' => "\\t".to_owned(),
                    '\x08' => "\\b".to_owned(),
                    '\x0c' => "\\f".to_owned(),
                    _ => format!("\\u{:04x}", u32::from(c)),
                };
                let span = at(i..i + 1);
                out.push(
                    Diagnostic::new(
                        Code::JsonString,
                        span,
                        format!("raw control character U+{:04X} in a string", u32::from(c)),
                    )
                    .with_help(format!(
                        "control characters must be escaped: write `{escape}`"
                    ))
                    .with_replacement("escape the character", span, escape),
                );
            }
            _ => {}
        }
    }
    if !closed {
        out.push(
            Diagnostic::new(Code::JsonString, at(0..1), "unterminated string")
                .with_label(
                    at(text.len()..text.len()),
                    "the string has no closing `\"` before here",
                )
                .with_help(
                    "close the string with `\"` on the same line; a line break inside a string is \
                     written `\\n`",
                ),
        );
    }
}

fn single_quoted(text: &str, span: Range<usize>) -> Diagnostic {
    let span = Span::from_range(span);
    let body = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\''));
    let diagnostic = Diagnostic::new(Code::JsonString, span, "string in single quotes")
        .with_help("JSON strings use double quotes: `\"…\"`");
    match body {
        Some(body) if text.len() >= 2 && !body.contains(['"', '\\']) => {
            let quoted = format!("\"{body}\"");
            diagnostic.with_replacement("use double quotes", span, quoted)
        }
        Some(_) | None => diagnostic,
    }
}

fn number_error(text: &str, span: Range<usize>) -> Diagnostic {
    let span = Span::from_range(span);
    let shown = shorten(text);
    let reason = number_problem(text);
    let message = match reason {
        Some(reason) => format!("invalid number `{shown}`: {reason}"),
        None => format!("invalid number `{shown}`"),
    };
    let diagnostic = Diagnostic::new(Code::JsonNumber, span, message);
    if let Some(fixed) = repair_number(text) {
        return diagnostic
            .with_help(format!("write `{fixed}`"))
            .with_replacement(format!("write `{fixed}`"), span, fixed);
    }
    let letters = text.trim_start_matches(['+', '-']);
    if letters.eq_ignore_ascii_case("nan") || letters.to_ascii_lowercase().starts_with("inf") {
        return diagnostic.with_help("JSON has no NaN or infinity: use `null`, or a string");
    }
    diagnostic.with_help(
        "a JSON number is an optional `-`, digits without leading zeros, an optional fraction \
         `.digits` and an optional exponent `e±digits`; quote it if it is text",
    )
}

/// Why a number-like text is not a JSON number, when the reason is a common one.
fn number_problem(text: &str) -> Option<&'static str> {
    let unsigned = text.trim_start_matches(['+', '-']);
    if text.starts_with('+') {
        Some("a number cannot start with `+`")
    } else if unsigned.starts_with("0x") || unsigned.starts_with("0X") {
        Some("hexadecimal numbers are not JSON")
    } else if unsigned.starts_with('.') {
        Some("a digit must come before `.`")
    } else if unsigned.len() > 1
        && unsigned.starts_with('0')
        && unsigned
            .get(1..)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    {
        Some("leading zeros are not allowed")
    } else if unsigned.ends_with('.') || unsigned.contains(".e") || unsigned.contains(".E") {
        Some("a digit must follow `.`")
    } else if unsigned.ends_with(['e', 'E', '+', '-']) {
        Some("the exponent needs digits")
    } else {
        None
    }
}

/// The JSON number a malformed one most likely meant (`+1` → `1`, `01` → `1`, `.5` → `0.5`,
/// `1.` → `1.0`), when the repair is unambiguous.
fn repair_number(text: &str) -> Option<String> {
    if !text.contains(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let int_len = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (int, rest) = rest.split_at(int_len);
    let int = match int.trim_start_matches('0') {
        "" => "0",
        trimmed => trimmed,
    };
    let (frac, rest) = match rest.strip_prefix('.') {
        Some(after) => {
            let len = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            let (digits, rest) = after.split_at(len);
            (Some(if digits.is_empty() { "0" } else { digits }), rest)
        }
        None => (None, rest),
    };
    let mut fixed = String::with_capacity(text.len() + 2);
    if negative {
        fixed.push('-');
    }
    fixed.push_str(int);
    if let Some(frac) = frac {
        fixed.push('.');
        fixed.push_str(frac);
    }
    fixed.push_str(rest);
    let valid = matches!(
        Token::lexer(&fixed).collect::<Vec<_>>().as_slice(),
        [Ok(Token::Number(_))]
    );
    (valid && fixed != text).then_some(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_common_number_mistakes() {
        let repairs = [
            ("+1", Some("1")),
            ("01", Some("1")),
            ("-012", Some("-12")),
            ("00.5", Some("0.5")),
            (".5", Some("0.5")),
            ("-.5", Some("-0.5")),
            ("1.", Some("1.0")),
            ("2.e3", Some("2.0e3")),
            ("1e", None),
            ("-", None),
            ("+Inf", None),
            ("0x1F", None),
            ("-1.0.", None),
            ("1.2a-3", None),
        ];
        for (bad, fixed) in repairs {
            assert_eq!(repair_number(bad).as_deref(), fixed, "{bad}");
        }
    }
}
