//! Plain shell text: text whose every reference the quotes alone place, read by a reader of
//! characters that knows the command grammar only as far as it needs to be sure, so the shell
//! parser is not asked.
//!
//! Plain text is simple commands (words, `>` redirections) joined by `|`, `||`, `&&`, `;`, `&`
//! and newlines; `if`/`elif`/`else`, `while`, `until` and `for NAME in WORDS` around such
//! commands; `[ ... ]` as a command of its own; `$NAME`, `${NAME}` and `${NAME:-WORD}` with a
//! literal word; and `$(...)` holding such commands on one line. Where a reference stands in it
//! depends on the quotes alone: outside them it is a word (also inside `$(...)`), between `"`
//! and `"` in double quotes, between `'` and `'` in single quotes, after a `#` that starts a word
//! it is in a comment up to the newline. A reserved word is the grammar's only in command
//! position; elsewhere (`echo done`) it is a word.
//!
//! Plain text has nothing a grammar reads otherwise than this reader: no `case` (a pattern's `)`
//! would close a `$(`), no `(`, `)`, `{`, `}`, `[`, `]` but as above, no `<`, backquote or
//! backslash outside single quotes, no `$((`, no `#`, newline or reserved word (even as a word)
//! inside `$(...)`, no reserved word after an assignment or a redirection (it could still be in
//! command position), no quote left open, and no operator or reserved word out of place (`a | |
//! b`, `;;`, a `>` without its word, `if a; fi`): text that is not a valid shell command is
//! parsed, and refused as before. What the scan alone knows (commands that evaluate a value or
//! parse it again) it still decides. The soundness of the reading is tested: wherever it
//! accepts, the parser reads every reference the same (the tests and the fuzz target).

use crate::ast::TemplatePart;

/// Where the reader stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// Outside quotes; `after` is what came last.
    Out(After),
    Double,
    Single,
    Comment,
    /// Inside `${...}`, in double quotes (`true`) or not.
    Brace(bool, BraceAt),
}

/// How far a `${...}` has been read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BraceAt {
    /// Before the name's first character.
    Open,
    Name,
    /// After the name's `:`.
    Colon,
    /// In the literal word after `-` or `+`.
    Word,
}

/// What came last outside quotes, for `#` (a comment only at the start of a word) and the
/// words' starts and ends.
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
    /// A command must follow (after `|`, `||`, `&&` or a reserved word that opens a list; a
    /// newline may come first).
    Command,
    /// A word must follow (the target of a redirection).
    Target,
    /// Inside a command that has a word or a redirection.
    InCommand,
}

/// The simple command being read, for reserved words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cmd {
    /// No word yet: the next is in command position.
    Empty,
    /// Its first word is its name: reserved words after it are words.
    Named,
    /// Its first word may be an assignment, or it starts with a redirection: a reserved word
    /// may still be in command position.
    Unsure,
    /// Inside `[ ... ]`.
    Test,
    /// After `fi`, `done` or `]`: no word may follow.
    Closed,
    /// After `for`: the variable's name.
    ForName,
    /// After `for NAME`: `in`.
    ForIn,
    /// The words after `in`; `true` once there is one.
    ForWords(bool),
}

/// A compound command open, and where in it the reader is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// `if` or `elif`, before its `then`.
    IfCondition,
    /// After `then`.
    Then,
    /// After `else`.
    Else,
    /// `while` or `until`, before its `do`.
    LoopCondition,
    /// A `for`'s words were read: only `do` may come.
    ForDo,
    /// After `do`.
    Body,
}

/// Words a shell reads as its grammar's in command position.
const RESERVED: [&str; 17] = [
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "time", "coproc",
];

/// How deep compound commands may nest in plain text, and `$(...)` (deeper text is parsed):
/// bounds that keep the reader free of allocation.
const MAX_BLOCKS: usize = 8;
const MAX_SUBSTITUTIONS: usize = 4;

/// The grammar's state at one level: the top, or inside one `$(...)`.
#[derive(Clone, Copy)]
struct Level {
    expect: Expect,
    cmd: Cmd,
    blocks: [Block; MAX_BLOCKS],
    depth: usize,
    /// The `$(...)` stands in double quotes.
    quoted: bool,
}

impl Level {
    fn new(quoted: bool) -> Level {
        Level {
            expect: Expect::Start,
            cmd: Cmd::Empty,
            blocks: [Block::Body; MAX_BLOCKS],
            depth: 0,
            quoted,
        }
    }

    fn top(&self) -> Option<Block> {
        self.depth
            .checked_sub(1)
            .and_then(|i| self.blocks.get(i).copied())
    }

    fn open(&mut self, block: Block) -> bool {
        let Some(slot) = self.blocks.get_mut(self.depth) else {
            return false;
        };
        *slot = block;
        self.depth += 1;
        self.cmd = Cmd::Empty;
        self.expect = Expect::Command;
        true
    }

    /// Replaces the innermost block by `block`, a list to follow.
    fn then(&mut self, block: Block) -> bool {
        match self
            .depth
            .checked_sub(1)
            .and_then(|i| self.blocks.get_mut(i))
        {
            Some(slot) => *slot = block,
            None => return false,
        }
        self.cmd = Cmd::Empty;
        self.expect = Expect::Command;
        true
    }

    fn close(&mut self) -> bool {
        self.depth -= 1;
        self.cmd = Cmd::Closed;
        self.expect = Expect::InCommand;
        true
    }

    /// Whether the level may end here (the text's end, or a `)` closing its `$(`).
    fn complete(&self) -> bool {
        self.depth == 0
            && matches!(self.expect, Expect::Start | Expect::InCommand)
            && matches!(
                self.cmd,
                Cmd::Empty | Cmd::Named | Cmd::Unsure | Cmd::Closed
            )
    }

    /// A word ends: `bare` is its text when it is unquoted word characters alone.
    fn word(&mut self, bare: Option<&str>) -> bool {
        if self.expect == Expect::Target {
            self.expect = Expect::InCommand;
            if self.cmd == Cmd::Empty {
                self.cmd = Cmd::Unsure;
            }
            return true;
        }
        let reserved = bare.is_some_and(|w| RESERVED.contains(&w));
        match self.cmd {
            Cmd::Empty => {
                if self.top() == Some(Block::ForDo) && bare != Some("do") {
                    return false;
                }
                if let Some(word) = bare.filter(|_| reserved) {
                    return self.keyword(word);
                }
                self.cmd = match bare {
                    Some("[") => Cmd::Test,
                    Some("]") => return false,
                    Some(word) if !word.contains('=') => Cmd::Named,
                    Some(_) | None => Cmd::Unsure,
                };
            }
            Cmd::Named => {
                if matches!(bare, Some("[" | "]")) {
                    return false;
                }
            }
            Cmd::Unsure => {
                if reserved || matches!(bare, Some("[" | "]")) {
                    return false;
                }
            }
            Cmd::Test => match bare {
                Some("]") => self.cmd = Cmd::Closed,
                Some("[") => return false,
                _ if reserved => return false,
                _ => {}
            },
            Cmd::Closed => return false,
            Cmd::ForName => match bare {
                Some(name) if !reserved && is_name(name) => self.cmd = Cmd::ForIn,
                _ => return false,
            },
            Cmd::ForIn if bare == Some("in") => self.cmd = Cmd::ForWords(false),
            Cmd::ForIn => return false,
            Cmd::ForWords(_) if reserved || matches!(bare, Some("[" | "]")) => return false,
            Cmd::ForWords(_) => self.cmd = Cmd::ForWords(true),
        }
        self.expect = Expect::InCommand;
        true
    }

    /// A reserved word in command position.
    fn keyword(&mut self, word: &str) -> bool {
        // Those that end a list need one before them: a command was read and ended.
        let ends = self.expect == Expect::Start;
        match (word, self.top()) {
            ("if", _) => self.open(Block::IfCondition),
            ("while" | "until", _) => self.open(Block::LoopCondition),
            ("for", _) => {
                self.cmd = Cmd::ForName;
                self.expect = Expect::InCommand;
                true
            }
            ("then", Some(Block::IfCondition)) if ends => self.then(Block::Then),
            ("elif", Some(Block::Then)) if ends => self.then(Block::IfCondition),
            ("else", Some(Block::Then)) if ends => self.then(Block::Else),
            ("fi", Some(Block::Then | Block::Else)) if ends => self.close(),
            ("do", Some(Block::LoopCondition | Block::ForDo)) if ends => self.then(Block::Body),
            ("done", Some(Block::Body)) if ends => self.close(),
            _ => false,
        }
    }

    /// An operator or a newline outside quotes.
    fn operator(&mut self, operator: Operator) -> bool {
        if let Cmd::ForWords(words) = self.cmd {
            // Only `;` or a newline ends the words, and `do` must follow.
            if !(words && matches!(operator, Operator::Ends(true) | Operator::Newline)) {
                return false;
            }
            self.cmd = Cmd::Empty;
            self.expect = Expect::Start;
            let Some(slot) = self.blocks.get_mut(self.depth) else {
                return false;
            };
            *slot = Block::ForDo;
            self.depth += 1;
            return true;
        }
        if matches!(self.cmd, Cmd::Test | Cmd::ForName | Cmd::ForIn) {
            return false;
        }
        self.expect = match (operator, self.expect) {
            (_, Expect::Target) => return false,
            (Operator::Newline, Expect::InCommand) => Expect::Start,
            (Operator::Newline, expect) => expect,
            (Operator::Redirect, expect) => {
                if self.cmd == Cmd::Empty {
                    self.cmd = Cmd::Unsure;
                }
                // A redirection before the command: the command position is still to come.
                let _ = expect;
                Expect::Target
            }
            (Operator::Ends(_), Expect::InCommand) => Expect::Start,
            (Operator::Joins, Expect::InCommand) => Expect::Command,
            (Operator::Ends(_) | Operator::Joins, Expect::Start | Expect::Command) => return false,
        };
        if matches!(self.expect, Expect::Start | Expect::Command) {
            self.cmd = Cmd::Empty;
        }
        true
    }
}

/// A variable's name.
fn is_name(word: &str) -> bool {
    word.bytes().next().is_some_and(name_start)
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The reader between parts.
struct Reader {
    at: At,
    /// The grammar at the innermost level, and those around it (`$(...)` open).
    level: Level,
    outer: [Level; MAX_SUBSTITUTIONS],
    nesting: usize,
    /// Where the word being read started in the part being read, while it is unquoted word
    /// characters alone (a reserved word, `[`, a name, maybe).
    bare: Option<usize>,
}

/// Whether `parts` is plain text (module docs): then the scan's contexts are the shell's.
pub(super) fn plain(parts: &[TemplatePart]) -> bool {
    let mut reader = Reader {
        at: At::Out(After::Blank),
        level: Level::new(false),
        outer: [Level::new(false); MAX_SUBSTITUTIONS],
        nesting: 0,
        bare: None,
    };
    let last = parts.len().saturating_sub(1);
    for (index, part) in parts.iter().enumerate() {
        let read = match part {
            TemplatePart::Text(text) => reader.read(text, index == last),
            TemplatePart::Ref(_) => reader.value(),
        };
        if !read {
            return false;
        }
    }
    reader.end()
}

impl Reader {
    /// A value: part of a word outside quotes, text inside them.
    fn value(&mut self) -> bool {
        match self.at {
            At::Out(_) => {
                self.bare = None;
                self.at = At::Out(After::Word);
                true
            }
            At::Double | At::Single | At::Comment => true,
            At::Brace(..) => false,
        }
    }

    fn end(&mut self) -> bool {
        if self.at == At::Out(After::Word) && !self.level.word(None) {
            return false;
        }
        self.nesting == 0 && matches!(self.at, At::Out(_) | At::Comment) && self.level.complete()
    }

    /// A piece of a word outside quotes at `i`: a word starts, or goes on (and is no longer
    /// bare unless the piece is).
    fn piece(&mut self, i: usize, bare: bool) {
        if self.at == At::Out(After::Word) {
            if !bare {
                self.bare = None;
            }
        } else {
            self.bare = bare.then_some(i);
        }
        self.at = At::Out(After::Word);
    }

    /// The word being read ends at `i` of `text`.
    fn end_word(&mut self, text: &str, i: usize) -> bool {
        let bare = self.bare.take().and_then(|start| text.get(start..i));
        self.at = At::Out(After::Blank);
        // Inside `$(...)` no reserved word at all, even as a word: whether a `case` is one
        // decides where the substitution ends.
        if self.nesting > 0 && bare.is_some_and(|w| RESERVED.contains(&w)) {
            return false;
        }
        self.level.word(bare)
    }

    /// A `$` at `i` (`next` and `after` follow it), outside quotes or inside double quotes:
    /// how many bytes it takes, or `None` where it is not plain.
    fn dollar(&mut self, quoted: bool, next: Option<u8>, after: Option<u8>) -> Option<usize> {
        match next {
            Some(b) if name_start(b) => Some(1),
            Some(b'{') => {
                self.at = At::Brace(quoted, BraceAt::Open);
                Some(2)
            }
            // `$((` is arithmetic.
            Some(b'(') if after != Some(b'(') => {
                let saved = self.outer.get_mut(self.nesting)?;
                *saved = self.level;
                self.nesting += 1;
                self.level = Level::new(quoted);
                self.at = At::Out(After::Blank);
                Some(2)
            }
            _ => None,
        }
    }

    /// A `)` outside quotes: it closes the innermost `$(...)`.
    fn close(&mut self) -> bool {
        let Some(outer) = self.nesting.checked_sub(1) else {
            return false;
        };
        // A command, not ended (`$()` and `$(a;)` are the parser's to read).
        if !(self.level.complete() && self.level.expect == Expect::InCommand) {
            return false;
        }
        let quoted = self.level.quoted;
        let Some(&level) = self.outer.get(outer) else {
            return false;
        };
        self.level = level;
        self.nesting = outer;
        self.bare = None;
        self.at = if quoted {
            At::Double
        } else {
            At::Out(After::Word)
        };
        true
    }

    /// Reads one literal part; false where the text is not plain.
    fn read(&mut self, text: &str, last: bool) -> bool {
        let bytes = text.as_bytes();
        // A word going on from before the part is not bare.
        self.bare = None;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let next = bytes.get(i + 1).copied();
            let mut width = 1;
            match self.at {
                At::Single => {
                    if b == b'\'' {
                        self.at = At::Out(After::Word);
                    }
                }
                At::Comment => {
                    if b == b'\n' {
                        // A comment ends the line as a newline does.
                        if !self.level.operator(Operator::Newline) {
                            return false;
                        }
                        self.at = At::Out(After::Blank);
                    }
                }
                At::Double => match b {
                    b'"' => self.at = At::Out(After::Word),
                    b'\\' | b'`' => return false,
                    b'$' => match self.dollar(true, next, bytes.get(i + 2).copied()) {
                        Some(w) => width = w,
                        None => return false,
                    },
                    _ => {}
                },
                At::Brace(quoted, at) => {
                    let at = match (at, b) {
                        (BraceAt::Open, _) if name_start(b) => BraceAt::Name,
                        (BraceAt::Name, _) if b.is_ascii_alphanumeric() || b == b'_' => {
                            BraceAt::Name
                        }
                        (BraceAt::Name, b':') => BraceAt::Colon,
                        (BraceAt::Name | BraceAt::Colon, b'-' | b'+') => BraceAt::Word,
                        (BraceAt::Word, _) if word_char(b) => BraceAt::Word,
                        (BraceAt::Name | BraceAt::Word, b'}') => {
                            self.at = if quoted {
                                At::Double
                            } else {
                                At::Out(After::Word)
                            };
                            i += 1;
                            continue;
                        }
                        _ => return false,
                    };
                    self.at = At::Brace(quoted, at);
                }
                At::Out(after) => {
                    let delimiter =
                        matches!(b, b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'>' | b')');
                    // Digits alone before `>` are the descriptor it redirects, not a word.
                    let descriptor = b == b'>'
                        && self
                            .bare
                            .and_then(|start| text.get(start..i))
                            .is_some_and(|w| w.bytes().all(|d| d.is_ascii_digit()));
                    if descriptor {
                        self.bare = None;
                    } else if delimiter && after == After::Word && !self.end_word(text, i) {
                        return false;
                    }
                    match b {
                        b'"' => {
                            self.piece(i, false);
                            self.at = At::Double;
                        }
                        b'\'' => {
                            self.piece(i, false);
                            self.at = At::Single;
                        }
                        b' ' | b'\t' => self.at = At::Out(After::Blank),
                        b'\n' => {
                            if self.nesting > 0 || !self.level.operator(Operator::Newline) {
                                return false;
                            }
                            self.at = At::Out(After::Blank);
                        }
                        b'|' | b'&' | b';' | b'>' => {
                            let Some((operator, len)) =
                                operator(b, next, bytes.get(i + 2).copied())
                            else {
                                return false;
                            };
                            if !self.level.operator(operator) {
                                return false;
                            }
                            width = len;
                            self.at = At::Out(After::Operator);
                        }
                        b')' => {
                            if !self.close() {
                                return false;
                            }
                        }
                        b'#' => match after {
                            After::Blank
                                if self.level.expect != Expect::Target && self.nesting == 0 =>
                            {
                                self.at = At::Comment;
                            }
                            After::Word => self.piece(i, false),
                            After::Blank | After::Operator => return false,
                        },
                        b'$' => {
                            self.piece(i, false);
                            match self.dollar(false, next, bytes.get(i + 2).copied()) {
                                Some(w) => width = w,
                                None => return false,
                            }
                        }
                        // `[` and `]` only as words of their own (the test command).
                        b'[' | b']' => {
                            let alone = match next {
                                Some(n) => matches!(n, b' ' | b'\t' | b'\n' | b';'),
                                None => last,
                            };
                            if after == After::Word || !alone {
                                return false;
                            }
                            self.piece(i, true);
                        }
                        _ if word_char(b) => self.piece(i, true),
                        _ => return false,
                    }
                }
            }
            i += width;
        }
        // The text's end ends its last word.
        if last && self.at == At::Out(After::Word) {
            return self.end_word(text, bytes.len());
        }
        true
    }
}

/// A character of a word outside quotes that no shell reads otherwise.
fn word_char(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'.' | b'/' | b':' | b'=' | b',' | b'@' | b'%' | b'+' | b'-'
        )
}

/// What an operator does in the command grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operator {
    /// `;` (`true`) or `&`: ends a command.
    Ends(bool),
    /// `|`, `||` or `&&`: another command must follow.
    Joins,
    /// `>`, `>>`, `>|` or `>&`: a word must follow.
    Redirect,
    /// A newline (or the end of a comment).
    Newline,
}

/// The operator starting with `b` (`next` and `after` follow it) and its length, as the shells
/// read it; `None` for those plain text does not hold (`;;`, `;&`, bash's `|&` and `&>`).
fn operator(b: u8, next: Option<u8>, after: Option<u8>) -> Option<(Operator, usize)> {
    match (b, next) {
        (b'|', Some(b'|')) | (b'&', Some(b'&')) => Some((Operator::Joins, 2)),
        (b'|' | b';' | b'&', Some(b'&' | b';' | b'>')) => None,
        (b'|', _) => Some((Operator::Joins, 1)),
        (b';', _) => Some((Operator::Ends(true), 1)),
        (b'&', _) => Some((Operator::Ends(false), 1)),
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
mod tests;
