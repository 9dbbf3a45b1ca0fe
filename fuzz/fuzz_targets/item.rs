//! The item parser on arbitrary text (JSON in item mode), then the same text lowered as the
//! `tools` string of a whole file: never a panic, every span inside the text it is about.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_syntax::json::{Mode, parse};
use seqc_fuzz::{assert_spans, file_with_tools};

fuzz_target!(|text: &str| {
    let (_, diagnostics) = parse(text, Mode::Item);
    assert_spans(text, &diagnostics);
    let file = file_with_tools(text);
    let parsed = seq_syntax::parse(&file);
    assert_spans(&file, &parsed.diagnostics);
});
