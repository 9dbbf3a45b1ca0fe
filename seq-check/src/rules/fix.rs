//! Machine fixes. Text inserted into the file must be escaped for where it lands: a group's
//! fields are file-level JSON, an item lives inside the `tools` string, and a string inside an
//! item is a string inside that string, escaped twice.

use seq_syntax::Span;
use seq_syntax::ast::{Group, Item, Reference, SlotDecl, Type};
use seq_syntax::diagnostic::{Edit, Fix};

/// The body of a JSON string literal holding `text`.
pub(crate) fn escape(text: &str) -> String {
    let quoted = serde_json::Value::from(text).to_string();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .map_or_else(|| text.to_owned(), str::to_owned)
}

/// Item-level JSON text (`,"unsafe_serial":true`) as it is written inside the `tools` string.
pub(crate) fn in_tools(item_text: &str) -> String {
    escape(item_text)
}

/// The body of a string inside an item (a tool name, a target), as written in the file.
pub(crate) fn in_item_string(text: &str) -> String {
    escape(&escape(text))
}

pub(crate) fn edit(span: Span, text: impl Into<String>) -> Edit {
    Edit {
        span,
        text: text.into(),
    }
}

pub(crate) fn fix(title: impl Into<String>, edits: Vec<Edit>) -> Fix {
    Fix::new(title, edits)
}

/// Declares `name: ty` in `in` or `out`, after the last declaration. `None` when there is none
/// to anchor the insertion to (the object may be absent or `{}`, which the AST does not tell).
pub(crate) fn declare(decls: &[SlotDecl], name: &str, ty: Type) -> Option<Edit> {
    let last = decls.last()?;
    // The type's span is its string's body: its closing quote is the next byte.
    let at = last.ty.span.end + 1;
    Some(edit(
        Span::new(at, at),
        format!(", \"{}\": \"{}\"", escape(name), ty.as_str()),
    ))
}

/// Makes `group` serial: rewrites an explicit `parallel`, or adds `"parallel": false` after the
/// group's name.
pub(crate) fn make_serial(group: &Group) -> Option<Edit> {
    match &group.parallel {
        Some(parallel) => Some(edit(parallel.span, "false")),
        None if group.name.value.is_empty() => None,
        None => {
            let at = group.name.span.end + 1;
            Some(edit(Span::new(at, at), ", \"parallel\": false"))
        }
    }
}

/// Sets `unsafe_serial: true` on `item`.
pub(crate) fn mark_unsafe_serial(item: &Item) -> Edit {
    match &item.unsafe_serial {
        Some(flag) => edit(flag.span, "true"),
        None => {
            // The item's span ends with its `}`, which needs no escape.
            let at = item.span.end.saturating_sub(1);
            edit(Span::new(at, at), in_tools(",\"unsafe_serial\":true"))
        }
    }
}

/// A reference as written in canonical form: `$args.hosts[0]`.
pub(crate) fn reference_text(reference: &Reference) -> String {
    reference.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_for_each_level() {
        assert_eq!(escape("a\"b"), "a\\\"b");
        assert_eq!(
            in_tools(",\"unsafe_serial\":true"),
            ",\\\"unsafe_serial\\\":true"
        );
        assert_eq!(in_item_string("plain"), "plain");
        assert_eq!(in_item_string("a\"b"), "a\\\\\\\"b");
    }
}
