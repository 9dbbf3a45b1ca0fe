//! Values in shell text (docs/reference.md, "Shell text"): a `$args`/`$out`/`$each` value
//! referenced in `cmd_run`'s `command` never becomes shell text. The command runs with each value
//! in an environment variable of its own ([`VALUE_PREFIX`]`1`, `2`, ...), and the reference is
//! replaced by that variable's expansion ([`expansion_into`]): the shell never parses a value.
//!
//! The context of each reference is found by a scan of the template's literal parts — the text
//! the author wrote, never the values — so it is known before a value exists: the checker reports
//! text the scan cannot follow, and the engine places each expansion by the same scan. Where an
//! expansion would not give the value (single quotes, a comment, a here-document), where the
//! shell evaluates a variable's text as code (arithmetic, a command that parses its arguments
//! again), or where the scan cannot be sure of a context, the reference is refused, never
//! guessed. A misjudged quoting context costs at most a split word, never a command.
//!
//! [`escape_into`] quotes a value for display only (a report showing the command with its values
//! in place); nothing escaped reaches a shell.

use crate::ast::TemplatePart;

mod parsed;
mod plain;

/// Forgets the shell parser's readings kept on this thread, so that the next check of a text
/// parses it (the benchmark's file checked for the first time; the fuzz target's check that a
/// kept reading is the one a parse gives).
pub use parsed::forget as forget_parses;

/// Where a value lands in shell text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    /// Outside quotes (also inside `$(...)` and an unquoted `${...}`): the expansion is quoted,
    /// `"${SEQ_V1}"`.
    Word,
    /// Inside `"..."`: the expansion stands bare, `${SEQ_V1}`.
    Double,
    /// Inside `'...'`: no expansion gives the value there (the scan reports it; the checker's
    /// fix closes the quotes around the reference).
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
    /// A reference reaches a command that parses its arguments as shell code again (`eval`,
    /// `sh -c`, `ssh`): the label of [`Reparse::command`].
    Reparsed(&'static str),
    /// The literal text names a variable under [`VALUE_PREFIX`], which only the engine sets.
    Reserved,
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
    /// In a here-document whose delimiter is quoted (its body expands nothing), in a delimiter,
    /// or in a body after a `$(`, `${` or backquote of its own (which the scan does not follow).
    HereDocument,
    /// Between backquotes: their body is re-read with its own backslash rules.
    Backquotes,
    /// In `$'...'`, whose backslash escapes differ from single quotes'.
    DollarQuote,
    /// Inside `'...'`, where the shell expands nothing.
    SingleQuotes,
}

impl Place {
    pub fn describe(self) -> &'static str {
        match self {
            Place::Comment => "in a shell comment",
            Place::HereDocument => {
                "in a quoted here-document, a here-document's delimiter, or a body with a substitution of its own"
            }
            Place::Backquotes => "between backquotes",
            Place::DollarQuote => "inside `$'...'`",
            Place::SingleQuotes => "inside single quotes",
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
    /// Where the shell parser cannot place it for certain: the text does not parse, the
    /// expansion does not come out as one, or the parser reads its place otherwise than the
    /// scan of the words around it.
    Unparsed,
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
                "in shell arithmetic (`$((...))`, `((...))`, `let`, `[[ ... -eq ... ]]`, an array subscript, a substring offset, after `declare -i`) or naming a variable (`read`, `declare`, `unset`, `printf -v`, `[[ -v ]]`)"
            }
            Uncertain::AssignedUnquoted => {
                "inside an unquoted `${X=...}` or `${X:=...}`, whose result is split and globbed"
            }
            Uncertain::Unparsed => {
                "where the shell parser cannot place it for certain: the text does not parse, or the parser and the scan of the words read its place two ways"
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
                "make the number in a `jq` step first (`{\"tool\":\"jq\",\"args\":{\"filter\":\".v | tonumber + 1\",\"input\":{\"v\":$args.v}}}`), or pass the value to the script as data: `sh -c '... \"$1\" ...' sh $args.v`"
            }
            Uncertain::AssignedUnquoted => {
                "quote the whole expansion and the value inside it: `\"${X:=\"$args.v\"}\"`"
            }
            Uncertain::Unparsed => {
                "write the text around the value plainly (close what it opens, write a `case` pattern inside `$(...)` as `(x)`, put one here-document per command, alone on its line), or pass the value to a script as data: `sh -c '... \"$1\" ...' sh $args.v`"
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

/// A `-c` script word written in quotes, as the fix needs it.
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
    /// Where each word (by its count) starts: the position of its first character (of the
    /// character before it where a value starts the word).
    pub word_starts: Vec<WordEnd>,
}

impl RefScan {
    /// Where the value's expansion stands (a word, or inside double quotes), or why no
    /// expansion there gives the value as data. A command that parses the value again comes
    /// first: closing the quotes around it would hand the value to that parse.
    pub fn expansion(&self) -> Result<Context, Problem> {
        if let Some(reparse) = &self.reparse {
            return Err(Problem::Reparsed(reparse.command));
        }
        match self.context? {
            Context::Single => Err(Problem::Unsafe(Place::SingleQuotes)),
            context @ (Context::Word | Context::Double) => Ok(context),
        }
    }
}

/// The context of each reference of `parts`, in order (only [`Context::Word`] and
/// [`Context::Double`]), or the first problem.
pub fn contexts(parts: &[TemplatePart]) -> Result<Vec<Context>, Problem> {
    if reserved(parts) {
        return Err(Problem::Reserved);
    }
    let scanned = scan(parts);
    // Text left open first: what the references stand in is not known then.
    if let Some(opener) = scanned.unclosed {
        return Err(Problem::Unclosed(opener));
    }
    scanned.refs.iter().map(RefScan::expansion).collect()
}

/// The prefix of the environment variables that carry values into the shell: `SEQ_V1`,
/// `SEQ_V2`, ... Only the engine sets them; shell text and `env` may not name them.
pub const VALUE_PREFIX: &str = "SEQ_V";

/// The variable that carries the `n`th value (from 0) referenced in a command.
pub fn value_variable(n: usize) -> String {
    let mut name = String::with_capacity(VALUE_PREFIX.len() + 2);
    value_variable_into(&mut name, n);
    name
}

/// [`value_variable`], appended to `out`.
pub fn value_variable_into(out: &mut String, n: usize) {
    use std::fmt::Write as _;
    out.push_str(VALUE_PREFIX);
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{}", n + 1);
}

/// Whether `name` is one of the engine's variables (or could be mistaken for one).
pub fn is_reserved(name: &str) -> bool {
    name.starts_with(VALUE_PREFIX)
}

/// Whether the literal text of `parts` names the prefix: it could set, unset or read another
/// value's variable.
pub fn reserved(parts: &[TemplatePart]) -> bool {
    parts.iter().any(|part| match part {
        TemplatePart::Text(text) => text.contains(VALUE_PREFIX),
        TemplatePart::Ref(_) => false,
    })
}

/// The expansion of `variable` for `context`, appended to `out`: quoted where a word stands,
/// bare inside double quotes. The shell substitutes the variable's text and never parses it.
pub fn expansion_into(out: &mut String, variable: &str, context: Context) {
    match context {
        Context::Word => {
            out.push_str("\"${");
            out.push_str(variable);
            out.push_str("}\"");
        }
        Context::Double | Context::Single => {
            out.push_str("${");
            out.push_str(variable);
            out.push('}');
        }
    }
}

/// Stands for a value in the words the scan keeps: no command or option is spelt with it.
const VALUE: char = '\u{1}';

/// Scans `parts`: each reference's context and whether a command parses it again. The shell
/// parser decides each context: a reference keeps one only where the parser places it and the
/// scan of the words around it reads the same place (the scan adds what a grammar cannot know:
/// the commands that evaluate or parse their arguments again). Text without references needs
/// no parse, and neither does plain text (words, quotes and the operators between commands, see
/// `plain`), where the quotes alone place each reference and the scan reads them as the shell.
pub fn scan(parts: &[TemplatePart]) -> Scanned {
    let mut scanned = scan_words(parts);
    // Where the scan refuses every reference, the parser could only agree.
    if scanned.refs.iter().any(|r| r.context.is_ok()) && !plain::plain(parts) {
        parsed::with_contexts(parts, |parsed| {
            for (r, &parsed) in scanned.refs.iter_mut().zip(parsed) {
                r.context = agree(r.context, parsed);
            }
        });
    }
    scanned
}

/// The scan of the words alone, without the parser's reading: what [`scan`] adds the parser
/// to. Public for the benchmark that weighs the parser against it; use [`scan`].
pub fn scan_words(parts: &[TemplatePart]) -> Scanned {
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
                let reparse = match (&scan.body, context) {
                    // A body that a shell reads as its script is code once expanded.
                    (Some(body), _) => body.doc.script_of.map(|command| Reparse {
                        command,
                        script: None,
                    }),
                    (None, Ok(context)) => scan.reparse(context),
                    (None, Err(_)) => None,
                };
                refs.push(RefScan { context, reparse });
                scan.refs_seen += 1;
                if let Some(body) = &mut scan.body {
                    body.line.push(VALUE);
                    body.escaped = false;
                    body.dollar = false;
                    continue;
                }
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
    if let Some((start, true)) = scan.dbracket {
        scan.arithmetic.push((start, scan.refs_seen));
    }
    // Arithmetic found after the reference (`[[ V -eq 1 ]]`), or an integer variable that any
    // later assignment evaluates (`declare -i n; n=V`, also in a loop): refuse them all.
    for (index, r) in refs.iter_mut().enumerate() {
        let evaluated = scan.integer_declared
            || scan
                .arithmetic
                .iter()
                .any(|(start, end)| (*start..*end).contains(&index));
        if evaluated && r.context.is_ok() {
            r.context = Err(Problem::Uncertain(Uncertain::Arithmetic));
        }
    }
    Scanned {
        refs,
        unclosed: scan.unclosed(),
        word_ends: scan.word_ends,
        word_starts: scan.word_starts,
    }
}

/// One reference's context from the scan and from the parser: the scan's refusal stands (it
/// knows the commands that evaluate their arguments); otherwise the parser's, and a context
/// only where both read the same.
fn agree(
    scanned: Result<Context, Problem>,
    parsed: Result<Context, Problem>,
) -> Result<Context, Problem> {
    match (scanned, parsed) {
        (Err(problem), _) | (Ok(_), Err(problem)) => Err(problem),
        (Ok(scanned), Ok(parsed)) if scanned == parsed => Ok(parsed),
        (Ok(_), Ok(_)) => Err(Problem::Uncertain(Uncertain::Unparsed)),
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

/// A here-document announced by `<<`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HereDoc {
    delimiter: String,
    /// Its delimiter was quoted: the body is literal text, expanding nothing.
    quoted: bool,
    /// `<<-`: leading tabs are stripped from each line.
    strip_tabs: bool,
    /// The command reading it parses it as shell code (`sh <<E`, `ssh host <<E`): its label.
    script_of: Option<&'static str>,
}

/// A here-document's body being read.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Body {
    doc: HereDoc,
    line: String,
    /// The last character was an unescaped backslash.
    escaped: bool,
    /// The last character was an unescaped `$`.
    dollar: bool,
    /// A `$(`, `${`, `$[` or backquote was read in the body: what follows it is not followed.
    substituted: bool,
}

impl Body {
    fn new(doc: HereDoc) -> Body {
        Body {
            doc,
            line: String::new(),
            escaped: false,
            dollar: false,
            substituted: false,
        }
    }

    /// Reads `c`; true when its line is the delimiter, which ends the body.
    fn read(&mut self, c: char) -> bool {
        if c == '\n' && !self.escaped {
            let line = std::mem::take(&mut self.line);
            let line = if self.doc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line[..]
            };
            self.dollar = false;
            return line == self.doc.delimiter;
        }
        self.line.push(c);
        if self.doc.quoted {
            return false;
        }
        let dollar = std::mem::take(&mut self.dollar);
        if std::mem::take(&mut self.escaped) {
            // A backslash-newline joins lines: the delimiter test of the joined line is not
            // followed.
            if c == '\n' {
                self.substituted = true;
            }
            return false;
        }
        match c {
            '\\' => self.escaped = true,
            '`' => self.substituted = true,
            '(' | '{' | '[' if dollar => self.substituted = true,
            '$' => self.dollar = true,
            _ => {}
        }
        false
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
    /// `<<` was read (`true` for `<<-`): the next word is a here-document's delimiter.
    delimiter: Option<bool>,
    /// The character after `<<` is awaited (`-` strips tabs, `<` makes a here-string).
    after_heredoc: bool,
    /// The word being read has quotes or a backslash (a quoted delimiter expands nothing).
    word_quoted: bool,
    /// Here-documents whose bodies start at the next newline, in order.
    pending: Vec<HereDoc>,
    /// The here-document whose body is being read.
    body: Option<Body>,
    /// The scan met something it cannot follow for certain: every later reference is refused.
    lost: Option<Uncertain>,
    /// One per [`Frame::Brace`] on the stack, in order.
    braces: Vec<Brace>,
    /// One per command level: the top, then each `$(...)` or `(...)` open.
    commands: Vec<Command>,
    word_ends: Vec<WordEnd>,
    word_starts: Vec<WordEnd>,
    /// Where the character being read stands.
    at: WordEnd,
    /// The references read so far.
    refs_seen: usize,
    /// A `[[` open: the first reference inside it, and whether an arithmetic test (`-eq`) was
    /// read there.
    dbracket: Option<(usize, bool)>,
    /// References (from, to) inside a `[[ ... ]]` holding an arithmetic test.
    arithmetic: Vec<(usize, usize)>,
    /// A command declared integer variables (`declare -i`).
    integer_declared: bool,
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
        }
    }
}

impl Scan {
    fn top(&self) -> Option<Frame> {
        self.stack.last().copied()
    }

    fn context(&self) -> Result<Context, Problem> {
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
            // An alias's text is read as code wherever the alias is used (dash expands aliases
            // in scripts too).
            "alias" => {
                return Some(Reparse {
                    command: "alias",
                    script: None,
                });
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
                return (option || remote_command(words, first + 1) <= index).then_some(Reparse {
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
        // `su --command=SCRIPT`, the script in the option's own word.
        if command.in_word
            && command.cur.starts_with("--command=")
            && words[first..]
                .iter()
                .any(|w| RUNS_C_SCRIPT.iter().any(|(s, _)| *s == basename(w)))
        {
            return Some(Reparse {
                command: "su -c",
                script: None,
            });
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
            self.word_starts.push(self.at);
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
            let word = std::mem::take(&mut command.cur);
            if let Some(strip_tabs) = self.delimiter.take() {
                let script_of = stdin_script(&command.words);
                self.pending.push(HereDoc {
                    delimiter: word.clone(),
                    quoted: self.word_quoted,
                    strip_tabs,
                    script_of,
                });
            }
            command.words.push(word);
            self.read_word();
        }
        self.word_quoted = false;
    }

    /// An unquoted newline: the bodies of the here-documents announced on its line start.
    fn newline(&mut self) {
        if !self.pending.is_empty() {
            self.body = Some(Body::new(self.pending.remove(0)));
        }
    }

    /// Notes what the word just read makes arithmetic: a `[[ ... ]]` test (`-eq` may follow
    /// the value it compares) and integer declarations.
    fn read_word(&mut self) {
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
    }

    /// Whether the value about to be read is evaluated as arithmetic by the command or word
    /// it stands in: `let`, a `declare -i`, or an array subscript (`a[V]=1`, `unset "a[V]"`).
    fn evaluated_here(&self) -> bool {
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

    fn end_command(&mut self) {
        self.end_word();
        if let Some(command) = self.commands.last_mut() {
            command.words.clear();
        }
    }

    fn char(&mut self, c: char) {
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
                // `<<<`: a here-string, an ordinary word.
                '<' => {
                    self.delimiter = None;
                    return;
                }
                _ => {}
            }
        }
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
                    }
                    '\n' => {
                        self.end_command();
                        self.word_start = true;
                        self.newline();
                    }
                    ';' | '&' | '|' => {
                        self.end_command();
                        self.word_start = true;
                    }
                    _ => self.literal(c),
                }
            }
        }
    }
}

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
const RUNS_C_SCRIPT: [(&str, &str); 4] = [
    ("su", "su -c"),
    ("runuser", "su -c"),
    ("flock", "flock -c"),
    ("script", "script -c"),
];

/// The last `/`-separated part of `word` (`/usr/bin/env` is `env`). It runs for every word the
/// scan reads, so it finds the last `/` once rather than splitting.
fn basename(word: &str) -> &str {
    match word.rfind('/') {
        Some(slash) => word.get(slash + 1..).unwrap_or(word),
        None => word,
    }
}

/// `NAME=value` before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `[[ ... ]]`'s tests that evaluate both sides as arithmetic.
const ARITHMETIC_TESTS: [&str; 6] = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Builtins whose `-i` gives a variable the integer attribute: every later assignment to it is
/// evaluated as arithmetic.
const DECLARERS: [&str; 4] = ["declare", "typeset", "local", "readonly"];

/// `declare -i` (or `-ai`, `typeset -i`, `local -i`) among `words`.
fn declares_integers(words: &[String]) -> bool {
    let Some(first) = command_word(words) else {
        return false;
    };
    DECLARERS.contains(&basename(&words[first]))
        && words[first + 1..].iter().any(|w| {
            w.strip_prefix('-')
                .is_some_and(|flags| !flags.starts_with('-') && flags.contains('i'))
        })
}

/// A word read so far as `NAME[` with the subscript still open: bash evaluates the subscript
/// of an indexed array as arithmetic (in assignments, `unset`, `read`, `printf -v`, `[[ -v ]]`).
fn in_subscript(word: &str) -> bool {
    let Some((name, subscript)) = word.split_once('[') else {
        return false;
    };
    let name = name.trim_start_matches(['(', ' ']);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !subscript.contains(']')
}

/// Builtins whose arguments name variables: bash evaluates a name's subscript
/// (`a[$(touch P)]`) as arithmetic, running what it holds.
const NAMERS: [&str; 10] = [
    "declare",
    "typeset",
    "local",
    "readonly",
    "export",
    "read",
    "unset",
    "mapfile",
    "readarray",
    "getopts",
];

/// Whether a value about to be read (in the word `cur`, if one is being read) would name a
/// variable: an argument of a [`NAMERS`] builtin outside an assignment's value part, or the
/// argument of `-v` to `printf`, `test` or `[`.
fn names_variable(words: &[String], cur: Option<&str>) -> bool {
    let Some(first) = command_word(words) else {
        return false;
    };
    let name = basename(&words[first]);
    if NAMERS.contains(&name) {
        return !cur.is_some_and(|cur| cur.contains('='));
    }
    matches!(name, "printf" | "test" | "[")
        && cur.is_none()
        && words.last().is_some_and(|w| w == "-v")
}

/// Reserved words that may stand before a command (`if eval ...`, `! sh -c ...`).
const RESERVED_WORDS: [&str; 9] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "{",
];

/// The index of the command word, past reserved words, assignments and wrappers with their
/// options (and the options' arguments: `nice -n 5`, `sudo -u bob`, `timeout 5`).
fn command_word(words: &[String]) -> Option<usize> {
    let mut wrapper: Option<&Wrapper> = None;
    let mut skip_next = false;
    let mut operands = 0;
    for (i, word) in words.iter().enumerate() {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if let Some(w) = wrapper {
            if word.starts_with('-') && word.len() > 1 {
                skip_next = w.takes_argument(word);
                continue;
            }
            if operands > 0 {
                operands -= 1;
                continue;
            }
        }
        if wrapper.is_none() && RESERVED_WORDS.contains(&word.as_str()) {
            continue;
        }
        if is_assignment(word) {
            continue;
        }
        let name = basename(word);
        if let Some(w) = WRAPPERS.iter().find(|w| w.name == name) {
            wrapper = Some(w);
            operands = w.operands;
            continue;
        }
        return Some(i);
    }
    None
}

/// A command that runs the command after it.
struct Wrapper {
    name: &'static str,
    /// Its options that take the next word as their argument.
    options: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`).
    operands: usize,
}

impl Wrapper {
    fn takes_argument(&self, word: &str) -> bool {
        self.options.contains(&word)
    }
}

const fn wrapper(name: &'static str, options: &'static [&'static str], operands: usize) -> Wrapper {
    Wrapper {
        name,
        options,
        operands,
    }
}

/// Commands that run the command after them: `sudo -u bob sh -c ...`.
const WRAPPERS: [Wrapper; 19] = [
    wrapper(
        "sudo",
        &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--host",
            "--other-user",
        ],
        0,
    ),
    wrapper("doas", &["-u", "-C"], 0),
    wrapper("env", &["-u", "-C", "--unset", "--chdir"], 0),
    wrapper("command", &[], 0),
    wrapper("builtin", &[], 0),
    wrapper("exec", &["-a"], 0),
    wrapper("nohup", &[], 0),
    wrapper("time", &["-f", "-o", "--format", "--output"], 0),
    wrapper("nice", &["-n", "--adjustment"], 0),
    wrapper("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    wrapper(
        "xargs",
        &[
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
        ],
        0,
    ),
    wrapper("stdbuf", &["-i", "-o", "-e"], 0),
    wrapper("setsid", &[], 0),
    wrapper("ionice", &["-c", "-n", "-t", "--class", "--classdata"], 0),
    wrapper("chrt", &[], 1),
    wrapper("taskset", &[], 1),
    wrapper("chroot", &["--userspec", "--groups"], 1),
    wrapper("unbuffer", &[], 0),
    wrapper("runuser", &["-u", "-g", "-l"], 0),
];

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
            } else if name.starts_with('$') {
                // A program named by a variable (`$SHELL -c`): a shell, for all the scan knows.
                ("$SHELL -c", false, true)
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

/// Whether the command of `words` reads shell code on its standard input (a shell, `ssh`,
/// `su`, `.`, `source`, a program named by a variable): its label.
fn stdin_script(words: &[String]) -> Option<&'static str> {
    let name = basename(&words[command_word(words)?]);
    if let Some((_, label)) = SHELLS.iter().find(|(s, _)| *s == name) {
        return Some(label);
    }
    match name {
        "ssh" => Some("ssh"),
        "su" | "runuser" => Some("su -c"),
        "." | "source" => Some("eval"),
        _ if name.starts_with('$') => Some("$SHELL -c"),
        _ => None,
    }
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
fn prefix(text: &str, bytes: usize) -> &str {
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
        use Context::{Double, Word};
        assert_eq!(scan("echo $args.x"), Ok(vec![Word]));
        assert_eq!(scan("echo \"a $args.x\" $args.y"), Ok(vec![Double, Word]));
        assert_eq!(
            scan("echo '$args.y'"),
            Err(Problem::Unsafe(Place::SingleQuotes))
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
            scan("cat <<'E'\n$args.x\nE"),
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
        use Context::{Double, Word};
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
        assert_eq!(
            scan("printf %s ${X:-'$args.v'}"),
            Err(Problem::Unsafe(Place::SingleQuotes))
        );
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

    #[test]
    fn arithmetic_everywhere() {
        let arithmetic = Err(Problem::Uncertain(Uncertain::Arithmetic));
        for text in [
            "[[ $args.v -eq 1 ]]",
            "[[ \"$args.v\" -gt 1 && -n x ]] && echo y",
            "[[ x == y || $args.v -le 2 ]]",
            "let x=$args.v",
            "let \"x = $args.v\"",
            "declare -i n=$args.v",
            "local -ai n; n=$args.v",
            "x=$args.v; typeset -i x",
            "x[$args.v]=1",
            "unset \"a[$args.v]\"",
            "read -r 'a'[$args.v] < /dev/null",
            "echo ${a[@]:$args.v}",
        ] {
            assert_eq!(scan(text), arithmetic, "{text}");
        }
        // A value naming a variable: bash evaluates its subscript.
        for text in [
            "declare \"$args.v\"=1",
            "printf -v $args.v x",
            "read -r $args.v",
            "unset $args.v",
            "[[ -v $args.v ]]",
            "test -v $args.v",
        ] {
            assert_eq!(scan(text), arithmetic, "{text}");
        }
        assert_eq!(scan("export A=$args.v"), Ok(vec![Context::Word]));
        assert_eq!(scan("grep -v $args.v f"), Ok(vec![Context::Word]));
        // Not arithmetic: string tests, plain words with brackets closed, `[`.
        assert_eq!(scan("[[ $args.v == x ]]"), Ok(vec![Context::Word]));
        assert_eq!(scan("[ $args.v -eq 1 ]"), Ok(vec![Context::Word]));
        assert_eq!(scan("echo a[1]$args.v"), Ok(vec![Context::Word]));
        // Blanks before a value inside double quotes (the grammar's node takes them).
        assert_eq!(
            scan("printf %s \" ${args.x}ja\""),
            Ok(vec![Context::Double])
        );
        assert_eq!(scan("declare x=$args.v"), Ok(vec![Context::Word]));
    }

    #[test]
    fn here_documents() {
        use Context::{Double, Word};
        let unsafe_here = Err(Problem::Unsafe(Place::HereDocument));
        assert_eq!(
            scan("cat <<E\na $args.x b\nE\necho $args.y"),
            Ok(vec![Double, Word])
        );
        assert_eq!(scan("cat <<E >f\n$args.x\nE\n"), Ok(vec![Double]));
        // `<<-` strips leading tabs: a value placed by the parser is accepted.
        assert_eq!(scan("cat <<-E >f\n\tx $args.x\n\tE\n"), Ok(vec![Double]));
        assert_eq!(scan("cat <<-E\n$args.x\nE"), Ok(vec![Double]));
        // Bodies the shell parser misreads (in a `<<-` body, a value right after a line's
        // leading tabs, which the grammar reads as text; a command after the operator; two
        // here-documents on one line, an ERROR node): refused as not certain, never guessed.
        let unparsed = Err(Problem::Uncertain(Uncertain::Unparsed));
        assert_eq!(scan("cat <<-E >f\n\t$args.x\n\tE\n"), unparsed);
        assert_eq!(scan("cat <<E; echo $args.y\n'$args.x\nE"), unparsed);
        assert_eq!(scan("cat <<A <<'B'\n$args.x\nA\n$args.y\nB"), unparsed);
        assert_eq!(scan("cat <<A <<'B'\n$args.x\nA\nB"), unparsed);
        assert_eq!(scan("cat <<\\E\n$args.x\nE"), unsafe_here);
        assert_eq!(scan("cat <<\"E\"\n$args.x\nE"), unsafe_here);
        assert_eq!(scan("cat <<$args.x\nE"), unsafe_here);
        assert_eq!(scan("cat <<E\n$(echo $args.x)\nE"), unsafe_here);
        assert_eq!(
            scan("cat <<E\n\\$args.x\nE"),
            Err(Problem::Uncertain(Uncertain::AfterBackslash))
        );
        // A line holding the delimiter among other text does not end the body.
        assert_eq!(scan("cat <<E\nE x\n$args.x\nE"), unparsed);
        assert_eq!(scan("cat <<<$args.x"), Ok(vec![Word]));
        // A shell reading the body as its script parses the value.
        assert_eq!(reparsed("sh <<E\necho $args.x\nE"), [Some("sh -c")]);
        assert_eq!(reparsed("ssh h <<E\necho $args.x\nE"), [Some("ssh")]);
    }

    /// Plain text is not parsed: there the parser would have agreed with the scan.
    #[test]
    fn plain_text_reads_as_parsed() {
        for text in [
            "grep -rn $args.p $args.dir | head -n 20",
            "cd $args.repo && git log --oneline -n 5 -- \"$args.path\"",
            "curl -fsS \"https://x.example/items/$args.id\" -H \"Auth: $args.token\"",
            "sh -c 'echo \"$1\" | tr a-z A-Z' sh $args.text",
            "find $args.dir -name '*.rs' -newer \"$args.stamp\" | xargs wc -l",
            "test -f \"$args.p\" && echo \"e: $args.p\" || echo missing # check $args.q",
            "jq -r '.items[] | .name' \"$out.fetch.stdout\" | sort | uniq -c",
            "tar -czf \"b-$args.date.tgz\" -C \"$args.dir\" . 2>/dev/null; echo ok",
            "A=$args.v env | grep A= >>log &\nls \"$HOME\"$args.w'x'#y",
            "echo '$args.v' a#$args.w",
        ] {
            let (template, _) = parse_template(text, &OffsetMap::default());
            assert!(plain::plain(&template.parts), "{text}");
            let words = scan_words(&template.parts);
            parsed::with_contexts(&template.parts, |parsed| {
                assert_eq!(parsed.len(), words.refs.len(), "{text}");
                for (r, &p) in words.refs.iter().zip(parsed) {
                    assert_eq!(agree(r.context, p), r.context, "{text}");
                }
            });
        }
    }

    #[test]
    fn dollar_pairs() {
        // `$$` (the process id) is read as a pair, as the shell reads it: `$$args.v` holds no
        // reference, `$$$args.v` is the id followed by the value.
        assert_eq!(scan("echo $$args.v"), Ok(vec![]));
        assert_eq!(scan("echo \"$$args.v\""), Ok(vec![]));
        assert_eq!(scan("echo $$$args.v"), Ok(vec![Context::Word]));
        assert_eq!(scan("echo \"$$$args.v\""), Ok(vec![Context::Double]));
    }

    #[test]
    fn reserved_prefix() {
        assert_eq!(scan("SEQ_V1=x; echo $args.v"), Err(Problem::Reserved));
        assert_eq!(scan("echo \"$SEQ_V2\""), Err(Problem::Reserved));
        assert!(is_reserved("SEQ_V1") && !is_reserved("SEQ_X"));
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
        assert_eq!(reparsed("alias x=\"ls $args.v\"; x"), [Some("alias")]);
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
        // Wrappers' option arguments and reserved words before the command.
        assert_eq!(reparsed("nice -n 5 eval $args.v"), [Some("eval")]);
        assert_eq!(reparsed("timeout 5 sh -c \"$args.v\""), [Some("sh -c")]);
        assert_eq!(reparsed("timeout -s KILL 5 eval $args.v"), [Some("eval")]);
        assert_eq!(reparsed("nohup ssh h \"ls $args.v\""), [Some("ssh")]);
        assert_eq!(reparsed("sudo -u bob eval $args.v"), [Some("eval")]);
        assert_eq!(reparsed("if eval $args.v; then :; fi"), [Some("eval")]);
        assert_eq!(reparsed("! eval $args.v"), [Some("eval")]);
        assert_eq!(
            reparsed("while true; do eval $args.v; done"),
            [Some("eval")]
        );
        assert_eq!(reparsed("$SHELL -c \"$args.v\""), [Some("$SHELL -c")]);
        assert_eq!(reparsed("env A=1 bash -c \"$args.v\""), [Some("bash -c")]);
        assert_eq!(reparsed("su --command=\"ls $args.v\" bob"), [Some("su -c")]);
        assert_eq!(reparsed("ssh -o ProxyCommand=$args.v h"), [Some("ssh")]);
        assert_eq!(reparsed("ssh $args.host uptime"), [None]);
        assert_eq!(reparsed("nice -n 5 ls $args.v"), [None]);
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
        // The command that parses again decides, before the quotes around the value.
        assert_eq!(scanned.refs[0].expansion(), Err(Problem::Reparsed("sh -c")));
    }

    #[test]
    fn expansions() {
        let mut out = String::new();
        expansion_into(&mut out, &value_variable(0), Context::Word);
        out.push(' ');
        expansion_into(&mut out, &value_variable(1), Context::Double);
        assert_eq!(out, "\"${SEQ_V1}\" ${SEQ_V2}");
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
