//! `when` conditions in the AST: tests, comparisons and their operands, combined with `!`, `&&`
//! and `||`.

use super::Reference;
use crate::span::{Span, Spanned};
use serde::{Deserialize, Serialize};

/// A `when` condition: a test (an operand, or two compared), or tests combined with `!`, `&&`
/// and `||` (parentheses only group, so they leave no node; a node's span covers them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredCondition")]
pub struct Condition {
    /// The condition's text in the file (inside the string's quotes for the whole condition,
    /// parentheses included for a part written in them).
    pub span: Span,
    pub kind: ConditionKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ConditionKind {
    Test(Test),
    /// `!operand`: the span is the `!`.
    Not(Span, Box<Condition>),
    /// `lhs && rhs`, `lhs || rhs`: the right side is evaluated only when the left does not
    /// decide.
    Logic {
        op: Spanned<LogicOp>,
        lhs: Box<Condition>,
        rhs: Box<Condition>,
    },
}

/// One test: an operand alone (a bool), or a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Test {
    pub lhs: Operand,
    pub comparison: Option<Comparison>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LogicOp {
    And,
    Or,
}

impl LogicOp {
    pub fn as_str(self) -> &'static str {
        match self {
            LogicOp::And => "&&",
            LogicOp::Or => "||",
        }
    }
}

impl Condition {
    /// A condition that is one test.
    pub fn test(span: Span, lhs: Operand, comparison: Option<Comparison>) -> Condition {
        Condition {
            span,
            kind: ConditionKind::Test(Test { lhs, comparison }),
        }
    }

    /// Every test, left to right (the order they are evaluated in).
    pub fn tests(&self) -> Vec<&Test> {
        let mut found = Vec::new();
        self.collect_tests(&mut found);
        found
    }

    fn collect_tests<'c>(&'c self, found: &mut Vec<&'c Test>) {
        match &self.kind {
            ConditionKind::Test(test) => found.push(test),
            ConditionKind::Not(_, inner) => inner.collect_tests(found),
            ConditionKind::Logic { lhs, rhs, .. } => {
                lhs.collect_tests(found);
                rhs.collect_tests(found);
            }
        }
    }

    /// Every operand, left to right.
    pub fn operands(&self) -> Vec<&Operand> {
        self.tests().into_iter().flat_map(Test::operands).collect()
    }

    /// Every operand, left to right, to be changed in place.
    pub fn operands_mut(&mut self) -> Vec<&mut Operand> {
        let mut found = Vec::new();
        self.collect_operands_mut(&mut found);
        found
    }

    fn collect_operands_mut<'c>(&'c mut self, found: &mut Vec<&'c mut Operand>) {
        match &mut self.kind {
            ConditionKind::Test(test) => {
                found.push(&mut test.lhs);
                if let Some(comparison) = &mut test.comparison {
                    found.push(&mut comparison.rhs);
                }
            }
            ConditionKind::Not(_, inner) => inner.collect_operands_mut(found),
            ConditionKind::Logic { lhs, rhs, .. } => {
                lhs.collect_operands_mut(found);
                rhs.collect_operands_mut(found);
            }
        }
    }

    /// The references read, left to right.
    pub fn references(&self) -> Vec<&Reference> {
        self.operands()
            .into_iter()
            .filter_map(|o| match &o.kind {
                OperandKind::Ref(r) => Some(r),
                OperandKind::Null
                | OperandKind::Bool(_)
                | OperandKind::Number(_)
                | OperandKind::String(_) => None,
            })
            .collect()
    }
}

impl Test {
    /// The operands, left to right.
    pub fn operands(&self) -> impl Iterator<Item = &Operand> {
        std::iter::once(&self.lhs).chain(self.comparison.as_ref().map(|c| &c.rhs))
    }
}

/// A condition as stored: as today, or as stored before conditions could combine tests (one
/// test: `lhs` and `comparison` beside `span`), which still reads the same.
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredCondition {
    Tree {
        span: Span,
        kind: ConditionKind,
    },
    Test {
        span: Span,
        lhs: Operand,
        comparison: Option<Comparison>,
    },
}

impl From<StoredCondition> for Condition {
    fn from(stored: StoredCondition) -> Condition {
        match stored {
            StoredCondition::Tree { span, kind } => Condition { span, kind },
            StoredCondition::Test {
                span,
                lhs,
                comparison,
            } => Condition::test(span, lhs, comparison),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub op: Spanned<CmpOp>,
    pub rhs: Operand,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operand {
    pub kind: OperandKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OperandKind {
    Ref(Reference),
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Contains => "contains",
        }
    }
}
