//! `cmd_run`'s shell text (docs/reference.md, "Shell text"): exactly one of `command` and `argv`,
//! and every value interpolated into `command` in a place whose quoting the scan can follow.

use super::Cx;
use seq_syntax::ast::{Item, Member, Template, TemplatePart, ValueKind};
use seq_syntax::diagnostic::{Applicability, did_you_mean};
use seq_syntax::shell::{self, Context, Problem, Scanned, Via, WordEnd};
use seq_syntax::{Code, Diagnostic, Span};

/// The tool whose `command` is shell text.
pub(crate) use seq_catalog::CMD_RUN;

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    for item in cx.items.iter().map(|i| i.item) {
        if item.tool.value == CMD_RUN {
            check_item(item, out);
        }
    }
}

/// The two ways to give `cmd_run` its program.
const PROGRAM: [&str; 2] = ["command", "argv"];

/// A `cmd_run` item given neither `command` nor `argv` but a key that is a likely typo of one
/// (`comand`): the member, renamed by one error here rather than reported twice.
pub(crate) fn misspelt_program(item: &Item) -> Option<&Member> {
    if item.tool.value != CMD_RUN {
        return None;
    }
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    if members
        .iter()
        .any(|m| PROGRAM.contains(&m.key.value.as_str()))
    {
        return None;
    }
    members
        .iter()
        .find(|m| m.key.value != "timeout" && did_you_mean(&m.key.value, PROGRAM).is_some())
}

fn check_item(item: &Item, out: &mut Vec<Diagnostic>) {
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    let given = |key: &str| {
        members
            .iter()
            .find(|m| m.key.value == key && !matches!(m.value.kind, ValueKind::Null))
    };
    if let (Some(_), Some(argv)) = (given("command"), given("argv")) {
        out.push(
            Diagnostic::new(
                Code::CommandAndArgv,
                argv.key.span,
                "`cmd_run` is given both `command` and `argv`",
            )
            .with_help("keep `command` for shell text, or `argv` to run a program without a shell"),
        );
    }
    if let Some(typo) = misspelt_program(item) {
        let key = &typo.key.value;
        let meant = did_you_mean(key, PROGRAM).unwrap_or("command");
        out.push(
            Diagnostic::new(
                Code::MissingParameter,
                typo.key.span,
                format!("`{key}` is not a parameter of `cmd_run`; did you mean `{meant}`?"),
            )
            .with_help(format!(
                "rename it to `{meant}`; `cmd_run` needs `command` or `argv`"
            ))
            .with_replacement(
                format!("rename to `{meant}`"),
                typo.key.span,
                super::fix::in_item_string(meant),
            ),
        );
    } else if given("command").is_none() && given("argv").is_none() && !item.hole("args") {
        // Broken or misspelt `args` may have held them: reported where it broke.
        let at = item.args.as_ref().map_or(item.tool.span, |a| a.span);
        out.push(
            Diagnostic::new(
                Code::MissingParameter,
                at,
                "`cmd_run` needs the parameter `command` (string) or `argv` (array), neither is given",
            )
            .with_help("add `\"command\": …` for shell text, or `\"argv\": […]` to run without a shell"),
        );
    }
    if let Some(env) = given("env")
        && let ValueKind::Object(members) = &env.value.kind
    {
        for member in members.iter().filter(|m| shell::is_reserved(&m.key.value)) {
            out.push(
                Diagnostic::new(
                    Code::ShellReservedName,
                    member.key.span,
                    format!(
                        "`env` sets `{}`: names starting with `{}` carry the values of `command`",
                        member.key.value,
                        shell::VALUE_PREFIX
                    ),
                )
                .with_help("rename the variable"),
            );
        }
    }
    let Some(command) = given("command") else {
        return;
    };
    let ValueKind::String(template) = &command.value.kind else {
        return;
    };
    let scanned = shell::scan(&template.parts);
    let refs: Vec<Span> = template
        .parts
        .iter()
        .filter_map(|part| match part {
            TemplatePart::Ref(reference) => Some(reference.span),
            TemplatePart::Text(_) => None,
        })
        .collect();
    if shell::reserved(&template.parts) {
        out.push(problem_diagnostic(
            Problem::Reserved,
            command.value.span,
            command.value.span,
        ));
    }
    // One error per command (besides the commands that parse values again, each reported):
    // the first the engine would refuse it for, text left open first.
    let problem = match scanned.unclosed {
        Some(opener) => Some((Problem::Unclosed(opener), command.value.span)),
        None => scanned
            .refs
            .iter()
            .zip(&refs)
            .find_map(|(r, span)| match r.expansion() {
                Ok(_) | Err(Problem::Reparsed(..)) => None,
                Err(problem) => Some((problem, *span)),
            }),
    };
    if let Some((problem, at)) = problem {
        let mut d = problem_diagnostic(problem, command.value.span, at);
        if problem == Problem::Unsafe(shell::Place::SingleQuotes)
            && let Some(reference) = reference_at(template, at)
        {
            // `'a $args.v b'` becomes `'a '"$args.v"' b'`: the same text around a quoted value.
            d = d
                .with_replacement(
                    "close the single quotes around the value",
                    at,
                    super::fix::in_item_string(&format!("'\"{}\"'", braced(reference))),
                )
                .graded(Applicability::MaybeIncorrect);
        }
        out.push(d);
    }
    reparsed(template, &scanned, &refs, command.value.span, out);
}

/// The reference of `template` at `span`.
fn reference_at(template: &Template, span: Span) -> Option<&seq_syntax::ast::Reference> {
    template.parts.iter().find_map(|part| match part {
        TemplatePart::Ref(reference) if reference.span == span => Some(&**reference),
        TemplatePart::Ref(_) | TemplatePart::Text(_) => None,
    })
}

fn problem_diagnostic(problem: Problem, command: Span, at: Span) -> Diagnostic {
    match problem {
        Problem::Unclosed(opener) => Diagnostic::new(
            Code::ShellUnclosed,
            command,
            format!(
                "the shell text opens `{}` and never closes it",
                opener.spelling()
            ),
        )
        .with_help(format!(
            "close the `{}`; the place of each value in the text is read from the quoting around it",
            opener.spelling()
        )),
        Problem::Unsafe(place @ shell::Place::SingleQuotes) => Diagnostic::new(
            Code::ShellUnsafePlace,
            at,
            format!(
                "a value stands {}, where the shell expands nothing",
                place.describe()
            ),
        )
        .with_help("close the single quotes around the value: `'a '\"$args.v\"' b'`"),
        Problem::Unsafe(place) => Diagnostic::new(
            Code::ShellUnsafePlace,
            command,
            format!(
                "a value stands {}, where the shell would not give it as it is",
                place.describe()
            ),
        )
        .with_help("move the reference out of it (a here-document's text can come on standard input instead: `printf '%s\\n' $args.v | cmd`), write `$(...)` for backquotes, or use `argv` to run without a shell"),
        Problem::Reparsed(command_name, via) => Diagnostic::new(
            Code::ShellReparsedError,
            at,
            reparse_message(command_name, via),
        )
        .with_help(reparse_help(command_name, via)),
        Problem::Reserved => Diagnostic::new(
            Code::ShellReservedName,
            command,
            format!(
                "the shell text names `{}`: variables starting with it carry the values of `command`",
                shell::VALUE_PREFIX
            ),
        )
        .with_help("rename the variable; the engine sets `SEQ_V1`, `SEQ_V2`, ... for the values"),
        Problem::Uncertain(uncertain) => Diagnostic::new(
            Code::ShellUncertainPlace,
            at,
            match uncertain {
                shell::Uncertain::Arithmetic => format!(
                    "a value stands {}, where the shell evaluates its text as code",
                    uncertain.describe()
                ),
                shell::Uncertain::AfterBackslash
                | shell::Uncertain::BareInQuotedBrace
                | shell::Uncertain::QuoteInQuotedBrace
                | shell::Uncertain::AssignedUnquoted => format!(
                    "a value stands {}, where the shell's reading of it is not certain",
                    uncertain.describe()
                ),
                shell::Uncertain::Unparsed | shell::Uncertain::ExpansionReparsed => {
                    format!("a value stands {}", uncertain.describe())
                }
            },
        )
        .with_help(format!(
            "{}; or use `argv` to run without a shell",
            uncertain.hint()
        )),
    }
}

/// E0705: values that reach `eval`, `sh -c`, `ssh`, `su -c`, `flock -c`, `script -c`, `trap` or
/// `watch`, one warning per command word.
/// The fix, for a `-c` script in single quotes, reads each value as a positional parameter
/// (`sh -c 'echo "$1"' _ $args.v`): the value is then data to the inner shell too.
fn reparsed(
    template: &Template,
    scanned: &Scanned,
    refs: &[Span],
    command: Span,
    out: &mut Vec<Diagnostic>,
) {
    let mut done: Vec<usize> = Vec::new();
    for (i, (r, span)) in scanned.refs.iter().zip(refs).enumerate() {
        let Some(reparse) = &r.reparse else {
            continue;
        };
        if done.contains(&i) {
            continue;
        }
        let script = reparse.script.as_ref();
        // Every value in the same script word is fixed together.
        let group: Vec<usize> = match script {
            Some(word) => scanned
                .refs
                .iter()
                .enumerate()
                .filter(|(_, o)| {
                    o.reparse
                        .as_ref()
                        .and_then(|p| p.script.as_ref())
                        .is_some_and(|s| s.word == word.word)
                })
                .map(|(j, _)| j)
                .collect(),
            None => vec![i],
        };
        done.extend(&group);
        let mut d = Diagnostic::new(
            Code::ShellReparsedError,
            *span,
            reparse_message(reparse.command, reparse.via),
        );
        let positional = script.and_then(|word| {
            let start = scanned.word_starts.get(word.word).copied()?;
            let end = scanned.word_ends.get(word.word).copied()?;
            positional_fix(template, scanned, &group, start, end)
        });
        match positional {
            Some(text) => {
                d = d
                    .with_help("pass the value as a positional argument after the script, and read it there as `\"$1\"`")
                    .with_replacement(
                        "pass the value as a positional argument",
                        command,
                        format!("\\\"{}\\\"", super::fix::in_item_string(&text)),
                    )
                    .graded(Applicability::MaybeIncorrect);
            }
            None => d = d.with_help(reparse_help(reparse.command, reparse.via)),
        }
        out.push(d);
    }
}

/// What a value reaching `command` (a [`seq_syntax::shell::Reparse`] label) `via` a way in
/// becomes.
fn reparse_message(command: &str, via: Via) -> String {
    let code = if shell::is_shell(command) {
        "shell code"
    } else {
        "code"
    };
    match via {
        Via::Argument if shell::is_shell(command) => {
            format!("this value reaches `{command}`, which parses it as shell code again")
        }
        Via::Argument => format!("this value reaches `{command}`, which runs it as code"),
        Via::StandardInput => format!(
            "this value may reach the standard input of `{command}`, which reads it as {code}"
        ),
        Via::ScriptFile => {
            format!("this value may be written to the file that `{command}` runs as {code}")
        }
    }
}

/// How to pass a value as data to `command` when no fix can be written: each way keeps the value
/// out of what is parsed again.
fn reparse_help(command: &str, via: Via) -> &'static str {
    match via {
        Via::Argument => {}
        Via::StandardInput => {
            return "give the program fixed text (a here-document with a quoted delimiter) and the value as an argument: `sh -s -- $args.v <<'EOF'` reads it as `\"$1\"`; to run a value as code on purpose, say so with `argv`: `[\"sh\", \"-c\", $args.script]`";
        }
        Via::ScriptFile => {
            return "write the script in an earlier step, as fixed text (`files_write`), and run it here with the value as its argument: `sh script.sh $args.v`, read there as `\"$1\"`";
        }
    }
    match command {
        "eval" => {
            "run the command `eval` would build directly, with the value as one quoted word, or use `argv`"
        }
        // The remote shell parses the joined words: a positional argument would be parsed too.
        "ssh" => {
            "send the value on standard input, where the remote shell reads it as data: `printf '%s\\n' $args.v | ssh HOST 'IFS= read -r v; cmd \"$v\"'`"
        }
        "trap" => {
            "give the trap a fixed action that reads the value from a variable: `V=$args.v; trap 'cmd \"$V\"' EXIT`"
        }
        "flock -c" => {
            "run the command as words after the lock file, without `-c`: `flock FILE cmd $args.v`"
        }
        "script -c" => {
            "pass the value in the environment and read it there: `V=$args.v script -c 'cmd \"$V\"'`"
        }
        "watch" => "run the command without a shell: `watch -x cmd $args.v`",
        "sed" => {
            "a sed script is code to sed (GNU sed's `e` runs commands): replace in a `jq` step (`sub`, `gsub`), or read the value from the environment in awk: `V=$args.v awk '{gsub(/x/, ENVIRON[\"V\"])} 1'`"
        }
        "awk" => {
            "give awk a fixed program that reads the value as data: `awk -v v=$args.v 'BEGIN { print v }'`, or `ENVIRON[\"V\"]` with `V=$args.v awk ...`"
        }
        "python -c" | "perl -e" | "ruby -e" | "node -e" | "php -r" | "lua -e" | "Rscript -e"
        | "osascript -e" => {
            "pass the value as an argument after a fixed program and read it there: `python3 -c 'import sys; print(sys.argv[1])' $args.v` (`$ARGV[0]` in perl and ruby, `process.argv[1]` in node)"
        }
        "alias" => {
            "define no alias in a command that takes values (any command word may stand for one): use a function that takes the value as an argument, `f() { cmd \"$1\"; }; f $args.v`"
        }
        _ => {
            "pass the value as data instead: `sh -c '... \"$1\" ...' sh $args.v` reads it as a positional argument, or use `argv`"
        }
    }
}

/// The command text with the values of `group` (all in one quoted `-c` script from `start` to
/// `end`) read as `$1`, `$2`, ... and passed after the script. A script in double quotes is
/// put in single quotes, only where its text holds no `$`, backquote, backslash or quote: then
/// both quotes give the inner shell the same script.
fn positional_fix(
    template: &Template,
    scanned: &Scanned,
    group: &[usize],
    start: WordEnd,
    end: WordEnd,
) -> Option<String> {
    let double = char_at(template, start) == Some('"');
    let mut text = String::new();
    let mut passed = String::new();
    // The literal text of a double-quoted script after its opening quote.
    let mut script = String::new();
    let mut reading = false;
    let mut index = 0;
    for (p, part) in template.parts.iter().enumerate() {
        match part {
            TemplatePart::Text(t) => {
                for (offset, c) in t.char_indices() {
                    let at = WordEnd::At { part: p, offset };
                    if at == end {
                        close_script(&mut text, &passed, double)?;
                        reading = false;
                    }
                    if double && at == start {
                        text.push('\'');
                        reading = true;
                        continue;
                    }
                    if reading {
                        script.push(c);
                    }
                    text.push(c);
                }
            }
            TemplatePart::Ref(reference) => {
                if let Some(n) = group.iter().position(|g| *g == index) {
                    let inner = scanned
                        .refs
                        .get(index)?
                        .reparse
                        .as_ref()?
                        .script
                        .as_ref()?
                        .inner?;
                    match inner {
                        Context::Word => text.push_str(&format!("\"${}\"", n + 1)),
                        Context::Double => text.push_str(&format!("${{{}}}", n + 1)),
                        Context::Single => return None,
                    }
                    passed.push(' ');
                    passed.push_str(&braced(reference));
                } else if reading {
                    // A value outside the quotes but in the script word: still parsed.
                    return None;
                } else {
                    text.push_str(&braced(reference));
                }
                index += 1;
            }
        }
    }
    if end == WordEnd::End {
        close_script(&mut text, &passed, double)?;
    }
    if double
        && script
            .strip_suffix('"')?
            .contains(['"', '$', '`', '\\', '\''])
    {
        return None;
    }
    Some(text)
}

/// Ends the script word in `text`: its closing double quote made single, then the values.
fn close_script(text: &mut String, passed: &str, double: bool) -> Option<()> {
    if double {
        if text.pop()? != '"' {
            return None;
        }
        text.push('\'');
    }
    text.push_str(" _");
    text.push_str(passed);
    Some(())
}

/// The literal character of `template` at `at`.
fn char_at(template: &Template, at: WordEnd) -> Option<char> {
    let WordEnd::At { part, offset } = at else {
        return None;
    };
    match template.parts.get(part)? {
        TemplatePart::Text(t) => t.get(offset..)?.chars().next(),
        TemplatePart::Ref(_) => None,
    }
}

/// `${args.x}`: the reference in braces, so no text after it runs into its name.
fn braced(reference: &seq_syntax::ast::Reference) -> String {
    let text = reference.to_string();
    format!("${{{}}}", text.strip_prefix('$').unwrap_or(&text))
}
