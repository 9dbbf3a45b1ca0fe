//! `when` conditions (D-4): `operand` or `operand OP operand`, OP one of
//! `== != < <= > >= contains`. The L3 operators `&&`, `||`, `!` and parentheses are recognised
//! only to be rejected at their position (E0402), never misread.

use crate::ast::Condition;
use crate::diagnostic::Diagnostic;
use crate::escape::MapOffset;

/// Parses an unescaped condition. `map` takes offsets in `text` to the file.
pub fn parse_condition(text: &str, map: &dyn MapOffset) -> (Option<Condition>, Vec<Diagnostic>) {
    let _ = (text, map);
    todo!("condition::parse_condition")
}
