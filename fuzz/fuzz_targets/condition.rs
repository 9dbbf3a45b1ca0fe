//! The condition parser on arbitrary text, alone and as the `when` of a group checked
//! in a whole file: never a panic, every span inside the text it is about. A parsed condition
//! (tests combined with `!`, `&&`, `||` and parentheses) keeps its tree inside its text: each
//! part's span within its parent's, an operator's between its operands, and the whole span the
//! whole text; and within the bounds on tests and nesting.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_check::{Source, check};
use seq_syntax::ast::{Condition, ConditionKind};
use seq_syntax::condition::parse_condition;
use seq_syntax::escape::OffsetMap;
use seq_syntax::limits::{MAX_CONDITION_DEPTH, MAX_CONDITION_TESTS};
use seq_syntax::Span;
use seqc_fuzz::{assert_spans, catalog, file_with_when};

/// Checks `condition`'s tree inside `outer`; returns its tests and its depth.
fn tree(text: &str, condition: &Condition, outer: Span) -> (usize, usize) {
    let span = condition.span;
    assert!(outer.start <= span.start && span.end <= outer.end, "{text:?}");
    assert!(text.get(span.range()).is_some(), "{text:?}");
    match &condition.kind {
        ConditionKind::Test(test) => {
            for operand in test.operands() {
                assert!(span.start <= operand.span.start && operand.span.end <= span.end);
            }
            (1, 0)
        }
        ConditionKind::Not(op, inner) => {
            assert!(op.end <= inner.span.start, "{text:?}");
            let (tests, depth) = tree(text, inner, span);
            (tests, depth + 1)
        }
        ConditionKind::Logic { op, lhs, rhs } => {
            assert!(lhs.span.end <= op.span.start && op.span.end <= rhs.span.start);
            let (l, ld) = tree(text, lhs, span);
            let (r, rd) = tree(text, rhs, span);
            (l + r, ld.max(rd))
        }
    }
}

fuzz_target!(|text: &str| {
    let (condition, diagnostics) = parse_condition(text, &OffsetMap::identity(0));
    assert_spans(text, &diagnostics);
    assert_eq!(
        condition.is_some(),
        diagnostics.is_empty(),
        "{text:?}: {diagnostics:?}"
    );
    if let Some(condition) = &condition {
        let whole = Span::from_range(0..text.len());
        assert_eq!(condition.span, whole);
        let (tests, depth) = tree(text, condition, whole);
        assert!(tests <= MAX_CONDITION_TESTS && depth <= MAX_CONDITION_DEPTH);
    }
    let file = file_with_when(text);
    let checked = check(&[Source::new("fuzz.json", file.clone())], catalog());
    if let Some(result) = checked.files.first() {
        assert_spans(&file, &result.diagnostics);
    }
});
