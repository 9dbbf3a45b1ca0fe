//! What `check --fix` applied, one line per fix: `fixed PATH:LINE:COLUMN: CODE title`, the
//! position being the diagnostic's in the file as it was read (1-based, columns in characters),
//! then a count. `--diff` says `would fix` instead. Then the fixes it did not apply, as
//! suggestions: `suggestion PATH:LINE:COLUMN: CODE title (APPLICABILITY)`, in the fixed text.

use super::SourceFile;
use seq_check::{AppliedFix, Fixes};
use seq_syntax::LineIndex;
use std::io::{self, Write};

/// The fixes applied to one file, with the file's text as it was read.
#[derive(Debug)]
pub struct FixedIn<'a> {
    pub path: &'a str,
    pub original: &'a str,
    pub fixes: &'a [AppliedFix],
}

impl FixedIn<'_> {
    /// Each fix with its line and column in the original text.
    pub fn located(&self) -> impl Iterator<Item = (&AppliedFix, seq_syntax::span::LineCol)> {
        let index = LineIndex::new(self.original);
        self.fixes
            .iter()
            .map(move |fix| (fix, index.line_col(self.original, fix.span.start)))
    }
}

/// `verb` is `fixed` or `would fix`.
pub fn render(out: &mut dyn Write, files: &[FixedIn<'_>], verb: &str) -> io::Result<()> {
    let mut count = 0;
    let mut changed = 0;
    for file in files {
        changed += usize::from(!file.fixes.is_empty());
        for (fix, at) in file.located() {
            count += 1;
            writeln!(
                out,
                "{verb} {}:{}:{}: {} {}",
                file.path, at.line, at.column, fix.code, fix.title
            )?;
        }
    }
    match count {
        0 => writeln!(out, "nothing to fix"),
        1 => writeln!(out, "{verb} 1 problem in 1 file"),
        n if changed == 1 => writeln!(out, "{verb} {n} problems in 1 file"),
        n => writeln!(out, "{verb} {n} problems in {changed} files"),
    }
}

/// The fixes of what remains that `allowed` did not apply, and how to apply them.
pub fn suggestions(out: &mut dyn Write, files: &[SourceFile], allowed: Fixes) -> io::Result<()> {
    let mut count = 0;
    let mut unsafe_ones = 0;
    for file in files {
        let index = LineIndex::new(&file.text);
        for d in &file.diagnostics {
            let Some(fix) = d.fix.as_ref().filter(|f| !allowed.allows(f.applicability)) else {
                continue;
            };
            count += 1;
            unsafe_ones += usize::from(Fixes::Unsafe.allows(fix.applicability));
            let at = index.line_col(&file.text, d.span.start);
            writeln!(
                out,
                "suggestion {}:{}:{}: {} {} ({})",
                file.path,
                at.line,
                at.column,
                d.code,
                fix.title,
                fix.applicability.as_str()
            )?;
        }
    }
    match (count, unsafe_ones) {
        (0, _) => Ok(()),
        (_, 0) => writeln!(out, "{count} not applied: each needs a value filled in"),
        _ => writeln!(
            out,
            "{count} not applied: each may change what the sequence does, or needs a value filled in; \
             `--unsafe-fixes` applies the maybe-incorrect ones"
        ),
    }
}
