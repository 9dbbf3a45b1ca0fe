//! Group-level rules: unique group names (a call names its target), and the group fields —
//! `retries` only with `retry`, `missing: degrade` with a `fallback` of declared slots and
//! their types, and a `fallback` only where it can apply.

use super::types::{literal, reference_type};
use super::{Cx, fix};
use seq_catalog::type_accepts;
use seq_syntax::ast::{Missing, OnError, Sequence, Type};
use seq_syntax::diagnostic::{Applicability, did_you_mean};
use seq_syntax::{Code, Diagnostic};
use std::collections::HashMap;

pub(crate) fn duplicate_names(sequence: &Sequence, out: &mut Vec<Diagnostic>) {
    let mut first = HashMap::new();
    for group in &sequence.groups {
        let name = group.name.value.as_str();
        if name.is_empty() {
            continue;
        }
        match first.get(name) {
            Some(&span) => out.push(
                Diagnostic::new(
                    Code::DuplicateGroup,
                    group.name.span,
                    format!(
                        "sequence `{}` already has a group named `{name}`",
                        sequence.name.value
                    ),
                )
                .with_label(span, "first defined here")
                .with_help("rename one of them: `seq_call` finds a group by its name"),
            ),
            None => {
                first.insert(name, group.name.span);
            }
        }
    }
}

pub(crate) fn fields(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    let group = cx.group;
    retries_from(cx, out);
    let retries_span = group
        .retries
        .as_ref()
        .map(|r| r.span)
        .or(group.retries_from.as_ref().map(|r| r.span));
    if let Some(retries_span) = retries_span
        && group.on_error() != OnError::Retry
        && !group.hole("on_error")
    {
        let mut d = Diagnostic::new(
            Code::RetriesWithoutRetry,
            retries_span,
            format!(
                "`retries` is set but `on_error` is `{}`, so nothing is retried",
                group.on_error().as_str()
            ),
        )
        .with_help("set `\"on_error\": \"retry\"`, or remove `retries`");
        d = match &group.on_error {
            // The two fields contradict each other: which one the author meant is theirs to say.
            Some(on_error) => d
                .with_label(on_error.span, "not `retry`")
                .with_replacement("set `on_error` to `retry`", on_error.span, "retry")
                .maybe_incorrect(),
            // After the number: `"retries": 2, "on_error": "retry"`.
            None => d.with_fix(fix::fix(
                "add `\"on_error\": \"retry\"`",
                vec![fix::edit(
                    seq_syntax::Span::new(retries_span.end, retries_span.end),
                    ", \"on_error\": \"retry\"",
                )],
            )),
        };
        out.push(d);
    }
    pauses(cx, out);
    match (&group.missing, &group.fallback) {
        (Some(missing), None) if missing.value == Missing::Degrade && !group.hole("fallback") => {
            let mut d = Diagnostic::new(
                Code::DegradeWithoutFallback,
                missing.span,
                "`missing: degrade` needs a `fallback` to write when a tool is missing",
            )
            .with_help(
                "add `\"fallback\": {\"SLOT\": VALUE}` for the `out` slots the group writes",
            );
            // `"fallback"` goes after the `missing` string, whose closing quote is next.
            if let Some(first) = group.outputs.first() {
                let at = missing.span.end + 1;
                d = d
                    .with_fix(fix::fix(
                        format!("add a fallback for `{}`", first.name.value),
                        vec![fix::edit(
                            seq_syntax::Span::new(at, at),
                            format!(
                                ", \"fallback\": {{\"{}\": {}}}",
                                fix::escape(&first.name.value),
                                placeholder(first.ty.value)
                            ),
                        )],
                    ))
                    .graded(Applicability::HasPlaceholders);
            }
            out.push(d);
        }
        (missing, Some(fallback)) => {
            if missing.as_ref().is_none_or(|m| m.value != Missing::Degrade)
                && !group.hole("missing")
            {
                let mut d = Diagnostic::new(
                    Code::FallbackWithoutDegrade,
                    fallback.span,
                    "`fallback` is used only with `missing: degrade`, which this group does not set",
                )
                .with_help("set `\"missing\": \"degrade\"`, or remove `fallback`");
                d = match missing {
                    // The two fields contradict each other.
                    Some(missing) => d
                        .with_label(missing.span, "not `degrade`")
                        .with_replacement("set `missing` to `degrade`", missing.span, "degrade")
                        .maybe_incorrect(),
                    // After the object: `"fallback": {...}, "missing": "degrade"`.
                    None => d.with_fix(fix::fix(
                        "add `\"missing\": \"degrade\"`",
                        vec![fix::edit(
                            seq_syntax::Span::new(fallback.span.end, fallback.span.end),
                            ", \"missing\": \"degrade\"",
                        )],
                    )),
                };
                out.push(d);
            }
            fallback_values(cx, out);
        }
        (Some(_) | None, None) => {}
    }
}

/// A value of type `ty` to start a fallback with.
fn placeholder(ty: Type) -> &'static str {
    match ty {
        Type::String => "\"\"",
        Type::Number | Type::Integer => "0",
        Type::Bool => "false",
        Type::Array => "[]",
        Type::Object => "{}",
        Type::Any => "null",
    }
}

fn fallback_values(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    let Some(fallback) = &cx.group.fallback else {
        return;
    };
    for member in &fallback.value {
        let name = member.key.value.as_str();
        let Some(decl) = cx.group.slot(name) else {
            if cx.group.hole("out") || cx.group.hole("local") {
                continue;
            }
            let d = Diagnostic::new(
                Code::FallbackUndeclared,
                member.key.span,
                format!("`fallback` names `{name}`, which is not declared in `out`"),
            );
            let declared = cx.group.slots().map(|s| s.name.value.as_str());
            out.push(match did_you_mean(name, declared) {
                Some(best) => d
                    .with_help(format!("did you mean `{best}`?"))
                    .with_replacement(format!("rename to `{best}`"), member.key.span, fix::escape(best))
                    .maybe_incorrect(),
                None => d.with_help("a fallback gives values to the group's `out` slots; declare the slot or remove the entry"),
            });
            continue;
        };
        let ty = decl.ty.value;
        let interpolated = member
            .value
            .kind
            .as_string()
            .is_some_and(|template| template.as_literal().is_none());
        let found = if let Some(reference) = member.value.kind.as_reference() {
            match reference_type(cx, reference) {
                Some((found, _))
                    if found != ty && !(found == Type::Integer && ty == Type::Number) =>
                {
                    Some(format!(
                        "`{}`, declared `{}`",
                        fix::reference_text(reference),
                        found.as_str()
                    ))
                }
                Some(_) | None => None,
            }
        } else if interpolated {
            (!matches!(ty, Type::String | Type::Any)).then(|| "a string".to_owned())
        } else {
            literal(&member.value)
                .filter(|json| !type_accepts(ty, json))
                .map(|_| super::types::describe(&member.value))
        };
        if let Some(found) = found {
            out.push(
                Diagnostic::new(
                    Code::FallbackType,
                    member.value.span,
                    format!(
                        "the fallback for `{name}` must be {}, found {found}",
                        ty.as_str()
                    ),
                )
                .with_label(decl.ty.span, "declared here")
                .with_help(format!(
                    "give `{name}` a fallback of type `{}`",
                    ty.as_str()
                )),
            );
        }
    }
}

/// E0561: `"retries": "$args.NAME"` reads a declared `integer` input (its value is held to
/// the bound when the run or call starts).
fn retries_from(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    let group = cx.group;
    let Some(from) = &group.retries_from else {
        return;
    };
    let name = from.value.as_str();
    let d = match group.input(name) {
        Some(decl) if decl.ty.value == Type::Integer => return,
        Some(decl) => Diagnostic::new(
            Code::RetriesInputType,
            from.span,
            format!(
                "`retries` reads `$args.{name}`, which is declared `{}`, not `integer`",
                decl.ty.value.as_str()
            ),
        )
        .with_label(decl.ty.span, "declared here")
        .with_help(format!(
            "declare `{name}` as `integer`: its value, 0 to {}, is how many more attempts a failed item gets",
            seq_syntax::limits::MAX_RETRIES
        )),
        None if group.hole("in") => return,
        None => Diagnostic::new(
            Code::RetriesInputType,
            from.span,
            format!(
                "`retries` reads `$args.{name}`, which group `{}` does not declare in `in`",
                group.name.value
            ),
        )
        .with_help(format!(
            "declare it in `in` as `\"{name}\": \"integer\"`, or write the count as a number"
        )),
    };
    out.push(d);
}

/// `retry_delay` and `retry_backoff`: only with `on_error: retry` (as `retries`), and a warning
/// when the pauses alone take the group's whole `timeout`.
fn pauses(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    let group = cx.group;
    let fields = [
        (
            seq_syntax::fields::key::RETRY_DELAY,
            group.retry_delay.as_ref().map(|d| d.span),
        ),
        (
            seq_syntax::fields::key::RETRY_BACKOFF,
            group.retry_backoff.as_ref().map(|b| b.span),
        ),
    ];
    if group.on_error() != OnError::Retry {
        if group.hole("on_error") {
            return;
        }
        for (name, span) in fields {
            let Some(span) = span else { continue };
            let mut d = Diagnostic::new(
                Code::PauseWithoutRetry,
                span,
                format!(
                    "`{name}` is set but `on_error` is `{}`, so nothing is retried",
                    group.on_error().as_str()
                ),
            )
            .with_help(format!(
                "set `\"on_error\": \"retry\"` and `retries`, or remove `{name}`"
            ));
            if let Some(on_error) = &group.on_error {
                // Which of the two the author meant is theirs to say.
                d = d
                    .with_label(on_error.span, "not `retry`")
                    .with_replacement("set `on_error` to `retry`", on_error.span, "retry")
                    .maybe_incorrect();
            }
            out.push(d);
        }
        return;
    }
    let pauses = group.retry_pauses();
    if pauses.is_zero() || pauses < group.timeout() || group.hole("timeout") {
        return;
    }
    let Some(delay) = &group.retry_delay else {
        return;
    };
    let timeout = seq_syntax::duration::format(group.timeout());
    let mut d = Diagnostic::new(
        Code::PausesReachTimeout,
        delay.span,
        format!(
            "the pauses before the {} retries add up to {}, which reaches the group's timeout of \
             {timeout}: the last retries never run",
            group.retries(),
            seq_syntax::duration::format(pauses)
        ),
    )
    .with_help("raise the group's `timeout`, or shorten `retry_delay` or `retry_backoff`");
    if let Some(timeout) = &group.timeout {
        d = d.with_label(timeout.span, "the group's timeout");
    }
    out.push(d);
}
