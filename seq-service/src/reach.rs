//! What a sequence can reach, held against its creator's policy: `seq_create` stores only
//! sequences whose creator could run every tool in them.
//!
//! A sequence reaches the tools of its own items (the groups its `seq_call` and `seq_when_call`
//! items call are its own groups, so their items are among them) and, through `#name` calls,
//! every tool of the stored sequences it calls, transitively. Each offending item of the new
//! sequence gets one diagnostic: on its tool name when it uses a refused tool itself, on the
//! item when a `#name` call reaches some. The engine asks its authorizer again at every dispatch;
//! this check keeps a caller from storing what others would then run.

use seq_catalog::calls::sequence_calls;
use seq_exec::Authorizer;
use seq_exec::host::Caller;
use seq_syntax::ast::Sequence;
use seq_syntax::{Code, Diagnostic};
use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};

/// The diagnostics of the items of `sequence` that reach a tool `authorizer` refuses to
/// `caller`.
/// `stored` are the sequences `#name` calls resolve to (a stored one of the new sequence's name
/// is the one being replaced, and is passed over).
pub fn unauthorized<S: Borrow<Sequence>>(
    sequence: &Sequence,
    stored: &[S],
    authorizer: &Authorizer,
    caller: &Caller,
) -> Vec<Diagnostic> {
    let mut by_name: HashMap<&str, &Sequence> = stored
        .iter()
        .map(Borrow::borrow)
        .map(|s: &Sequence| (s.name.value.as_str(), s))
        .collect();
    by_name.insert(sequence.name.value.as_str(), sequence);
    let refused = |tool: &str| !authorizer.allows(caller, tool);
    let mut found = Vec::new();
    for group in &sequence.groups {
        for item in &group.items {
            let tool = item.tool.value.as_str();
            if refused(tool) {
                found.push(
                    Diagnostic::new(
                        Code::UnauthorizedTool,
                        item.tool.span,
                        format!("caller `{}` may not use `{tool}`", caller.id),
                    )
                    .with_help(help(authorizer, &[tool])),
                );
            }
        }
        for (item, target) in sequence_calls(group) {
            let tools = refused_below(target, &by_name, &refused);
            if tools.is_empty() {
                continue;
            }
            let names: Vec<&str> = tools.iter().map(String::as_str).collect();
            found.push(
                Diagnostic::new(
                    Code::UnauthorizedTool,
                    item.span,
                    format!(
                        "`#{target}` reaches {}, which caller `{}` may not use",
                        quoted(&names),
                        caller.id
                    ),
                )
                .with_help(help(authorizer, &names)),
            );
        }
    }
    found
}

/// The refused tools that a run of the stored sequence `start` reaches, sorted.
fn refused_below(
    start: &str,
    by_name: &HashMap<&str, &Sequence>,
    refused: &dyn Fn(&str) -> bool,
) -> BTreeSet<String> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut pending = vec![start];
    let mut tools = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name) {
            continue;
        }
        // A sequence not in the store reaches nothing yet (W0501); when it is created, its own
        // creator's policy is checked.
        let Some(sequence) = by_name.get(name) else {
            continue;
        };
        for group in &sequence.groups {
            for item in &group.items {
                if refused(&item.tool.value) {
                    tools.insert(item.tool.value.to_string());
                }
            }
            pending.extend(sequence_calls(group).map(|(_, target)| target));
        }
    }
    tools
}

fn quoted(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// How to get past the refusal: turn an off tool on, or ask for access.
fn help(authorizer: &Authorizer, tools: &[&str]) -> String {
    authorizer
        .turn_on_hint(tools)
        .unwrap_or_else(|| "remove the item, or ask for access to the tool".to_owned())
}
