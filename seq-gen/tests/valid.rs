//! The generated inputs are valid: the front end and the checker find nothing wrong with them.
//! (A benchmark of invalid input would measure error paths, not the pipeline.)

use seq_catalog::Catalog;
use seq_check::Source;
use seq_syntax::Code;
use seq_syntax::ast::{Group, Item};

fn show(diagnostics: &[seq_syntax::Diagnostic], text: &str) -> String {
    diagnostics
        .iter()
        .take(5)
        .map(|d| {
            let span = d.span.start as usize..d.span.end as usize;
            let context = text.get(span.start.saturating_sub(60)..(span.end + 60).min(text.len()));
            format!(
                "{:?} {:?}: {} … {:?}\n",
                d.severity, d.code, d.message, context
            )
        })
        .collect()
}

#[test]
fn the_sequence_file_parses_without_errors() {
    let text = seq_gen::sequence_file(100_000);
    let parse = seq_syntax::parse(&text);
    let errors: Vec<_> = parse
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    assert!(errors.is_empty(), "{}", show(&errors, &text));
    let sequence = parse.sequence.expect("a sequence");
    assert!(sequence.groups.len() > 100);
}

#[test]
fn the_sequence_file_checks_clean() {
    let text = seq_gen::sequence_file(100_000);
    let sources = [Source {
        path: "big.json".to_string(),
        text: text.clone(),
    }];
    let check = seq_check::check(&sources, &Catalog::builtin());
    let diagnostics = &check.files[0].diagnostics;
    assert!(diagnostics.is_empty(), "{}", show(diagnostics, &text));
}

#[test]
fn the_batch_checks_clean() {
    let sources: Vec<Source> = seq_gen::batch(60, 6)
        .into_iter()
        .map(|(path, text)| Source { path, text })
        .collect();
    let check = seq_check::check(&sources, &Catalog::builtin());
    for (file, source) in check.files.iter().zip(&sources) {
        assert!(
            file.diagnostics.is_empty(),
            "{}: {}",
            file.path,
            show(&file.diagnostics, &source.text)
        );
    }
}

/// The batch's chains are as deep as the rules allow: one more caller on top of a level-0
/// sequence makes chains of five cross-sequence calls, and the checker rejects exactly those.
#[test]
fn the_batch_chains_are_four_calls_deep() {
    let mut sources: Vec<Source> = seq_gen::batch(25, 3)
        .into_iter()
        .map(|(path, text)| Source { path, text })
        .collect();
    let clean = seq_check::check(&sources, &Catalog::builtin());
    assert!(clean.files.iter().all(|f| f.diagnostics.is_empty()));
    sources.push(Source {
        path: "extra.json".to_string(),
        text: r##"{"name": "extra", "groups": [{"name": "top", "out": {"r": "object"},
            "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"#seq-0000\",\"args\":{}},\"as\":\"r\"} ;"}]}"##
            .to_string(),
    });
    let check = seq_check::check(&sources, &Catalog::builtin());
    let errors: Vec<Code> = check
        .files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect();
    assert!(!errors.is_empty());
    assert!(
        errors.iter().all(|code| *code == Code::CallChainTooDeep),
        "{errors:?}"
    );
}

/// The files hold the language's newest parts, so that the tests above check them clean: local
/// slots, `retries` from an `integer` input, `seq_when_call` with `else`, and an `each` fanned
/// out with `max_parallel` in a serial group.
#[test]
fn the_generated_files_hold_locals_retries_from_inputs_else_and_serial_fan_out() {
    let batch: Vec<String> = seq_gen::batch(30, 6).into_iter().map(|(_, t)| t).collect();
    for texts in [vec![seq_gen::sequence_file(100_000)], batch] {
        let groups: Vec<Group> = texts
            .iter()
            .flat_map(|text| seq_syntax::parse(text).sequence.expect("a sequence").groups)
            .collect();
        let items = || {
            groups
                .iter()
                .flat_map(|g| g.items.iter().map(move |item| (g, item)))
        };
        let has_else = |item: &Item| {
            item.tool.value == "seq_when_call"
                && item
                    .args
                    .as_ref()
                    .is_some_and(|args| args.value.iter().any(|m| m.key.value == "else"))
        };
        assert!(groups.iter().any(|g| !g.locals.is_empty()));
        assert!(groups.iter().any(|g| g.retries_from.is_some()));
        assert!(items().any(|(_, item)| has_else(item)));
        assert!(items().any(|(g, item)| {
            !g.is_parallel() && item.each.is_some() && item.max_parallel.is_some()
        }));
    }
}
