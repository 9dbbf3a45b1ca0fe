//! A run's report as a tree of spans: the run, its groups, their items, a retried item's
//! attempts, an `each` item's elements, and the groups a call item ran (under its last attempt),
//! with their items in turn. Times are the report's offsets from the run's start on the wall
//! clock; a `traceparent` the run came with is the run span's parent.

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use seq_exec::ToolError;
use seq_exec::engine::{
    Descend, ElementAt, FinishedRun, GroupAt, GroupOf, GroupStatus, ItemAt, ItemReport, ItemStatus,
    ReportVisitor,
};
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

/// Attribute keys, one place for the docs' table and the code.
pub mod key {
    pub const SEQUENCE: &str = "seq.sequence";
    pub const CALLER: &str = "seq.caller";
    pub const OK: &str = "seq.ok";
    pub const GROUP: &str = "seq.group";
    pub const STATUS: &str = "seq.status";
    pub const PARALLEL: &str = "seq.parallel";
    pub const TOOL: &str = "seq.tool";
    pub const INDEX: &str = "seq.index";
    pub const RETRIES: &str = "seq.retries";
    pub const ATTEMPT: &str = "seq.attempt";
    pub const REASON: &str = "seq.reason";
}

/// Records `run`'s spans on `tracer`.
pub fn record<T>(tracer: &T, run: &FinishedRun<'_>)
where
    T: Tracer,
    T::Span: Send + Sync + 'static,
{
    let spans = Spans {
        tracer,
        origin: run.started,
    };
    let parent = run.traceparent.map_or_else(Context::new, remote_parent);
    let report = run.report;
    let end_ms = report
        .groups
        .iter()
        .map(|group| group.started_ms.saturating_add(group.duration_ms))
        .max()
        .unwrap_or(0);
    let mut attributes = vec![
        KeyValue::new(key::SEQUENCE, run.sequence.to_owned()),
        KeyValue::new(key::CALLER, run.caller.id.clone()),
        KeyValue::new(key::OK, report.ok),
    ];
    // A run that started fails by its first failed group: its reason is the run's.
    let first_failure = report.error.as_ref().or_else(|| {
        report.groups.iter().find_map(|group| {
            group
                .error
                .as_ref()
                .or_else(|| first_item_error(&group.items))
        })
    });
    attributes.extend(reason(first_failure));
    let status = if report.ok {
        Status::Unset
    } else {
        error_status(report.error.as_ref(), "the run failed")
    };
    let cx = spans.start(
        &parent,
        format!("run {}", run.sequence),
        0,
        attributes,
        status,
    );
    let mut recorder = Recorder {
        spans: &spans,
        run: cx,
        run_end: end_ms,
        open: Vec::new(),
    };
    report.walk(&mut recorder);
    spans.end(&recorder.run, end_ms);
}

/// The error of the first item that failed, if any.
fn first_item_error(items: &[ItemReport]) -> Option<&ToolError> {
    items
        .iter()
        .find(|item| item.status == ItemStatus::Failed)
        .and_then(|item| item.error.as_ref())
}

/// Where a span of the report ends: its own end, within its parent's. The report's times are
/// whole milliseconds, each rounded on its own, so a child may seem to end a millisecond after
/// its parent; a trace backend draws that as a child outliving its parent.
fn end_within(started_ms: u64, duration_ms: u64, within: u64) -> u64 {
    started_ms.saturating_add(duration_ms).min(within)
}

/// The context of a W3C `traceparent`, empty when it does not parse (a run with no parent).
fn remote_parent(traceparent: &str) -> Context {
    let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    TraceContextPropagator::new().extract(&carrier)
}

struct Spans<'a, T> {
    tracer: &'a T,
    origin: SystemTime,
}

impl<T> Spans<'_, T>
where
    T: Tracer,
    T::Span: Send + Sync + 'static,
{
    fn at(&self, offset_ms: u64) -> SystemTime {
        self.origin + Duration::from_millis(offset_ms)
    }

    fn start(
        &self,
        parent: &Context,
        name: String,
        started_ms: u64,
        attributes: Vec<KeyValue>,
        status: Status,
    ) -> Context {
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_start_time(self.at(started_ms))
            .with_attributes(attributes)
            .start_with_context(self.tracer, parent);
        span.set_status(status);
        parent.with_span(span)
    }

    fn end(&self, cx: &Context, end_ms: u64) {
        cx.span().end_with_timestamp(self.at(end_ms));
    }

    /// Attempt `number` (from 0; its attribute counts from 1), ended by the caller.
    fn attempt(
        &self,
        parent: &Context,
        number: usize,
        started_ms: u64,
        status: ItemStatus,
        error: Option<&ToolError>,
    ) -> Context {
        let ordinal = number.saturating_add(1);
        let mut attributes = vec![
            KeyValue::new(key::ATTEMPT, count(ordinal)),
            KeyValue::new(key::STATUS, status.as_str()),
        ];
        attributes.extend(reason(error));
        let span_status = if status == ItemStatus::Failed {
            error_status(error, "the attempt failed")
        } else {
            Status::Unset
        };
        self.start(
            parent,
            format!("attempt {ordinal}"),
            started_ms,
            attributes,
            span_status,
        )
    }
}

/// The spans open on the way down the walk, innermost last.
enum Open {
    Group {
        cx: Context,
        end: u64,
    },
    Item {
        cx: Context,
        end: u64,
        /// The last attempt's span of a retried item, with its end: the groups its call ran
        /// go under it.
        last_attempt: Option<(Context, u64)>,
    },
}

/// Records the report's spans as the walk meets them, under the run's span.
struct Recorder<'a, 's, T> {
    spans: &'s Spans<'a, T>,
    run: Context,
    run_end: u64,
    open: Vec<Open>,
}

impl<'r, T> ReportVisitor<'r> for Recorder<'_, '_, T>
where
    T: Tracer,
    T::Span: Send + Sync + 'static,
{
    fn enter_group(&mut self, at: &GroupAt<'r>) -> Descend {
        let group = at.group;
        // A run's group is under the run; a called one under its call item's last attempt.
        let (parent, within) = match self.open.last() {
            Some(Open::Item {
                last_attempt: Some((cx, end)),
                ..
            })
            | Some(Open::Item { cx, end, .. })
            | Some(Open::Group { cx, end }) => (cx, *end),
            None => (&self.run, self.run_end),
        };
        let end = end_within(group.started_ms(), group.duration_ms(), within);
        let mut attributes = vec![
            KeyValue::new(key::GROUP, group.name().to_owned()),
            KeyValue::new(key::STATUS, group.status().as_str()),
            KeyValue::new(key::PARALLEL, group.parallel()),
        ];
        if let Some(sequence) = group.sequence() {
            attributes.push(KeyValue::new(key::SEQUENCE, sequence.to_owned()));
        }
        attributes.extend(reason(group.error()));
        let name = match group {
            GroupOf::Run(_) => format!("group {}", group.name()),
            GroupOf::Called(_) => match group.sequence() {
                Some(sequence) => format!("call #{sequence} {}", group.name()),
                None => format!("call {}", group.name()),
            },
        };
        let cx = self.spans.start(
            parent,
            name,
            group.started_ms().min(end),
            attributes,
            group_span_status(group.status(), group.error()),
        );
        self.open.push(Open::Group { cx, end });
        Descend::Into
    }

    fn enter_item(&mut self, at: &ItemAt<'r>) -> Descend {
        let item = at.item;
        let (parent, within) = match self.open.last() {
            Some(Open::Group { cx, end } | Open::Item { cx, end, .. }) => (cx, *end),
            None => (&self.run, self.run_end),
        };
        let end = end_within(item.started_ms, item.duration_ms, within);
        let mut attributes = vec![
            KeyValue::new(key::TOOL, item.tool.clone()),
            KeyValue::new(key::INDEX, count(at.index)),
            KeyValue::new(key::STATUS, item.status.as_str()),
        ];
        if item.retries > 0 {
            attributes.push(KeyValue::new(key::RETRIES, i64::from(item.retries)));
        }
        attributes.extend(reason(item.error.as_ref()));
        let cx = self.spans.start(
            parent,
            format!("item {}", item.tool),
            item.started_ms.min(end),
            attributes,
            item_span_status(item.status, item.error.as_ref()),
        );
        // The groups a call ran are those of its last attempt.
        let last_attempt = item.attempts.split_last().map(|(last, failed)| {
            for (number, (attempt, error)) in failed.iter().zip(&item.failed_attempts).enumerate() {
                let attempt_cx = self.spans.attempt(
                    &cx,
                    number,
                    attempt.started_ms.min(end),
                    ItemStatus::Failed,
                    Some(error),
                );
                self.spans.end(
                    &attempt_cx,
                    end_within(attempt.started_ms, attempt.duration_ms, end),
                );
            }
            let last_cx = self.spans.attempt(
                &cx,
                failed.len(),
                last.started_ms.min(end),
                item.status,
                item.error.as_ref(),
            );
            (last_cx, end_within(last.started_ms, last.duration_ms, end))
        });
        self.open.push(Open::Item {
            cx,
            end,
            last_attempt,
        });
        Descend::Into
    }

    fn element(&mut self, at: &ElementAt<'r>) {
        let Some(Open::Item { cx, end, .. }) = self.open.last() else {
            return;
        };
        let element = at.element;
        let mut attributes = vec![
            KeyValue::new(key::INDEX, count(at.index)),
            KeyValue::new(key::STATUS, element.status.as_str()),
        ];
        if element.retries > 0 {
            attributes.push(KeyValue::new(key::RETRIES, i64::from(element.retries)));
        }
        attributes.extend(reason(element.error.as_ref()));
        let element_cx = self.spans.start(
            cx,
            format!("element {}", at.index),
            element.started_ms.min(*end),
            attributes,
            item_span_status(element.status, element.error.as_ref()),
        );
        self.spans.end(
            &element_cx,
            end_within(element.started_ms, element.duration_ms, *end),
        );
    }

    fn leave_item(&mut self, _at: &ItemAt<'r>) {
        if let Some(Open::Item {
            cx,
            end,
            last_attempt,
        }) = self.open.pop()
        {
            if let Some((last_cx, last_end)) = last_attempt {
                self.spans.end(&last_cx, last_end);
            }
            self.spans.end(&cx, end);
        }
    }

    fn leave_group(&mut self, _at: &GroupAt<'r>) {
        if let Some(Open::Group { cx, end }) = self.open.pop() {
            self.spans.end(&cx, end);
        }
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn reason(error: Option<&ToolError>) -> Option<KeyValue> {
    error.map(|error| KeyValue::new(key::REASON, error.reason.as_str()))
}

fn error_status(error: Option<&ToolError>, otherwise: &'static str) -> Status {
    match error {
        Some(error) => Status::error(error.to_string()),
        None => Status::error(otherwise),
    }
}

fn group_span_status(status: GroupStatus, error: Option<&ToolError>) -> Status {
    match status {
        GroupStatus::Failed | GroupStatus::Cancelled => error_status(error, "the group failed"),
        GroupStatus::Ran | GroupStatus::Skipped | GroupStatus::Partial => Status::Unset,
    }
}

fn item_span_status(status: ItemStatus, error: Option<&ToolError>) -> Status {
    match status {
        ItemStatus::Failed | ItemStatus::Cancelled => error_status(error, "the item failed"),
        ItemStatus::Ok | ItemStatus::Caught | ItemStatus::Skipped | ItemStatus::Degraded => {
            Status::Unset
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
    use seq_exec::engine::RunReport;
    use std::sync::{Arc, Mutex};

    /// Keeps what it is given.
    #[derive(Clone, Debug, Default)]
    struct Kept(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Kept {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0.lock().unwrap().extend(batch);
            Ok(())
        }
    }

    fn report() -> RunReport {
        serde_json::from_value(serde_json::json!({
            "ok": false, "out": {},
            "groups": [{"name": "g", "status": "failed", "parallel": false,
                "started_ms": 5, "duration_ms": 20, "out": {},
                "error": {"reason": "timeout", "detail": "the group ran out of time"},
                "items": [{"tool": "sleep", "status": "cancelled",
                    "started_ms": 6, "duration_ms": 20}]}]
        }))
        .unwrap()
    }

    /// The spans of `report` recorded under `traceparent`, in the order they ended.
    fn recorded(traceparent: Option<&str>) -> Vec<SpanData> {
        let kept = Kept::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(kept.clone())
            .build();
        let report = report();
        record(
            &provider.tracer("test"),
            &FinishedRun {
                sequence: "s",
                caller: &seq_exec::Caller::new("me"),
                started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
                report: &report,
                traceparent,
            },
        );
        kept.0.lock().unwrap().clone()
    }

    #[test]
    fn spans_take_the_reports_times_and_statuses() {
        let spans = recorded(None);
        let names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
        assert_eq!(names, ["item sleep", "group g", "run s"]);
        let at =
            |ms| SystemTime::UNIX_EPOCH + Duration::from_secs(1_000) + Duration::from_millis(ms);
        let [item, group, run] = &spans[..] else {
            panic!("{spans:?}")
        };
        assert_eq!((group.start_time, group.end_time), (at(5), at(25)));
        // The item's own end (26 ms, each time rounded on its own) is within its group's.
        assert_eq!((item.start_time, item.end_time), (at(6), at(25)));
        assert_eq!((run.start_time, run.end_time), (at(0), at(25)));
        // The run failed by its group: the run says why too.
        assert!(
            run.attributes
                .contains(&KeyValue::new(key::REASON, "timeout"))
        );
        assert_eq!(item.parent_span_id, group.span_context.span_id());
        assert_eq!(group.parent_span_id, run.span_context.span_id());
        assert_eq!(
            group.status,
            Status::error("timeout: the group ran out of time")
        );
        assert_eq!(item.status, Status::error("the item failed"));
        assert!(
            group
                .attributes
                .contains(&KeyValue::new(key::REASON, "timeout"))
        );
    }

    #[test]
    fn a_traceparent_is_the_runs_parent_and_a_malformed_one_is_ignored() {
        let spans = recorded(Some(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ));
        let run = spans.last().unwrap();
        assert_eq!(
            run.span_context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(run.parent_span_id.to_string(), "00f067aa0ba902b7");
        assert!(run.parent_span_is_remote);

        let spans = recorded(Some("00-not-a-trace"));
        let run = spans.last().unwrap();
        assert_eq!(run.parent_span_id, opentelemetry::trace::SpanId::INVALID);
        assert!(run.span_context.is_valid());
    }
}
