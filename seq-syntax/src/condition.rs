//! `when` conditions: `operand` or `operand OP operand`, OP one of
//! `== != < <= > >= contains`. The L3 operators `&&`, `||`, `!` and parentheses are recognised
//! only to be rejected at their position (E0402), never misread.
//!
//! `lexer` reports what is wrong inside single tokens; the chumsky grammar here reports the
//! structure (E0401). When an L3 operator is present every one is reported and the structure is
//! not parsed: a condition written for L3 fails on its operators, not on a missing comparison.

mod lexer;

use crate::ast::{CmpOp, Comparison, Condition, Operand, OperandKind};
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::escape::MapOffset;
use crate::reference::{is_identifier, relocate};
use crate::span::{Span, Spanned};
use chumsky::error::{Rich, RichPattern};
use chumsky::extra;
use chumsky::input::{Input, ValueInput};
use chumsky::prelude::{Parser, end, select};
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
    let condition = raw.filter(|_| diagnostics.is_empty()).map(|raw| Condition {
        span: map.span(Span::from_range(0..text.len())),
        lhs: place(raw.lhs, map),
        comparison: raw.comparison.map(|c| Comparison {
            op: Spanned::new(c.op.value, map.span(c.op.span)),
            rhs: place(c.rhs, map),
        }),
    });
    (condition, diagnostics)
}

/// A condition with spans that are offsets in its text.
struct Local {
    lhs: Operand,
    comparison: Option<Comparison>,
}

fn place(operand: Operand, map: &(impl MapOffset + ?Sized)) -> Operand {
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

fn parse_local(text: &str, declared: Declared<'_>) -> (Option<Local>, Vec<Diagnostic>) {
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
    if lexed.has_l3 {
        return (None, diagnostics);
    }
    let eoi = SimpleSpan::from(text.len()..text.len());
    let input = lexed.tokens.as_slice().map(eoi, split_token);
    let (raw, errors) = grammar().parse(input).into_output_errors();
    diagnostics.extend(errors.iter().map(|e| syntax_error(e, text)));
    let Some(raw) = raw else {
        return (None, diagnostics);
    };
    let lhs = operand(raw.lhs, &mut diagnostics, declared);
    let comparison = raw.comparison.map(|(op, span, rhs)| Comparison {
        op: Spanned::new(op, local(span)),
        rhs: operand(rhs, &mut diagnostics, declared),
    });
    (Some(Local { lhs, comparison }), diagnostics)
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

struct RawCondition<'s> {
    lhs: RawOperand<'s>,
    comparison: Option<(CmpOp, SimpleSpan, RawOperand<'s>)>,
}

const OPERAND: &str = "operand";
const OPERATOR: &str = "operator";

fn grammar<'t, 's: 't, I>() -> impl Parser<'t, I, RawCondition<'s>, extra::Err<Rich<'t, Tok<'s>>>>
where
    I: ValueInput<'t, Token = Tok<'s>, Span = SimpleSpan>,
{
    let operand = select! {
        Tok::Operand(kind) = e => RawOperand::Operand(Operand { kind, span: local(e.span()) }),
        Tok::Word(word) = e => RawOperand::Bare(word, e.span()),
    }
    .labelled(OPERAND);
    let operator = select! {
        Tok::Op(op) = e => (op, e.span()),
        Tok::Word("contains") = e => (CmpOp::Contains, e.span()),
    }
    .labelled(OPERATOR);
    operand
        .then(operator.then(operand).or_not())
        .then_ignore(end())
        .map(|(lhs, comparison)| RawCondition {
            lhs,
            comparison: comparison.map(|((op, span), rhs)| (op, span, rhs)),
        })
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
    if matches!(lower.as_str(), "and" | "or" | "not") {
        return d.with_help(ONE_TEST_HELP);
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

const ONE_TEST_HELP: &str = "a condition is one operand or one comparison; combine tests by splitting them across groups, or with `seq_when_call`";
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
        Tok::Op(_) => Found::Operator,
        Tok::Junk(_) => Found::Junk,
    });
    let (message, help) = if expects(OPERATOR) {
        let help = match found_kind {
            Some(Found::Operand)
                if ["and", "or", "not"].contains(&found_text.to_lowercase().as_str()) =>
            {
                ONE_TEST_HELP
            }
            Some(Found::Junk) => JUNK_HELP,
            Some(Found::Operand | Found::Operator) | None => OPERATORS_HELP,
        };
        (
            format!("expected an operator such as `==`, found {found}"),
            help,
        )
    } else if expects(OPERAND) {
        let help = match found_kind {
            None => "write the value to compare with, e.g. `$args.name != \"\"`",
            Some(Found::Operator) => {
                "an operator needs an operand on each side, e.g. `$args.count > 0`"
            }
            Some(Found::Junk) => JUNK_HELP,
            Some(Found::Operand) => OPERANDS_HELP,
        };
        (format!("expected an operand, found {found}"), help)
    } else {
        let help = match found_kind {
            Some(Found::Junk) => JUNK_HELP,
            Some(Found::Operand | Found::Operator) | None => ONE_TEST_HELP,
        };
        (
            format!("expected the end of the condition, found {found}"),
            help,
        )
    };
    Diagnostic::new(Code::ConditionSyntax, span, message).with_help(help)
}

const JUNK_HELP: &str = "a condition holds references (`$args.x`), JSON strings (\"text\"), numbers, `true`, `false`, `null` and one of `==`, `!=`, `<`, `<=`, `>`, `>=`, `contains`";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    Operand,
    Operator,
    Junk,
}

#[cfg(test)]
mod tests;
