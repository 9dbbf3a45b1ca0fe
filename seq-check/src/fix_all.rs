//! Every machine-applicable fix applied to a batch of files (`seqc check --fix`; with
//! [`Fixes::Unsafe`] the maybe-incorrect ones too): check, apply the fixes that do not touch
//! each other, check again, until a pass finds nothing left to apply or [`MAX_PASSES`] have run.
//! The fixes are the diagnostics' own, the same the language server offers as code actions;
//! nothing here knows a rule.
//!
//! Passes are needed because one fix can make another possible (a file with a syntax error gets
//! its semantic diagnostics, and their fixes, only once the syntax is fixed) and because two
//! fixes may edit the same place (two calls in one parallel group both make the group serial).

use crate::batch::{Check, Source, check_with_stored};
use seq_catalog::Catalog;
use seq_syntax::apply::{apply_fixes, origin};
use seq_syntax::ast::Sequence;
use seq_syntax::diagnostic::{Applicability, Diagnostic, Edit};
use seq_syntax::{Code, Span};

/// Which fixes [`fix_all`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixes {
    /// Only machine-applicable fixes: those that keep the meaning the author evidently had.
    Safe,
    /// Maybe-incorrect fixes too (`--unsafe-fixes`); never those with placeholders to fill in.
    Unsafe,
}

impl Fixes {
    pub fn allows(self, applicability: Applicability) -> bool {
        match applicability {
            Applicability::MachineApplicable => true,
            Applicability::MaybeIncorrect => self == Fixes::Unsafe,
            Applicability::HasPlaceholders => false,
        }
    }

    /// The diagnostics with only the fixes this allows.
    fn filter(self, diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
        diagnostics
            .iter()
            .map(|d| {
                let mut d = d.clone();
                if d.fix
                    .as_ref()
                    .is_some_and(|f| !self.allows(f.applicability))
                {
                    d.fix = None;
                }
                d
            })
            .collect()
    }
}

/// How many check-and-apply passes at most. A fix that brings back what another fix removed
/// would loop; real fixes settle in two or three passes.
pub const MAX_PASSES: u32 = 8;

/// What fixing a batch did.
#[derive(Clone, Debug)]
pub struct Fixing {
    /// One entry per source, in the order given.
    pub files: Vec<FixedFile>,
    /// The check of the fixed texts: what remains.
    pub check: Check,
    /// Passes that changed something.
    pub passes: u32,
    /// False when [`MAX_PASSES`] ran out while fixes still applied.
    pub settled: bool,
}

impl Fixing {
    pub fn fixes(&self) -> usize {
        self.files.iter().map(|f| f.fixes.len()).sum()
    }
}

#[derive(Clone, Debug)]
pub struct FixedFile {
    pub path: String,
    /// The text with every fix applied (the source's text when none was).
    pub text: String,
    /// The fixes applied, in the order of the passes, each pass's in file order.
    pub fixes: Vec<AppliedFix>,
}

impl FixedFile {
    pub fn changed(&self) -> bool {
        !self.fixes.is_empty()
    }
}

/// One fix applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedFix {
    /// The pass that applied it, from 1.
    pub pass: u32,
    /// The code of the diagnostic it fixed.
    pub code: Code,
    pub title: String,
    /// The diagnostic's span, mapped back into the source's original text (a diagnostic found
    /// in a later pass may sit in text an earlier fix wrote: then it maps to where that went).
    pub span: Span,
}

/// Applies every diagnostic's fix that `fixes` allows to `sources`, checked together as one
/// batch against `catalog`, and checks the result. What remains keeps its other fixes, to be
/// listed as suggestions.
///
/// ```
/// use seq_catalog::Catalog;
/// use seq_check::{Fixes, Source, fix_all};
///
/// // A misspelt field, and inside the `tools` string a missing final `;`.
/// let text = r#"{"name": "s", "groups": [{"name": "g", "paralell": false,
///   "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}}"}]}"#;
/// let fixing = fix_all(&[Source::new("s.json", text)], &[], &Catalog::builtin(), Fixes::Safe);
/// assert!(fixing.settled);
/// assert!(fixing.check.files[0].diagnostics.is_empty());
/// assert!(fixing.files[0].text.contains(r#""parallel": false"#));
/// assert!(fixing.files[0].text.contains(r#"{\"value\":1}} ;""#));
/// ```
pub fn fix_all(
    sources: &[Source],
    stored: &[Sequence],
    catalog: &Catalog,
    fixes_allowed: Fixes,
) -> Fixing {
    let mut current: Vec<Source> = sources.to_vec();
    let mut fixes: Vec<Vec<AppliedFix>> = vec![Vec::new(); sources.len()];
    // Per file, each pass's edits, to map later spans back to the original text.
    let mut history: Vec<Vec<Vec<Edit>>> = vec![Vec::new(); sources.len()];
    let mut passes = 0;
    let mut checked = check_with_stored(&current, stored, catalog);
    let mut settled = false;
    while !settled && passes < MAX_PASSES {
        let pass = passes + 1;
        let mut changed = false;
        for (i, (source, file)) in current.iter_mut().zip(&checked.files).enumerate() {
            let allowed = fixes_allowed.filter(&file.diagnostics);
            let applied = apply_fixes(&source.text, &allowed);
            if !applied.changed(&source.text) {
                continue;
            }
            let (Some(found), Some(earlier)) = (fixes.get_mut(i), history.get_mut(i)) else {
                continue;
            };
            for d in applied.applied.iter().filter_map(|&k| allowed.get(k)) {
                let Some(fix) = &d.fix else { continue };
                let back = |offset| {
                    earlier
                        .iter()
                        .rev()
                        .fold(offset, |at, edits| origin(edits, at))
                };
                found.push(AppliedFix {
                    pass,
                    code: d.code,
                    title: fix.title.clone(),
                    span: Span::new(back(d.span.start), back(d.span.end)),
                });
            }
            earlier.push(applied.edits);
            source.text = applied.text;
            changed = true;
        }
        if changed {
            passes = pass;
            checked = check_with_stored(&current, stored, catalog);
        } else {
            settled = true;
        }
    }
    if !settled {
        // The bound ran out: settled only if the last check has nothing left to apply.
        settled = current.iter().zip(&checked.files).all(|(source, file)| {
            !apply_fixes(&source.text, &fixes_allowed.filter(&file.diagnostics))
                .changed(&source.text)
        });
    }
    let files = current
        .into_iter()
        .zip(fixes)
        .map(|(source, fixes)| FixedFile {
            path: source.path,
            text: source.text,
            fixes,
        })
        .collect();
    Fixing {
        files,
        check: checked,
        passes,
        settled,
    }
}
