//! `--catalog FILE`: tool definitions of other hosts, added to the built-in catalog.

use crate::files::reason;
use crate::render;
use seq_catalog::Catalog;
use seq_syntax::LineIndex;
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

/// The built-in catalog with the files of `paths` merged in, in order (a later definition of a
/// tool replaces an earlier one). A catalog that cannot be loaded is a problem of the command,
/// not of the input: checking against the wrong tools would mislead. Problems come back as one
/// line each, `PATH:LINE:COLUMN: error[CODE]: message`; warnings (a built-in `seq_*` tool
/// redefined, which is kept) are shown only when every catalog loaded, so that a failed run
/// says only why it failed.
pub fn load(paths: &[PathBuf]) -> Result<Catalog, Vec<String>> {
    let mut catalog = Catalog::builtin();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for path in paths {
        let shown = path.display();
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(err) => {
                errors.push(format!("cannot read catalog {shown}: {}", reason(&err)));
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let index = LineIndex::new(&text);
        for diagnostic in catalog.load_file(&bytes) {
            let place = render::file_place(&shown.to_string(), &text, &index, &diagnostic);
            let line = render::one_line(&place, &diagnostic);
            if diagnostic.is_error() {
                errors.push(line);
            } else {
                warnings.push(line);
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut err = io::stderr().lock();
    for warning in warnings {
        // With stderr gone there is nobody left to warn.
        let _ = writeln!(err, "seqc: {warning}");
    }
    Ok(catalog)
}
