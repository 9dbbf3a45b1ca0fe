//! Crash safety under a simulated crash: the write hooks are this module's alone, out of the
//! public API (tests/storage_crash.rs kills real processes).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use super::files::{WriteHook, WriteStage};
use super::{Put, SequenceStorage, Storage, StorageError};
use crate::storage::list;
use seq_syntax::ast::Sequence;
use seq_test_support::files_in;
use serde_json::json;
use std::fs;
use std::io;
use std::sync::Arc;

impl Storage {
    /// Consults `hook` during writes (see [`WriteHook`]).
    fn with_write_hook(mut self, hook: WriteHook) -> Storage {
        self.hook = Some(hook);
        self
    }
}

fn sequence(name: &str, greeting: &str) -> Sequence {
    let text = json!({
        "name": name,
        "groups": [{"name": "one", "out": {"said": "string"},
            "tools": format!(r#"{{"tool":"echo","args":{{"value":"{greeting}"}},"as":"said"}} ;"#)}]
    })
    .to_string();
    seq_test_support::parsed(&text)
}

fn put(storage: &Storage, sequence: &Sequence, replace: bool) -> Result<(), StorageError> {
    storage.put(Put::new(sequence).replace(replace))
}

fn read(storage: &Storage, name: &str) -> Option<Sequence> {
    storage
        .get(name)
        .unwrap()
        .map(|stored| Arc::unwrap_or_clone(stored.sequence))
}

/// A crash at each stage of a write: the old file stays whole, no torn file is listed, and the
/// temporary file left behind is cleaned by the next write.
#[test]
fn a_crash_mid_write_leaves_the_old_sequence_intact() {
    for stage in [WriteStage::HalfWritten, WriteStage::BeforeRename] {
        let data = tempfile::tempdir().unwrap();
        let storage = Storage::new(data.path());
        put(&storage, &sequence("s", "old"), false).unwrap();
        let crashing = storage
            .clone()
            .with_write_hook(Arc::new(move |at| at != stage));
        let error = put(&crashing, &sequence("s", "new"), true).unwrap_err();
        assert!(
            matches!(&error, StorageError::Io { error, .. } if error.kind() == io::ErrorKind::Interrupted),
            "{error}"
        );

        assert_eq!(read(&storage, "s"), Some(sequence("s", "old")), "{stage:?}");
        let files = files_in(storage.dir());
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files[1], "s.json");
        let temp = &files[0];
        assert!(
            temp.starts_with(".s.json.") && temp.ends_with(".tmp"),
            "{temp}"
        );
        if stage == WriteStage::HalfWritten {
            let torn = fs::read(storage.dir().join(temp)).unwrap();
            assert!(serde_json::from_slice::<serde_json::Value>(&torn).is_err());
        }
        let listing = list(&storage).unwrap();
        assert_eq!(listing.sequences.len(), 1);
        assert!(
            listing.broken.is_empty(),
            "the temporary file is not listed"
        );

        // The next write, of any sequence, removes the leftover.
        put(&storage, &sequence("t", "other"), false).unwrap();
        assert_eq!(files_in(storage.dir()), ["s.json", "t.json"]);
    }
}

#[test]
fn a_crash_creating_a_new_sequence_leaves_no_sequence() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path()).with_write_hook(Arc::new(|_| false));
    put(&storage, &sequence("s", "new"), false).unwrap_err();
    assert_eq!(read(&Storage::new(data.path()), "s"), None);
    assert!(list(&storage).unwrap().sequences.is_empty());
}

/// Another process creates the name between the existence check and the publication: the
/// creation without `replace` loses instead of overwriting it.
#[test]
fn create_never_overwrites_a_sequence_that_appears_meanwhile() {
    let data = tempfile::tempdir().unwrap();
    let target = data.path().join("sequences/s.json");
    let theirs =
        serde_json::to_vec(&json!({"format": 1, "sequence": sequence("s", "theirs")})).unwrap();
    let racing = {
        let target = target.clone();
        Storage::new(data.path()).with_write_hook(Arc::new(move |stage| {
            if stage == WriteStage::BeforeRename {
                fs::write(&target, &theirs).unwrap();
            }
            true
        }))
    };
    let error = put(&racing, &sequence("s", "mine"), false).unwrap_err();
    assert!(matches!(error, StorageError::Exists { .. }), "{error}");
    let storage = Storage::new(data.path());
    assert_eq!(read(&storage, "s"), Some(sequence("s", "theirs")));
    assert_eq!(
        files_in(storage.dir()),
        ["s.json"],
        "no temporary file is left"
    );
}
