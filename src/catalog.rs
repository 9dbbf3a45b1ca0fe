//! `--catalog FILE`: tool definitions of other hosts, added to the built-in catalog.

use crate::cli::warn;
use crate::files::reason;
use seq_check::{Catalog, ToolDef};
use seq_syntax::LineIndex;
use std::fs;
use std::path::{Path, PathBuf};

/// The built-in catalog with the files of `paths` merged in, in order (a later definition of a
/// tool replaces an earlier one). A catalog that cannot be loaded is a problem of the command,
/// not of the input: checking against the wrong tools would mislead. Problems come back as one
/// line each; definitions of the built-in `seq_*` tools, which are never replaced, are warned
/// about only when every catalog loaded, so that a failed run says only why it failed.
pub fn load(paths: &[PathBuf]) -> Result<Catalog, Vec<String>> {
    let mut catalog = Catalog::builtin();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for path in paths {
        match load_one(path) {
            Ok(tools) => {
                let kept_out = catalog.merge(tools);
                if !kept_out.is_empty() {
                    let names: Vec<String> = kept_out.iter().map(|n| format!("`{n}`")).collect();
                    warnings.push(format!(
                        "catalog {} redefines the built-in {}; the built-in definitions are kept",
                        path.display(),
                        names.join(", ")
                    ));
                }
            }
            Err(error) => errors.push(error),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for warning in warnings {
        warn(warning);
    }
    Ok(catalog)
}

fn load_one(path: &Path) -> Result<Vec<ToolDef>, String> {
    let shown = path.display();
    let bytes =
        fs::read(path).map_err(|err| format!("cannot read catalog {shown}: {}", reason(&err)))?;
    let text = String::from_utf8(bytes).map_err(|err| {
        let valid = err
            .as_bytes()
            .get(..err.utf8_error().valid_up_to())
            .unwrap_or_default();
        let before = String::from_utf8_lossy(valid);
        let at = position(&before, before.len());
        format!("{shown}:{at}: invalid catalog: the file is not UTF-8")
    })?;
    Catalog::load_json(&text).map_err(|err| match err.span {
        Some(span) => {
            let at = position(&text, span.start as usize);
            // The message says that the catalog is not JSON, and why.
            format!("{shown}:{at}: {}", err.message)
        }
        None => format!("{shown}: invalid catalog: {}", err.message),
    })
}

/// `LINE:COLUMN` of a byte offset, both 1-based, the column in characters.
fn position(text: &str, offset: usize) -> String {
    let offset = u32::try_from(offset).unwrap_or(u32::MAX);
    let at = LineIndex::new(text).line_col(text, offset);
    format!("{}:{}", at.line, at.column)
}
