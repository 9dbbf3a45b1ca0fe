//! References (D-2): `$args.PATH` and `$out.PATH`, PATH = identifier (`.identifier` | `[index]`)*,
//! identifiers being Unicode identifiers (XID), so `$args.主机` works.

use crate::ast::Reference;
use crate::diagnostic::Diagnostic;
use crate::escape::MapOffset;

/// Parses one whole reference, `$args.x.y[0]` (as a bare value in an item). `text` is exactly
/// the reference; `map` takes offsets in `text` to the file.
pub fn parse_reference(text: &str, map: &dyn MapOffset) -> Result<Reference, Diagnostic> {
    let _ = (text, map);
    todo!("reference::parse_reference")
}
