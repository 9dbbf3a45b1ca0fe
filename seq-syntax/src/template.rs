//! Interpolation templates inside argument strings: `$args.PATH` and `${args.PATH}` (also
//! with `out`) are references; any other `$` is literal, so shell text such as `$HOME`, `${HOME}`
//! or `$$` passes through unchanged.
//!
//! `$$` is read as a pair, as a shell reads it: `$$args.x` is literal text, not `$` followed by a
//! reference. The parts hold no empty text and never two texts in a row, so a string without
//! references is one [`TemplatePart::Text`], and the empty string has no parts at all.

use crate::ast::{CompactString, Template, TemplatePart};
use crate::diagnostic::Diagnostic;
use crate::escape::MapOffset;
use crate::reference::{relocate, scan_interpolation};
use std::borrow::Cow;

/// Splits an unescaped string into literal text and references. `map` takes offsets in `text`
/// to the file. Malformed references (`$args.` with no name, `${args.x` unclosed, `[x]`) are
/// reported (E0301) and kept as literal text.
pub fn parse_template(text: &str, map: &(impl MapOffset + ?Sized)) -> (Template, Vec<Diagnostic>) {
    let mut parts = Vec::new();
    let mut diagnostics = Vec::new();
    // Literal text runs from `literal` to the next reference; `pos` is where to look for `$`.
    let mut literal = 0;
    let mut pos = 0;
    while let Some(found) = text.get(pos..).and_then(|rest| rest.find('$')) {
        let at = pos + found;
        if text.get(at + 1..).is_some_and(|rest| rest.starts_with('$')) {
            pos = at + 2;
            continue;
        }
        match scan_interpolation(text, at) {
            None => pos = at + 1,
            Some((Ok(reference), end)) => {
                push_text(&mut parts, text.get(literal..at).unwrap_or(""));
                parts.push(TemplatePart::Ref(Box::new(relocate(reference, map))));
                literal = end;
                pos = end;
            }
            Some((Err(mut d), end)) => {
                d.map_spans(|s| map.span(s));
                diagnostics.push(d);
                pos = end.max(at + 1);
            }
        }
    }
    push_text(&mut parts, text.get(literal..).unwrap_or(""));
    (Template { parts }, diagnostics)
}

/// [`parse_template`] of a text that may be owned already: a text without `$` becomes its one
/// part without being copied (most argument strings, after unescaping).
pub fn parse_template_cow(
    text: Cow<'_, str>,
    map: &(impl MapOffset + ?Sized),
) -> (Template, Vec<Diagnostic>) {
    if text.contains('$') {
        return parse_template(&text, map);
    }
    let parts = if text.is_empty() {
        Vec::new()
    } else {
        vec![TemplatePart::Text(CompactString::from(text))]
    };
    (Template { parts }, Vec::new())
}

fn push_text(parts: &mut Vec<TemplatePart>, text: &str) {
    if !text.is_empty() {
        parts.push(TemplatePart::Text(CompactString::from(text)));
    }
}

#[cfg(test)]
mod tests;
