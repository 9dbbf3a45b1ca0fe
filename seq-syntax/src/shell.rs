//! Values in shell text (docs/reference.md, "Shell text"): a `$args`/`$out` value interpolated
//! into `cmd_run`'s `command` is escaped for the quoting context it lands in, so that a value can
//! never add a command, a redirection or an expansion.
//!
//! The context of each reference is found by a scan of the template's literal parts — the text
//! the author wrote, never the values — so it is known before a value exists: the checker reports
//! text the scan cannot follow, and the engine escapes each value by the same scan. Where the
//! scan cannot be sure of a context (after a backslash, in a construct the shells read
//! differently), the reference is refused, never guessed.
//!
//! The scan also follows the words of each simple command, to tell a value that reaches a
//! command which parses its arguments as shell code again (`eval`, `sh -c`, `ssh`): escaping
//! holds for one parse only.

use crate::ast::TemplatePart;

/// Where a value lands in shell text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    /// Outside quotes (also inside `$(...)` and an unquoted `${...}`): the value becomes one word.
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
    /// A reference stands where the scan cannot be sure how the shell reads it.
    Uncertain(Uncertain),
}

/// What was left open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opener {
    SingleQuote,
    DoubleQuote,
    Substitution,
    Backquote,
    Brace,
}

impl Opener {
    pub fn spelling(self) -> &'static str {
        match self {
            Opener::SingleQuote => "'",
            Opener::DoubleQuote => "\"",
            Opener::Substitution => "$(",
            Opener::Backquote => "`",
            Opener::Brace => "${",
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

/// Places whose reading the scan does not know for certain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Uncertain {
    /// Right after a backslash: the escaping would be escaped in turn (`"C:\$args.v"`).
    AfterBackslash,
    /// Unquoted directly inside a `${...}` that stands in double quotes: its quoting differs
    /// between shells and operators.
    BareInQuotedBrace,
    /// After a `'` inside a `${...}` that stands in double quotes: dash and bash read it
    /// differently.
    QuoteInQuotedBrace,
    /// In arithmetic (`$((...))`, `((...))`, `$[...]`, a `${X:OFFSET}` or `${A[INDEX]}`): the
    /// shell evaluates a value's text as an expression, and bash runs `$(...)` inside array
    /// subscripts.
    Arithmetic,
    /// Inside an unquoted `${X=...}` or `${X:=...}`: the value is assigned, then the expansion
    /// is split into words and globbed.
    AssignedUnquoted,
}

impl Uncertain {
    pub fn describe(self) -> &'static str {
        match self {
            Uncertain::AfterBackslash => "right after a backslash",
            Uncertain::BareInQuotedBrace => {
                "unquoted inside a `${...}` that stands in double quotes"
            }
            Uncertain::QuoteInQuotedBrace => {
                "after a `'` inside a `${...}` that stands in double quotes"
            }
            Uncertain::Arithmetic => {
                "inside shell arithmetic (`$((...))`, `((...))`, `$[...]`, `${X:OFFSET}` or `${A[INDEX]}`)"
            }
            Uncertain::AssignedUnquoted => {
                "inside an unquoted `${X=...}` or `${X:=...}`, whose result is split and globbed"
            }
        }
    }

    /// How to write it so the scan is sure.
    pub fn hint(self) -> &'static str {
        match self {
            Uncertain::AfterBackslash => {
                "a backslash before a value escapes the escaping: write `\\\\` for a literal backslash, or put the backslash in single quotes ('C:\\')"
            }
            Uncertain::BareInQuotedBrace => {
                "quote the value inside the braces: `\"${X:-\"$args.v\"}\"`"
            }
            Uncertain::QuoteInQuotedBrace => {
                "use double quotes inside the braces: `\"${X#\"...\"}\"`"
            }
            Uncertain::Arithmetic => {
                "check the value is a number first, or compute without the shell; a value never becomes an expression"
            }
            Uncertain::AssignedUnquoted => {
                "quote the whole expansion and the value inside it: `\"${X:=\"$args.v\"}\"`"
            }
        }
    }
}

/// A command that parses its arguments as shell code again, and where a value reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reparse {
    /// The command as it is usually written: `eval`, `sh -c`, `ssh`, `su -c`, `flock -c`,
    /// `script -c`, `trap`, `watch`.
    pub command: &'static str,
    /// The script word the value stands in, for a shell's or `su`'s `-c`: every value in it can
    /// be passed as a positional argument instead.
    pub script: Option<ScriptWord>,
}

/// A `-c` script word written in single quotes, as the fix needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptWord {
    /// Counts words across the whole text: references in the same script share it.
    pub word: usize,
    /// The positional parameter that reads the value inside the script, quoted for where it
    /// stands there (`"$1"` outside quotes, `${1}` inside double quotes); `None` where no
    /// spelling keeps it one word (inside the script's own single quotes).
    pub inner: Option<Context>,
}

/// Where in the parts a word ends: a byte offset in a text part, or the end of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordEnd {
    At { part: usize, offset: usize },
    End,
}

/// What the scan found for one reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefScan {
    pub context: Result<Context, Problem>,
    pub reparse: Option<Reparse>,
}

/// The whole scan of a template.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Scanned {
    /// One per reference, in order.
    pub refs: Vec<RefScan>,
    /// Something opened in the text and never closed.
    pub unclosed: Option<Opener>,
    /// Where each word (by its count) ends.
    pub word_ends: Vec<WordEnd>,
}

/// The context of each reference of `parts`, in order, or the first problem.
pub fn contexts(parts: &[TemplatePart]) -> Result<Vec<Context>, Problem> {
    let scanned = scan(parts);
    let contexts = scanned
        .refs
        .into_iter()
        .map(|r| r.context)
        .collect::<Result<Vec<_>, _>>()?;
    match scanned.unclosed {
        Some(opener) => Err(Problem::Unclosed(opener)),
        None => Ok(contexts),
    }
}

/// Stands for a value in the words the scan keeps: no command or option is spelt with it.
const VALUE: char = '\u{1}';

/// Scans `parts`: each reference's context and whether a command parses it again.
pub fn scan(parts: &[TemplatePart]) -> Scanned {
    let mut scan = Scan::default();
    let mut refs = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        match part {
            TemplatePart::Text(text) => {
                for (offset, c) in text.char_indices() {
                    scan.at = WordEnd::At {
                        part: index,
                        offset,
                    };
                    scan.char(c);
                }
            }
            TemplatePart::Ref(_) => {
                if let (Some(Frame::Brace(_)), Some(brace)) = (scan.top(), scan.braces.last_mut()) {
                    brace.value();
                }
                let context = scan.context();
                let reparse = match context {
                    Ok(context) => scan.reparse(context),
                    Err(_) => None,
                };
                refs.push(RefScan { context, reparse });
                // A value is one word (or part of the quoted text): what follows it does not
                // start a word, and an escape before it is spent.
                scan.word_start = false;
                scan.escaped = false;
                scan.literal(VALUE);
            }
        }
    }
    scan.at = WordEnd::End;
    scan.end_word();
    Scanned {
        refs,
        unclosed: scan.unclosed(),
        word_ends: scan.word_ends,
    }
}

/// How far a `${...}` has been read, for the operators that make it arithmetic or an assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BraceAt {
    /// In the parameter's name; `true` before its first character.
    Name(bool),
    /// Right after a `:` following the name.
    Colon,
    /// Past the operator.
    Operand,
}

/// One `${...}` open (kept beside its [`Frame::Brace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Brace {
    at: BraceAt,
    /// In double quotes.
    quoted: bool,
    /// A subscript or an offset: what follows is arithmetic.
    arithmetic: bool,
    /// `=` or `:=`: the value is assigned, and the expansion is what it assigned.
    assigns: bool,
}

impl Brace {
    fn new(quoted: bool) -> Brace {
        Brace {
            at: BraceAt::Name(true),
            quoted,
            arithmetic: false,
            assigns: false,
        }
    }

    /// A value standing in the braces' own text: as the name or right after `:`, it would be
    /// read as a name or an offset, never as plain text.
    fn value(&mut self) {
        match self.at {
            BraceAt::Name(_) | BraceAt::Colon => self.arithmetic = true,
            BraceAt::Operand => {}
        }
        self.at = BraceAt::Operand;
    }

    /// Reads `c`, an unescaped character of the braces' own text.
    fn read(&mut self, c: char) {
        match self.at {
            BraceAt::Name(first) => {
                let special = first && matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-');
                if c.is_ascii_alphanumeric() || c == '_' || special {
                    self.at = BraceAt::Name(false);
                    return;
                }
                self.at = BraceAt::Operand;
                match c {
                    '[' => self.arithmetic = true,
                    ':' => self.at = BraceAt::Colon,
                    '=' => self.assigns = true,
                    _ => {}
                }
            }
            BraceAt::Colon => {
                self.at = BraceAt::Operand;
                match c {
                    '=' => self.assigns = true,
                    '-' | '?' | '+' => {}
                    // `${X:OFFSET}`: the offset is an arithmetic expression.
                    _ => self.arithmetic = true,
                }
            }
            BraceAt::Operand => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    /// Outside quotes inside `$(...)` (`true`) or a subshell `(...)` (`false`).
    Paren(bool),
    /// Inside `$((...))` or `((...))`.
    Arith,
    /// Inside `${...}`; `true` when the expansion stands in double quotes.
    Brace(bool),
    Double,
    Single,
    Backquote,
    DollarQuote,
    Comment,
}

/// The words of the simple command being read.
#[derive(Debug, Default)]
struct Command {
    words: Vec<String>,
    /// The word being read, quotes removed, values as [`VALUE`].
    cur: String,
    in_word: bool,
    /// The count of the word being read.
    word: usize,
}

#[derive(Debug)]
struct Scan {
    /// Frames above the top level (which is a word context).
    stack: Vec<Frame>,
    /// A backslash outside single quotes was the last character.
    escaped: bool,
    /// The next character would start a word (for `#`).
    word_start: bool,
    /// The last character was `$` (for `$(`, `${` and `$'`).
    dollar: bool,
    /// The last character was `<` outside quotes (for `<<`).
    less: bool,
    /// The last character opened a `(` (for `((`).
    opened: bool,
    heredoc: bool,
    /// The scan met something it cannot follow for certain: every later reference is refused.
    lost: Option<Uncertain>,
    /// One per [`Frame::Brace`] on the stack, in order.
    braces: Vec<Brace>,
    /// One per command level: the top, then each `$(...)` or `(...)` open.
    commands: Vec<Command>,
    word_ends: Vec<WordEnd>,
    /// Where the character being read stands.
    at: WordEnd,
}

impl Default for Scan {
    fn default() -> Scan {
        Scan {
            stack: Vec::new(),
            escaped: false,
            word_start: true,
            dollar: false,
            less: false,
            opened: false,
            heredoc: false,
            lost: None,
            braces: Vec::new(),
            commands: vec![Command::default()],
            word_ends: Vec::new(),
            at: WordEnd::End,
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
            Some(Frame::DollarQuote) => return Err(Problem::Unsafe(Place::DollarQuote)),
            Some(Frame::Comment) => return Err(Problem::Unsafe(Place::Comment)),
            Some(
                Frame::Paren(_)
                | Frame::Arith
                | Frame::Brace(_)
                | Frame::Double
                | Frame::Single
                | Frame::Backquote,
            )
            | None => {}
        }
        if let Some(uncertain) = self.lost {
            return Err(Problem::Uncertain(uncertain));
        }
        if self.escaped {
            return Err(Problem::Uncertain(Uncertain::AfterBackslash));
        }
        if self.stack.contains(&Frame::Arith) || self.braces.iter().any(|b| b.arithmetic) {
            return Err(Problem::Uncertain(Uncertain::Arithmetic));
        }
        if self.braces.iter().any(|b| b.assigns && !b.quoted) {
            return Err(Problem::Uncertain(Uncertain::AssignedUnquoted));
        }
        match self.top() {
            None | Some(Frame::Paren(_) | Frame::Brace(false)) => Ok(Context::Word),
            Some(Frame::Double) => Ok(Context::Double),
            Some(Frame::Single) => Ok(Context::Single),
            Some(Frame::Brace(true)) => Err(Problem::Uncertain(Uncertain::BareInQuotedBrace)),
            Some(Frame::Arith) => Err(Problem::Uncertain(Uncertain::Arithmetic)),
            Some(Frame::Backquote) => Err(Problem::Unsafe(Place::Backquotes)),
            Some(Frame::DollarQuote) => Err(Problem::Unsafe(Place::DollarQuote)),
            Some(Frame::Comment) => Err(Problem::Unsafe(Place::Comment)),
        }
    }

    fn unclosed(&self) -> Option<Opener> {
        self.stack.iter().rev().find_map(|frame| match frame {
            Frame::Paren(_) | Frame::Arith => Some(Opener::Substitution),
            Frame::Brace(_) => Some(Opener::Brace),
            Frame::Double => Some(Opener::DoubleQuote),
            Frame::Single | Frame::DollarQuote => Some(Opener::SingleQuote),
            Frame::Backquote => Some(Opener::Backquote),
            Frame::Comment => None,
        })
    }

    /// Whether the value about to be read reaches a command that parses it again.
    fn reparse(&self, context: Context) -> Option<Reparse> {
        let command = self.commands.last()?;
        let words = &command.words;
        let index = words.len();
        let word = if command.in_word {
            command.word
        } else {
            self.word_ends.len()
        };
        let first = command_word(words)?;
        match basename(&words[first]) {
            "eval" => {
                return Some(Reparse {
                    command: "eval",
                    script: None,
                });
            }
            "ssh" => {
                // The destination is data; the words after it are the remote shell's code.
                return (remote_command(words, first + 1) <= index).then_some(Reparse {
                    command: "ssh",
                    script: None,
                });
            }
            "trap" => {
                // The action, the first word (after `--`), runs as shell code when the trap fires.
                let action =
                    first + 1 + usize::from(words.get(first + 1).is_some_and(|w| w == "--"));
                return (action == index).then_some(Reparse {
                    command: "trap",
                    script: None,
                });
            }
            "watch" => {
                // Without `-x`, watch joins its command words and hands them to `sh -c`.
                return (watch_command(words, first + 1) <= index).then_some(Reparse {
                    command: "watch",
                    script: None,
                });
            }
            _ => {}
        }
        let (name, positional) = script_option(words, index)?;
        let script = (positional && context == Context::Single).then(|| {
            let mut inner = Scan::default();
            let cur = if command.in_word {
                &command.cur[..]
            } else {
                ""
            };
            for c in cur.chars() {
                inner.char(if c == VALUE { 'x' } else { c });
            }
            ScriptWord {
                word,
                inner: match inner.context() {
                    Ok(c @ (Context::Word | Context::Double)) => Some(c),
                    Ok(Context::Single) | Err(_) => None,
                },
            }
        });
        Some(Reparse {
            command: name,
            script,
        })
    }

    fn push(&mut self, frame: Frame) {
        match frame {
            Frame::Paren(_) => {
                self.commands.push(Command::default());
                self.opened = true;
            }
            Frame::Brace(quoted) => self.braces.push(Brace::new(quoted)),
            Frame::Arith
            | Frame::Double
            | Frame::Single
            | Frame::Backquote
            | Frame::DollarQuote
            | Frame::Comment => {}
        }
        self.stack.push(frame);
    }

    fn pop(&mut self) {
        if let Some(Frame::Paren(substitution)) = self.stack.pop() {
            if self.commands.len() > 1 {
                self.end_word();
                self.commands.pop();
            }
            // `$(...)` is part of the word around it.
            if substitution {
                self.literal(VALUE);
            }
        }
    }

    fn start_word(&mut self) {
        let next = self.word_ends.len();
        if let Some(command) = self.commands.last_mut()
            && !command.in_word
        {
            command.in_word = true;
            command.word = next;
            self.word_ends.push(WordEnd::End);
        }
    }

    fn literal(&mut self, c: char) {
        self.start_word();
        if let Some(command) = self.commands.last_mut() {
            command.cur.push(c);
        }
    }

    fn end_word(&mut self) {
        let at = self.at;
        if let Some(command) = self.commands.last_mut()
            && command.in_word
        {
            command.in_word = false;
            if let Some(end) = self.word_ends.get_mut(command.word) {
                *end = at;
            }
            command.words.push(std::mem::take(&mut command.cur));
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if let Some(command) = self.commands.last_mut() {
            command.words.clear();
        }
    }

    fn char(&mut self, c: char) {
        let dollar = std::mem::take(&mut self.dollar);
        let less = std::mem::take(&mut self.less);
        let opened = std::mem::take(&mut self.opened);
        match self.top() {
            Some(Frame::Single) => {
                if c == '\'' {
                    self.stack.pop();
                } else {
                    self.literal(c);
                }
            }
            Some(Frame::DollarQuote) => {
                if std::mem::take(&mut self.escaped) {
                    self.literal(c);
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '\'' {
                    self.stack.pop();
                } else {
                    self.literal(c);
                }
            }
            Some(Frame::Comment) => {
                if c == '\n' {
                    self.stack.pop();
                    self.word_start = true;
                    self.end_command();
                }
            }
            Some(Frame::Double) => {
                if std::mem::take(&mut self.escaped) {
                    // Inside double quotes a backslash escapes only these; elsewhere it stays.
                    if !matches!(c, '$' | '`' | '"' | '\\' | '\n') {
                        self.literal('\\');
                    }
                    if c != '\n' {
                        self.literal(c);
                    }
                    return;
                }
                match c {
                    '\\' => self.escaped = true,
                    '"' => {
                        self.stack.pop();
                    }
                    '`' => self.push(Frame::Backquote),
                    '(' if dollar => self.push(Frame::Paren(true)),
                    '{' if dollar => self.push(Frame::Brace(true)),
                    // bash's old `$[...]` arithmetic: nothing after it is certain.
                    '[' if dollar => {
                        self.lost.get_or_insert(Uncertain::Arithmetic);
                        self.literal(c);
                    }
                    '$' => {
                        self.dollar = true;
                        self.literal(c);
                    }
                    _ => self.literal(c),
                }
            }
            Some(Frame::Brace(quoted)) => {
                if std::mem::take(&mut self.escaped) {
                    self.literal(c);
                    return;
                }
                if c != '}'
                    && let Some(brace) = self.braces.last_mut()
                {
                    brace.read(c);
                }
                match c {
                    '\\' => self.escaped = true,
                    '}' => {
                        self.stack.pop();
                        self.braces.pop();
                    }
                    '"' => self.push(Frame::Double),
                    // Inside `"${X#'a'}"` bash reads a quote, dash a letter (and `:-` both a
                    // letter): no context after it is certain.
                    '\'' if quoted => {
                        self.lost.get_or_insert(Uncertain::QuoteInQuotedBrace);
                        self.literal(c);
                    }
                    '\'' if dollar => self.push(Frame::DollarQuote),
                    '\'' => self.push(Frame::Single),
                    '`' => self.push(Frame::Backquote),
                    '(' if dollar => self.push(Frame::Paren(true)),
                    '{' if dollar => self.push(Frame::Brace(quoted)),
                    '$' => {
                        self.dollar = true;
                        self.literal(c);
                    }
                    _ => self.literal(c),
                }
            }
            None | Some(Frame::Paren(_) | Frame::Arith | Frame::Backquote) => {
                let word_start = std::mem::replace(&mut self.word_start, false);
                if std::mem::take(&mut self.escaped) {
                    // A backslash-newline joins lines; any other escaped character is itself.
                    if c != '\n' {
                        self.literal(c);
                    }
                    return;
                }
                match c {
                    '\\' => self.escaped = true,
                    '\'' if dollar => self.push(Frame::DollarQuote),
                    '\'' => {
                        self.start_word();
                        self.push(Frame::Single);
                    }
                    '"' => {
                        self.start_word();
                        self.push(Frame::Double);
                    }
                    '`' if self.top() == Some(Frame::Backquote) => {
                        self.stack.pop();
                    }
                    '`' => self.push(Frame::Backquote),
                    '(' if opened => self.push(Frame::Arith),
                    '(' => {
                        if !dollar {
                            self.end_command();
                        }
                        self.push(Frame::Paren(dollar));
                        self.word_start = true;
                    }
                    ')' => {
                        if matches!(self.top(), Some(Frame::Paren(_) | Frame::Arith)) {
                            self.pop();
                        }
                        self.word_start = true;
                    }
                    '{' if dollar => self.push(Frame::Brace(false)),
                    '[' if dollar => {
                        self.lost.get_or_insert(Uncertain::Arithmetic);
                        self.literal(c);
                    }
                    '$' => {
                        self.dollar = true;
                        self.literal(c);
                    }
                    '#' if word_start => self.push(Frame::Comment),
                    '<' if less => self.heredoc = true,
                    '<' => {
                        self.less = true;
                        self.end_word();
                        self.word_start = true;
                    }
                    ' ' | '\t' | '>' => {
                        self.end_word();
                        self.word_start = true;
                    }
                    '\n' | ';' | '&' | '|' => {
                        self.end_command();
                        self.word_start = true;
                    }
                    _ => self.literal(c),
                }
            }
        }
    }
}

/// Commands that run the command after them (and their options): `sudo sh -c ...`.
const WRAPPERS: [&str; 12] = [
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "timeout",
    "xargs", "stdbuf",
];

/// Shells whose `-c` parses its script argument as shell code.
const SHELLS: [(&str, &str); 7] = [
    ("sh", "sh -c"),
    ("bash", "bash -c"),
    ("dash", "dash -c"),
    ("zsh", "zsh -c"),
    ("ksh", "ksh -c"),
    ("mksh", "mksh -c"),
    ("ash", "ash -c"),
];

/// Commands besides the shells whose `-c` (or `--command`) argument a shell parses.
const RUNS_C_SCRIPT: [(&str, &str); 3] = [
    ("su", "su -c"),
    ("flock", "flock -c"),
    ("script", "script -c"),
];

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `NAME=value` before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The index of the command word, past assignments and wrappers with their options.
fn command_word(words: &[String]) -> Option<usize> {
    let mut wrapped = false;
    let mut duration = false;
    for (i, word) in words.iter().enumerate() {
        if is_assignment(word) || (wrapped && word.starts_with('-')) {
            continue;
        }
        if duration {
            duration = false;
            continue;
        }
        let name = basename(word);
        if WRAPPERS.contains(&name) {
            wrapped = true;
            duration = name == "timeout";
            continue;
        }
        return Some(i);
    }
    None
}

/// ssh's options that take an argument (as its manual lists them).
const SSH_ARGUMENT_OPTIONS: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// The index of the first word of ssh's remote command, its options and destination read from
/// `from`: past the end when the words so far hold no destination.
fn remote_command(words: &[String], from: usize) -> usize {
    let mut i = from;
    while let Some(word) = words.get(i) {
        match word.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                // `-p 22` takes the next word; `-p22` holds it.
                let takes = flags
                    .char_indices()
                    .find(|(_, c)| SSH_ARGUMENT_OPTIONS.contains(*c))
                    .is_some_and(|(at, c)| at + c.len_utf8() == flags.len());
                i += if takes { 2 } else { 1 };
            }
            _ => return i + 1,
        }
    }
    usize::MAX
}

/// `-c` or a cluster of short options holding it (`-ec`).
fn is_c_option(word: &str) -> bool {
    word.strip_prefix('-').is_some_and(|flags| {
        !flags.is_empty() && flags.chars().all(|c| c.is_ascii_alphabetic()) && flags.contains('c')
    }) || word == "--command"
}

/// A shell (anywhere: `xargs sh -c`, `find -exec sh -c`), `su`, `flock` or `script`, then `-c`
/// (and `--`, if any), then the word at `index`: the script it parses. With the command's label
/// and whether the script takes positional arguments after it (a shell's does; `flock -c` and
/// `script -c` pass the script alone to a shell).
fn script_option(words: &[String], index: usize) -> Option<(&'static str, bool)> {
    for (j, word) in words.iter().enumerate().take(index) {
        let name = basename(word);
        // Options anywhere (`su bob -c`, `flock FILE -c`), or only before the script (a shell).
        let (label, anywhere, positional) =
            if let Some((_, label)) = SHELLS.iter().find(|(s, _)| *s == name) {
                (*label, false, true)
            } else if let Some((_, label)) = RUNS_C_SCRIPT.iter().find(|(s, _)| *s == name) {
                (*label, true, name == "su")
            } else {
                continue;
            };
        let mut script = None;
        let mut k = j + 1;
        while k < index {
            let option = &words[k];
            if is_c_option(option) {
                let end_of_options = words.get(k + 1).is_some_and(|w| w == "--");
                script = Some(k + 1 + usize::from(end_of_options));
            } else if option == "-o" || option == "+o" {
                k += 1;
            } else if !option.starts_with(['-', '+']) && !anywhere {
                break;
            }
            k += 1;
        }
        if script == Some(index) {
            return Some((label, positional));
        }
    }
    None
}

/// The index of the first word of watch's command, its options read from `from`; past the end
/// when the words so far hold none, or when `-x` runs the command without a shell.
fn watch_command(words: &[String], from: usize) -> usize {
    let mut i = from;
    while let Some(word) = words.get(i) {
        match word.as_str() {
            "-x" | "--exec" => return usize::MAX,
            "-n" | "--interval" | "-q" | "--equexit" => i += 2,
            "--" => return i + 1,
            flags if flags.starts_with('-') && flags.len() > 1 => {
                if !flags.starts_with("--") && flags.contains('x') {
                    return usize::MAX;
                }
                i += 1;
            }
            _ => return i,
        }
    }
    usize::MAX
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
    fn backslashes_and_braces() {
        use Context::{Double, Single, Word};
        let uncertain = |u| Err(Problem::Uncertain(u));
        assert_eq!(
            scan("echo \"C:\\$args.v\""),
            uncertain(Uncertain::AfterBackslash)
        );
        assert_eq!(scan("echo \\$args.v"), uncertain(Uncertain::AfterBackslash));
        assert_eq!(scan("echo \"C:\\\\$args.v\""), Ok(vec![Double]));
        assert_eq!(scan("echo \"\\\"\" $args.v"), Ok(vec![Word]));
        assert_eq!(scan("printf %s \"${X:-\"$args.v\"}\""), Ok(vec![Double]));
        assert_eq!(scan("printf %s \"${X:+\"$args.v\"}\""), Ok(vec![Double]));
        assert_eq!(scan("printf %s \"${X#\"$args.v\"}\""), Ok(vec![Double]));
        assert_eq!(scan("printf %s ${X:-$args.v}"), Ok(vec![Word]));
        assert_eq!(scan("printf %s ${X:-'$args.v'}"), Ok(vec![Single]));
        assert_eq!(
            scan("printf %s \"${X:-$args.v}\""),
            uncertain(Uncertain::BareInQuotedBrace)
        );
        assert_eq!(
            scan("printf %s \"${X#'a'}\" $args.v"),
            uncertain(Uncertain::QuoteInQuotedBrace)
        );
        assert_eq!(
            scan("echo $((1 + $args.v))"),
            uncertain(Uncertain::Arithmetic)
        );
        assert_eq!(scan("((n = $args.v))"), uncertain(Uncertain::Arithmetic));
        // bash evaluates offsets, subscripts and `$[...]` as arithmetic.
        assert_eq!(
            scan("X=abc; echo ${X:$args.v}"),
            uncertain(Uncertain::Arithmetic)
        );
        assert_eq!(
            scan("echo \"${X:\"$args.v\"}\""),
            uncertain(Uncertain::Arithmetic)
        );
        assert_eq!(scan("echo ${A[$args.v]}"), uncertain(Uncertain::Arithmetic));
        assert_eq!(scan("echo $[$args.v]"), uncertain(Uncertain::Arithmetic));
        assert_eq!(
            scan("echo \"$[1]\" $args.v"),
            uncertain(Uncertain::Arithmetic)
        );
        // The other operators are not: `:-` and friends, lengths, special parameters.
        assert_eq!(scan("printf %s ${X:-$args.v} ${#X} ${@}"), Ok(vec![Word]));
        assert_eq!(
            scan("printf %s ${X: -$args.v}"),
            uncertain(Uncertain::Arithmetic)
        );
        // An assigning expansion unquoted is split and globbed after it assigns.
        assert_eq!(
            scan("echo ${X:=$args.v}"),
            uncertain(Uncertain::AssignedUnquoted)
        );
        assert_eq!(
            scan("echo ${X=\"$args.v\"}"),
            uncertain(Uncertain::AssignedUnquoted)
        );
        assert_eq!(scan("echo \"${X:=\"$args.v\"}\""), Ok(vec![Double]));
        assert_eq!(scan("echo $( (ls) ) $args.v"), Ok(vec![Word]));
        assert_eq!(scan("echo ${X"), Err(Problem::Unclosed(Opener::Brace)));
    }

    fn reparsed(text: &str) -> Vec<Option<&'static str>> {
        let (template, _) = parse_template(text, &OffsetMap::default());
        scan_all(&template.parts)
            .refs
            .iter()
            .map(|r| r.reparse.as_ref().map(|r| r.command))
            .collect()
    }

    use super::scan as scan_all;

    #[test]
    fn reparsing_commands() {
        assert_eq!(reparsed("eval \"echo $args.v\""), [Some("eval")]);
        assert_eq!(reparsed("sh -c 'echo $args.v'"), [Some("sh -c")]);
        assert_eq!(reparsed("bash -ec \"echo $args.v\""), [Some("bash -c")]);
        assert_eq!(reparsed("ssh host \"cat $args.v\""), [Some("ssh")]);
        assert_eq!(reparsed("ssh -p 22 -v $args.host uptime"), [None]);
        assert_eq!(reparsed("ssh -p22 h ls $args.v"), [Some("ssh")]);
        assert_eq!(reparsed("su -c \"id $args.v\" bob"), [Some("su -c")]);
        assert_eq!(reparsed("ls | xargs sh -c 'echo $args.v'"), [Some("sh -c")]);
        assert_eq!(
            reparsed("find . -exec sh -c 'rm $args.v' \\;"),
            [Some("sh -c")]
        );
        assert_eq!(reparsed("sudo -E FOO=1 eval $args.v"), [Some("eval")]);
        assert_eq!(reparsed("echo $(eval $args.v)"), [Some("eval")]);
        // A positional argument after the script, and a word that only names a shell, are data.
        assert_eq!(reparsed("sh -c 'echo \"$1\"' _ $args.v"), [None]);
        assert_eq!(
            reparsed("echo eval $args.v; echo sh -x $args.v"),
            [None, None]
        );
        assert_eq!(reparsed("eval true; echo $args.v"), [None]);
        assert_eq!(reparsed("sh -c -- 'echo $args.v'"), [Some("sh -c")]);
        assert_eq!(reparsed("trap $args.v EXIT"), [Some("trap")]);
        assert_eq!(reparsed("trap -- \"echo $args.v\" EXIT"), [Some("trap")]);
        assert_eq!(reparsed("trap 'echo hi' $args.v"), [None]);
        assert_eq!(
            reparsed("flock /tmp/l -c \"ls $args.v\""),
            [Some("flock -c")]
        );
        assert_eq!(reparsed("flock /tmp/l ls $args.v"), [None]);
        assert_eq!(
            reparsed("script -q -c \"ls $args.v\" /dev/null"),
            [Some("script -c")]
        );
        assert_eq!(reparsed("watch -n 1 ls $args.v"), [Some("watch")]);
        assert_eq!(reparsed("watch -x ls $args.v"), [None]);
        let (template, _) =
            parse_template("sh -c 'echo \"$args.a\" $args.b' x", &OffsetMap::default());
        let scanned = scan_all(&template.parts);
        let inner: Vec<_> = scanned
            .refs
            .iter()
            .map(|r| {
                r.reparse
                    .as_ref()
                    .and_then(|r| r.script.as_ref())
                    .and_then(|s| s.inner)
            })
            .collect();
        assert_eq!(inner, [Some(Context::Double), Some(Context::Word)]);
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
