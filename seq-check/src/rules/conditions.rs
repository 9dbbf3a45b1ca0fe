//! Types in conditions: the group's `when` and the `when` of `seq_when_call`.
//! `==`/`!=` compare without coercion, so operands of different kinds never compare equal;
//! ordering needs numbers; `contains` a string (with a string) or an array; a bare operand is a
//! bool, and so is each operand of `!`, `&&` and `||` (there a literal `null` too is reported:
//! it is always false). A reference's type is its slot's declared type; with a path it is
//! unknown.

use super::Cx;
use super::types::reference_type;
use seq_syntax::ast::{CmpOp, Condition, ConditionKind, Operand, OperandKind, Test, Type};
use seq_syntax::kind::JsonKind;
use seq_syntax::{Code, Diagnostic, Span};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    if let Some(when) = &cx.group.when {
        condition(cx, when, out);
    }
    for item in &cx.items {
        if let Some(when) = &item.when {
            condition(cx, when, out);
        }
    }
}

/// What is known statically of an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    String,
    Number,
    Bool,
    Array,
    Object,
    Null,
}

impl Kind {
    fn name(self) -> &'static str {
        let kind = match self {
            Kind::String => JsonKind::String,
            Kind::Number => JsonKind::Number,
            Kind::Bool => JsonKind::Bool,
            Kind::Array => JsonKind::Array,
            Kind::Object => JsonKind::Object,
            Kind::Null => JsonKind::Null,
        };
        kind.described()
    }
}

/// The operand's kind, and where its type was declared (for references).
fn kind(cx: &Cx<'_>, operand: &Operand) -> Option<(Kind, Option<Span>)> {
    match &operand.kind {
        OperandKind::Ref(reference) => {
            let (ty, declared) = reference_type(cx, reference)?;
            let kind = match ty {
                Type::String => Kind::String,
                Type::Number | Type::Integer => Kind::Number,
                Type::Bool => Kind::Bool,
                Type::Array => Kind::Array,
                Type::Object => Kind::Object,
                Type::Any => return None,
            };
            Some((kind, Some(declared)))
        }
        OperandKind::Null => Some((Kind::Null, None)),
        OperandKind::Bool(_) => Some((Kind::Bool, None)),
        OperandKind::Number(_) => Some((Kind::Number, None)),
        OperandKind::String(_) => Some((Kind::String, None)),
    }
}

fn with_declaration(d: Diagnostic, declared: Option<Span>) -> Diagnostic {
    match declared {
        Some(span) => d.with_label(span, "declared here"),
        None => d,
    }
}

/// Checks every test of `when`; `operand_of` names the `!`, `&&` or `||` whose operand it is.
fn condition(cx: &Cx<'_>, when: &Condition, out: &mut Vec<Diagnostic>) {
    walk(cx, when, None, out);
}

fn walk(
    cx: &Cx<'_>,
    when: &Condition,
    operand_of: Option<(&str, Span)>,
    out: &mut Vec<Diagnostic>,
) {
    match &when.kind {
        ConditionKind::Test(t) => test(cx, t, operand_of, out),
        ConditionKind::Not(op, inner) => walk(cx, inner, Some(("!", *op)), out),
        ConditionKind::Logic { op, lhs, rhs } => {
            let of = Some((op.value.as_str(), op.span));
            walk(cx, lhs, of, out);
            walk(cx, rhs, of, out);
        }
    }
}

fn test(cx: &Cx<'_>, when: &Test, operand_of: Option<(&str, Span)>, out: &mut Vec<Diagnostic>) {
    let lhs = kind(cx, &when.lhs);
    let Some(comparison) = &when.comparison else {
        // A literal `null` alone is the old spelling of "never"; beside `!`, `&&` or `||` it is
        // surely a mistake.
        let allowed = |k: Kind| k == Kind::Bool || (k == Kind::Null && operand_of.is_none());
        if let Some((k, declared)) = lhs
            && !allowed(k)
        {
            let mut d = match operand_of {
                None => Diagnostic::new(
                    Code::ConditionNotBool,
                    when.lhs.span,
                    format!(
                        "a condition must be {}, but this is {}",
                        Kind::Bool.name(),
                        k.name()
                    ),
                ),
                Some((op, op_span)) => Diagnostic::new(
                    Code::ConditionNotBool,
                    when.lhs.span,
                    format!(
                        "`{op}` {} booleans, but this is {}",
                        if op == "!" { "negates" } else { "combines" },
                        k.name()
                    ),
                )
                .with_label(op_span, format!("`{op}`")),
            };
            d = d.with_help(if k == Kind::Null {
                "`null` is always false here: write `false`, or compare a value with `null`, such as `$args.x != null`"
            } else {
                "compare it, such as `$args.x != \"\"` or `$args.n > 0`"
            });
            out.push(with_declaration(d, declared));
        }
        return;
    };
    let rhs = kind(cx, &comparison.rhs);
    let op = comparison.op.value;
    match op {
        CmpOp::Eq | CmpOp::Ne => {
            let (Some((l, l_decl)), Some((r, r_decl))) = (lhs, rhs) else {
                return;
            };
            // An unset input reads as null, so null compares with anything.
            if l == r || l == Kind::Null || r == Kind::Null {
                return;
            }
            let always = if op == CmpOp::Eq { "false" } else { "true" };
            let mut d = Diagnostic::new(
                Code::IncomparableTypes,
                comparison.op.span,
                format!(
                    "`{}` compares {} with {}: it is always {always}",
                    op.as_str(),
                    l.name(),
                    r.name()
                ),
            )
            .with_label(when.lhs.span, l.name())
            .with_label(comparison.rhs.span, r.name())
            .with_help(
                "compare values of the same type; `==` never converts (`1 == \"1\"` is false)",
            );
            for declared in [l_decl, r_decl].into_iter().flatten() {
                d = d.with_label(declared, "declared here");
            }
            out.push(d);
        }
        CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
            // One mistake, one error: at the first operand that is no number, the other
            // labelled when it is none either.
            let mut wrong = [(&when.lhs, lhs), (&comparison.rhs, rhs)]
                .into_iter()
                .filter_map(|(operand, known)| {
                    known
                        .filter(|(k, _)| *k != Kind::Number)
                        .map(|(k, declared)| (operand, k, declared))
                });
            if let Some((operand, k, declared)) = wrong.next() {
                let mut d = Diagnostic::new(
                    Code::OrderingNonNumber,
                    operand.span,
                    format!("`{}` orders numbers, but this is {}", op.as_str(), k.name()),
                )
                .with_label(comparison.op.span, "ordering")
                .with_help("ordering needs two numbers; use `==` or `!=` for other values");
                if let Some((other, k, other_declared)) = wrong.next() {
                    d = d.with_label(other.span, format!("{} too", k.name()));
                    d = with_declaration(d, other_declared);
                }
                out.push(with_declaration(d, declared));
            }
        }
        CmpOp::Contains => {
            let Some((l, l_decl)) = lhs else {
                return;
            };
            match l {
                Kind::Array => {}
                Kind::String => {
                    if let Some((r, r_decl)) = rhs
                        && r != Kind::String
                    {
                        out.push(with_declaration(
                            Diagnostic::new(
                                Code::ContainsType,
                                comparison.rhs.span,
                                format!(
                                    "`contains` on a string looks for a substring, but this is {}",
                                    r.name()
                                ),
                            )
                            .with_label(when.lhs.span, "a string")
                            .with_help("look for a string, such as `$args.log contains \"error\"`"),
                            r_decl,
                        ));
                    }
                }
                Kind::Number | Kind::Bool | Kind::Object | Kind::Null => {
                    out.push(with_declaration(
                        Diagnostic::new(
                            Code::ContainsType,
                            when.lhs.span,
                            format!(
                                "`contains` needs a string or an array on its left, but this is {}",
                                l.name()
                            ),
                        )
                        .with_label(comparison.op.span, "membership")
                        .with_help("`contains` is substring on strings and membership on arrays"),
                        l_decl,
                    ));
                }
            }
        }
    }
}
