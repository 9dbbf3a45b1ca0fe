//! Time from a `didChange` notification to the published diagnostics on a 1 MB sequence file
//! (target: under 50 ms), through the in-memory connection: the server's
//! whole path — applying the edit, the snapshot, the check on the worker thread, converting and
//! publishing — and nothing of a pipe's.
//!
//! Two clients: one sending a one-character incremental edit (what editors send while typing),
//! one sending the whole text (full sync); and, as the yardstick, `seq_check::check` alone on the
//! same text, the part of the work that is the checker's. Every edit keeps the file valid, so the diagnostics
//! are empty, as in a file being polished; a publish comes for every version all the same. Also
//! timed: `is_sequence_document`, which the main loop runs on every change, on the same text and
//! on 1 MB of JSON that is not a sequence (read to its end).
//!
//! `cargo bench -p seq-lsp --bench did_change`. Under `cargo test --benches` or
//! `cargo bench -- --test` the file shrinks to 64 KB, a quick smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lsp_server::{Connection, Message, Notification, Request};
use lsp_types::notification::{
    DidChangeTextDocument, DidOpenTextDocument, Exit, Initialized, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{Initialize, Request as _, Shutdown};
use lsp_types::{
    DidChangeTextDocumentParams, DidOpenTextDocumentParams, InitializeParams, Position,
    PublishDiagnosticsParams, Range, TextDocumentContentChangeEvent, TextDocumentItem, Uri,
    VersionedTextDocumentIdentifier,
};
use seq_gen::bench::full_size;
use seq_syntax::LineIndex;
use std::str::FromStr;
use std::thread::JoinHandle;
use std::time::Duration;

struct Client {
    connection: Connection,
    server: JoinHandle<Result<seq_lsp::Ending, seq_lsp::ServerError>>,
    uri: Uri,
    version: i32,
}

impl Client {
    fn start(text: &str) -> Client {
        let (server_side, connection) = Connection::memory();
        let server = std::thread::Builder::new()
            .name(SERVER_THREAD.to_owned())
            .spawn(move || seq_lsp::run(server_side))
            .unwrap();
        let client = Client {
            connection,
            server,
            uri: Uri::from_str("untitled:bench.json").unwrap(),
            version: 1,
        };
        client.request(Initialize::METHOD, InitializeParams::default());
        client.notify(Initialized::METHOD, lsp_types::InitializedParams {});
        let item = TextDocumentItem::new(client.uri.clone(), "json".into(), 1, text.to_owned());
        client.notify(
            DidOpenTextDocument::METHOD,
            DidOpenTextDocumentParams {
                text_document: item,
            },
        );
        let published = client.diagnostics_of(1);
        assert!(published.diagnostics.is_empty(), "{published:#?}");
        client
    }

    fn notify(&self, method: &str, params: impl serde::Serialize) {
        let message = Notification::new(method.to_owned(), params);
        self.connection.sender.send(message.into()).unwrap();
    }

    fn request(&self, method: &str, params: impl serde::Serialize) {
        let request = Request::new(1.into(), method.to_owned(), params);
        self.connection.sender.send(request.into()).unwrap();
        loop {
            if let Message::Response(response) = self.connection.receiver.recv().unwrap() {
                assert!(response.response_result.is_ok(), "{response:?}");
                return;
            }
        }
    }

    /// Sends the next version and waits for its diagnostics.
    fn change(&mut self, range: Option<Range>, text: String) {
        self.version += 1;
        self.notify(
            DidChangeTextDocument::METHOD,
            DidChangeTextDocumentParams {
                text_document: VersionedTextDocumentIdentifier::new(self.uri.clone(), self.version),
                content_changes: vec![TextDocumentContentChangeEvent {
                    range,
                    range_length: None,
                    text,
                }],
            },
        );
        let published = self.diagnostics_of(self.version);
        assert!(published.diagnostics.is_empty());
    }

    fn diagnostics_of(&self, version: i32) -> PublishDiagnosticsParams {
        loop {
            let message = self.connection.receiver.recv().unwrap();
            if let Message::Notification(n) = message
                && n.method == PublishDiagnostics::METHOD
            {
                let params: PublishDiagnosticsParams = serde_json::from_value(n.params).unwrap();
                if params.version == Some(version) {
                    return params;
                }
            }
        }
    }

    fn stop(self) {
        self.request(Shutdown::METHOD, ());
        self.notify(Exit::METHOD, ());
        self.server.join().unwrap().unwrap();
    }
}

fn did_change(c: &mut Criterion) {
    let size = if full_size() { 1 << 20 } else { 64 << 10 };
    let text = seq_gen::sequence_file(size);
    // A character of the sequence's description, in UTF-16 units as a default client counts.
    let at = text.find("generated").unwrap();
    let index = LineIndex::new(&text);
    let (line, character) = index.line_col_utf16(&text, at as u32);
    let range = Range::new(
        Position::new(line, character),
        Position::new(line, character + 1),
    );
    let toggled = {
        let mut t = text.clone();
        t.replace_range(at..at + 1, "G");
        t
    };
    eprintln!("did_change: a {} byte file", text.len());

    let mut group = c.benchmark_group("did_change_to_diagnostics");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Bytes(text.len() as u64));

    // The yardstick: the checker alone on the same text, its result freed outside the timing
    // as the server frees it off the path. What the two clients add to it is the server's.
    let catalog = seq_catalog::Catalog::builtin();
    group.bench_function("seq_check_only_1MB", |b| {
        b.iter_with_large_drop(|| {
            let sources = [seq_check::Source::new("bench.json", text.clone())];
            seq_check::check(&sources, &catalog)
        })
    });

    // The content test the main loop runs on every change (`Workspace::change`): a sequence is told
    // at its `"groups": [`; a JSON file that is not one is read to its end.
    group.bench_function("is_sequence_document_1MB", |b| {
        b.iter(|| seq_lsp::is_sequence_document(std::hint::black_box(&text)))
    });
    let not_a_sequence = text
        .replace("\"groups\"", "\"entries\"")
        .replace("\"tools\"", "\"script\"");
    assert!(!seq_lsp::is_sequence_document(&not_a_sequence));
    group.bench_function("is_sequence_document_1MB_other_json", |b| {
        b.iter(|| seq_lsp::is_sequence_document(std::hint::black_box(&not_a_sequence)))
    });

    let mut client = Client::start(&text);
    let mut flip = false;
    let mut keystroke = |client: &mut Client| {
        flip = !flip;
        let letter = if flip { "G" } else { "g" };
        client.change(Some(range), letter.to_owned());
    };
    group.bench_function("incremental_1MB", |b| b.iter(|| keystroke(&mut client)));
    cpu_on_the_path(&mut client, &mut keystroke);
    client.stop();

    let mut client = Client::start(&text);
    let mut flip = false;
    let mut replace = |client: &mut Client| {
        flip = !flip;
        let next = if flip { &toggled } else { &text };
        client.change(None, next.clone());
    };
    group.bench_function("full_text_1MB", |b| b.iter(|| replace(&mut client)));
    cpu_on_the_path(&mut client, &mut replace);
    client.stop();

    // The same file on one line, as models write it: a column is then counted on a line of a
    // megabyte, for the edit and for every diagnostic.
    let one_line = one_line(&text);
    let at = one_line.find("generated").unwrap();
    let index = LineIndex::new(&one_line);
    let (line, character) = index.line_col_utf16(&one_line, at as u32);
    assert_eq!(line, 0);
    let range = Range::new(
        Position::new(line, character),
        Position::new(line, character + 1),
    );
    let mut client = Client::start(&one_line);
    let mut flip = false;
    let mut keystroke = |client: &mut Client| {
        flip = !flip;
        let letter = if flip { "G" } else { "g" };
        client.change(Some(range), letter.to_owned());
    };
    group.bench_function("incremental_1MB_one_line", |b| {
        b.iter(|| keystroke(&mut client))
    });
    cpu_on_the_path(&mut client, &mut keystroke);
    client.stop();
    group.finish();
}

/// A JSON text on one line: no string holds a raw newline, so every line break and the
/// indentation after it lie between tokens.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim_start)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The server's threads: the main loop (named here) and the checking thread it starts.
const SERVER_THREAD: &str = "seqc-server";
const CHECK_THREAD: &str = "seqc-check";

/// Wall time on a shared 2-core machine counts the waits for a core; the CPU time of the two
/// threads a change goes through one after the other (the main loop, then the checking thread)
/// does not. Printed next to criterion's figures. The checking thread's figure includes freeing
/// the previous analysis, which it does after publishing, off the path.
fn cpu_on_the_path(client: &mut Client, change: &mut impl FnMut(&mut Client)) {
    const CHANGES: u32 = 20;
    let before = [SERVER_THREAD, CHECK_THREAD].map(|name| threads_cpu_ns(&[name]));
    for _ in 0..CHANGES {
        change(client);
    }
    let after = [SERVER_THREAD, CHECK_THREAD].map(|name| threads_cpu_ns(&[name]));
    let per = |i: usize| {
        let spent = after[i]?.checked_sub(before[i]?)?;
        Some(Duration::from_nanos(spent / u64::from(CHANGES)))
    };
    match (per(0), per(1)) {
        (Some(main), Some(check)) => eprintln!(
            "did_change: CPU time per change: main loop {main:.2?}, checking thread {check:.2?}"
        ),
        _ => eprintln!("did_change: no per-thread CPU times on this system"),
    }
}

/// The summed CPU time of this process's threads with these names (Linux schedstat); a thread
/// that ends while being read counts for nothing.
fn threads_cpu_ns(names: &[&str]) -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = task.path();
        let named = std::fs::read_to_string(dir.join("comm"))
            .is_ok_and(|name| names.contains(&name.trim_end()));
        let stat = std::fs::read_to_string(dir.join("schedstat")).unwrap_or_default();
        if let (true, Some(Ok(ns))) = (named, stat.split_whitespace().next().map(str::parse::<u64>))
        {
            total += ns;
        }
    }
    Some(total)
}

criterion_group!(benches, did_change);
criterion_main!(benches);
