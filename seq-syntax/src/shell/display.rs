//! Values escaped for display only (a report showing a command with its values in place):
//! nothing escaped here reaches a shell.

use super::*;

/// True for a value that the shell reads as itself outside quotes.
pub(super) fn plain_word(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'.' | b'/' | b':' | b'@' | b'%' | b'+' | b'=' | b',' | b'-'
                )
        })
}

/// `value` escaped for `context`, appended to `out`: for display only, never run.
pub fn escape_into(out: &mut String, value: &str, context: Context) {
    match context {
        Context::Word if plain_word(value) => out.push_str(value),
        Context::Word => {
            out.push('\'');
            push_single(out, value);
            out.push('\'');
        }
        Context::Single => push_single(out, value),
        Context::Double => {
            for c in value.chars() {
                if matches!(c, '"' | '$' | '`' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
        }
    }
}

/// How long a command shown with its values in place ([`shown`]) may be, in bytes: a report
/// shows what ran, not megabytes of a value.
pub const SHOWN_MAX: usize = 4096;

/// The command of `parts` as a reader sees it: the literal text, and each value (`values`, in
/// the order of the references, with the context its expansion stood in) escaped for that
/// context by [`escape_into`]. For display only: the shell runs the text with expansions, never
/// this. Longer than [`SHOWN_MAX`], it is cut at a character boundary and ends with `…`.
pub fn shown<'v>(
    parts: &[TemplatePart],
    values: impl IntoIterator<Item = (&'v str, Context)>,
) -> String {
    let mut out = String::new();
    let mut values = values.into_iter();
    for part in parts {
        match part {
            TemplatePart::Text(text) => out.push_str(text),
            TemplatePart::Ref(_) => {
                if let Some((value, context)) = values.next() {
                    // Only what can be shown is escaped, not all of a large value.
                    escape_into(&mut out, prefix(value, SHOWN_MAX + 1), context);
                }
            }
        }
        if out.len() > SHOWN_MAX {
            break;
        }
    }
    if out.len() > SHOWN_MAX {
        let end = prefix(&out, SHOWN_MAX).len();
        out.truncate(end);
        out.push('…');
    }
    out
}

/// The longest start of `text` of at most `bytes` bytes that ends at a character boundary.
pub(super) fn prefix(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

/// `value` escaped for `context`.
pub fn escape(value: &str, context: Context) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    escape_into(&mut out, value, context);
    out
}

pub(super) fn push_single(out: &mut String, value: &str) {
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
}
