//! Evaluating conditions: a group's `when` and the `when` of `seq_when_call`.
//!
//! `!`, `&&` and `||` evaluate left to right and short-circuit: the right side of `&&` is not
//! evaluated when the left is false (nor that of `||` when it is true), so it may read what the
//! left side guards. An operand that is evaluated and fails is an error, never false.
//!
//! An unset input or slot reads as `null`, and a path from it is followed from `null`.
//! `==`/`!=` compare without coercion, numbers by value (so `1 == 1.0`), arrays and objects
//! member by member. Ordering needs two numbers; `contains` is a substring test on strings and
//! membership on arrays; a bare operand must be a boolean, `null` counting as false. Every other
//! case is an evaluation error of reason `type` — surfaced, never taken as false.

use super::values::{self, Scope, Slots, describe};
use crate::error::{Reason, ToolError};
use seq_syntax::ast::{
    CmpOp, Condition, ConditionKind, LogicOp, Operand, OperandKind, Template, TemplatePart, Test,
};
use seq_syntax::escape::OffsetMap;
use seq_syntax::kind::JsonKind;
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Inputs and slots a condition reads, built once and evaluated against many times.
#[derive(Clone, Debug, Default)]
pub struct ConditionScope(Slots);

impl ConditionScope {
    /// The inputs `args` and the slots `out` (written by earlier items).
    pub fn new(args: serde_json::Map<String, Value>, out: serde_json::Map<String, Value>) -> Self {
        ConditionScope(Slots {
            args,
            out,
            unwritten: Default::default(),
        })
    }

    /// Whether `condition` holds here, as a group's `when` or a `seq_when_call` evaluates it
    /// (for embedders and the benchmarks).
    pub fn holds(&self, condition: &Condition) -> Result<bool, ToolError> {
        eval(condition, Scope::of(&self.0))
    }
}

/// Whether `condition` holds in `scope`.
pub(crate) fn eval(condition: &Condition, scope: Scope<'_>) -> Result<bool, ToolError> {
    match &condition.kind {
        ConditionKind::Test(t) => test(t, scope),
        ConditionKind::Not(_, inner) => Ok(!eval(inner, scope)?),
        ConditionKind::Logic { op, lhs, rhs } => {
            let left = eval(lhs, scope)?;
            match (op.value, left) {
                (LogicOp::And, false) => Ok(false),
                (LogicOp::Or, true) => Ok(true),
                (LogicOp::And, true) | (LogicOp::Or, false) => eval(rhs, scope),
            }
        }
    }
}

/// Whether one test holds: a bool operand, or a comparison.
fn test(condition: &Test, scope: Scope<'_>) -> Result<bool, ToolError> {
    let lhs = operand(&condition.lhs, scope)?;
    let Some(comparison) = &condition.comparison else {
        return match lhs.as_ref() {
            Value::Bool(b) => Ok(*b),
            Value::Null => Ok(false),
            other @ (Value::Number(_) | Value::String(_) | Value::Array(_) | Value::Object(_)) => {
                Err(error(
                    format!(
                        "a test without a comparison must be {}, found {}",
                        JsonKind::Bool.described(),
                        describe(other)
                    ),
                    "compare it explicitly, such as `$args.count > 0` or `$args.name != \"\"`",
                ))
            }
        };
    };
    let rhs = operand(&comparison.rhs, scope)?;
    let (lhs, rhs) = (lhs.as_ref(), rhs.as_ref());
    let op = comparison.op.value;
    match op {
        CmpOp::Eq => Ok(equal(lhs, rhs)),
        CmpOp::Ne => Ok(!equal(lhs, rhs)),
        CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
            let ordering = match (lhs, rhs) {
                (Value::Number(a), Value::Number(b)) => compare(a, b),
                (a, b) => {
                    return Err(error(
                        format!(
                            "`{}` orders numbers, found {} and {}",
                            op.as_str(),
                            describe(a),
                            describe(b)
                        ),
                        "compare numbers only; use `==` or `!=` for other values",
                    ));
                }
            };
            let Some(ordering) = ordering else {
                return Err(error(
                    format!("`{}` cannot order these numbers", op.as_str()),
                    "compare finite numbers",
                ));
            };
            Ok(match op {
                CmpOp::Lt => ordering == Ordering::Less,
                CmpOp::Le => ordering != Ordering::Greater,
                CmpOp::Gt => ordering == Ordering::Greater,
                CmpOp::Ge => ordering != Ordering::Less,
                CmpOp::Eq | CmpOp::Ne | CmpOp::Contains => false,
            })
        }
        CmpOp::Contains => match (lhs, rhs) {
            (Value::String(haystack), Value::String(needle)) => {
                Ok(haystack.contains(needle.as_str()))
            }
            (Value::Array(items), needle) => Ok(items.iter().any(|item| equal(item, needle))),
            (Value::String(_), other) => Err(error(
                format!(
                    "`contains` on a string needs a string on the right, found {}",
                    describe(other)
                ),
                "write the right side as a string",
            )),
            (other, _) => Err(error(
                format!(
                    "`contains` needs a string or an array on the left, found {}",
                    describe(other)
                ),
                "use `==` for other values, or test the field that holds the string or array",
            )),
        },
    }
}

fn operand<'s>(operand: &'s Operand, scope: Scope<'s>) -> Result<Cow<'s, Value>, ToolError> {
    Ok(match &operand.kind {
        OperandKind::Ref(reference) => Cow::Borrowed(values::read_in_condition(scope, reference)?),
        OperandKind::Null => Cow::Owned(Value::Null),
        OperandKind::Bool(b) => Cow::Owned(Value::Bool(*b)),
        OperandKind::Number(n) => Cow::Owned(Value::Number(n.clone())),
        OperandKind::String(s) => Cow::Owned(Value::String(s.clone())),
    })
}

/// Equality without coercion: numbers by value, containers member by member.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| equal(a, b)))
        }
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_)
            | Value::Object(_),
            _,
        ) => false,
    }
}

/// Numbers by value: exactly between integers, as floats otherwise.
fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return Some(x.cmp(&y));
    }
    a.as_f64()?.partial_cmp(&b.as_f64()?)
}

fn error(detail: String, hint: &str) -> ToolError {
    ToolError::new(
        Reason::Type,
        format!("the condition cannot be evaluated: {detail}"),
    )
    .with_hint(hint)
}

/// Parses a condition given as text at run time; a condition that does not parse is an
/// `arg_error` (the arguments are malformed), with the parser's first message.
pub(crate) fn parse(text: &str) -> Result<Condition, ToolError> {
    let (condition, diagnostics) =
        seq_syntax::condition::parse_condition(text, &OffsetMap::identity(0));
    match (condition, diagnostics.first()) {
        (Some(condition), None) => Ok(condition),
        (_, Some(first)) => Err(ToolError::new(
            Reason::ArgError,
            format!("`when` is not a condition: {}", first.message),
        )
        .with_field("when")
        .with_hint(first.help.clone().unwrap_or_else(|| {
            "write tests such as `operand OP operand`, combined with `&&`, `||` and `!`".to_owned()
        }))),
        (None, None) => {
            Err(ToolError::new(Reason::ArgError, "`when` is not a condition").with_field("when"))
        }
    }
}

/// The text of the `when` argument of a `seq_when_call` item. The front end reads it as a
/// template, so its references are parsed parts; they are written back as references (not
/// interpolated), so that the condition reads them as operands in the caller's scope,
/// the way the checker reads them.
pub(crate) fn condition_text(template: &Template) -> String {
    let mut text = String::new();
    for part in &template.parts {
        match part {
            TemplatePart::Text(t) => text.push_str(t),
            TemplatePart::Ref(reference) => text.push_str(&values::text(reference)),
        }
    }
    text
}
