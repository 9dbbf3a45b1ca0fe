//! Every code's explanation (`seqc explain CODE`) carries an example that triggers the code and a
//! fix that clears it; both are run here, so the documentation cannot drift from the front end.
//!
//! For now the examples go through `seq_syntax::parse`, so only the front end's codes (below
//! E0500) are held to this; when `seqc check` moves to `seq_check::check`, this test does too and
//! covers every code.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use seq_syntax::{Code, Diagnostic};

/// The body of the first ```json block inside the `## HEADING` section of `markdown`.
fn json_block(markdown: &str, heading: &str) -> Option<String> {
    let mut in_section = false;
    let mut body: Option<Vec<&str>> = None;
    for line in markdown.lines() {
        match &mut body {
            Some(lines) if line.trim_end() == "```" => return Some(lines.join("\n") + "\n"),
            Some(lines) => lines.push(line),
            None => {
                if let Some(title) = line.strip_prefix("## ") {
                    in_section = title.trim() == heading;
                } else if in_section && line.trim_end() == "```json" {
                    body = Some(Vec::new());
                }
            }
        }
    }
    None
}

fn exemption(markdown: &str) -> Option<&str> {
    let start = markdown.find("<!-- no-example:")? + "<!-- no-example:".len();
    let end = markdown[start..].find("-->")? + start;
    Some(markdown[start..end].trim())
}

/// Codes that `seq_syntax::parse` reports; the checker's start at E0500 / W0500.
fn front_end_owns(code: Code) -> bool {
    code.as_str()
        .get(1..)
        .and_then(|digits| digits.parse::<u32>().ok())
        .is_some_and(|number| number < 500)
}

fn describe(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| format!("{} {:?}: {}", d.code, d.span, d.message))
        .collect()
}

#[test]
fn every_explanation_has_a_working_example_and_fix() {
    let mut problems = Vec::new();
    let mut exempt = Vec::new();
    for code in Code::ALL.iter().copied().filter(|&c| front_end_owns(c)) {
        let markdown = code.explanation();
        if let Some(reason) = exemption(markdown) {
            assert!(!reason.is_empty(), "{code}: an exemption needs a reason");
            exempt.push(code);
            continue;
        }
        match json_block(markdown, "Example") {
            None => problems.push(format!("{code}: no ```json block under `## Example`")),
            Some(example) => {
                let parse = seq_syntax::parse(&example);
                if !parse.diagnostics.iter().any(|d| d.code == code) {
                    problems.push(format!(
                        "{code}: the example does not report {code}; it reports {:?}",
                        describe(&parse.diagnostics)
                    ));
                }
            }
        }
        match json_block(markdown, "Fix") {
            None => problems.push(format!("{code}: no ```json block under `## Fix`")),
            Some(fix) => {
                let parse = seq_syntax::parse(&fix);
                if parse.has_errors() {
                    problems.push(format!(
                        "{code}: the fix still has errors: {:?}",
                        describe(&parse.diagnostics)
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Only a code that no text can show (bytes that are not UTF-8) is exempt.
    assert_eq!(exempt, [Code::NotUtf8], "unexpected exemptions");
}

#[test]
fn json_blocks_are_found_only_in_their_section() {
    let markdown = "# E\n\n## Example\n\ntext\n\n```json\n{\"a\": 1}\n```\n\n## Fix\n\nnone here\n";
    assert_eq!(
        json_block(markdown, "Example").as_deref(),
        Some("{\"a\": 1}\n")
    );
    assert_eq!(json_block(markdown, "Fix"), None);
    assert_eq!(json_block(markdown, "Other"), None);
}
