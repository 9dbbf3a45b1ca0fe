//! Crash safety of the storage against real process death: a writer process replacing
//! one sequence over and over is killed (SIGKILL) at a random moment, 1,000 times; after each kill
//! the sequence reads back whole, and it is either the last version the writer reported written
//! or the one it was writing. Never torn, never lost, never a broken file in the listing.
//!
//! The writer is this test binary itself, re-executed to run only `writer_child` with the data
//! directory in an environment variable; run normally, `writer_child` does nothing.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_store::storage::{Put, SequenceStorage, Storage, list};
use seq_syntax::ast::Sequence;
use seq_test_support::stored;
use serde_json::json;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DATA_VAR: &str = "SEQC_CRASH_TEST_DATA";
const WRITER_VAR: &str = "SEQC_CRASH_TEST_WRITER";
const NAME: &str = "crash";
const KILLS: u64 = 1_000;

/// Version `(writer, n)`: its description says which, and is long enough (64 KiB) that a write
/// takes a while, so kills land inside writes.
fn version(writer: u64, n: u64) -> Sequence {
    let text = json!({
        "name": NAME,
        "description": format!("{writer}-{n} {}", "x".repeat(64 * 1024)),
        "groups": [{
            "name": "g", "out": {"said": "string"},
            "tools": format!(r#"{{"tool":"echo","args":{{"value":"{writer}-{n}"}},"as":"said"}} ;"#)
        }]
    })
    .to_string();
    seq_test_support::parsed(&text)
}

/// The version a sequence read back claims to be; panics unless it is exactly that version,
/// whole.
fn which(sequence: &Sequence) -> (u64, u64) {
    let description = &sequence.description.as_ref().unwrap().value;
    let tag = description.split(' ').next().unwrap();
    let (writer, n) = tag.split_once('-').unwrap();
    let found = (writer.parse().unwrap(), n.parse().unwrap());
    assert_eq!(
        *sequence,
        version(found.0, found.1),
        "a torn or altered sequence"
    );
    found
}

/// The writer: replaces the sequence with versions 0, 1, 2, ... and reports each once it is
/// written, until killed (or, should the parent be gone, for at most 20 s).
#[test]
fn writer_child() {
    let (Ok(data), Ok(writer)) = (std::env::var(DATA_VAR), std::env::var(WRITER_VAR)) else {
        return;
    };
    let writer: u64 = writer.parse().unwrap();
    let storage = Storage::new(data);
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < Duration::from_secs(20) {
        storage
            .put(Put::new(&version(writer, n)).replace(true))
            .unwrap();
        // Straight to the pipe, flushed: the harness may capture `println!`.
        let mut out = std::io::stdout().lock();
        writeln!(out, "written {writer}-{n}").unwrap();
        out.flush().unwrap();
        n += 1;
    }
}

/// xorshift64*: the kill delays, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % bound
    }
}

#[test]
fn a_writer_killed_at_random_points_never_tears_or_loses_the_sequence() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(Put::new(&version(0, 0))).unwrap();
    let mut current = (0, 0);
    let mut rng = Rng(0x5EC_C4A5);
    let mut mid_write = 0;
    for writer in 1..=KILLS {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["writer_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(DATA_VAR, data.path())
            .env(WRITER_VAR, writer.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Start-up takes a few milliseconds; some kills land before the first write.
        std::thread::sleep(Duration::from_micros(rng.below(30_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let last = out
            .lines()
            // The first may share its line with the harness's `test writer_child ... `.
            .filter_map(|l| l.split_once("written ").map(|(_, tag)| tag))
            .next_back()
            .map(|tag| {
                let (w, n) = tag.split_once('-').unwrap();
                (w.parse::<u64>().unwrap(), n.parse::<u64>().unwrap())
            });

        let read = stored(&storage, NAME)
            .unwrap()
            .expect("the sequence is never lost");
        let found = which(&read);
        // The last version reported written, or the one being written when the kill came.
        let (before, in_flight) = match last {
            Some((w, n)) => ((w, n), (w, n + 1)),
            None => (current, (writer, 0)),
        };
        assert!(
            found == before || found == in_flight,
            "kill {writer}: read {found:?}, expected {before:?} or {in_flight:?}"
        );
        mid_write += u64::from(found == in_flight);
        current = found;

        let listing = list(&storage).unwrap();
        assert!(listing.broken.is_empty(), "{:?}", listing.broken);
        assert_eq!(listing.sequences.len(), 1);
    }
    // The kills really landed at different points: some after a write, some mid-write.
    assert!(current.0 > 0, "no writer ever wrote");
    assert!(mid_write < KILLS);
    // Leftover temporary files of killed writers never count as sequences, and a later write
    // of this process cleans up after itself.
    storage
        .put(Put::new(&version(u64::MAX, 0)).replace(true))
        .unwrap();
    assert_eq!(
        which(&stored(&storage, NAME).unwrap().unwrap()),
        (u64::MAX, 0)
    );
}
