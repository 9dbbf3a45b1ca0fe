//! Interpolation templates inside argument strings (D-2): `$args.PATH` and `${args.PATH}` (also
//! with `out`) are references; any other `$` is literal, so shell text such as `$HOME`, `${HOME}`
//! or `$$` passes through unchanged.

use crate::ast::Template;
use crate::diagnostic::Diagnostic;
use crate::escape::MapOffset;

/// Splits an unescaped string into literal text and references. `map` takes offsets in `text`
/// to the file. Malformed references (`$args.` with no name, `${args.x` unclosed, `[x]`) are
/// reported (E0301) and kept as literal text.
pub fn parse_template(text: &str, map: &dyn MapOffset) -> (Template, Vec<Diagnostic>) {
    let _ = (text, map);
    todo!("template::parse_template")
}
