//! The whole check of a file (front end, rules, call graph, dataflow): never a panic, every
//! span inside the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_check::{Source, check};
use seqc_fuzz::{assert_spans, catalog};

fuzz_target!(|bytes: &[u8]| {
    let parsed = seq_syntax::parse_bytes(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else {
        assert!(parsed.has_errors());
        return;
    };
    let checked = check(&[Source::new("fuzz.json", text)], catalog());
    if let Some(result) = checked.files.first() {
        assert_spans(text, &result.diagnostics);
    }
});
