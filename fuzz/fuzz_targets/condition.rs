//! The condition parser on arbitrary text, alone and as the `when` of a group checked
//! in a whole file: never a panic, every span inside the text it is about.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_check::{Source, check};
use seq_syntax::condition::parse_condition;
use seq_syntax::escape::OffsetMap;
use seqc_fuzz::{assert_spans, catalog, file_with_when};

fuzz_target!(|text: &str| {
    let (condition, diagnostics) = parse_condition(text, &OffsetMap::identity(0));
    assert_spans(text, &diagnostics);
    assert_eq!(
        condition.is_some(),
        diagnostics.is_empty(),
        "{text:?}: {diagnostics:?}"
    );
    let file = file_with_when(text);
    let checked = check(&[Source::new("fuzz.json", file.clone())], catalog());
    if let Some(result) = checked.files.first() {
        assert_spans(&file, &result.diagnostics);
    }
});
