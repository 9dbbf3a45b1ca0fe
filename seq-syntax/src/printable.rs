//! Text from outside (a stored sequence's name or description, a command's stderr, a tool's
//! error) made safe to show on a terminal: every control character is written as an escape, as
//! `ls` and `git` do, so that such text can neither move the cursor, erase lines, set the title
//! nor write the clipboard (OSC 52). One function for every human renderer.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether a text may keep its line breaks and tabs (a multi-line message) or is one field of
/// one line (a name, a table cell), where those are escaped too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines {
    Kept,
    Escaped,
}

/// `text` with its control characters escaped: ESC as `\e`, the other C0 controls and DEL as
/// `\xNN`, the C1 controls (U+0080–U+009F) and the characters that reorder or hide text
/// (bidirectional overrides and isolates, the line and paragraph separators) as `\u{NNNN}`;
/// a backslash stays as it is. With [`Lines::Kept`], `\n`
/// and `\t` stay; `\r` is always escaped (it rewrites the line it ends). Borrowed when there
/// is nothing to escape.
pub fn printable(text: &str, lines: Lines) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c, lines) {
            out.push(c);
            continue;
        }
        let _ = match c {
            '\u{1b}' => write!(out, "\\e"),
            '\n' => write!(out, "\\n"),
            '\t' => write!(out, "\\t"),
            '\r' => write!(out, "\\r"),
            c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
            c => write!(out, "\\u{{{:04x}}}", c as u32),
        };
    }
    Cow::Owned(out)
}

fn needs_escape(c: char, lines: Lines) -> bool {
    match c {
        '\n' | '\t' => lines == Lines::Escaped,
        // Bidirectional embeddings, overrides and isolates; line and paragraph separators.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' => true,
        c => c.is_control(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_sequences_are_written_as_escapes() {
        // Erase the line, then write the clipboard (OSC 52), ended by BEL.
        let hostile = "ok\u{1b}[2K\r\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}done\u{9b}31m";
        assert_eq!(
            printable(hostile, Lines::Kept),
            "ok\\e[2K\\r\\e]52;c;ZWNobyBwd25lZA==\\x07done\\u{009b}31m"
        );
    }

    #[test]
    fn line_breaks_stay_only_in_multi_line_text() {
        assert_eq!(printable("a\n\tb", Lines::Kept), "a\n\tb");
        assert_eq!(printable("a\n\tb", Lines::Escaped), "a\\n\\tb");
        assert_eq!(printable("\u{7f}\u{202e}", Lines::Kept), "\\x7f\\u{202e}");
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            printable("C:\\dir é", Lines::Kept),
            Cow::Borrowed(_)
        ));
    }
}
