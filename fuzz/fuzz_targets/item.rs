//! The item parser on arbitrary text (JSON in item mode), then the same text lowered as the
//! `tools` string of a whole file: never a panic, every span (of the
//! diagnostics and of the tree) inside the text it is about.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_syntax::json::{Mode, parse};
use seqc_fuzz::{assert_spans, assert_tree, file_with_tools};

fuzz_target!(|text: &str| {
    let (node, diagnostics) = parse(text, Mode::Item);
    assert_spans(text, &diagnostics);
    assert_tree(text, node.as_ref());
    let file = file_with_tools(text);
    let parsed = seq_syntax::parse(&file);
    assert_spans(&file, &parsed.diagnostics);
});
