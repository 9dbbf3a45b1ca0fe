//! Traces of seqc's runs over OTLP/HTTP (protobuf), when the standard OpenTelemetry environment
//! names an exporter endpoint.
//!
//! The spans are built from a run's report once the run ends ([`RunRecorder`]): every group,
//! item, attempt, `each` element and called group carries `started_ms` and `duration_ms` on the
//! run's one time axis, so the tree needs nothing from the engine while it runs. With no
//! endpoint configured, [`Traces::from_env`] installs nothing and no run records anything.
//!
//! - [`tree`]: a report as spans (names, parents, times, attributes).
//! - [`mod@env`]: what the environment asks for.

pub mod env;
pub mod tree;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::SpanData;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanExporter,
};
use seq_exec::engine::{FinishedRun, RunRecorder};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How many spans wait for export at most, unless `OTEL_BSP_MAX_QUEUE_SIZE` says otherwise: a
/// run's spans are queued at once when it ends, so the SDK's default (2,048) would drop those of
/// a run of a few thousand items.
const QUEUE: usize = 1 << 16;

/// How long the last export may take before the process exits: a collector that does not
/// answer must not hold the exit.
const FLUSH: Duration = Duration::from_secs(2);

/// The exporter of runs' traces, installed from the environment.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: opentelemetry_sdk::trace::SdkTracer,
    lost: Arc<Lost>,
}

/// What the exporter could not deliver: the SDK drops a failed batch without a word, so the
/// exporter counts it here, for one warning at the end.
#[derive(Debug, Default)]
struct Lost {
    spans: AtomicUsize,
    first: Mutex<Option<String>>,
}

/// An exporter that notes what it failed to export in [`Lost`].
#[derive(Debug)]
struct Noting<E> {
    inner: E,
    lost: Arc<Lost>,
}

impl<E: SpanExporter> SpanExporter for Noting<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        if let Err(error) = &result {
            self.lost.spans.fetch_add(spans, Ordering::Relaxed);
            let mut first = self
                .lost
                .first
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            first.get_or_insert_with(|| error.to_string());
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl Traces {
    /// The exporter the environment configures (`OTEL_EXPORTER_OTLP_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), or `None` when it configures none. Call it outside
    /// an async runtime: the HTTP client is a blocking one, on the batch processor's thread.
    pub fn from_env() -> Result<Option<Traces>, String> {
        if !env::configured(|name| std::env::var(name).ok()) {
            return Ok(None);
        }
        // The endpoint, headers, timeout and compression come from the OTEL_* variables.
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .build()
            .map_err(|error| format!("cannot export traces: {error}"))?;
        Ok(Some(Traces::with_exporter(exporter)))
    }

    /// Traces exported by `exporter`, batched on a thread of their own, with the resource
    /// the environment describes.
    pub fn with_exporter(exporter: impl SpanExporter + 'static) -> Traces {
        let lost = Arc::new(Lost::default());
        let exporter = Noting {
            inner: exporter,
            lost: Arc::clone(&lost),
        };
        let mut batch = BatchConfigBuilder::default();
        if std::env::var_os("OTEL_BSP_MAX_QUEUE_SIZE").is_none() {
            batch = batch.with_max_queue_size(QUEUE);
        }
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch.build())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource())
            .build();
        let tracer = provider.tracer("seqc");
        Traces {
            provider,
            tracer,
            lost,
        }
    }

    /// Exports what is still queued, within 2 s, and stops the exporter: before the
    /// process exits. One message says what could not be exported, however many batches.
    pub fn shutdown(&self) -> Result<(), String> {
        let shut = self.provider.shutdown_with_timeout(FLUSH);
        let spans = self.lost.spans.load(Ordering::Relaxed);
        let first = self
            .lost
            .first
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match (first, shut) {
            (Some(error), _) => Err(format!(
                "{spans} spans were not exported: {error} (is the OTLP collector reachable?)"
            )),
            (None, Err(error)) => Err(format!("cannot export traces: {error}")),
            (None, Ok(())) => Ok(()),
        }
    }
}

impl RunRecorder for Traces {
    fn finished(&self, run: &FinishedRun<'_>) {
        tree::record(&self.tracer, run);
    }
}

/// The resource from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, its service `seqc`
/// when they name none.
fn resource() -> Resource {
    let resource = Resource::builder().build();
    let named = resource
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        resource
    } else {
        Resource::builder().with_service_name("seqc").build()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use opentelemetry_sdk::error::OTelSdkError;
    use seq_exec::engine::RunReport;
    use std::time::SystemTime;

    /// A collector that cannot be reached.
    #[derive(Debug)]
    struct Unreachable;

    impl SpanExporter for Unreachable {
        async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
            Err(OTelSdkError::InternalFailure(
                "connection refused".to_owned(),
            ))
        }
    }

    #[test]
    fn spans_a_collector_never_got_are_one_warning_at_the_end() {
        let traces = Traces::with_exporter(Unreachable);
        let report: RunReport = serde_json::from_value(serde_json::json!({
            "ok": true, "out": {},
            "groups": [{"name": "g", "status": "ran", "parallel": false, "started_ms": 0,
                "duration_ms": 2, "out": {},
                "items": [{"tool": "echo", "status": "ok", "started_ms": 0, "duration_ms": 1}]}]
        }))
        .unwrap();
        traces.finished(&FinishedRun {
            sequence: "s",
            caller: &seq_exec::Caller::new("me"),
            started: SystemTime::now(),
            report: &report,
            traceparent: None,
        });
        let said = traces.shutdown().unwrap_err();
        assert!(said.starts_with("3 spans were not exported: "), "{said}");
        assert!(said.contains("connection refused"), "{said}");
    }
}
