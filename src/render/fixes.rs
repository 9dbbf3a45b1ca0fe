//! What `check --fix` applied, one line per fix: `fixed PATH:LINE:COLUMN: CODE title`, the
//! position being the diagnostic's in the file as it was read (1-based, columns in characters),
//! then a count. `--diff` says `would fix` instead.

use seq_check::AppliedFix;
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
