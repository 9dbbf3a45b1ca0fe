//! Every code's explanation (`seqc explain CODE`) carries an example that triggers the code and a
//! fix that clears it; both go through the full checker (`seq_check::check` with the built-in
//! catalog, as `seqc check` runs it), so the documentation cannot drift from the toolchain.
//!
//! The codes of catalog files (E08xx, W08xx) show catalog files instead, read by the catalog's
//! own reader (`Catalog::load_file`) into the built-in catalog.
//!
//! The codes of the creator's policy (E09xx) have no caller in `seqc check`: their pages name a
//! policy as `<!-- policy: {...} -->`, and the example is checked as above and then held against
//! that policy as `seq_create` holds it (`seq_service::unauthorized`).
//!
//! A code no longer emitted keeps its page, marked `<!-- no-longer-emitted: REASON -->`; it has
//! nothing to run, and the test holds that list to what is known.
//!
//! An explanation may opt out with `<!-- no-example: REASON -->` when one file cannot show the
//! code. If it then shows several files as `NAME.json: {...}` lines, those are checked together
//! as a store and must raise the code; only codes that no page can show (E0007, E0009) run
//! nothing.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use seq_catalog::Catalog;
use seq_check::{Check, Source, check};
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

/// The files an exempt explanation shows, one `NAME.json: {...}` line each.
fn shown_files(markdown: &str) -> Vec<Source> {
    markdown
        .lines()
        .filter_map(|line| line.split_once(".json: "))
        .filter(|(name, text)| !name.contains(' ') && text.starts_with('{'))
        .map(|(name, text)| Source::new(format!("{name}.json"), text))
        .collect()
}

fn diagnostics(result: &Check) -> Vec<Diagnostic> {
    result
        .files
        .iter()
        .flat_map(|f| f.diagnostics.iter().cloned())
        .collect()
}

/// Whether `code` is about catalog files, whose examples are catalogs rather than sequences.
fn about_catalogs(code: Code) -> bool {
    code.as_str().get(1..3) == Some("08")
}

/// The policy an E09xx page holds its example against.
fn page_policy(markdown: &str) -> Option<seq_exec::policy::Policy> {
    let start = markdown.find("<!-- policy:")? + "<!-- policy:".len();
    let end = markdown[start..].find("-->")? + start;
    Some(serde_json::from_str(markdown[start..end].trim()).unwrap())
}

/// What `text`, an example or a fix of `code`'s page, reports.
fn found_in(
    code: Code,
    markdown: &str,
    name: &str,
    text: String,
    catalog: &Catalog,
) -> Vec<Diagnostic> {
    if about_catalogs(code) {
        return catalog.clone().load_file(text.as_bytes());
    }
    let mut found = diagnostics(&check(&[Source::new(name, text.clone())], catalog));
    if let Some(policy) = page_policy(markdown) {
        let sequence = seq_syntax::parse_bytes(text.as_bytes()).sequence.unwrap();
        let caller = seq_exec::Caller::new("example");
        found.extend(seq_service::unauthorized(
            &sequence,
            &[] as &[seq_syntax::ast::Sequence],
            &seq_exec::Authorizer::new(policy),
            &caller,
        ));
    }
    found
}

fn describe(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| format!("{} {:?}: {}", d.code, d.span, d.message))
        .collect()
}

/// What is wrong with `code`'s example and fix, if anything.
fn problems_of(code: Code, markdown: &str, catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    match json_block(markdown, "Example") {
        None => problems.push(format!("{code}: no ```json block under `## Example`")),
        Some(example) => {
            let found = found_in(code, markdown, "example.json", example, catalog);
            // Exactly this code: an example that also trips other rules teaches the wrong thing.
            if found.is_empty() || found.iter().any(|d| d.code != code) {
                problems.push(format!(
                    "{code}: the example should report {code} and nothing else; it reports {:#?}",
                    describe(&found)
                ));
            }
        }
    }
    match json_block(markdown, "Fix") {
        None => problems.push(format!("{code}: no ```json block under `## Fix`")),
        Some(fix) => {
            let found = found_in(code, markdown, "fix.json", fix, catalog);
            if found.iter().any(|d| d.is_error() || d.code == code) {
                problems.push(format!(
                    "{code}: the fix still has errors or {code}: {:#?}",
                    describe(&found)
                ));
            }
        }
    }
    problems
}

#[test]
fn every_explanation_has_a_working_example_and_fix() {
    let catalog = Catalog::builtin();
    let mut problems = Vec::new();
    let mut nothing_to_run = Vec::new();
    let mut retired = Vec::new();
    for &code in Code::ALL {
        let markdown = code.explanation();
        let title = format!("# {code}: {}\n", code.title());
        if !markdown.starts_with(&title) {
            problems.push(format!(
                "{code}: the explanation should start with {title:?}"
            ));
        }
        if markdown.contains("<!-- no-longer-emitted:") {
            retired.push(code);
            continue;
        }
        let Some(reason) = exemption(markdown) else {
            problems.extend(problems_of(code, markdown, &catalog));
            continue;
        };
        assert!(!reason.is_empty(), "{code}: an exemption needs a reason");
        let files = shown_files(markdown);
        if files.is_empty() {
            nothing_to_run.push(code);
            continue;
        }
        let result = check(&files, &catalog);
        let found = diagnostics(&result);
        if files.len() < 2 || found.is_empty() || found.iter().any(|d| d.code != code) {
            problems.push(format!(
                "{code}: the {} files shown should report {code} and nothing else; they report {:#?}",
                files.len(),
                describe(&found)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        retired,
        [Code::UnsupportedOperator, Code::ShellReparsed],
        "codes no longer emitted"
    );
    // Only codes that no page can show (bytes that are not UTF-8, input past a size bound, an
    // array past the elements an item may run) have nothing to run.
    assert_eq!(
        nothing_to_run,
        [
            Code::NotUtf8,
            Code::TooLarge,
            Code::EachTooLong,
            Code::CatalogNotUtf8
        ],
        "unexpected exemptions"
    );
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

#[test]
fn shown_files_are_the_name_json_lines_only() {
    let markdown = "```text\na.json: {\"name\": \"a\"}\nb.json: {}\n```\n\n\
                    `seqc check a.json b.json` reports, in `b.json: x`:\n";
    let files = shown_files(markdown);
    let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["a.json", "b.json"]);
    assert_eq!(files[0].text, "{\"name\": \"a\"}");
}
