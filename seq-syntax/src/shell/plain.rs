//! Plain shell text: text made only of simple commands (words and `>` redirections) joined by
//! `|`, `||`, `&&`, `;`, `&` and newlines, whose every reference the scan of the words places
//! for certain, so the shell parser is not asked.
//!
//! Where a reference stands in plain text depends on the quotes alone: outside them it is a word,
//! between `"` and `"` it is in double quotes, between `'` and `'` in single quotes, after a `#`
//! that starts a word it is in a comment up to the newline. Plain text has nothing that nests or
//! that a grammar reads otherwise than a scan of characters: no `(`, `)`, `{`, `}`, `[`, `]`,
//! `<`, backquote or backslash outside single quotes, no `$` but before a variable's name (`$f`,
//! `"$HOME"`), no reserved word (`if`, `for`, `done`, ...), no quote left open, and no operator
//! out of place (`a | | b`, `;;`, a `>` without its word): text that is not a valid shell command
//! is parsed, and refused as before. What the scan alone knows (commands that evaluate a value
//! or parse it again) it still decides.

use crate::ast::TemplatePart;

/// Where the reader stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// Outside quotes; `after` is what came last.
    Out(After),
    Double,
    Single,
    Comment,
}

/// What came last outside quotes, for `#` (a comment only at the start of a word).
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    /// The start of the text, a blank or a newline: `#` starts a comment.
    Blank,
    /// A character of a word, a closing quote or a value: `#` is a letter.
    Word,
    /// An operator: the shells agree that `#` starts a comment there, but the plain reading
    /// does not need it (the text is parsed instead).
    Operator,
}

/// What the command grammar expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A command may start (the text's start, after `;`, `&` or a newline); nothing is missing.
    Start,
    /// A command must follow (after `|`, `||`, `&&`; a newline may come first).
    Command,
    /// A word must follow (the target of a redirection).
    Target,
    /// Inside a command that has a word or a redirection.
    InCommand,
}

/// Words a shell reads as its grammar's in command position; plain text holds none anywhere.
const RESERVED: [&str; 17] = [
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "time", "coproc",
];

/// The reader between parts.
#[derive(Clone, Copy)]
struct Reader {
    at: At,
    expect: Expect,
}

impl Reader {
    /// A word (or part of one) is read: a redirection's target, or a command's word.
    fn word(&mut self) {
        self.expect = Expect::InCommand;
    }
}

/// Whether `parts` is plain text (module docs): then the scan's contexts are the shell's.
pub(super) fn plain(parts: &[TemplatePart]) -> bool {
    let mut reader = Reader {
        at: At::Out(After::Blank),
        expect: Expect::Start,
    };
    for part in parts {
        match part {
            TemplatePart::Text(text) => {
                if !read(text, &mut reader) {
                    return false;
                }
            }
            TemplatePart::Ref(_) => {
                if let At::Out(_) = reader.at {
                    reader.at = At::Out(After::Word);
                    reader.word();
                }
            }
        }
    }
    matches!(reader.at, At::Out(_) | At::Comment)
        && matches!(reader.expect, Expect::Start | Expect::InCommand)
}

/// Reads one literal part into `reader`; false where the text is not plain (a `$` ending the
/// part would stand before a value: not plain either).
fn read(text: &str, reader: &mut Reader) -> bool {
    let bytes = text.as_bytes();
    // Where the word being read started, while it is letters alone (a reserved word, maybe).
    let mut bare: Option<usize> = None;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let next = bytes.get(i + 1).copied();
        let word_char = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'_' | b'.' | b'/' | b':' | b'=' | b',' | b'@' | b'%' | b'+' | b'-'
            );
        // A word ends: it may not be a reserved word.
        if let (At::Out(_), Some(start)) = (reader.at, bare)
            && !word_char
            && b != b'#'
        {
            if RESERVED.contains(&text.get(start..i).unwrap_or_default()) {
                return false;
            }
            bare = None;
        }
        let mut width = 1;
        reader.at = match reader.at {
            At::Single if b == b'\'' => At::Out(After::Word),
            At::Single => At::Single,
            At::Comment if b == b'\n' => {
                // A comment ends the line as a newline does (a `>` without its word before it
                // is refused at the `#`).
                if reader.expect == Expect::InCommand {
                    reader.expect = Expect::Start;
                }
                At::Out(After::Blank)
            }
            At::Comment => At::Comment,
            At::Double => match b {
                b'"' => At::Out(After::Word),
                b'\\' | b'`' => return false,
                b'$' if !next.is_some_and(name_start) => return false,
                _ => At::Double,
            },
            At::Out(after) => match b {
                b'"' => {
                    reader.word();
                    At::Double
                }
                b'\'' => {
                    reader.word();
                    At::Single
                }
                b' ' | b'\t' => At::Out(After::Blank),
                b'\n' => {
                    match reader.expect {
                        Expect::Target => return false,
                        Expect::InCommand => reader.expect = Expect::Start,
                        Expect::Start | Expect::Command => {}
                    }
                    At::Out(After::Blank)
                }
                b'|' | b'&' | b';' | b'>' => {
                    let Some((operator, len)) = operator(b, next, bytes.get(i + 2).copied()) else {
                        return false;
                    };
                    width = len;
                    reader.expect = match (operator, reader.expect) {
                        (Operator::Redirect, Expect::Target) => return false,
                        (Operator::Redirect, _) => Expect::Target,
                        (Operator::Ends, Expect::InCommand) => Expect::Start,
                        (Operator::Joins, Expect::InCommand) => Expect::Command,
                        (Operator::Ends | Operator::Joins, _) => return false,
                    };
                    At::Out(After::Operator)
                }
                b'#' => match after {
                    After::Blank if reader.expect == Expect::Target => return false,
                    After::Blank => At::Comment,
                    After::Word => At::Out(After::Word),
                    After::Operator => return false,
                },
                b'$' if next.is_some_and(name_start) => {
                    reader.word();
                    At::Out(After::Word)
                }
                _ if word_char => {
                    if after != After::Word {
                        bare = Some(i);
                    }
                    reader.word();
                    At::Out(After::Word)
                }
                _ => return false,
            },
        };
        // A quote or `$` inside the word: no reserved word.
        if !word_char {
            bare = None;
        }
        i += width;
    }
    // A word at the part's end (perhaps going on into a value): checked as if it ended.
    !bare.is_some_and(|start| RESERVED.contains(&text.get(start..).unwrap_or_default()))
}

/// What an operator does in the command grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operator {
    /// `;` or `&`: ends a command.
    Ends,
    /// `|`, `||` or `&&`: another command must follow.
    Joins,
    /// `>`, `>>`, `>|` or `>&`: a word must follow.
    Redirect,
}

/// The operator starting with `b` (`next` and `after` follow it) and its length, as the shells
/// read it; `None` for those plain text does not hold (`;;`, `;&`, bash's `|&` and `&>`).
fn operator(b: u8, next: Option<u8>, after: Option<u8>) -> Option<(Operator, usize)> {
    match (b, next) {
        (b'|', Some(b'|')) | (b'&', Some(b'&')) => Some((Operator::Joins, 2)),
        (b'|' | b';' | b'&', Some(b'&' | b';' | b'>')) => None,
        (b'|', _) => Some((Operator::Joins, 1)),
        (b';' | b'&', _) => Some((Operator::Ends, 1)),
        (b'>', Some(b'>' | b'|' | b'&')) if after != Some(b'>') => Some((Operator::Redirect, 2)),
        (b'>', Some(b'>' | b'|' | b'&')) => None,
        (b'>', _) => Some((Operator::Redirect, 1)),
        _ => None,
    }
}

/// The first character of a variable's name.
fn name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::plain;
    use crate::escape::OffsetMap;
    use crate::template::parse_template;

    fn is_plain(text: &str) -> bool {
        plain(&parse_template(text, &OffsetMap::default()).0.parts)
    }

    #[test]
    fn plain_and_not() {
        for text in [
            "grep -rn $args.p $args.dir | head -n 20",
            "cd $args.repo && git log -- \"$args.path\"",
            "echo a > $args.f 2>&1; ls >>f &",
            "a ||\n b $args.v # c\n",
            "sh -c 'echo \"$1\" | tr a-z A-Z' sh $args.text",
            "find . -name '*.rs' -newer \"$args.stamp\" 2>/dev/null",
            "test -f $args.p || echo missing # check $args.q (first)",
            "echo \"$HOME/$args.sub\" a#b $args.x#y",
            "echo '$args.x'",
        ] {
            assert!(is_plain(text), "{text}");
        }
        for text in [
            "echo \"$(cat $args.x)\"",
            "case $args.m in a) ls ;; esac",
            "cat <<E\n$args.x\nE",
            "echo ${X:-$args.v}",
            "echo $$args.v",
            "echo \\$args.v",
            "echo \"C:\\$args.v\"",
            "echo `ls` $args.v",
            "[ -d $args.d ]",
            "ls;# $args.v",
            "echo \"$args.v",
            "echo 'a $args.v",
            "echo $'a' $args.v",
            "echo \"$@\" $args.v",
            "ls *.rs ~/x $args.v",
            "a=(1 2) $args.v",
            "for f in $args.files; do echo \"file: $f\"; done",
            "if true; then echo \"$args.v\"; fi fi",
            "echo fi $args.v",
            "a | | b $args.v",
            "ls ;; $args.v",
            "ls $args.v >",
            "ls $args.v |",
            "| ls $args.v",
            "; ls $args.v",
            "ls $args.v > # c\nf",
            "ls $args.v |& cat",
            "ls $args.v &> f",
        ] {
            assert!(!is_plain(text), "{text}");
        }
    }
}
