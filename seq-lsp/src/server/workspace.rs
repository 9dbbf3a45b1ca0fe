//! The workspace: every sequence file under the workspace folders, with the open
//! documents' text overriding what is on disk. Each change bumps a generation; checking and
//! requests work on an immutable [`Snapshot`] of one generation.

use super::catalog::CatalogState;
use super::encoding::Encoding;
use super::uri;
use lsp_types::Uri;
use seq_syntax::LineIndex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name of the workspace catalog file, read from each workspace folder's root (its one
/// home is the file set, which leaves it out of the walk).
pub use seq_check::file_set::CATALOG_FILE;

#[derive(Clone, Debug)]
pub struct Document {
    /// The normalized URI, the workspace's key.
    pub key: Uri,
    /// The URI as the client spells it (publishing under another spelling would not reach it).
    pub uri: Uri,
    /// How diagnostics about other files name this one.
    pub label: String,
    pub text: Arc<str>,
    pub index: Arc<LineIndex>,
    /// `Some` while the client has the document open.
    pub version: Option<i32>,
    /// Whether the text is a sequence at all (decided by content, see `is_sequence_document`).
    pub sequence: bool,
}

impl Document {
    fn new(uri: Uri, label: String, text: String, version: Option<i32>) -> Document {
        let sequence = crate::ide::is_sequence_document(&text);
        Document {
            key: uri::normalize(&uri),
            uri,
            label,
            index: Arc::new(LineIndex::new(&text)),
            text: Arc::from(text),
            version,
            sequence,
        }
    }
}

/// What the client can take in answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientCaps {
    /// Completion items in snippet syntax (`${1:name}`).
    pub snippets: bool,
    /// Nested document symbols rather than a flat list.
    pub nested_symbols: bool,
}

/// What one generation of the workspace looks like, shared with the checking thread.
#[derive(Debug)]
pub struct Snapshot {
    pub generation: u64,
    pub encoding: Encoding,
    pub client: ClientCaps,
    /// The sequence documents, sorted by URI (the order of the batch: the first file wins a
    /// duplicate `#name`).
    pub files: Vec<Document>,
    pub catalog: Arc<CatalogState>,
}

impl Snapshot {
    pub fn file(&self, uri: &Uri) -> Option<(usize, &Document)> {
        let key = uri::normalize(uri);
        self.files
            .iter()
            .enumerate()
            .find(|(_, doc)| doc.key == key)
    }
}

#[derive(Debug)]
pub struct Workspace {
    /// By normalized URI.
    docs: BTreeMap<Uri, Document>,
    roots: Vec<PathBuf>,
    pub catalog: Arc<CatalogState>,
    generation: u64,
}

impl Workspace {
    pub fn new(roots: Vec<PathBuf>) -> Workspace {
        let catalog = Arc::new(CatalogState::load(&roots, |_| None));
        Workspace {
            docs: BTreeMap::new(),
            roots,
            catalog,
            generation: 0,
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Reads every sequence file under the workspace folders.
    pub fn index(&mut self) {
        // The file set's walk, as `seqc check DIR` walks (unreadable corners are passed over:
        // an editor session must not fail over a permission problem); the content is asked
        // when each file is read.
        let found: Vec<PathBuf> = self
            .roots
            .iter()
            .flat_map(|root| seq_check::file_set::walk(root).files)
            .collect();
        for path in found {
            self.load_from_disk(&path);
        }
        self.generation += 1;
    }

    /// (Re)reads a file that is not open; drops it when it is gone or not a sequence.
    pub fn load_from_disk(&mut self, path: &Path) {
        let Some(uri) = uri::from_path(path) else {
            return;
        };
        if self.docs.get(&uri).is_some_and(|d| d.version.is_some()) {
            return;
        }
        // Never blocks on a FIFO, never reads a device or more than the parser takes.
        let text = crate::source_file::read(path)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        match text {
            Some(text) if !is_catalog(&self.roots, path) => {
                let label = self.label(&uri);
                let doc = Document::new(uri.clone(), label, text, None);
                if doc.sequence {
                    self.docs.insert(uri, doc);
                } else {
                    self.docs.remove(&uri);
                }
            }
            Some(_) | None => {
                self.docs.remove(&uri);
            }
        }
        self.generation += 1;
    }

    pub fn open(&mut self, uri: Uri, text: String, version: i32) {
        let key = uri::normalize(&uri);
        let label = self.label(&key);
        self.docs
            .insert(key, Document::new(uri, label, text, Some(version)));
        self.generation += 1;
    }

    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.docs.get(&uri::normalize(uri))
    }

    /// Replaces an open document's text (`index` is its line index); `None` when the document
    /// is not open.
    pub fn change(
        &mut self,
        uri: &Uri,
        text: String,
        index: LineIndex,
        version: i32,
    ) -> Option<()> {
        let doc = self.docs.get_mut(&uri::normalize(uri))?;
        doc.version?;
        doc.sequence = crate::ide::is_sequence_document(&text);
        doc.index = Arc::new(index);
        doc.text = Arc::from(text);
        doc.version = Some(version);
        self.generation += 1;
        Some(())
    }

    /// A closed document falls back to the file on disk, if the workspace holds one.
    pub fn close(&mut self, uri: &Uri) {
        let key = uri::normalize(uri);
        self.docs.remove(&key);
        if let Some(path) = uri::to_path(&key).filter(|p| self.indexes(p)) {
            self.load_from_disk(&path);
        }
        self.generation += 1;
    }

    /// Whether the workspace walk reads `path`: the file set's rule, below a workspace folder.
    pub fn indexes(&self, path: &Path) -> bool {
        self.roots
            .iter()
            .any(|root| seq_check::file_set::is_candidate(root, path))
    }

    pub fn is_catalog(&self, uri: &Uri) -> bool {
        uri::to_path(uri).is_some_and(|path| is_catalog(&self.roots, &path))
    }

    #[allow(
        clippy::mutable_key_type,
        reason = "lsp-types hashes and compares a Uri by its text; the cell inside is a parse cache"
    )]
    pub fn reload_catalog(&mut self) {
        let docs = &self.docs;
        self.catalog = Arc::new(CatalogState::load(&self.roots, |uri| {
            docs.get(uri).map(|d| d.text.to_string())
        }));
        self.generation += 1;
    }

    pub fn snapshot(&self, encoding: Encoding, client: ClientCaps) -> Arc<Snapshot> {
        Arc::new(Snapshot {
            generation: self.generation,
            encoding,
            client,
            files: self.docs.values().filter(|d| d.sequence).cloned().collect(),
            catalog: Arc::clone(&self.catalog),
        })
    }

    /// The path relative to the workspace folder holding it, else the full path or the URI.
    fn label(&self, uri: &Uri) -> String {
        let Some(path) = uri::to_path(uri) else {
            return uri.as_str().to_owned();
        };
        self.roots
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .unwrap_or(&path)
            .display()
            .to_string()
    }
}

fn is_catalog(roots: &[PathBuf], path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == CATALOG_FILE)
        && path
            .parent()
            .is_some_and(|dir| roots.iter().any(|r| r == dir))
}
