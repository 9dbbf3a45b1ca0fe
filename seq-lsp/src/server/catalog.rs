//! The workspace catalog: `seq-catalog.json` in a workspace folder's root, merged into the
//! built-in catalog. A broken catalog file is reported in that file, and the built-in catalog
//! (plus any other folder's good file) is used meanwhile.

use super::uri;
use super::workspace::CATALOG_FILE;
use lsp_types::Uri;
use seq_check::Catalog;
use seq_syntax::{Severity, Span};
use std::path::PathBuf;
use std::sync::Arc;

/// A problem found in a catalog file, reported in that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
}

/// One catalog file that exists, and what is wrong with it (nothing, usually).
#[derive(Clone, Debug)]
pub struct CatalogFile {
    pub uri: Uri,
    pub text: Arc<str>,
    pub problems: Vec<Problem>,
}

#[derive(Clone, Debug)]
pub struct CatalogState {
    pub catalog: Arc<Catalog>,
    pub files: Vec<CatalogFile>,
}

impl CatalogState {
    /// The built-in catalog plus each root's catalog file, in the order of the roots.
    /// `open_text` gives an open document's text, which wins over the disk.
    pub fn load(roots: &[PathBuf], open_text: impl Fn(&Uri) -> Option<String>) -> CatalogState {
        let mut catalog = Catalog::builtin();
        let mut files = Vec::new();
        for root in roots {
            let path = root.join(CATALOG_FILE);
            let Some(uri) = uri::from_path(&path) else {
                continue;
            };
            let text = match open_text(&uri) {
                Some(text) => Some(Ok(text)),
                None => match std::fs::read(&path) {
                    Ok(bytes) => Some(String::from_utf8(bytes).map_err(|e| {
                        let at = e.utf8_error().valid_up_to();
                        let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                        (text, at)
                    })),
                    Err(_) => None,
                },
            };
            let (text, problems) = match text {
                None => continue,
                Some(Ok(text)) => {
                    let problems = merge(&mut catalog, &text);
                    (text, problems)
                }
                Some(Err((text, at))) => {
                    let at = u32::try_from(at).unwrap_or(u32::MAX);
                    let problem = Problem {
                        severity: Severity::Error,
                        span: Span::new(at, at.saturating_add(1)),
                        message: "the catalog is not UTF-8; it is ignored".to_owned(),
                    };
                    (text, vec![problem])
                }
            };
            files.push(CatalogFile {
                uri,
                text: Arc::from(text),
                problems,
            });
        }
        CatalogState {
            catalog: Arc::new(catalog),
            files,
        }
    }
}

/// Merges one catalog file's tools; what is wrong with it comes back as problems.
fn merge(catalog: &mut Catalog, text: &str) -> Vec<Problem> {
    let whole = Span::from_range(0..text.find('\n').unwrap_or(text.len()));
    match Catalog::load_json(text) {
        Ok(tools) => catalog
            .merge(tools)
            .into_iter()
            .map(|name| Problem {
                severity: Severity::Warning,
                span: name_span(text, &name).unwrap_or(whole),
                message: format!(
                    "`{name}` is a built-in tool; the built-in definition is kept and this one ignored"
                ),
            })
            .collect(),
        Err(err) => vec![Problem {
            severity: Severity::Error,
            span: err.span.unwrap_or(whole),
            message: format!("{}; the catalog file is ignored", err.message),
        }],
    }
}

/// The first `"name"` string literal in the text, good enough to point at a tool's definition.
fn name_span(text: &str, name: &str) -> Option<Span> {
    let quoted = format!("\"{name}\"");
    let at = text.find(&quoted)?;
    Some(Span::from_range(at..at + quoted.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_catalog_is_a_problem_not_a_failure() {
        let mut catalog = Catalog::builtin();
        let problems = merge(&mut catalog, "[{\"name\": 1}]");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].severity, Severity::Error);
        let problems = merge(&mut catalog, "[{\"name\": \"deploy\"},");
        assert!(problems[0].span.start > 0, "{problems:?}");
        assert!(catalog.get("deploy").is_none());
    }

    #[test]
    fn redefining_a_seq_tool_is_a_warning_at_its_name() {
        let mut catalog = Catalog::builtin();
        let text = "[{\"name\": \"extra\"}, {\"name\": \"seq_call\"}]";
        let problems = merge(&mut catalog, text);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].severity, Severity::Warning);
        assert_eq!(&text[problems[0].span.range()], "\"seq_call\"");
        assert!(catalog.get("extra").is_some());
    }
}
