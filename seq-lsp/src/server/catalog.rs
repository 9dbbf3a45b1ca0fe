//! The workspace catalog: `seq-catalog.json` in a workspace folder's root, merged into the
//! built-in catalog by the checker's own reader ([`Catalog::load_file`]). A broken catalog file
//! is reported in that file, and the built-in catalog (plus any other folder's good file) is
//! used meanwhile.

use super::uri;
use super::workspace::CATALOG_FILE;
use lsp_types::Uri;
use seq_catalog::Catalog;
use seq_syntax::Diagnostic;
use std::path::PathBuf;
use std::sync::Arc;

/// One catalog file that exists, and what is wrong with it (nothing, usually).
#[derive(Clone, Debug)]
pub struct CatalogFile {
    pub uri: Uri,
    /// The text the diagnostics' spans are in (bytes that are not UTF-8 replaced).
    pub text: Arc<str>,
    pub diagnostics: Vec<Diagnostic>,
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
            let bytes = match open_text(&uri) {
                Some(text) => text.into_bytes(),
                None => match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    // No catalog file in this root (or none readable): nothing to report.
                    Err(_) => continue,
                },
            };
            let diagnostics = catalog.load_file(&bytes);
            files.push(CatalogFile {
                uri,
                text: Arc::from(String::from_utf8_lossy(&bytes)),
                diagnostics,
            });
        }
        CatalogState {
            catalog: Arc::new(catalog),
            files,
        }
    }
}
