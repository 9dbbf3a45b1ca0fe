//! Check, then run what the checker accepts on a host whose only tool is a pure `echo`, on a
//! paused clock (timeouts end at once): the run ends, without a panic, with a consistent report.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_check::{Source, check};
use seq_exec::engine::RunRequest;
use seq_exec::{Caller, Engine, Limits};
use seqc_fuzz::{EchoHost, OneSequence, assert_report, catalog};
use serde_json::Map;
use std::sync::Arc;
use std::time::Duration;

fuzz_target!(|text: &str| {
    let checked = check(&[Source::new("fuzz.json", text)], catalog());
    let Some(file) = checked.files.into_iter().next() else {
        return;
    };
    if file.diagnostics.iter().any(|d| d.is_error()) {
        return;
    }
    let Some(sequence) = file.sequence else {
        return;
    };
    let sequence = Arc::new(sequence);
    let engine = Engine::new(
        Arc::new(EchoHost::new()),
        Arc::new(OneSequence(Arc::clone(&sequence))),
    )
    .with_limits(Limits {
        tool_timeout: Duration::from_secs(1),
        ..Limits::default()
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    let report = runtime.block_on(engine.run(&sequence, Map::new(), RunRequest::new(&Caller::new("fuzz"))));
    assert_report(&sequence, &report);
});
