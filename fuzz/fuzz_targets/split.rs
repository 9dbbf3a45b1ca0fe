//! The splitter of `tools` strings: never panics, and every input either splits cleanly into
//! objects each followed by `;`, or reports an error (7.1: no item vanishes silently).

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_syntax::split::split_items;

fuzz_target!(|text: &str| {
    let split = split_items(text);
    let mut after = 0;
    for item in &split.items {
        assert!(after <= item.start && item.start < item.end && item.end <= text.len());
        let body = text
            .get(item.clone())
            .expect("items lie on character boundaries");
        assert!(body.starts_with('{') && body.ends_with('}'), "{body:?}");
        after = item.end;
    }
    for error in &split.errors {
        assert!(error.span.start <= error.span.end && error.span.end <= text.len());
        assert!(text.is_char_boundary(error.span.start) && text.is_char_boundary(error.span.end));
    }
    if split.errors.is_empty() {
        // Between the items: whitespace and exactly one `;` after each item, nothing else.
        let mut gaps = Vec::new();
        let mut at = 0;
        for item in &split.items {
            gaps.push(&text[at..item.start]);
            at = item.end;
        }
        gaps.push(&text[at..]);
        let semicolons = |gap: &str| gap.bytes().filter(|&b| b == b';').count();
        let blank = |gap: &str| {
            gap.bytes()
                .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b';'))
        };
        assert!(gaps.iter().all(|g| blank(g)), "{text:?}");
        assert_eq!(semicolons(gaps[0]), 0, "{text:?}");
        assert!(gaps[1..].iter().all(|g| semicolons(g) == 1), "{text:?}");
    }
});
