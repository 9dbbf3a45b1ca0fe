//! Values in shell text (docs/reference.md, "Shell text"): a `$args`/`$out` value interpolated
//! into `cmd_run`'s `command` is escaped for the quoting context it lands in, so that a value can
//! never add a command, a redirection or an expansion.
//!
//! The context of each reference is found by a scan of the template's literal parts — the text
//! the author wrote, never the values — so it is known before a value exists: the checker reports
//! text the scan cannot follow, and the engine escapes each value by the same scan.

use crate::ast::TemplatePart;

/// Where a value lands in shell text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    /// Outside quotes (also inside `$(...)`): the value becomes one word.
    Word,
    /// Inside `"..."`: `"`, `$`, `` ` `` and `\` are backslash-escaped.
    Double,
    /// Inside `'...'`: `'` becomes `'\''`.
    Single,
}

/// Why the scan cannot give a reference a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Problem {
    /// A quote, `$(` or `` ` `` opened in the literal text is never closed.
    Unclosed(Opener),
    /// A reference stands where no escaping keeps its value text.
    Unsafe(Place),
}

/// What was left open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opener {
    SingleQuote,
    DoubleQuote,
    Substitution,
    Backquote,
}

impl Opener {
    pub fn spelling(self) -> &'static str {
        match self {
            Opener::SingleQuote => "'",
            Opener::DoubleQuote => "\"",
            Opener::Substitution => "$(",
            Opener::Backquote => "`",
        }
    }
}

/// Places where a value cannot be made literal text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// After `#`: a comment ends at a newline, whatever the quoting.
    Comment,
    /// In a here-document: its body expands `$`, `` ` `` and `\` but knows no quotes.
    HereDocument,
    /// Between backquotes: their body is re-read with its own backslash rules.
    Backquotes,
    /// In `$'...'`, whose backslash escapes differ from single quotes'.
    DollarQuote,
}

impl Place {
    pub fn describe(self) -> &'static str {
        match self {
            Place::Comment => "in a shell comment",
            Place::HereDocument => "after a here-document (`<<`)",
            Place::Backquotes => "between backquotes",
            Place::DollarQuote => "inside `$'...'`",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    /// Outside quotes, at the top or inside `$(...)` / `(...)`.
    Paren,
    Double,
    Single,
    Backquote,
    DollarQuote,
    Comment,
}

/// The context of each reference of `parts`, in order, or the first problem.
pub fn contexts(parts: &[TemplatePart]) -> Result<Vec<Context>, Problem> {
    let mut scan = Scan::default();
    let mut out = Vec::new();
    for part in parts {
        match part {
            TemplatePart::Text(text) => scan.text(text),
            TemplatePart::Ref(_) => {
                out.push(scan.context()?);
                // A value is one word (or part of the quoted text): what follows it does not
                // start a word, and an escape before it is spent.
                scan.word_start = false;
                scan.escaped = false;
            }
        }
    }
    scan.finish()?;
    Ok(out)
}

#[derive(Debug)]
struct Scan {
    /// Frames above the top level (which is a word context).
    stack: Vec<Frame>,
    /// A backslash outside single quotes was the last character.
    escaped: bool,
    /// The next character would start a word (for `#`).
    word_start: bool,
    /// The last character was `$` (for `$(` and `$'`).
    dollar: bool,
    /// The last character was `<` outside quotes (for `<<`).
    less: bool,
    heredoc: bool,
}

impl Default for Scan {
    fn default() -> Scan {
        Scan {
            stack: Vec::new(),
            escaped: false,
            word_start: true,
            dollar: false,
            less: false,
            heredoc: false,
        }
    }
}

impl Scan {
    fn top(&self) -> Option<Frame> {
        self.stack.last().copied()
    }

    fn context(&self) -> Result<Context, Problem> {
        if self.heredoc {
            return Err(Problem::Unsafe(Place::HereDocument));
        }
        // A backquote anywhere below makes its body re-read: refuse.
        if self.stack.contains(&Frame::Backquote) {
            return Err(Problem::Unsafe(Place::Backquotes));
        }
        match self.top() {
            None | Some(Frame::Paren) => Ok(Context::Word),
            Some(Frame::Double) => Ok(Context::Double),
            Some(Frame::Single) => Ok(Context::Single),
            Some(Frame::Backquote) => Err(Problem::Unsafe(Place::Backquotes)),
            Some(Frame::DollarQuote) => Err(Problem::Unsafe(Place::DollarQuote)),
            Some(Frame::Comment) => Err(Problem::Unsafe(Place::Comment)),
        }
    }

    fn finish(&self) -> Result<(), Problem> {
        for frame in self.stack.iter().rev() {
            let opener = match frame {
                Frame::Paren => Opener::Substitution,
                Frame::Double => Opener::DoubleQuote,
                Frame::Single | Frame::DollarQuote => Opener::SingleQuote,
                Frame::Backquote => Opener::Backquote,
                Frame::Comment => continue,
            };
            return Err(Problem::Unclosed(opener));
        }
        Ok(())
    }

    fn text(&mut self, text: &str) {
        for c in text.chars() {
            self.char(c);
        }
    }

    fn char(&mut self, c: char) {
        let dollar = std::mem::take(&mut self.dollar);
        let less = std::mem::take(&mut self.less);
        match self.top() {
            Some(Frame::Single) => {
                if c == '\'' {
                    self.stack.pop();
                }
            }
            Some(Frame::DollarQuote) => {
                if std::mem::take(&mut self.escaped) {
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '\'' {
                    self.stack.pop();
                }
            }
            Some(Frame::Comment) => {
                if c == '\n' {
                    self.stack.pop();
                    self.word_start = true;
                }
            }
            Some(Frame::Double) => {
                if std::mem::take(&mut self.escaped) {
                    return;
                }
                match c {
                    '\\' => self.escaped = true,
                    '"' => {
                        self.stack.pop();
                    }
                    '`' => self.stack.push(Frame::Backquote),
                    '(' if dollar => self.stack.push(Frame::Paren),
                    '$' => self.dollar = true,
                    _ => {}
                }
            }
            None | Some(Frame::Paren) | Some(Frame::Backquote) => {
                let word_start = std::mem::replace(&mut self.word_start, false);
                if std::mem::take(&mut self.escaped) {
                    return;
                }
                match c {
                    '\\' => self.escaped = true,
                    '\'' if dollar => self.stack.push(Frame::DollarQuote),
                    '\'' => self.stack.push(Frame::Single),
                    '"' => self.stack.push(Frame::Double),
                    '`' if self.top() == Some(Frame::Backquote) => {
                        self.stack.pop();
                    }
                    '`' => self.stack.push(Frame::Backquote),
                    '(' => {
                        self.stack.push(Frame::Paren);
                        self.word_start = true;
                    }
                    ')' => {
                        if self.top() == Some(Frame::Paren) {
                            self.stack.pop();
                        }
                        self.word_start = true;
                    }
                    '$' => self.dollar = true,
                    '#' if word_start => self.stack.push(Frame::Comment),
                    '<' if less => self.heredoc = true,
                    '<' => self.less = true,
                    ' ' | '\t' | '\n' | ';' | '&' | '|' | '>' => self.word_start = true,
                    _ => {}
                }
            }
        }
    }
}

/// True for a value that the shell reads as itself outside quotes.
fn plain_word(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'.' | b'/' | b':' | b'@' | b'%' | b'+' | b'=' | b',' | b'-'
                )
        })
}

/// `value` escaped for `context`, appended to `out`.
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

/// `value` escaped for `context`.
pub fn escape(value: &str, context: Context) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    escape_into(&mut out, value, context);
    out
}

fn push_single(out: &mut String, value: &str) {
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests may unwrap")]
    use super::*;
    use crate::escape::OffsetMap;
    use crate::template::parse_template;

    fn scan(text: &str) -> Result<Vec<Context>, Problem> {
        let (template, _) = parse_template(text, &OffsetMap::default());
        contexts(&template.parts)
    }

    #[test]
    fn contexts_of_references() {
        use Context::{Double, Single, Word};
        assert_eq!(scan("echo $args.x"), Ok(vec![Word]));
        assert_eq!(
            scan("echo \"a $args.x\" '$args.y'"),
            Ok(vec![Double, Single])
        );
        assert_eq!(scan("echo \"$(cat $args.x)\""), Ok(vec![Word]));
        assert_eq!(scan("echo \\'$args.x"), Ok(vec![Word]));
        assert_eq!(scan("echo a#b $args.x"), Ok(vec![Word]));
    }

    #[test]
    fn problems() {
        assert_eq!(
            scan("echo 'a $args.x"),
            Err(Problem::Unclosed(Opener::SingleQuote))
        );
        assert_eq!(
            scan("echo \"$args.x"),
            Err(Problem::Unclosed(Opener::DoubleQuote))
        );
        assert_eq!(
            scan("echo $(ls"),
            Err(Problem::Unclosed(Opener::Substitution))
        );
        assert_eq!(scan("ls # $args.x"), Err(Problem::Unsafe(Place::Comment)));
        assert_eq!(
            scan("cat <<E\n$args.x\nE"),
            Err(Problem::Unsafe(Place::HereDocument))
        );
        assert_eq!(
            scan("echo `echo $args.x`"),
            Err(Problem::Unsafe(Place::Backquotes))
        );
        assert_eq!(
            scan("echo $'$args.x'"),
            Err(Problem::Unsafe(Place::DollarQuote))
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(escape("a.b-c", Context::Word), "a.b-c");
        assert_eq!(escape("", Context::Word), "''");
        assert_eq!(escape("a'b", Context::Word), "'a'\\''b'");
        assert_eq!(escape("a\"$`\\", Context::Double), "a\\\"\\$\\`\\\\");
        assert_eq!(escape("it's", Context::Single), "it'\\''s");
    }
}
