//! Every explanation of a checker code (`seqc explain CODE`) shows an example that raises exactly
//! that code, checked alone with the built-in catalog, and a fix that checks without errors.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_check::{Catalog, Source, check};
use seq_syntax::Code;

/// The ```json block under `## {heading}`.
fn block<'a>(explanation: &'a str, heading: &str) -> &'a str {
    let section = explanation
        .split(&format!("## {heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no `## {heading}` section"));
    let start = section.find("```json\n").expect("a ```json block") + "```json\n".len();
    let end = section[start..].find("```").expect("a closed block") + start;
    &section[start..end]
}

#[test]
fn examples_raise_their_code_and_fixes_check_clean() {
    let catalog = Catalog::builtin();
    let codes = Code::ALL
        .iter()
        .copied()
        .filter(|c| c.as_str().starts_with("E05") || c.as_str().starts_with("W05"));
    for code in codes {
        let explanation = code.explanation();
        assert!(
            explanation.starts_with(&format!("# {code}: ")),
            "{code}: the explanation starts with its title"
        );
        let example = check(
            &[Source::new("example.json", block(explanation, "Example"))],
            &catalog,
        );
        let found: Vec<Code> = example.files[0]
            .diagnostics
            .iter()
            .map(|d| d.code)
            .collect();
        assert!(
            !found.is_empty() && found.iter().all(|&c| c == code),
            "{code}: the example raises {found:?}\n{:#?}",
            example.files[0].diagnostics
        );
        let fixed = check(
            &[Source::new("fix.json", block(explanation, "Fix"))],
            &catalog,
        );
        assert!(
            !fixed.has_errors(),
            "{code}: the fix still has errors: {:#?}",
            fixed.files[0].diagnostics
        );
    }
}
