//! A group's `tools` or `when` string written with raw quotes, line breaks or tabs inside it
//! ("Unescaped quotes and line breaks" in docs/reference.md). JSON ends the string at the first
//! inner `"`, and what follows is a cascade of syntax errors about pieces of the items. When the
//! string can be read back — some later `"` closes it so that the rest of the group, and what
//! follows the group, is valid JSON — the mistake is one diagnostic (E0004) at the first bad
//! character, and the file is lowered as if the string were escaped. The fix escapes the string;
//! it is machine-applicable only when the escaped text parses as items (`tools`) or as a
//! condition (`when`).
//!
//! Runs only on a file with syntax errors. Each site looks at most [`MAX_READ_BACK_BYTES`] past
//! its quote, and the whole search lexes at most [`read_back_budget`] bytes, so hostile input
//! stays linear.

use super::maps::FileMap;
use crate::code::Code;
use crate::condition::parse_condition;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::escape::{OffsetMap, unescape};
use crate::fields::key;
use crate::json::{self, MAX_DEPTH, Mode, Token};
use crate::limits::{MAX_READ_BACK_BYTES, MAX_READ_BACK_QUOTES, read_back_budget};
use crate::span::Span;
use crate::split::{SplitErrorKind, split_items};
use logos::Logos;

/// The strings read back, and the text with them escaped.
#[derive(Debug)]
pub(super) struct Repair {
    /// The file with every site's string escaped: what is lowered instead of the file.
    pub(super) text: String,
    /// From offsets of `text` to offsets of the file.
    pub(super) map: FileMap,
    pub(super) sites: Vec<Site>,
}

#[derive(Debug)]
pub(super) struct Site {
    pub(super) diagnostic: Diagnostic,
    /// The string as written, quotes included, in the file.
    pub(super) region: Span,
    /// Whether the escaped string parses (the fix is machine-applicable): then what lowering
    /// finds inside it is as real as anywhere else. Otherwise the group is taken as incomplete
    /// and nothing else is reported inside the string.
    pub(super) parses: bool,
}

/// The group fields whose strings are read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Tools,
    When,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Tools => key::TOOLS,
            Field::When => key::WHEN,
        }
    }

    fn parsed_as(self) -> &'static str {
        match self {
            Field::Tools => "items",
            Field::When => "a condition",
        }
    }
}

/// Finds the broken `tools` and `when` strings of `text` that can be read back; `None` if there
/// is none.
pub(super) fn find(text: &str) -> Option<Repair> {
    let mut budget = read_back_budget(text.len());
    let mut sites = Vec::new();
    let mut regions = Vec::new();
    let mut base = 0;
    let mut lexer = Token::lexer(text);
    // The structures open, as `{` or `[`, up to the depth bound; deeper ones are only counted.
    let mut open: Vec<Token<'_>> = Vec::new();
    let mut deeper = 0usize;
    // The last three tokens, for `{ KEY :` or `, KEY :` before a value.
    let mut last: [Option<Token<'_>>; 3] = [None; 3];
    while let Some(token) = lexer.next() {
        let span = lexer.span();
        let span = base + span.start..base + span.end;
        budget = budget.saturating_sub(span.len());
        if budget == 0 {
            break;
        }
        let Ok(token) = token else {
            last = [None; 3];
            continue;
        };
        match token {
            Token::LBrace | Token::LBrack if open.len() < MAX_DEPTH => open.push(token),
            Token::LBrace | Token::LBrack => deeper += 1,
            Token::RBrace | Token::RBrack if deeper > 0 => deeper -= 1,
            Token::RBrace | Token::RBrack => {
                open.pop();
            }
            Token::String(_) | Token::BadString(_) => {
                if let Some(field) = group_field(&last, &open)
                    && broken_string(text, token, span.end).is_some()
                    && let Some(site) = read_back(text, field, span.start, &mut budget)
                {
                    let resume = site.region.end as usize;
                    regions.push(site.region);
                    sites.push(site);
                    // Go on after the string as read back, inside the same group.
                    base = resume;
                    lexer = Token::lexer(text.get(resume..).unwrap_or_default());
                    last = [Some(Token::String("\"\"")), None, None];
                    continue;
                }
            }
            Token::Colon
            | Token::Comma
            | Token::True
            | Token::False
            | Token::Null
            | Token::Number(_)
            | Token::Ref(_)
            | Token::BadRef(_)
            | Token::BadNumber(_)
            | Token::Word(_)
            | Token::SingleQuoted(_)
            | Token::Unknown(_)
            | Token::Invalid(_) => {}
            Token::LineComment(_) | Token::BlockComment(_) | Token::UnclosedComment(_) => {
                continue;
            }
        }
        last = [Some(token), last[0], last[1]];
    }
    if sites.is_empty() {
        return None;
    }
    let (text, map) = escaped(text, &regions);
    Some(Repair { text, map, sites })
}

/// Whether the value about to be read is a group's `tools` or `when`: `KEY :` just before it,
/// after `{` or `,`, in an object inside an array inside the file's object.
fn group_field(last: &[Option<Token<'_>>; 3], open: &[Token<'_>]) -> Option<Field> {
    if open != [Token::LBrace, Token::LBrack, Token::LBrace] {
        return None;
    }
    let [
        Some(Token::Colon),
        Some(Token::String(key)),
        Some(Token::LBrace | Token::Comma),
    ] = last
    else {
        return None;
    };
    match *key {
        "\"tools\"" => Some(Field::Tools),
        "\"when\"" => Some(Field::When),
        _ => None,
    }
}

/// The length of a string token ending at `end` when it is broken: malformed, or not followed
/// by what follows a member's value. `None` for a string that is whole, or any other token.
fn broken_string(text: &str, token: Token<'_>, end: usize) -> Option<usize> {
    if let Token::BadString(body) = token {
        return Some(body.len());
    }
    let Token::String(body) = token else {
        return None;
    };
    let next = text
        .as_bytes()
        .get(end..)
        .unwrap_or_default()
        .iter()
        .find(|b| !b.is_ascii_whitespace());
    (!matches!(next, None | Some(b',' | b'}' | b'/'))).then_some(body.len())
}

/// What a character inside the string needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Problem {
    Quote,
    LineBreak,
    Tab,
    Control,
}

/// Reads back the broken string opening at `open`: the first inner `"` after which the group
/// goes on as valid JSON and the escaped text parses, else the first after which the group goes
/// on.
fn read_back(text: &str, field: Field, open: usize, budget: &mut usize) -> Option<Site> {
    let bytes = text.as_bytes();
    let end = open.saturating_add(MAX_READ_BACK_BYTES).min(bytes.len());
    let mut at = open + 1;
    let mut candidates = 0;
    // The first reading after which the group goes on, whether or not it parses.
    let mut first: Option<(usize, String)> = None;
    let mut parsed = None;
    while at < end && candidates < MAX_READ_BACK_QUOTES {
        match bytes.get(at) {
            Some(b'\\') => at += 2,
            Some(b'"') => {
                candidates += 1;
                if group_goes_on(text, at + 1, budget) {
                    let body = text.get(open + 1..at)?;
                    let literal = literal(body);
                    *budget = budget.saturating_sub(body.len());
                    // A later reading cannot parse too: its text would hold this one's closing
                    // quote at the top level, after a whole item (or condition) and before the
                    // rest of the group.
                    if parses(&literal, field) {
                        parsed = Some((at, literal));
                        break;
                    }
                    first.get_or_insert((at, literal));
                }
                at += 1;
            }
            Some(_) => at += 1,
            None => break,
        }
        if *budget == 0 {
            return None;
        }
    }
    let parses = parsed.is_some();
    let (close, literal) = parsed.or(first)?;
    let body = text.get(open + 1..close)?;
    let (problem, first_at) = first_problem(body)?;
    let culprit = Span::from_range(open + 1 + first_at..open + 2 + first_at);
    let region = Span::from_range(open..close + 1);
    let name = field.name();
    let message = match problem {
        Problem::Quote => format!("this `\"` ends the `{name}` string"),
        Problem::LineBreak => format!("a line break inside the `{name}` string"),
        Problem::Tab => format!("a tab inside the `{name}` string"),
        Problem::Control => format!("a raw control character inside the `{name}` string"),
    };
    let kinds = problems(body);
    let mut writes = Vec::new();
    let mut what = Vec::new();
    for kind in &kinds {
        let (write, thing) = match kind {
            Problem::Quote => ("`\\\"` for each inner `\"`", "quotes"),
            Problem::LineBreak => ("`\\n` for a line break", "line breaks"),
            Problem::Tab => ("`\\t` for a tab", "tabs"),
            Problem::Control => (
                "`\\u00XX` for another control character",
                "control characters",
            ),
        };
        writes.push(write);
        what.push(thing);
    }
    let mut help = format!("inside it write {}", join(&writes));
    if !parses {
        help.push_str(&format!(
            "; escaped, the string still does not read as {}: fix it by hand",
            field.parsed_as()
        ));
        if field == Field::Tools && kinds.contains(&Problem::Quote) {
            help.push_str(", and write a quote inside an item's own strings as `\\\\\\\"`");
        }
    }
    let mut diagnostic = Diagnostic::new(Code::JsonString, culprit, message)
        .with_label(
            Span::from_range(close..close + 1),
            format!("the `{name}` string ends here"),
        )
        .with_help(help);
    if parses {
        diagnostic = diagnostic.with_fix(Fix::new(
            format!("escape the {} of the `{name}` string", join(&what)),
            vec![Edit {
                span: region,
                text: literal,
            }],
        ));
    }
    Some(Site {
        diagnostic,
        region,
        parses,
    })
}

fn join(parts: &[&str]) -> String {
    match parts {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Escapes a string body as JSON needs: raw quotes, line breaks, tabs and other control
/// characters; escapes already written are kept. Returns the literal, quotes included.
fn literal(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 16);
    out.push('"');
    escape_into(body, &mut out, |_, _, _| {});
    out.push('"');
    out
}

/// Appends `body` escaped to `out`, telling `point` of each escape made: where it starts in
/// `out`, its length, and the offset in `body` of the character it replaces.
fn escape_into(body: &str, out: &mut String, mut point: impl FnMut(usize, usize, usize)) {
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if escaped {
            escaped = false;
            out.push(c);
            continue;
        }
        escaped = c == '\\';
        match escape_of(c) {
            Some(escape) => {
                point(out.len(), escape.len(), i);
                out.push_str(&escape);
            }
            None => out.push(c),
        }
    }
}

fn escape_of(c: char) -> Option<String> {
    match c {
        '"' => Some("\\\"".to_owned()),
        '\n' => Some("\\n".to_owned()),
        '\r' => Some("\\r".to_owned()),
        '\t' => Some("\\t".to_owned()),
        '\0'..='\x1f' => Some(format!("\\u{:04x}", u32::from(c))),
        _ => None,
    }
}

fn problem_of(c: char) -> Option<Problem> {
    match c {
        '"' => Some(Problem::Quote),
        '\n' | '\r' => Some(Problem::LineBreak),
        '\t' => Some(Problem::Tab),
        '\0'..='\x1f' => Some(Problem::Control),
        _ => None,
    }
}

/// The characters of `body` that need escaping, outside escapes, with their offsets.
fn unescaped(body: &str) -> impl Iterator<Item = (usize, Problem)> + '_ {
    let mut escaped = false;
    body.char_indices().filter_map(move |(i, c)| {
        if escaped {
            escaped = false;
            return None;
        }
        escaped = c == '\\';
        problem_of(c).map(|p| (i, p))
    })
}

/// The first character to escape: the first quote if there is one (what ends the string), else
/// the first other.
fn first_problem(body: &str) -> Option<(Problem, usize)> {
    let mut first = None;
    for (i, problem) in unescaped(body) {
        if problem == Problem::Quote {
            return Some((problem, i));
        }
        first.get_or_insert((problem, i));
    }
    first
}

fn problems(body: &str) -> Vec<Problem> {
    let mut kinds: Vec<Problem> = unescaped(body).map(|(_, p)| p).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// Whether an escaped literal is a valid string whose text parses as `field` wants.
fn parses(literal: &str, field: Field) -> bool {
    let mut lexer = Token::lexer(literal);
    let whole = matches!(lexer.next(), Some(Ok(Token::String(_)))) && lexer.next().is_none();
    let Some(body) = literal.get(1..literal.len().saturating_sub(1)) else {
        return false;
    };
    if !whole {
        return false;
    }
    let (text, _) = unescape(body, 0);
    match field {
        Field::Tools => {
            let split = split_items(&text.text);
            let split_ok = split.errors.iter().all(|e| {
                matches!(
                    e.kind,
                    SplitErrorKind::MissingFinalSemicolon | SplitErrorKind::EmptyItem
                )
            });
            split_ok
                && !split.items.is_empty()
                && split.items.iter().all(|range| {
                    text.text.get(range.clone()).is_some_and(|item| {
                        let (_, diagnostics) = json::parse(item, Mode::Item);
                        !diagnostics.iter().any(Diagnostic::is_error)
                    })
                })
        }
        Field::When => {
            let (condition, diagnostics) = parse_condition(&text.text, &OffsetMap::identity(0));
            condition.is_some() && !diagnostics.iter().any(Diagnostic::is_error)
        }
    }
}

/// Whether, after a string closed at `at - 1`, the group's members go on as valid JSON to its
/// `}`, and the groups' array goes on after it (`,` or `]`). A later `tools` or `when` of the
/// group broken too goes on if some reading of it parses and the group goes on after that.
fn group_goes_on(text: &str, at: usize, budget: &mut usize) -> bool {
    let mut tokens = Tokens {
        text,
        lexer: Token::lexer(""),
        base: 0,
        limit: at.saturating_add(MAX_READ_BACK_BYTES),
        budget,
    };
    if !tokens.seek(at) {
        return false;
    }
    members_to_close(&mut tokens, true)
        && matches!(tokens.next(), Some((Token::Comma | Token::RBrack, _)))
}

struct Tokens<'src, 'b> {
    text: &'src str,
    lexer: logos::Lexer<'src, Token<'src>>,
    /// Where the lexer's text starts in `text`.
    base: usize,
    limit: usize,
    budget: &'b mut usize,
}

impl<'src> Tokens<'src, '_> {
    /// Lexes on from `at`.
    fn seek(&mut self, at: usize) -> bool {
        let Some(rest) = self.text.get(at..) else {
            return false;
        };
        self.lexer = Token::lexer(rest);
        self.base = at;
        true
    }

    /// The next token and its end; `None` at the end, on a lexing error, a comment, or past a
    /// bound.
    fn next(&mut self) -> Option<(Token<'src>, usize)> {
        let token = self.lexer.next()?.ok()?;
        let span = self.lexer.span();
        *self.budget = self.budget.saturating_sub(span.len() + 1);
        let end = self.base + span.end;
        if end > self.limit || *self.budget == 0 {
            return None;
        }
        Some((token, end))
    }

    fn token(&mut self) -> Option<Token<'src>> {
        self.next().map(|(token, _)| token)
    }
}

/// `(, KEY : VALUE)* ,? }`: the rest of an object after a member; in the `group`, a broken
/// `tools` or `when` string is read back.
fn members_to_close(tokens: &mut Tokens<'_, '_>, group: bool) -> bool {
    loop {
        match tokens.token() {
            Some(Token::RBrace) => return true,
            Some(Token::Comma) => match tokens.token() {
                // A trailing comma is a mistake of its own, reported by the parser.
                Some(Token::RBrace) => return true,
                Some(Token::String(key)) => {
                    if tokens.token() != Some(Token::Colon) {
                        return false;
                    }
                    let Some((token, end)) = tokens.next() else {
                        return false;
                    };
                    let field = match key {
                        "\"tools\"" if group => Some(Field::Tools),
                        "\"when\"" if group => Some(Field::When),
                        _ => None,
                    };
                    if let Some(field) = field
                        && let Some(len) = broken_string(tokens.text, token, end)
                    {
                        return broken_goes_on(tokens, field, end - len);
                    }
                    if !value(tokens, token, 0) {
                        return false;
                    }
                }
                Some(_) | None => return false,
            },
            Some(_) | None => return false,
        }
    }
}

/// Whether the broken string opening at `open` has a reading that parses and after which the
/// group's members go on to its `}`.
fn broken_goes_on(tokens: &mut Tokens<'_, '_>, field: Field, open: usize) -> bool {
    let text = tokens.text;
    let bytes = text.as_bytes();
    let end = open.saturating_add(MAX_READ_BACK_BYTES).min(bytes.len());
    let mut at = open + 1;
    let mut candidates = 0;
    while at < end && candidates < MAX_READ_BACK_QUOTES && *tokens.budget > 0 {
        match bytes.get(at) {
            Some(b'\\') => at += 2,
            Some(b'"') => {
                candidates += 1;
                let literal = text.get(open + 1..at).map(literal);
                *tokens.budget = tokens.budget.saturating_sub(at - open);
                if literal.is_some_and(|l| parses(&l, field))
                    && tokens.seek(at + 1)
                    && members_to_close(tokens, true)
                {
                    return true;
                }
                at += 1;
            }
            Some(_) => at += 1,
            None => break,
        }
    }
    false
}

/// Whether `token` starts a valid value, read to its end.
fn value(tokens: &mut Tokens<'_, '_>, token: Token<'_>, depth: usize) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    if matches!(
        token,
        Token::True | Token::False | Token::Null | Token::Number(_) | Token::String(_)
    ) {
        return true;
    }
    if token == Token::LBrace {
        return match tokens.token() {
            Some(Token::RBrace) => true,
            Some(Token::String(_)) => {
                if tokens.token() != Some(Token::Colon) {
                    return false;
                }
                let Some(token) = tokens.token() else {
                    return false;
                };
                value(tokens, token, depth + 1) && members_to_close(tokens, false)
            }
            Some(_) | None => false,
        };
    }
    // Any other token but `[` starts no valid value.
    if token != Token::LBrack {
        return false;
    }
    let Some(mut token) = tokens.token() else {
        return false;
    };
    if token == Token::RBrack {
        return true;
    }
    loop {
        if !value(tokens, token, depth + 1) {
            return false;
        }
        match tokens.token() {
            Some(Token::RBrack) => return true,
            Some(Token::Comma) => match tokens.token() {
                Some(Token::RBrack) => return true,
                Some(next) => token = next,
                None => return false,
            },
            Some(_) | None => return false,
        }
    }
}

/// The file with each region's string escaped, and the map back.
fn escaped(text: &str, regions: &[Span]) -> (String, FileMap) {
    let mut out = String::with_capacity(text.len() + 64);
    let mut map = FileMap::default();
    let mut from = 0;
    for region in regions {
        let range = region.range();
        let body = range.start + 1..range.end.saturating_sub(1);
        out.push_str(text.get(from..body.start).unwrap_or_default());
        escape_into(
            text.get(body.clone()).unwrap_or_default(),
            &mut out,
            |at, len, i| map.replaced(at, len, body.start + i),
        );
        from = body.end;
    }
    out.push_str(text.get(from..).unwrap_or_default());
    (out, map)
}
