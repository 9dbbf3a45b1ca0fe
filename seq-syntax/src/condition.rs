//! `when` conditions: tests (`operand` or `operand OP operand`, OP one of
//! `== != < <= > >= contains`) combined with `!`, `&&` and `||`, grouped by parentheses.
//! `!` binds tightest, then the comparisons, then `&&`, then `||`. A comparison compares
//! operands only: `!$args.a == true` would compare a negation, so it is reported, never misread.
//!
//! `lexer` reports what is wrong inside single tokens; the chumsky grammar here reports the
//! structure (E0401).

mod lexer;

use crate::ast::{
    CmpOp, Comparison, Condition, ConditionKind, LogicOp, Operand, OperandKind, Test,
};
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::escape::MapOffset;
use crate::limits::{MAX_CONDITION_DEPTH, MAX_CONDITION_TESTS};
use crate::reference::{is_identifier, relocate};
use crate::span::{Span, Spanned};
use chumsky::error::{Rich, RichPattern};
use chumsky::extra;
use chumsky::input::{Input, ValueInput};
use chumsky::prelude::{Parser, choice, end, recursive, select};
use chumsky::span::SimpleSpan;
use lexer::Tok;

/// Parses an unescaped condition. `map` takes offsets in `text` to the file.
pub fn parse_condition(
    text: &str,
    map: &(impl MapOffset + ?Sized),
) -> (Option<Condition>, Vec<Diagnostic>) {
    parse_condition_in(text, map, None)
}

/// Says whether a name is one of the group's declared inputs.
pub type Declared<'a> = Option<&'a dyn Fn(&str) -> bool>;

/// [`parse_condition`] where the group's inputs may be known (`declared`). A bare word that
/// names a declared input surely meant to read it, so only then is the fix that writes `$args.`
/// before it applied by `--fix`; one that names no input gets no such fix.
pub fn parse_condition_in(
    text: &str,
    map: &(impl MapOffset + ?Sized),
    declared: Declared<'_>,
) -> (Option<Condition>, Vec<Diagnostic>) {
    let (raw, mut diagnostics) = parse_local(text, declared);
    for d in &mut diagnostics {
        d.map_spans(|s| map.span(s));
    }
    let condition = raw.filter(|_| diagnostics.is_empty()).map(|mut raw| {
        // The whole condition is its whole text, the blanks around it included.
        raw.span = Span::from_range(0..text.len());
        place(raw, map)
    });
    (condition, diagnostics)
}

/// `condition`, its spans offsets in its text, with its spans in the file.
fn place(condition: Condition, map: &(impl MapOffset + ?Sized)) -> Condition {
    let kind = match condition.kind {
        ConditionKind::Test(test) => ConditionKind::Test(Test {
            lhs: place_operand(test.lhs, map),
            comparison: test.comparison.map(|c| Comparison {
                op: Spanned::new(c.op.value, map.span(c.op.span)),
                rhs: place_operand(c.rhs, map),
            }),
        }),
        ConditionKind::Not(op, inner) => {
            ConditionKind::Not(map.span(op), Box::new(place(*inner, map)))
        }
        ConditionKind::Logic { op, lhs, rhs } => ConditionKind::Logic {
            op: Spanned::new(op.value, map.span(op.span)),
            lhs: Box::new(place(*lhs, map)),
            rhs: Box::new(place(*rhs, map)),
        },
    };
    Condition {
        span: map.span(condition.span),
        kind,
    }
}

fn place_operand(operand: Operand, map: &(impl MapOffset + ?Sized)) -> Operand {
    let kind = match operand.kind {
        OperandKind::Ref(reference) => OperandKind::Ref(relocate(reference, map)),
        kind @ (OperandKind::Null
        | OperandKind::Bool(_)
        | OperandKind::Number(_)
        | OperandKind::String(_)) => kind,
    };
    Operand {
        kind,
        span: map.span(operand.span),
    }
}

fn parse_local(text: &str, declared: Declared<'_>) -> (Option<Condition>, Vec<Diagnostic>) {
    if text.trim().is_empty() {
        let d = Diagnostic::new(
            Code::ConditionSyntax,
            Span::from_range(0..text.len()),
            "empty condition",
        )
        .with_help("write a condition such as `$args.verbose == true`, or remove `when` to run the group always");
        return (None, vec![d]);
    }
    let lexed = lexer::lex(text);
    let mut diagnostics = lexed.diagnostics;
    if let Some(d) = past_bounds(&lexed.tokens) {
        diagnostics.push(d);
        return (None, diagnostics);
    }
    let eoi = SimpleSpan::from(text.len()..text.len());
    let input = lexed.tokens.as_slice().map(eoi, split_token);
    let (raw, errors) = grammar().parse(input).into_output_errors();
    diagnostics.extend(errors.iter().map(|e| syntax_error(e, text)));
    let Some(raw) = raw else {
        return (None, diagnostics);
    };
    let condition = build(raw, &mut diagnostics, declared);
    (Some(condition), diagnostics)
}

/// The bounds that keep every walk of a condition shallow: tests in all, and nesting of
/// parentheses and `!` (E0009 at the first token past them).
fn past_bounds(tokens: &[(Tok<'_>, SimpleSpan)]) -> Option<Diagnostic> {
    let mut depth = 0usize;
    let mut tests = 1usize;
    for (i, (token, span)) in tokens.iter().enumerate() {
        match token {
            Tok::Open => depth += 1,
            Tok::Close => depth = depth.saturating_sub(1),
            Tok::Not => {
                // A `!` nests until the operand or parenthesis it applies to.
                let nots = tokens
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|(t, _)| matches!(t, Tok::Not))
                    .count();
                if depth + nots > MAX_CONDITION_DEPTH {
                    return Some(too_large(
                        *span,
                        "nested",
                        MAX_CONDITION_DEPTH,
                        "levels of parentheses and `!`",
                    ));
                }
            }
            Tok::Logic(_) => {
                tests += 1;
                if tests > MAX_CONDITION_TESTS {
                    return Some(too_large(*span, "long", MAX_CONDITION_TESTS, "tests"));
                }
            }
            Tok::Operand(_) | Tok::Word(_) | Tok::Op(_) | Tok::Junk(_) => {}
        }
        if depth > MAX_CONDITION_DEPTH {
            return Some(too_large(
                *span,
                "nested",
                MAX_CONDITION_DEPTH,
                "levels of parentheses and `!`",
            ));
        }
    }
    None
}

fn too_large(span: SimpleSpan, what: &str, bound: usize, unit: &str) -> Diagnostic {
    Diagnostic::new(
        Code::TooLarge,
        local(span),
        format!("this condition is too {what}: at most {bound} {unit}"),
    )
    .with_help("split the test across groups or `seq_when_call` items")
}

fn split_token<'a, 's>(pair: &'a (Tok<'s>, SimpleSpan)) -> (&'a Tok<'s>, &'a SimpleSpan) {
    (&pair.0, &pair.1)
}

fn local(span: SimpleSpan) -> Span {
    Span::from_range(span.start..span.end)
}

/// An operand as parsed: a bare word is kept to be reported with a suggestion, not as a
/// chumsky error, so that its help can name the reference that was likely meant.
#[derive(Clone, Debug)]
enum RawOperand<'s> {
    Operand(Operand),
    Bare(&'s str, SimpleSpan),
}

/// A condition as parsed, before its operands are checked: a comparison's sides are any unit
/// here, so that a negation or parenthesis compared is reported with a help, not as "expected".
#[derive(Clone, Debug)]
struct Raw<'s> {
    span: SimpleSpan,
    kind: RawKind<'s>,
}

#[derive(Clone, Debug)]
enum RawKind<'s> {
    Operand(RawOperand<'s>),
    Compare(Box<Raw<'s>>, CmpOp, SimpleSpan, Box<Raw<'s>>),
    Not(SimpleSpan, Box<Raw<'s>>),
    Logic(LogicOp, SimpleSpan, Box<Raw<'s>>, Box<Raw<'s>>),
    Paren(Box<Raw<'s>>),
}

const OPERAND: &str = "operand";
const OPERATOR: &str = "operator";

fn grammar<'t, 's: 't, I>() -> impl Parser<'t, I, Raw<'s>, extra::Err<Rich<'t, Tok<'s>>>>
where
    I: ValueInput<'t, Token = Tok<'s>, Span = SimpleSpan>,
{
    let operand = select! {
        Tok::Operand(kind) = e => RawOperand::Operand(Operand { kind, span: local(e.span()) }),
        Tok::Word(word) = e => RawOperand::Bare(word, e.span()),
    }
    .labelled(OPERAND)
    .map_with(|o, e| Raw {
        span: e.span(),
        kind: RawKind::Operand(o),
    });
    let operator = select! {
        Tok::Op(op) = e => (op, e.span()),
        Tok::Word("contains") = e => (CmpOp::Contains, e.span()),
    }
    .labelled(OPERATOR);
    let logic = |wanted: LogicOp| {
        select! { Tok::Logic(op) = e if op == wanted => e.span() }.labelled(OPERATOR)
    };
    let open = select! { Tok::Open => () };
    let close = select! { Tok::Close => () }.labelled(CLOSE);
    let not = select! { Tok::Not = e => e.span() };
    recursive(|condition| {
        let paren = condition
            .delimited_by(open, close)
            .map_with(|inner: Raw<'s>, e| Raw {
                span: e.span(),
                kind: RawKind::Paren(Box::new(inner)),
            });
        let unit = recursive(|unit| {
            let negation = not
                .then(unit)
                .map_with(|(op, inner): (SimpleSpan, Raw<'s>), e| Raw {
                    span: e.span(),
                    kind: RawKind::Not(op, Box::new(inner)),
                });
            choice((negation, paren, operand))
        });
        let comparison =
            unit.clone()
                .then(operator.then(unit).or_not())
                .map_with(|(lhs, rhs), e| match rhs {
                    None => lhs,
                    Some(((op, op_span), rhs)) => Raw {
                        span: e.span(),
                        kind: RawKind::Compare(Box::new(lhs), op, op_span, Box::new(rhs)),
                    },
                });
        let both = comparison.clone().foldl(
            logic(LogicOp::And).then(comparison).repeated(),
            |lhs, (op, rhs)| combine(LogicOp::And, op, lhs, rhs),
        );
        both.clone().foldl(
            logic(LogicOp::Or).then(both).repeated(),
            |lhs, (op, rhs)| combine(LogicOp::Or, op, lhs, rhs),
        )
    })
    .then_ignore(end())
}

fn combine<'s>(op: LogicOp, op_span: SimpleSpan, lhs: Raw<'s>, rhs: Raw<'s>) -> Raw<'s> {
    Raw {
        span: SimpleSpan::from(lhs.span.start..rhs.span.end),
        kind: RawKind::Logic(op, op_span, Box::new(lhs), Box::new(rhs)),
    }
}

/// The condition of `raw`: bare words and compared negations or parentheses reported, each
/// replaced by a `null` operand so that the rest is still checked.
fn build(raw: Raw<'_>, diagnostics: &mut Vec<Diagnostic>, declared: Declared<'_>) -> Condition {
    let span = local(raw.span);
    let kind = match raw.kind {
        RawKind::Operand(o) => ConditionKind::Test(Test {
            lhs: operand(o, diagnostics, declared),
            comparison: None,
        }),
        RawKind::Compare(lhs, op, op_span, rhs) => {
            let op = Spanned::new(op, local(op_span));
            let lhs = compared(*lhs, &op, diagnostics, declared);
            let rhs = compared(*rhs, &op, diagnostics, declared);
            ConditionKind::Test(Test {
                lhs,
                comparison: Some(Comparison { op, rhs }),
            })
        }
        RawKind::Not(op, inner) => {
            ConditionKind::Not(local(op), Box::new(build(*inner, diagnostics, declared)))
        }
        RawKind::Logic(op, op_span, lhs, rhs) => ConditionKind::Logic {
            op: Spanned::new(op, local(op_span)),
            lhs: Box::new(build(*lhs, diagnostics, declared)),
            rhs: Box::new(build(*rhs, diagnostics, declared)),
        },
        RawKind::Paren(inner) => {
            return Condition {
                span,
                ..build(*inner, diagnostics, declared)
            };
        }
    };
    Condition { span, kind }
}

/// A side of a comparison: an operand, or else reported.
fn compared(
    raw: Raw<'_>,
    op: &Spanned<CmpOp>,
    diagnostics: &mut Vec<Diagnostic>,
    declared: Declared<'_>,
) -> Operand {
    let span = local(raw.span);
    let help = match raw.kind {
        RawKind::Operand(o) => return operand(o, diagnostics, declared),
        RawKind::Not(..) => format!(
            "`!` binds tighter than `{0}`, so this would compare a negation; write `!(… {0} …)` to negate the comparison, or compare with `!=`",
            op.value.as_str()
        ),
        RawKind::Paren(_) | RawKind::Compare(..) | RawKind::Logic(..) => format!(
            "`{}` compares two values (references, strings, numbers, `true`, `false`, `null`); parentheses group whole tests, such as `($args.a == 1 || $args.b == 2) && $args.c`",
            op.value.as_str()
        ),
    };
    diagnostics.push(
        Diagnostic::new(
            Code::ConditionSyntax,
            span,
            format!("`{}` compares values, not tests", op.value.as_str()),
        )
        .with_label(op.span, "comparison")
        .with_help(help),
    );
    Operand {
        kind: OperandKind::Null,
        span,
    }
}

fn operand(
    raw: RawOperand<'_>,
    diagnostics: &mut Vec<Diagnostic>,
    declared: Declared<'_>,
) -> Operand {
    match raw {
        RawOperand::Operand(operand) => operand,
        RawOperand::Bare(word, span) => {
            let span = local(span);
            diagnostics.push(bare_word(word, span, declared.map(|d| d(word))));
            Operand {
                kind: OperandKind::Null,
                span,
            }
        }
    }
}

fn bare_word(word: &str, span: Span, declared: Option<bool>) -> Diagnostic {
    let d = Diagnostic::new(
        Code::ConditionSyntax,
        span,
        format!("`{word}` is not a value"),
    );
    let lower = word.to_lowercase();
    if let Some(literal) = did_you_mean(&lower, ["true", "false", "null"]) {
        return d
            .with_help(format!(
                "did you mean `{literal}`? Literals are lower case, as in JSON"
            ))
            .with_replacement(format!("write `{literal}`"), span, literal);
    }
    if declared == Some(false) && is_identifier(word) {
        return d.with_help(format!(
            "`{word}` is not an input of this group: write a string in double quotes (`\\\"{word}\\\"` inside the file's `when` string), or declare `{word}` in `in` and read it as `$args.{word}`"
        ));
    }
    if is_identifier(word) {
        let d = d
            .with_help(format!(
                "did you mean `$args.{word}`? Inputs are read as `$args.NAME`; a string is written in double quotes"
            ))
            .with_replacement(
                format!("read the input `{word}`"),
                Span::new(span.start, span.start),
                "$args.",
            );
        // Inputs not known: the author may have meant the string `"{word}"`.
        return if declared == Some(true) {
            d
        } else {
            d.maybe_incorrect()
        };
    }
    d.with_help(OPERANDS_HELP)
}

const COMBINE_HELP: &str =
    "combine tests with `&&` (and) or `||` (or), such as `$args.a == 1 && $args.b != \"\"`";
const OPERANDS_HELP: &str = "operands are references (`$args.x`), JSON strings (\"text\"), numbers, `true`, `false` and `null`";
const OPERATORS_HELP: &str =
    "compare with `==`, `!=`, `<`, `<=`, `>`, `>=` or `contains`, e.g. `$args.count > 0`";

/// Turns chumsky's error into E0401, phrased by the position it occurred in.
fn syntax_error(error: &Rich<'_, Tok<'_>>, text: &str) -> Diagnostic {
    let span = local(*error.span());
    let expects = |label: &str| {
        error
            .expected()
            .any(|p| matches!(p, RichPattern::Label(l) if l == label))
    };
    let found_text = text.get(span.range()).unwrap_or("");
    let found = match error.found() {
        Some(_) => format!("`{found_text}`"),
        None => "the end of the condition".to_owned(),
    };
    let found_kind = error.found().map(|t| match t {
        Tok::Operand(_) | Tok::Word(_) => Found::Operand,
        Tok::Op(_) | Tok::Logic(_) => Found::Operator,
        Tok::Not | Tok::Open => Found::Opening,
        Tok::Close => Found::Close,
        Tok::Junk(_) => Found::Junk,
    });
    let (message, help) = if expects(CLOSE) && found_kind.is_none() {
        (
            format!("expected `)`, found {found}"),
            "close every `(` with a `)`",
        )
    } else if found_kind == Some(Found::Close) && !expects(OPERAND) {
        (
            "this `)` closes no `(`".to_owned(),
            "remove it, or open the group it ends with `(`",
        )
    } else if expects(OPERATOR) {
        let help = match found_kind {
            Some(Found::Operand | Found::Opening) => COMBINE_HELP,
            Some(Found::Junk) => JUNK_HELP,
            // Only a comparison operator can stand where `&&` was expected.
            Some(Found::Operator) => {
                "comparisons do not chain: combine two with `&&`, such as `$args.a == $args.b && $args.b == 1`"
            }
            Some(Found::Close) | None => OPERATORS_HELP,
        };
        (
            format!("expected an operator such as `==` or `&&`, found {found}"),
            help,
        )
    } else if expects(OPERAND) {
        let help = match found_kind {
            None => "write the value to compare with, e.g. `$args.name != \"\"`",
            Some(Found::Operator) => {
                "an operator needs an operand on each side, e.g. `$args.count > 0 && $args.ok`"
            }
            Some(Found::Close) => "write a test between the parentheses, or remove them",
            Some(Found::Junk) => JUNK_HELP,
            Some(Found::Operand | Found::Opening) => OPERANDS_HELP,
        };
        (format!("expected an operand, found {found}"), help)
    } else {
        let help = match found_kind {
            Some(Found::Junk) => JUNK_HELP,
            Some(Found::Operand | Found::Operator | Found::Opening | Found::Close) | None => {
                COMBINE_HELP
            }
        };
        (
            format!("expected the end of the condition, found {found}"),
            help,
        )
    };
    Diagnostic::new(Code::ConditionSyntax, span, message).with_help(help)
}

const CLOSE: &str = "`)`";

const JUNK_HELP: &str = "a condition holds references (`$args.x`), JSON strings (\"text\"), numbers, `true`, `false`, `null`, the comparisons `==`, `!=`, `<`, `<=`, `>`, `>=`, `contains`, and `!`, `&&`, `||` and parentheses";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    Operand,
    Operator,
    /// `!` or `(`: what starts a test.
    Opening,
    Close,
    Junk,
}

#[cfg(test)]
mod tests;
