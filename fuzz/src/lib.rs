//! What the fuzz targets share: the oracles that must hold for *every* input (beyond not
//! panicking), and a host whose only tool is pure.

use seq_exec::engine::{GroupStatus, RunReport};
use seq_exec::SequenceSource;
use seq_syntax::ast::Sequence;
use seq_syntax::Diagnostic;
use seq_syntax::invariants::{span_violations, tree_violations};
use seq_syntax::json::Node;
use std::sync::Arc;

/// The hosts the tests share, with the fuzz targets too.
pub use seq_test_support::{EchoHost, catalog};

/// Every span a diagnostic holds lies inside `text`, on character boundaries, and a fix's edits
/// never overlap: the front end's promise, [`span_violations`].
pub fn assert_spans(text: &str, diagnostics: &[Diagnostic]) {
    let broken = span_violations(text, diagnostics);
    assert!(broken.is_empty(), "{broken:#?}");
}

/// Every span of the JSON tree of `text` (error nodes and keys included) lies inside the text,
/// on character boundaries, inside its parent's: [`tree_violations`].
pub fn assert_tree(text: &str, node: Option<&Node<'_>>) {
    let broken = node.map_or_else(Vec::new, |node| tree_violations(text, node));
    assert!(broken.is_empty(), "{broken:#?}");
}

/// A sequence file whose one group's `tools` string holds `tools`.
pub fn file_with_tools(tools: &str) -> String {
    let quoted = serde_json::to_string(tools).unwrap_or_default();
    format!("{{\"name\": \"fuzz\", \"groups\": [{{\"name\": \"g\", \"tools\": {quoted}}}]}}")
}

/// A sequence file whose one group runs when `when` holds.
pub fn file_with_when(when: &str) -> String {
    let quoted = serde_json::to_string(when).unwrap_or_default();
    format!(
        "{{\"name\": \"fuzz\", \"groups\": [{{\"name\": \"g\", \"in\": {{\"x\": \"any\"}}, \
         \"when\": {quoted}, \"tools\": \"{{\\\"tool\\\": \\\"echo\\\", \\\"args\\\": {{\\\"value\\\": $args.x}}}} ;\"}}]}}"
    )
}

/// A store holding one sequence, so that `#name` calls to itself run (and meet the run-time
/// cycle bound).
#[derive(Debug)]
pub struct OneSequence(pub Arc<Sequence>);

impl SequenceSource for OneSequence {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        (self.0.name.value == name).then(|| Arc::clone(&self.0))
    }
}

/// What every run report must say of itself, whatever the sequence.
pub fn assert_report(sequence: &Sequence, report: &RunReport) {
    // A run runs the entry groups only (a called group runs under the item that calls it).
    let entry: Vec<_> = seq_catalog::calls::entry_groups(sequence).collect();
    assert!(report.groups.len() <= entry.len(), "{report:?}");
    for (group, ran) in entry.iter().zip(&report.groups) {
        assert_eq!(group.name.value, ran.name);
        assert_eq!(group.items.len(), ran.items.len(), "{ran:?}");
    }
    let failed = report
        .groups
        .iter()
        .any(|g| g.status == GroupStatus::Failed);
    assert_eq!(report.ok, report.error.is_none() && !failed, "{report:?}");
    assert!(serde_json::to_string(report).is_ok());
}
