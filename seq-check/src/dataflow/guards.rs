//! What a condition proves: the references a `when` proves set when it holds (so the `args` it
//! guards may read them), and when two conditions are an if and its else.

use crate::rules::when_call;
use seq_syntax::ast::{
    CmpOp, Condition, ConditionKind, Item, LogicOp, Operand, OperandKind, Reference, Test,
};

/// The references that the `when` of a `seq_when_call` proves set when it holds, so its
/// `args` may read them. A test proves its references set when it is a bare operand (`null` is
/// false), a comparison with a value other than `null` (`null == 1` is false, and ordering `null`
/// is an error, so nothing is read), or `!= null`; `!(x == null)` proves `x` as `x != null` does.
/// `a && b` proves what either side proves (both hold), `a || b` what both sides prove.
pub(super) fn proven(when: &Condition) -> Vec<Reference> {
    proven_as(when, &proven_by_test)
}

/// What `when` proves of references when it holds, from what each test proves (`by_test`, with
/// whether the test is negated): what either side of `&&` proves, what both sides of `||` prove.
fn proven_as(when: &Condition, by_test: &dyn Fn(&Test, bool) -> Vec<Reference>) -> Vec<Reference> {
    match &when.kind {
        ConditionKind::Test(test) => by_test(test, false),
        ConditionKind::Not(_, inner) => match &inner.kind {
            ConditionKind::Test(test) => by_test(test, true),
            ConditionKind::Not(..) | ConditionKind::Logic { .. } => Vec::new(),
        },
        ConditionKind::Logic { op, lhs, rhs } => {
            let mut left = proven_as(lhs, by_test);
            let right = proven_as(rhs, by_test);
            match op.value {
                LogicOp::And => {
                    left.extend(right);
                    left
                }
                LogicOp::Or => left
                    .into_iter()
                    .filter(|l| right.iter().any(|r| same_read(l, r)))
                    .collect(),
            }
        }
    }
}

/// The references `test` proves set when it holds (`negated`: when it does not).
fn proven_by_test(test: &Test, negated: bool) -> Vec<Reference> {
    let is_null = |o: &Operand| matches!(o.kind, OperandKind::Null);
    let reference = |o: &Operand| match &o.kind {
        OperandKind::Ref(r) => Some(r.clone()),
        OperandKind::Null
        | OperandKind::Bool(_)
        | OperandKind::Number(_)
        | OperandKind::String(_) => None,
    };
    let Some(comparison) = &test.comparison else {
        return if negated {
            Vec::new()
        } else {
            reference(&test.lhs).into_iter().collect()
        };
    };
    let null_side = is_null(&test.lhs) || is_null(&comparison.rhs);
    let guarding = match (comparison.op.value, negated) {
        (CmpOp::Ne, false) | (CmpOp::Eq, true) => null_side,
        (CmpOp::Eq | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, false) => {
            !is_null(&test.lhs) && !is_null(&comparison.rhs)
        }
        (CmpOp::Contains, false)
        | (CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge | CmpOp::Contains, true) => {
            false
        }
    };
    if !guarding {
        return Vec::new();
    }
    test.operands().filter_map(reference).collect()
}

/// The parsed `when` of a `seq_when_call`, its syntax errors left to its own rule.
pub(super) fn when_condition(item: &Item) -> Option<Condition> {
    when_call::condition(item, &mut Vec::new())
}

/// The references that `when` proves `null` when it holds: `x == null`, `!(x != null)`, what
/// either side of `&&` proves and what both sides of `||` prove.
pub(super) fn proven_null(when: &Condition) -> Vec<Reference> {
    proven_as(when, &|test: &Test, negated: bool| -> Vec<Reference> {
        let Some(comparison) = &test.comparison else {
            return Vec::new();
        };
        let null = |o: &Operand| matches!(o.kind, OperandKind::Null);
        let tests_null = match (comparison.op.value, negated) {
            (CmpOp::Eq, false) | (CmpOp::Ne, true) => true,
            (CmpOp::Eq, true)
            | (CmpOp::Ne, false)
            | (CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge | CmpOp::Contains, _) => false,
        };
        let other = match (null(&test.lhs), null(&comparison.rhs)) {
            (true, false) => &comparison.rhs,
            (false, true) => &test.lhs,
            (true, true) | (false, false) => return Vec::new(),
        };
        match &other.kind {
            OperandKind::Ref(r) if tests_null => vec![r.clone()],
            OperandKind::Ref(_)
            | OperandKind::Null
            | OperandKind::Bool(_)
            | OperandKind::Number(_)
            | OperandKind::String(_) => Vec::new(),
        }
    })
}

/// Whether `b` holds exactly when `a` does not: `!(a)`, or `==` and `!=` swapped in one
/// comparison.
pub(super) fn negates(a: &Condition, b: &Condition) -> bool {
    match (&a.kind, &b.kind) {
        (_, ConditionKind::Not(_, inner)) if same_condition(a, inner) => true,
        (ConditionKind::Test(x), ConditionKind::Test(y)) => match (&x.comparison, &y.comparison) {
            (Some(cx), Some(cy)) => {
                matches!(
                    (cx.op.value, cy.op.value),
                    (CmpOp::Eq, CmpOp::Ne) | (CmpOp::Ne, CmpOp::Eq)
                ) && same_operand(&x.lhs, &y.lhs)
                    && same_operand(&cx.rhs, &cy.rhs)
            }
            (Some(_), None) | (None, Some(_)) | (None, None) => false,
        },
        (
            ConditionKind::Test(_) | ConditionKind::Not(..) | ConditionKind::Logic { .. },
            ConditionKind::Test(_) | ConditionKind::Not(..) | ConditionKind::Logic { .. },
        ) => false,
    }
}

/// Whether two conditions are the same, spans aside.
fn same_condition(a: &Condition, b: &Condition) -> bool {
    match (&a.kind, &b.kind) {
        (ConditionKind::Test(x), ConditionKind::Test(y)) => {
            same_operand(&x.lhs, &y.lhs)
                && match (&x.comparison, &y.comparison) {
                    (Some(cx), Some(cy)) => {
                        cx.op.value == cy.op.value && same_operand(&cx.rhs, &cy.rhs)
                    }
                    (None, None) => true,
                    (Some(_), None) | (None, Some(_)) => false,
                }
        }
        (ConditionKind::Not(_, x), ConditionKind::Not(_, y)) => same_condition(x, y),
        (
            ConditionKind::Logic { op, lhs, rhs },
            ConditionKind::Logic {
                op: op2,
                lhs: lhs2,
                rhs: rhs2,
            },
        ) => op.value == op2.value && same_condition(lhs, lhs2) && same_condition(rhs, rhs2),
        (
            ConditionKind::Test(_) | ConditionKind::Not(..) | ConditionKind::Logic { .. },
            ConditionKind::Test(_) | ConditionKind::Not(..) | ConditionKind::Logic { .. },
        ) => false,
    }
}

/// Whether two operands are the same, spans aside.
fn same_operand(a: &Operand, b: &Operand) -> bool {
    match (&a.kind, &b.kind) {
        (OperandKind::Ref(x), OperandKind::Ref(y)) => same_read(x, y),
        (
            OperandKind::Ref(_),
            OperandKind::Null
            | OperandKind::Bool(_)
            | OperandKind::Number(_)
            | OperandKind::String(_),
        )
        | (
            OperandKind::Null
            | OperandKind::Bool(_)
            | OperandKind::Number(_)
            | OperandKind::String(_),
            OperandKind::Ref(_),
        ) => false,
        (
            OperandKind::Null
            | OperandKind::Bool(_)
            | OperandKind::Number(_)
            | OperandKind::String(_),
            OperandKind::Null
            | OperandKind::Bool(_)
            | OperandKind::Number(_)
            | OperandKind::String(_),
        ) => a.kind == b.kind,
    }
}

/// Whether two references read the same place (spans aside).
fn same_read(a: &Reference, b: &Reference) -> bool {
    a.root.value == b.root.value
        && a.slot.value == b.slot.value
        && a.path.len() == b.path.len()
        && a.path.iter().zip(&b.path).all(|(x, y)| x.value == y.value)
}

/// Whether a guard that `guard` is set proves `read` readable: the same slot (W0601), and with
/// `field_too` the same path as far as the shorter one goes, at least one field (W0602).
pub(super) fn covers(guard: &Reference, read: &Reference, field_too: bool) -> bool {
    if guard.root.value != read.root.value || guard.slot.value != read.slot.value {
        return false;
    }
    if !field_too {
        return true;
    }
    !guard.path.is_empty()
        && guard
            .path
            .iter()
            .zip(&read.path)
            .all(|(g, r)| g.value == r.value)
}
