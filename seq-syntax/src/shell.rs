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

mod brace;
mod commands;
mod display;
mod fed;
mod heredoc;
mod parsed;
mod plain;
mod scan;
#[cfg(test)]
mod tests;

pub use display::{SHOWN_MAX, escape, escape_into, shown};
use scan::{Frame, Scan};

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
    /// `sh -c`, `ssh`): the label of [`Reparse::command`], and how the value reaches it.
    Reparsed(&'static str, Via),
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
    /// Anywhere in a text that hands an expansion (`"$1"`, `$x`, `$(...)`) to a command that
    /// parses it again (`eval`, `sh -c`, ...): the value may flow there through a variable, a
    /// function's argument or a file (`f() { eval "$1"; }; f V`, `x=V; eval "$x"`).
    ExpansionReparsed,
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
            Uncertain::ExpansionReparsed => {
                "in a text that hands an expansion (`\"$1\"`, `$x`, `$(...)`) to a command that parses it again (`eval`, `sh -c`, ...), which the value may reach through a variable or a function's argument"
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
            Uncertain::ExpansionReparsed => {
                "give the command that parses again only literal text, or pass the value to a script as data: `sh -c '... \"$1\" ...' sh $args.v`"
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
    /// `script -c`, `trap`, `watch`; for [`Via::StandardInput`] and [`Via::ScriptFile`], the
    /// program's name (`sh`, `python3`, `.`).
    pub command: &'static str,
    /// The script word the value stands in, for a shell's or `su`'s `-c`: every value in it can
    /// be passed as a positional argument instead.
    pub script: Option<ScriptWord>,
    /// How the value may reach the command.
    pub via: Via,
}

/// How a value reaches a command that reads it as code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    /// As one of its arguments (`eval V`, `sh -c V`).
    Argument,
    /// On its standard input, which the text feeds (`printf %s V | sh`, `sh <<< V`, a
    /// here-document's body): the value may be anywhere in the text.
    StandardInput,
    /// In a file the text writes and then runs as a program (`echo V > s.sh; sh s.sh`).
    ScriptFile,
}

impl Reparse {
    /// A value that reaches `command` as one of its arguments.
    fn argument(command: &'static str) -> Reparse {
        Reparse {
            command,
            script: None,
            via: Via::Argument,
        }
    }

    /// Whether a shell parses the value (else another language's interpreter runs it).
    pub fn is_shell(&self) -> bool {
        is_shell(self.command)
    }
}

/// Whether `command` (a [`Reparse`] label) is a shell's (else another language's interpreter).
pub fn is_shell(command: &str) -> bool {
    let mut others = commands::INTERPRETERS
        .iter()
        .flat_map(|(name, _, label)| [*name, *label])
        .chain(
            commands::PROGRAM_OPERAND
                .iter()
                .flat_map(|(name, label)| [*name, *label]),
        );
    !others.any(|label| label == command)
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
            return Err(Problem::Reparsed(reparse.command, reparse.via));
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
    scan_reading(parts, plain::plain)
}

/// Whether `parts` is plain text, which [`scan()`] places without the shell parser. Public for
/// the tests and the fuzz target that check plain text reads as parsed.
#[doc(hidden)]
pub fn is_plain(parts: &[TemplatePart]) -> bool {
    plain::plain(parts)
}

/// [`scan()`] with the shell parser asked even for plain text: what [`scan()`] must equal where
/// [`is_plain`] holds. For the tests and the fuzz target.
#[doc(hidden)]
pub fn scan_parsed(parts: &[TemplatePart]) -> Scanned {
    scan_reading(parts, |_| false)
}

/// [`scan()`], the parser skipped where `plain` holds.
fn scan_reading(parts: &[TemplatePart], plain: fn(&[TemplatePart]) -> bool) -> Scanned {
    let mut scanned = scan_words(parts);
    // Where the scan refuses every reference, the parser could only agree.
    if scanned.refs.iter().any(|r| r.context.is_ok()) && !plain(parts) {
        parsed::with_contexts(parts, |parsed| {
            for (r, &parsed) in scanned.refs.iter_mut().zip(parsed) {
                r.context = agree(r.context, parsed);
            }
        });
    }
    scanned
}

/// The scan of the words alone, without the parser's reading: what [`scan()`] adds the parser
/// to. Public for the benchmark that weighs the parser against it; use [`scan()`].
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
                        via: Via::StandardInput,
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
    scan.read_command();
    if let Some((start, true)) = scan.dbracket {
        scan.arithmetic.push((start, scan.refs_seen));
    }
    // A program reading its code on a standard input the text feeds, or from a file the text
    // writes: any value of the text may flow there (through a variable, a pipe, a file).
    let code_reader = scan.code_reader();
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
        if scan.expansion_reparsed && r.context.is_ok() && r.reparse.is_none() {
            r.context = Err(Problem::Uncertain(Uncertain::ExpansionReparsed));
        }
        // Where an alias is defined, no command word can be trusted to be what it reads: the
        // value may reach an alias for `eval` or `sh -c` (before the definition too, in a loop).
        if scan.aliased && r.reparse.is_none() {
            r.reparse = Some(Reparse::argument("alias"));
        }
        if let Some((command, via)) = code_reader
            && r.reparse.is_none()
        {
            r.reparse = Some(Reparse {
                command,
                script: None,
                via,
            });
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
