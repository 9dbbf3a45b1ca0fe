//! Applying diagnostics' fixes to a text: what `seqc check --fix` does once per pass (the
//! language server hands the same edits to the editor instead).
//!
//! A fix is all or nothing. In one pass a fix is applied only when none of its edits touches an
//! edit already taken; the others wait for the next pass, where the text has been checked again
//! and their diagnostics (if any remain) carry spans into the new text.

use crate::diagnostic::{Diagnostic, Edit};
use crate::span::Span;

/// The outcome of one pass over one text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The text with the fixes taken.
    pub text: String,
    /// The diagnostics (indices into the slice given) whose fix was applied.
    pub applied: Vec<usize>,
    /// Those whose fix touches one applied before it: left for the next pass.
    pub deferred: Vec<usize>,
    /// Those whose fix cannot be applied at all: an edit outside the text, off a character
    /// boundary, or overlapping another edit of the same fix.
    pub unusable: Vec<usize>,
    /// Every edit made, sorted by position, with spans in the text before the pass: what
    /// [`Applied::origin`] maps through.
    pub edits: Vec<Edit>,
}

impl Applied {
    /// Whether the pass changed the text.
    pub fn changed(&self, before: &str) -> bool {
        self.text != before
    }

    /// Where `offset` of the new text was in the text before the pass (see [`origin`]).
    pub fn origin(&self, offset: u32) -> u32 {
        origin(&self.edits, offset)
    }
}

/// Where `offset` of a text made by `edits` (sorted, disjoint, spans in the text before them)
/// was before them. An offset inside an inserted or replacing text maps to the start of what it
/// replaced.
pub fn origin(edits: &[Edit], offset: u32) -> u32 {
    // New minus old, for offsets after the edits seen so far.
    let mut shift: i64 = 0;
    let at = i64::from(offset);
    for edit in edits {
        let new_start = i64::from(edit.span.start) + shift;
        let new_end = new_start + edit.text.len() as i64;
        if at < new_start {
            break;
        }
        if at < new_end {
            return edit.span.start;
        }
        shift += edit.text.len() as i64 - i64::from(edit.span.len());
    }
    u32::try_from((at - shift).max(0)).unwrap_or(u32::MAX)
}

/// Applies the fix of each diagnostic in `diagnostics` to `text`, in order of position, skipping
/// any fix that touches one already taken (see the module's documentation). Two edits touch when
/// their spans overlap or when they start at the same offset (two insertions there would have no
/// order); an edit ending where another starts does not.
///
/// ```
/// use seq_syntax::apply::apply_fixes;
///
/// let text = r#"{"name": "s", "groups": [{"name": "g", "paralell": true, "tools": ""}]}"#;
/// let parse = seq_syntax::parse(text);
/// let fixed = apply_fixes(text, &parse.diagnostics);
/// assert_eq!(
///     fixed.text,
///     r#"{"name": "s", "groups": [{"name": "g", "parallel": true, "tools": ""}]}"#
/// );
/// assert_eq!(fixed.applied.len(), 1);
/// ```
pub fn apply_fixes(text: &str, diagnostics: &[Diagnostic]) -> Applied {
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    // By the first edit of each fix, so that the earliest of two touching fixes wins.
    order.sort_by_key(|&i| {
        diagnostics
            .get(i)
            .and_then(|d| d.fix.as_ref())
            .and_then(|fix| fix.edits.iter().map(|e| (e.span.start, e.span.end)).min())
    });
    let mut taken: Vec<Edit> = Vec::new();
    let mut outcome = Applied {
        text: String::new(),
        applied: Vec::new(),
        deferred: Vec::new(),
        unusable: Vec::new(),
        edits: Vec::new(),
    };
    for i in order {
        let Some(fix) = diagnostics.get(i).and_then(|d| d.fix.as_ref()) else {
            continue;
        };
        if fix.edits.is_empty() {
            continue;
        }
        let usable = fix.edits.iter().all(|e| fits(text, e.span))
            && fix
                .edits
                .iter()
                .enumerate()
                .all(|(a, x)| fix.edits.iter().skip(a + 1).all(|y| !touch(x.span, y.span)));
        if !usable {
            outcome.unusable.push(i);
        } else if fix
            .edits
            .iter()
            .any(|e| taken.iter().any(|t| touch(e.span, t.span)))
        {
            outcome.deferred.push(i);
        } else {
            taken.extend(fix.edits.iter().cloned());
            outcome.applied.push(i);
        }
    }
    taken.sort_by_key(|e| (e.span.start, e.span.end));
    let added: usize = taken.iter().map(|e| e.text.len()).sum();
    let mut out = String::with_capacity(text.len() + added);
    let mut at = 0usize;
    for edit in &taken {
        // `fits` checked both ends; the edits are sorted and disjoint.
        out.push_str(text.get(at..edit.span.start as usize).unwrap_or(""));
        out.push_str(&edit.text);
        at = edit.span.end as usize;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    outcome.applied.sort_unstable();
    outcome.deferred.sort_unstable();
    outcome.unusable.sort_unstable();
    outcome.text = out;
    outcome.edits = taken;
    outcome
}

/// Whether `span` lies inside `text`, in order, on character boundaries.
fn fits(text: &str, span: Span) -> bool {
    span.start <= span.end
        && text.is_char_boundary(span.start as usize)
        && text.is_char_boundary(span.end as usize)
}

/// Whether two edits cannot both be made in one pass.
fn touch(a: Span, b: Span) -> bool {
    a.start == b.start || (a.start < b.end && b.start < a.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;
    use crate::diagnostic::Fix;

    fn fixing(edits: &[(u32, u32, &str)]) -> Diagnostic {
        Diagnostic::new(Code::UnknownField, Span::new(0, 0), "x").with_fix(Fix {
            applicability: crate::diagnostic::Applicability::MachineApplicable,
            title: "t".to_owned(),
            edits: edits
                .iter()
                .map(|&(start, end, text)| Edit {
                    span: Span::new(start, end),
                    text: text.to_owned(),
                })
                .collect(),
        })
    }

    #[test]
    fn touching_fixes_wait_and_broken_ones_are_refused() {
        let text = "abcdef";
        let diagnostics = [
            fixing(&[(4, 6, "EF")]),
            fixing(&[(0, 2, "AB")]),
            // Overlaps the first taken (`ab`): deferred, whole, although its other edit is free.
            fixing(&[(1, 3, "x"), (5, 5, "y")]),
            // Ends where `ef` starts: no overlap.
            fixing(&[(2, 4, "CD")]),
            fixing(&[(2, 9, "far")]),
            fixing(&[(0, 0, "<"), (0, 1, "a")]),
            Diagnostic::new(Code::UnknownField, Span::new(0, 0), "no fix"),
        ];
        let fixed = apply_fixes(text, &diagnostics);
        assert_eq!(fixed.text, "ABCDEF");
        assert_eq!(fixed.applied, [0, 1, 3]);
        assert_eq!(fixed.deferred, [2]);
        assert_eq!(fixed.unusable, [4, 5]);
    }

    #[test]
    fn two_insertions_at_one_place_are_not_ordered_by_chance() {
        let fixed = apply_fixes("ab", &[fixing(&[(1, 1, "x")]), fixing(&[(1, 1, "y")])]);
        assert_eq!(fixed.text, "axb");
        assert_eq!(fixed.deferred, [1]);
    }

    #[test]
    fn offsets_map_back_through_the_edits() {
        let fixed = apply_fixes(
            "0123456789",
            &[fixing(&[(2, 2, "ins")]), fixing(&[(5, 8, "r")])],
        );
        assert_eq!(fixed.text, "01ins234r89");
        let origins: Vec<u32> = (0..=11).map(|at| fixed.origin(at)).collect();
        assert_eq!(origins, [0, 1, 2, 2, 2, 2, 3, 4, 5, 8, 9, 10]);
        assert!(fixed.changed("0123456789"));
    }

    #[test]
    fn a_character_boundary_is_never_split() {
        let fixed = apply_fixes("主机", &[fixing(&[(1, 3, "x")])]);
        assert_eq!(fixed.text, "主机");
        assert_eq!(fixed.unusable, [0]);
    }
}
