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
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanExporter,
};
use seq_exec::engine::{FinishedRun, RunRecorder};

/// How many spans wait for export at most, unless `OTEL_BSP_MAX_QUEUE_SIZE` says otherwise: a
/// run's spans are queued at once when it ends, so the SDK's default (2,048) would drop those of
/// a run of a few thousand items.
const QUEUE: usize = 1 << 16;

/// The exporter of runs' traces, installed from the environment.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: opentelemetry_sdk::trace::SdkTracer,
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
        Traces { provider, tracer }
    }

    /// Exports what is still queued and stops the exporter: before the process exits.
    pub fn shutdown(&self) -> Result<(), String> {
        self.provider
            .shutdown()
            .map_err(|error| format!("cannot export traces: {error}"))
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
