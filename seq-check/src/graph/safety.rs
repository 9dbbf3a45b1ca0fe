//! Parallel safety through calls: a call item is parallel-safe only if everything it can
//! reach is. A call in a parallel group, or in a fan-out (an `each` item with `max_parallel`),
//! that reaches a tool that is not parallel-safe is an error (E0604); in a serial group the call
//! must say `"unsafe_serial": true` (E0605).
//!
//! For each component of the graph, sinks first, the first unsafe tool it reaches is found once
//! (its own items first, in file order, then its calls in file order): linear. Tools that no
//! catalog knows do not make a call unsafe: existence is a run-time property, and
//! the unknown tool is already a warning where it is used.

use super::model::{CallGraph, Node};
use super::scc::Components;
use petgraph::graph::{EdgeIndex, NodeIndex};
use seq_catalog::{Catalog, is_parallel_safe_tool};
use seq_syntax::ast::{Group, Item};
use seq_syntax::diagnostic::{Applicability, Edit, Fix};
use seq_syntax::{Code, Diagnostic, Span};

#[derive(Clone, Copy, Debug)]
enum Step {
    /// The unsafe item, in a group of the component.
    Tool { node: NodeIndex, item: usize },
    /// A call out of the component that reaches one.
    Via(EdgeIndex),
}

#[derive(Clone, Copy, Debug)]
struct Witness {
    step: Step,
    /// Where the path ends, so that a long path can be cut without walking it.
    tool: (NodeIndex, usize),
    /// How many groups the path shows from here on at most, the last one included (inside a
    /// cycle, the group where the path leaves it may be shown too).
    left: usize,
}

/// How many groups a path shows before it is cut.
const SHOWN: usize = 6;

pub(super) fn parallel_safety(
    graph: &CallGraph<'_>,
    components: &Components,
    catalog: &Catalog,
    out: &mut [Vec<Diagnostic>],
) {
    let witnesses = witnesses(graph, components, catalog);
    for edge in graph.graph.edge_indices() {
        let Some((_, to, e)) = graph.edge(edge) else {
            continue;
        };
        let Some(site) = e.site else { continue };
        let Some(&Some(witness)) = witnesses.get(components.of(to)) else {
            continue;
        };
        let Some(group) = graph
            .sequences
            .get(site.seq)
            .and_then(|s| s.groups.get(site.group))
        else {
            continue;
        };
        let Some(item) = group.items.get(site.item) else {
            continue;
        };
        // Which diagnostic applies depends on what was left out.
        if group.hole("parallel") || item.hole("unsafe_serial") || item.hole("max_parallel") {
            continue;
        }
        let tool = tool_name(graph, witness.tool);
        let path = render_path(
            graph,
            components,
            &witnesses,
            &item.tool.value,
            to,
            site.seq,
        );
        let acknowledged = item.unsafe_serial.as_ref().is_some_and(|flag| flag.value);
        let diagnostic = if group.is_parallel() {
            in_parallel_group(group, item, site.span, &tool, &path)
        } else if item.fan_out().is_some() {
            in_fan_out(item, site.span, &tool, &path)
        } else if acknowledged {
            continue;
        } else {
            Diagnostic::new(
                Code::UnsafeCallNotAcknowledged,
                site.span,
                format!(
                    "this call reaches `{tool}`, which is not parallel-safe, without \
                     `\"unsafe_serial\": true`: {path}"
                ),
            )
            .with_help(
                "add `\"unsafe_serial\": true` to this item to acknowledge that it runs a tool that \
                 is not parallel-safe",
            )
            // The acknowledgement is the author's to give.
            .with_fix(
                Fix::new("mark the call `unsafe_serial`", vec![mark_unsafe_serial(item)])
                    .with_applicability(Applicability::MaybeIncorrect),
            )
        };
        let diagnostic = match tool_span(graph, witness.tool, site.seq) {
            Some(span) => diagnostic.with_label(span, format!("`{tool}` is not parallel-safe")),
            None => diagnostic,
        };
        if let Some(list) = out.get_mut(site.seq) {
            list.push(diagnostic);
        }
    }
}

/// E0604, with a fix that makes the group serial and marks the call, as for a direct tool.
fn in_parallel_group(group: &Group, item: &Item, span: Span, tool: &str, path: &str) -> Diagnostic {
    let diagnostic = Diagnostic::new(
        Code::UnsafeCallInParallelGroup,
        span,
        format!(
            "this call reaches `{tool}`, which is not parallel-safe, from the parallel group \
             `{}`: {path}",
            group.name.value
        ),
    )
    .with_help(
        "run the call in a group with `\"parallel\": false` and mark it `\"unsafe_serial\": true`, \
         or call something that uses only parallel-safe tools",
    );
    let diagnostic = match &group.parallel {
        Some(parallel) => {
            diagnostic.with_label(parallel.span, "the group runs its items in parallel")
        }
        None => diagnostic.with_label(
            group.name.span,
            "this group runs its items in parallel (the default)",
        ),
    };
    let Some(serial) = make_serial(group) else {
        return diagnostic;
    };
    let mut edits = vec![serial];
    if item.unsafe_serial.as_ref().is_none_or(|flag| !flag.value) {
        edits.push(mark_unsafe_serial(item));
    }
    // Running the group serially changes what it does.
    diagnostic.with_fix(
        Fix::new(
            "run the group serially and mark the call `unsafe_serial`",
            edits,
        )
        .with_applicability(Applicability::MaybeIncorrect),
    )
}

/// E0604 for a call whose elements run side by side (`max_parallel` on its `each`) in a serial
/// group: `unsafe_serial` cannot acknowledge what runs beside itself.
fn in_fan_out(item: &Item, span: Span, tool: &str, path: &str) -> Diagnostic {
    let diagnostic = Diagnostic::new(
        Code::UnsafeCallInParallelGroup,
        span,
        format!(
            "this call reaches `{tool}`, which is not parallel-safe, and its elements run side \
             by side: {path}"
        ),
    )
    .with_help(
        "remove `max_parallel` so that the elements run one after another, and mark the call \
         `\"unsafe_serial\": true`, or call something that uses only parallel-safe tools",
    );
    match &item.max_parallel {
        Some(bound) => {
            diagnostic.with_label(bound.span, "`max_parallel` runs the elements side by side")
        }
        None => diagnostic,
    }
}

/// Makes `group` serial: rewrites an explicit `parallel`, or adds `"parallel": false` after the
/// group's name (file-level JSON: the name's closing quote is the byte after its span).
fn make_serial(group: &Group) -> Option<Edit> {
    match &group.parallel {
        Some(parallel) => Some(Edit {
            span: parallel.span,
            text: "false".to_owned(),
        }),
        None if group.name.value.is_empty() => None,
        None => {
            let at = group.name.span.end + 1;
            Some(Edit {
                span: Span::new(at, at),
                text: ", \"parallel\": false".to_owned(),
            })
        }
    }
}

/// Sets `unsafe_serial: true` on `item`, inside the `tools` string (so its quotes are escaped),
/// before the item's closing brace.
fn mark_unsafe_serial(item: &Item) -> Edit {
    match &item.unsafe_serial {
        Some(flag) => Edit {
            span: flag.span,
            text: "true".to_owned(),
        },
        None => {
            let at = item.span.end.saturating_sub(1);
            Edit {
                span: Span::new(at, at),
                text: ",\\\"unsafe_serial\\\":true".to_owned(),
            }
        }
    }
}

/// The first unsafe tool each component reaches, by component.
fn witnesses(
    graph: &CallGraph<'_>,
    components: &Components,
    catalog: &Catalog,
) -> Vec<Option<Witness>> {
    let mut witnesses: Vec<Option<Witness>> = vec![None; components.members.len()];
    for (component, members) in components.members.iter().enumerate() {
        let tangled = members.len() > 1;
        let own = members.iter().find_map(|&node| {
            let Some(Node::Group { seq, group }) = graph.node(node) else {
                return None;
            };
            let items = &graph.sequences.get(seq)?.groups.get(group)?.items;
            let item = items.iter().position(|item| {
                !Catalog::is_call(&item.tool.value)
                    && is_parallel_safe_tool(catalog, &item.tool.value) == Some(false)
            })?;
            Some(Witness {
                step: Step::Tool { node, item },
                tool: (node, item),
                left: usize::from(tangled),
            })
        });
        let found = own.or_else(|| {
            members
                .iter()
                .flat_map(|&node| graph.out(node))
                .find_map(|&edge| {
                    let (_, to, _) = graph.edge(edge)?;
                    let target = components.of(to);
                    if target == component {
                        return None;
                    }
                    let reached = (*witnesses.get(target)?)?;
                    let group = matches!(graph.node(to), Some(Node::Group { .. }));
                    Some(Witness {
                        step: Step::Via(edge),
                        tool: reached.tool,
                        left: reached.left + usize::from(group) + usize::from(tangled),
                    })
                })
        });
        if let Some(slot) = witnesses.get_mut(component) {
            *slot = found;
        }
    }
    witnesses
}

fn tool_name(graph: &CallGraph<'_>, (node, item): (NodeIndex, usize)) -> String {
    let Some(Node::Group { seq, group }) = graph.node(node) else {
        return String::new();
    };
    graph
        .sequences
        .get(seq)
        .and_then(|s| s.groups.get(group))
        .and_then(|g| g.items.get(item))
        .map_or_else(String::new, |i| i.tool.value.to_string())
}

/// The span of the unsafe tool's name, when it is in the file of the call.
fn tool_span(graph: &CallGraph<'_>, (node, item): (NodeIndex, usize), file: usize) -> Option<Span> {
    let Some(Node::Group { seq, group }) = graph.node(node) else {
        return None;
    };
    if seq != file {
        return None;
    }
    Some(
        graph
            .sequences
            .get(seq)?
            .groups
            .get(group)?
            .items
            .get(item)?
            .tool
            .span,
    )
}

/// `seq_call → #B/g2 → files_write`, seen from sequence `from`; long paths are cut in the middle.
fn render_path(
    graph: &CallGraph<'_>,
    components: &Components,
    witnesses: &[Option<Witness>],
    caller_tool: &str,
    start: NodeIndex,
    from: usize,
) -> String {
    let label = |node: NodeIndex| match graph.node(node) {
        Some(Node::Group { .. }) => Some(graph.label(node, from)),
        Some(Node::Sequence(_)) | None => None,
    };
    let mut steps = vec![caller_tool.to_owned()];
    let mut at = start;
    steps.extend(label(at));
    while let Some(&Some(witness)) = witnesses.get(components.of(at)) {
        match witness.step {
            Step::Tool { node, item } => {
                if node != at {
                    steps.extend(label(node));
                }
                steps.push(tool_name(graph, (node, item)));
                break;
            }
            // Cut only when the cut hides at least one group.
            Step::Via(_) if steps.len() > SHOWN && witness.left > 2 => {
                steps.push("…".to_owned());
                steps.extend(label(witness.tool.0));
                steps.push(tool_name(graph, witness.tool));
                break;
            }
            Step::Via(edge) => {
                let Some((via, to, _)) = graph.edge(edge) else {
                    break;
                };
                if via != at {
                    steps.extend(label(via));
                }
                at = to;
                steps.extend(label(at));
            }
        }
    }
    steps.join(" → ")
}
