//! `cmd_run`'s shell text (docs/reference.md, "Shell text"): exactly one of `command` and `argv`,
//! and every value interpolated into `command` in a place whose quoting the scan can follow.

use super::Cx;
use seq_syntax::ast::{Item, Member, ValueKind};
use seq_syntax::diagnostic::did_you_mean;
use seq_syntax::shell::{self, Problem};
use seq_syntax::{Code, Diagnostic};

/// The tool whose `command` is shell text.
pub(crate) use crate::catalog::CMD_RUN;

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
    let Some(command) = given("command") else {
        return;
    };
    let ValueKind::String(template) = &command.value.kind else {
        return;
    };
    let problem = match shell::contexts(&template.parts) {
        Ok(_) => return,
        Err(problem) => problem,
    };
    let d = match problem {
        Problem::Unclosed(opener) => Diagnostic::new(
            Code::ShellUnclosed,
            command.value.span,
            format!(
                "the shell text opens `{}` and never closes it",
                opener.spelling()
            ),
        )
        .with_help(format!(
            "close the `{}`; values are escaped for the quoting they land in",
            opener.spelling()
        )),
        Problem::Unsafe(place) => Diagnostic::new(
            Code::ShellUnsafePlace,
            command.value.span,
            format!(
                "a value stands {}, where no escaping keeps it literal text",
                place.describe()
            ),
        )
        .with_help("move the reference, write `$(...)` for backquotes, or use `argv` to run without a shell"),
    };
    out.push(d);
}
