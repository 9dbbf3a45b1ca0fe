//! The scan of the words: quoting, substitutions, here-documents and the simple command being
//! read, which decide the scan's context of each reference and the commands that parse it again.

use super::brace::Brace;
use super::commands::*;
use super::fed::Redirect;
use super::heredoc::{Body, HereDoc};
use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Frame {
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
pub(super) struct Command {
    pub(super) words: Vec<String>,
    /// The word being read, quotes removed, values as [`VALUE`].
    pub(super) cur: String,
    pub(super) in_word: bool,
    /// The count of the word being read.
    pub(super) word: usize,
    /// Something comes on its standard input: a pipe, `<<<` or `<`.
    pub(super) fed: bool,
    /// The indices in `words` of the words a redirection names (files, here-strings,
    /// delimiters): no operand of the command.
    pub(super) targets: Vec<usize>,
}

#[derive(Debug)]
pub(super) struct Scan {
    /// Frames above the top level (which is a word context).
    pub(super) stack: Vec<Frame>,
    /// A backslash outside single quotes was the last character.
    pub(super) escaped: bool,
    /// The next character would start a word (for `#`).
    pub(super) word_start: bool,
    /// The last character was `$` (for `$(`, `${` and `$'`).
    pub(super) dollar: bool,
    /// The last character was `<` outside quotes (for `<<`).
    pub(super) less: bool,
    /// The last character opened a `(` (for `((`).
    pub(super) opened: bool,
    /// `<<` was read (`true` for `<<-`): the next word is a here-document's delimiter.
    pub(super) delimiter: Option<bool>,
    /// The character after `<<` is awaited (`-` strips tabs, `<` makes a here-string).
    pub(super) after_heredoc: bool,
    /// The word being read has quotes or a backslash (a quoted delimiter expands nothing).
    pub(super) word_quoted: bool,
    /// Here-documents whose bodies start at the next newline, in order.
    pub(super) pending: Vec<HereDoc>,
    /// The here-document whose body is being read.
    pub(super) body: Option<Body>,
    /// The scan met something it cannot follow for certain: every later reference is refused.
    pub(super) lost: Option<Uncertain>,
    /// One per [`Frame::Brace`] on the stack, in order.
    pub(super) braces: Vec<Brace>,
    /// One per command level: the top, then each `$(...)` or `(...)` open.
    pub(super) commands: Vec<Command>,
    pub(super) word_ends: Vec<WordEnd>,
    pub(super) word_starts: Vec<WordEnd>,
    /// Where the character being read stands.
    pub(super) at: WordEnd,
    /// The references read so far.
    pub(super) refs_seen: usize,
    /// A `[[` open: the first reference inside it, and whether an arithmetic test (`-eq`) was
    /// read there.
    pub(super) dbracket: Option<(usize, bool)>,
    /// References (from, to) inside a `[[ ... ]]` holding an arithmetic test.
    pub(super) arithmetic: Vec<(usize, usize)>,
    /// A command declared integer variables (`declare -i`).
    pub(super) integer_declared: bool,
    /// A command defined an alias: any later command word may stand for the alias's text,
    /// which dash reads as code (`alias q=eval` then `q V` evaluates V).
    pub(super) aliased: bool,
    /// An expansion (`$x`, `"$1"`, `$(...)`) stands where a command parses it again: any value
    /// of the text may flow there ([`Uncertain::ExpansionReparsed`]).
    pub(super) expansion_reparsed: bool,
    /// The last character was `|` outside quotes (for `||` and `|&`).
    pub(super) bar: bool,
    /// A redirection was read: the next word is what it names.
    pub(super) redirect: Option<Redirect>,
    /// The files the text writes (`>`, `>>`, `tee`), as written.
    pub(super) written: Vec<String>,
    /// The files the text runs as programs, with what runs them.
    pub(super) scripts: Vec<(String, &'static str)>,
    /// A command reading its program on standard input, which something is fed to.
    pub(super) stdin_code: Option<&'static str>,
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
            delimiter: None,
            after_heredoc: false,
            word_quoted: false,
            pending: Vec::new(),
            body: None,
            lost: None,
            braces: Vec::new(),
            commands: vec![Command::default()],
            word_ends: Vec::new(),
            word_starts: Vec::new(),
            at: WordEnd::End,
            refs_seen: 0,
            dbracket: None,
            arithmetic: Vec::new(),
            integer_declared: false,
            aliased: false,
            expansion_reparsed: false,
            bar: false,
            redirect: None,
            written: Vec::new(),
            scripts: Vec::new(),
            stdin_code: None,
        }
    }
}

impl Scan {
    pub(super) fn top(&self) -> Option<Frame> {
        self.stack.last().copied()
    }

    pub(super) fn context(&self) -> Result<Context, Problem> {
        if self.delimiter.is_some() {
            return Err(Problem::Unsafe(Place::HereDocument));
        }
        if let Some(body) = &self.body {
            // An unquoted body expands `${SEQ_V1}` as double quotes do, and knows no quotes;
            // after a backslash or inside a substitution of its own the scan is not sure.
            return if body.doc.quoted || body.substituted {
                Err(Problem::Unsafe(Place::HereDocument))
            } else if body.escaped {
                Err(Problem::Uncertain(Uncertain::AfterBackslash))
            } else {
                Ok(Context::Double)
            };
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
        if self.evaluated_here() {
            return Err(Problem::Uncertain(Uncertain::Arithmetic));
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

    pub(super) fn unclosed(&self) -> Option<Opener> {
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
    pub(super) fn reparse(&self, context: Context) -> Option<Reparse> {
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
                return Some(Reparse::argument("eval"));
            }
            // An alias's text is read as code wherever the alias is used (dash expands aliases
            // in scripts too).
            "alias" => {
                return Some(Reparse::argument("alias"));
            }
            "ssh" => {
                // The destination is data; the words after it are the remote shell's code, and
                // so is an option such as `-o ProxyCommand=...`.
                let cur = if command.in_word {
                    &command.cur[..]
                } else {
                    ""
                };
                let option = cur.starts_with("-o") || words.last().is_some_and(|w| w == "-o");
                return (option || remote_command(words, first + 1) <= index)
                    .then_some(Reparse::argument("ssh"));
            }
            "trap" => {
                // The action, the first word (after `--`), runs as shell code when the trap fires.
                let action =
                    first + 1 + usize::from(words.get(first + 1).is_some_and(|w| w == "--"));
                return (action == index).then_some(Reparse::argument("trap"));
            }
            "watch" => {
                // Without `-x`, watch joins its command words and hands them to `sh -c`.
                return (watch_command(words, first + 1) <= index)
                    .then_some(Reparse::argument("watch"));
            }
            _ => {}
        }
        // `su --command=SCRIPT`, the script in the option's own word.
        if command.in_word
            && command.cur.starts_with("--command=")
            && words[first..]
                .iter()
                .any(|w| RUNS_C_SCRIPT.iter().any(|(s, _)| *s == basename(w)))
        {
            return Some(Reparse::argument("su -c"));
        }
        let current = command.in_word.then_some(&command.cur[..]);
        if let Some(label) = program_word(words, index, current) {
            return Some(Reparse::argument(label));
        }
        let (name, positional) = script_option(words, index)?;
        // A script in single quotes, or in double quotes (the fix then checks that single
        // quotes read its text the same).
        let script =
            (positional && matches!(context, Context::Single | Context::Double)).then(|| {
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
            via: Via::Argument,
        })
    }

    pub(super) fn push(&mut self, frame: Frame) {
        match frame {
            Frame::Paren(substitution) => {
                // A subshell reads the standard input of the command it stands in.
                let fed = !substitution && self.commands.last().is_some_and(|c| c.fed);
                self.commands.push(Command {
                    fed,
                    ..Command::default()
                });
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

    pub(super) fn pop(&mut self) {
        if let Some(Frame::Paren(substitution)) = self.stack.pop() {
            if self.commands.len() > 1 {
                self.end_word();
                self.read_command();
                self.commands.pop();
            }
            // `$(...)` is part of the word around it.
            if substitution {
                self.literal(VALUE);
            }
        }
    }

    pub(super) fn start_word(&mut self) {
        let next = self.word_ends.len();
        if let Some(command) = self.commands.last_mut()
            && !command.in_word
        {
            command.in_word = true;
            command.word = next;
            self.word_ends.push(WordEnd::End);
            self.word_starts.push(self.at);
        }
    }

    pub(super) fn literal(&mut self, c: char) {
        self.start_word();
        if let Some(command) = self.commands.last_mut() {
            command.cur.push(c);
        }
    }

    pub(super) fn end_word(&mut self) {
        let at = self.at;
        if let Some(command) = self.commands.last_mut()
            && command.in_word
        {
            command.in_word = false;
            if let Some(end) = self.word_ends.get_mut(command.word) {
                *end = at;
            }
            let word = std::mem::take(&mut command.cur);
            if let Some(strip_tabs) = self.delimiter.take() {
                let script_of = stdin_script(&command.words);
                command.targets.push(command.words.len());
                self.pending.push(HereDoc {
                    delimiter: word.clone(),
                    quoted: self.word_quoted,
                    strip_tabs,
                    script_of,
                });
            }
            let redirect = self.redirect.take();
            if redirect.is_some() {
                command.targets.push(command.words.len());
            }
            if redirect == Some(Redirect::Out) && !word.starts_with('&') {
                self.written.push(word.clone());
            }
            command.words.push(word);
            self.read_word();
        }
        self.word_quoted = false;
    }

    /// An unquoted newline: the bodies of the here-documents announced on its line start.
    pub(super) fn newline(&mut self) {
        if !self.pending.is_empty() {
            self.body = Some(Body::new(self.pending.remove(0)));
        }
    }

    /// Notes what the word just read makes arithmetic: a `[[ ... ]]` test (`-eq` may follow
    /// the value it compares) and integer declarations.
    pub(super) fn read_word(&mut self) {
        let Some(words) = self.commands.last().map(|c| &c.words) else {
            return;
        };
        let Some(word) = words.last() else {
            return;
        };
        match (word.as_str(), self.dbracket) {
            ("[[", None) => self.dbracket = Some((self.refs_seen, false)),
            ("]]", Some((start, arithmetic))) => {
                if arithmetic {
                    self.arithmetic.push((start, self.refs_seen));
                }
                self.dbracket = None;
            }
            (test, Some((start, false))) if ARITHMETIC_TESTS.contains(&test) => {
                self.dbracket = Some((start, true));
            }
            _ => {}
        }
        if declares_integers(words) {
            self.integer_declared = true;
        }
        if command_word(words).is_some_and(|i| basename(&words[i]) == "alias") {
            self.aliased = true;
        }
    }

    /// Whether the value about to be read is evaluated as arithmetic by the command or word
    /// it stands in: `let`, a `declare -i`, or an array subscript (`a[V]=1`, `unset "a[V]"`).
    pub(super) fn evaluated_here(&self) -> bool {
        let Some(command) = self.commands.last() else {
            return false;
        };
        let words = &command.words;
        if command_word(words).is_some_and(|i| basename(&words[i]) == "let")
            || declares_integers(words)
        {
            return true;
        }
        if names_variable(words, command.in_word.then_some(&command.cur[..]))
            || (self.dbracket.is_some() && words.last().is_some_and(|w| w == "-v"))
        {
            return true;
        }
        command.in_word && in_subscript(&command.cur)
    }

    /// A `$` the shell expands: noted when it stands where a command parses its text again.
    fn expansion(&mut self, context: Context) {
        if !self.expansion_reparsed && self.reparse(context).is_some() {
            self.expansion_reparsed = true;
        }
    }

    pub(super) fn end_command(&mut self) {
        self.end_word();
        self.read_command();
        self.redirect = None;
        if let Some(command) = self.commands.last_mut() {
            command.words.clear();
            command.targets.clear();
        }
    }

    pub(super) fn char(&mut self, c: char) {
        if let Some(body) = &mut self.body {
            if body.read(c) {
                self.body = (!self.pending.is_empty())
                    .then(|| self.pending.remove(0))
                    .map(Body::new);
            }
            return;
        }
        if std::mem::take(&mut self.after_heredoc) {
            match c {
                '-' => {
                    self.delimiter = Some(true);
                    return;
                }
                // `<<<`: a here-string, an ordinary word on the command's standard input.
                '<' => {
                    self.delimiter = None;
                    self.feed(true);
                    self.redirect = Some(Redirect::In);
                    return;
                }
                _ => {}
            }
        }
        let dollar = std::mem::take(&mut self.dollar);
        let less = std::mem::take(&mut self.less);
        let opened = std::mem::take(&mut self.opened);
        let bar = std::mem::take(&mut self.bar);
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
                    self.feed(false);
                    self.newline();
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
                        self.expansion(Context::Double);
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
                // `<` then anything but `<`: a file on the command's standard input.
                if less && c != '<' {
                    self.feed(true);
                    self.redirect = Some(Redirect::In);
                }
                if std::mem::take(&mut self.escaped) {
                    // A backslash-newline joins lines; any other escaped character is itself.
                    if c != '\n' {
                        self.literal(c);
                    }
                    return;
                }
                if matches!(c, '\\' | '\'' | '"') {
                    self.word_quoted = true;
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
                        self.expansion(Context::Word);
                        self.dollar = true;
                        self.literal(c);
                    }
                    '#' if word_start => self.push(Frame::Comment),
                    '<' if less => {
                        self.delimiter = Some(false);
                        self.after_heredoc = true;
                    }
                    '<' => {
                        self.less = true;
                        self.end_word();
                        self.word_start = true;
                    }
                    ' ' | '\t' | '>' => {
                        self.end_word();
                        self.word_start = true;
                        if c == '>' {
                            self.redirect = Some(Redirect::Out);
                        }
                    }
                    '\n' => {
                        self.end_command();
                        self.feed(false);
                        self.word_start = true;
                        self.newline();
                    }
                    ';' | '&' | '|' => {
                        // `|` and `|&` feed the next command; `||`, `;`, `&` and `&&` do not.
                        let pipe = match c {
                            '|' => !bar,
                            '&' => bar,
                            _ => false,
                        };
                        self.end_command();
                        self.feed(pipe);
                        self.bar = c == '|' && !bar;
                        self.word_start = true;
                    }
                    _ => self.literal(c),
                }
            }
        }
    }
}
