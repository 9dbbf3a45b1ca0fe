//! The ide layer on every offset of real files and on every prefix of one being typed: it never
//! panics, and every span it returns lies in the file, on character boundaries (the server
//! slices and converts them).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_lsp::ide::{Analysis, FileId, is_sequence_document};
use seq_syntax::Span;
use std::path::Path;
use std::sync::Arc;

fn examples() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["examples", "examples/broken"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(".json"))
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    assert!(files.len() > 8, "the examples are missing");
    files
}

fn assert_span(text: &str, span: Span, what: &str) {
    assert!(
        text.get(span.range()).is_some(),
        "{what}: {span:?} is not a slice of the text"
    );
}

/// Every question at every offset (character boundary or not) of every file of the batch.
#[test]
fn every_offset_of_the_examples() {
    let files = examples();
    let analysis = Analysis::new(files.clone(), Arc::new(Catalog::builtin()));
    for file in analysis.files() {
        let text = analysis.text(file).unwrap();
        let text_of = |f: FileId| analysis.text(f).unwrap();
        for offset in 0..=u32::try_from(text.len()).unwrap() + 1 {
            if let Some(hover) = analysis.hover(file, offset) {
                assert_span(text, hover.span, "hover");
                assert!(!hover.markdown.is_empty());
            }
            for l in analysis.definition(file, offset) {
                assert_span(text_of(l.file), l.span, "definition");
            }
            for l in analysis.references(file, offset, true) {
                assert_span(text_of(l.file), l.span, "references");
            }
            if let Ok(edits) = analysis.rename(file, offset, "renamed") {
                let span = analysis.prepare_rename(file, offset).unwrap();
                assert_span(text, span, "prepare_rename");
                for edit in edits {
                    assert_span(text_of(edit.file), edit.span, "rename");
                }
            }
            for item in analysis.completion(file, offset) {
                assert_span(text, item.edit, "completion");
                assert!(
                    item.edit.start <= offset && offset <= item.edit.end,
                    "{:?} at {offset} in {}: {item:?}\n{}",
                    analysis.path(file),
                    text.get(offset as usize - 20..offset as usize)
                        .unwrap_or(""),
                    text.get(item.edit.range()).unwrap_or("")
                );
            }
            for action in analysis.code_actions(file, Span::new(offset, offset + 3)) {
                for edit in action.edits {
                    assert_span(text, edit.span, "code action");
                }
            }
        }
        for token in analysis.semantic_tokens(file) {
            assert_span(text, token.span, "semantic token");
        }
        assert!(analysis.document_symbols(file).len() <= 1);
    }
}

/// A file typed from the first byte to the last: every prefix is analysed and completed at its
/// end, as an editor asks after each keystroke.
#[test]
fn every_prefix_of_a_file_being_typed() {
    let files = examples();
    let (name, full) = files
        .iter()
        .find(|(name, _)| name == "inspect-nodes.json")
        .unwrap();
    let catalog = Arc::new(Catalog::builtin());
    let boundaries = full.char_indices().map(|(i, _)| i).chain([full.len()]);
    for end in boundaries {
        let text = &full[..end];
        let analysis = Analysis::new(vec![(name.clone(), text.to_owned())], Arc::clone(&catalog));
        let file = FileId(0);
        let offset = u32::try_from(end).unwrap();
        for item in analysis.completion(file, offset) {
            assert_span(text, item.edit, "completion");
        }
        for token in analysis.semantic_tokens(file) {
            assert_span(text, token.span, "semantic token");
        }
        analysis.hover(file, offset);
        analysis.document_symbols(file);
        // Quiet while the top-level object has neither `groups` nor a group yet.
        if is_sequence_document(text) {
            assert!(text.contains("\"groups\""));
        }
    }
}

#[test]
fn analysis_can_be_shared_with_a_worker() {
    fn shared<T: Send + Sync>() {}
    shared::<Analysis>();
}

#[test]
fn sequence_documents_are_told_by_content() {
    for (name, text) in examples() {
        assert!(is_sequence_document(&text), "{name}");
    }
    let package = r#"{"name": "app", "version": "1.0.0", "scripts": {"test": "jest"},
        "workspaces": ["a"], "dependencies": {"groups": "^1"}}"#;
    for quiet in [
        package,
        "",
        "[]",
        "{}",
        r#"{"name": "s"}"#,
        r#"{"groups": {}}"#,
        r#"[{"name": "deploy", "parameters": {"type": "object"}}]"#,
        r#"{"tools": [{"name": "deploy", "inputSchema": {}}]}"#,
    ] {
        assert!(!is_sequence_document(quiet), "{quiet}");
    }
    for typed in [
        r#"{"name": "s", "groups": ["#,
        "// a comment\n{\"groups\": []}",
        r#"{"name": "s", "grups": [{"name": "g", "tools": ""#,
    ] {
        assert!(is_sequence_document(typed), "{typed}");
    }
}
