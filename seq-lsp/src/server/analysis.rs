//! One generation's analysis, shared by the check and the requests of that generation: the
//! ide layer's [`ide::Analysis`] over the snapshot's sequence documents (file `i` of the snapshot
//! is `FileId(i)`), kept with the snapshot it was built from for position conversions.

use super::workspace::{Document, Snapshot};
use crate::ide::{self, FileId};
use lsp_types::Uri;
use std::sync::Arc;

#[derive(Debug)]
pub struct Analysis {
    pub snapshot: Arc<Snapshot>,
    pub ide: ide::Analysis,
}

impl Analysis {
    pub fn new(snapshot: Arc<Snapshot>) -> Analysis {
        let files = snapshot
            .files
            .iter()
            .map(|doc| (doc.label.clone(), doc.text.to_string()))
            .collect();
        let ide = ide::Analysis::new(files, Arc::clone(&snapshot.catalog.catalog));
        Analysis { snapshot, ide }
    }

    pub fn generation(&self) -> u64 {
        self.snapshot.generation
    }

    /// The sequence document named by `uri`; `None` for any other document.
    pub fn file(&self, uri: &Uri) -> Option<(FileId, &Document)> {
        let (index, doc) = self.snapshot.file(uri)?;
        Some((FileId(u32::try_from(index).ok()?), doc))
    }

    pub fn document(&self, file: FileId) -> Option<&Document> {
        self.snapshot.files.get(file.0 as usize)
    }
}
