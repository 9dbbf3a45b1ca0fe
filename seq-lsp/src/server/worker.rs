//! The checking thread. The main loop never checks: it sends a snapshot here and goes on reading
//! messages. Checks queued behind a newer one are skipped, results come back tagged with the
//! generation and document versions they were computed from, and the main loop drops those that
//! are no longer current. Requests are answered here too, in the order they came, against the
//! snapshot of their time; one analysis is built per generation and shared by all of them.

use super::analysis::Analysis;
use super::diagnostics;
use super::encoding::Lines;
use super::handlers;
use super::workspace::Snapshot;
use crate::ide::FileId;
use crossbeam_channel::{Receiver, Sender};
use lsp_server::{ErrorCode, Message, Request, Response};
use lsp_types::{Diagnostic, Uri};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

#[derive(Debug)]
pub enum Task {
    Check(Arc<Snapshot>),
    Request(Arc<Snapshot>, Request),
}

/// The diagnostics of one generation of the workspace.
#[derive(Debug)]
pub struct Checked {
    pub generation: u64,
    pub files: Vec<FileDiagnostics>,
}

#[derive(Debug)]
pub struct FileDiagnostics {
    /// The text of the normalized URI: which file, whatever the client's spelling.
    pub key: String,
    pub uri: Uri,
    /// The version of the document they were computed from (`None`: the file on disk).
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug)]
pub struct Worker {
    pub tasks: Sender<Task>,
    pub results: Receiver<Checked>,
    thread: JoinHandle<()>,
}

impl Worker {
    /// Starts the thread; responses to requests go straight to `client`.
    pub fn spawn(client: Sender<Message>) -> std::io::Result<Worker> {
        let (tasks, task_rx) = crossbeam_channel::unbounded();
        let (result_tx, results) = crossbeam_channel::unbounded();
        let thread = std::thread::Builder::new()
            .name("seqc-check".to_owned())
            .spawn(move || run(&task_rx, &result_tx, &client))?;
        Ok(Worker {
            tasks,
            results,
            thread,
        })
    }

    /// Takes no more tasks, works off those queued (every request taken gets its answer) and
    /// waits for the thread to end.
    pub fn stop(self) {
        drop(self.tasks);
        // A panic there was already answered as an error; nothing is left to report.
        let _ = self.thread.join();
    }
}

fn run(tasks: &Receiver<Task>, results: &Sender<Checked>, client: &Sender<Message>) {
    let mut cache = Cache::default();
    while let Ok(first) = tasks.recv() {
        let batch: Vec<Task> = std::iter::once(first).chain(tasks.try_iter()).collect();
        let last_check = batch.iter().rposition(|t| matches!(t, Task::Check(_)));
        for (i, task) in batch.into_iter().enumerate() {
            let sent = match task {
                Task::Check(snapshot) if Some(i) == last_check => {
                    // A panic in the checker leaves the last good diagnostics on screen.
                    match guarded(|| check(&snapshot, &cache.analysis(&snapshot))) {
                        Some(checked) => results.send(checked).is_ok(),
                        None => true,
                    }
                }
                // A newer snapshot is queued behind this one: its result would be stale.
                Task::Check(_) => true,
                Task::Request(snapshot, request) => {
                    let id = request.id.clone();
                    let response =
                        guarded(|| handlers::handle(&cache.analysis(&snapshot), request))
                            .unwrap_or_else(|| {
                                Response::new_err(
                                    id,
                                    ErrorCode::InternalError as i32,
                                    "seqc: internal error while answering this request".to_owned(),
                                )
                            });
                    client.send(response.into()).is_ok()
                }
            };
            if !sent {
                return;
            }
            // Freed once the answer is out, off the path from an edit to its diagnostics.
            cache.retired = None;
        }
    }
}

/// Runs `f`, turning a panic (a bug, never an input's fault) into `None` so that one bad
/// request or check does not take the server down.
fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// The analysis of the latest generation asked for, built once and shared by its check and
/// requests.
#[derive(Debug, Default)]
struct Cache {
    current: Option<Arc<Analysis>>,
    /// The one it replaced. A checked workspace is a large tree of small allocations: freeing it
    /// takes a good part of the time of checking it, so it waits until the new answer is sent.
    /// (A thread of its own for that was slower: freeing memory that another thread allocates
    /// from contends for the allocator.)
    retired: Option<Arc<Analysis>>,
}

impl Cache {
    fn analysis(&mut self, snapshot: &Arc<Snapshot>) -> Arc<Analysis> {
        if let Some(found) = self
            .current
            .as_ref()
            .filter(|a| a.generation() == snapshot.generation)
        {
            return Arc::clone(found);
        }
        let built = Arc::new(Analysis::new(Arc::clone(snapshot)));
        self.retired = self.current.replace(Arc::clone(&built));
        built
    }
}

fn check(snapshot: &Snapshot, analysis: &Analysis) -> Checked {
    let mut files: Vec<FileDiagnostics> = snapshot
        .files
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let lines = Lines {
                text: &doc.text,
                index: &doc.index,
                encoding: snapshot.encoding,
            };
            FileDiagnostics {
                key: doc.key.as_str().to_owned(),
                uri: doc.uri.clone(),
                version: doc.version,
                diagnostics: analysis
                    .ide
                    .diagnostics(FileId(u32::try_from(i).unwrap_or(u32::MAX)))
                    .iter()
                    .map(|d| diagnostics::to_lsp(d, lines, &doc.uri))
                    .collect(),
            }
        })
        .collect();
    files.extend(snapshot.catalog.files.iter().map(|file| FileDiagnostics {
        key: file.uri.as_str().to_owned(),
        uri: file.uri.clone(),
        version: None,
        diagnostics: diagnostics::catalog_problems(file, snapshot.encoding),
    }));
    Checked {
        generation: snapshot.generation,
        files,
    }
}
