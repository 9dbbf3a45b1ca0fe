//! Storage that trusts nothing in its directory: a FIFO, a link or a huge file is a broken entry
//! (listed with its reason, never a hang, never read whole); what was read is reused while the
//! file is unchanged. The quota's default (what `seq_create` holds callers to is seq-service's
//! tests/quota.rs).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_store::quota::Quota;
use seq_store::storage::{
    MAX_STORED_BYTES, Put, SequenceStorage, Storage, StorageError, list, readable,
};
use seq_test_support::{hello, stored};
use serde_json::json;
use std::fs;
use std::path::Path;

fn sequences_dir(data: &Path) -> std::path::PathBuf {
    let dir = data.join("sequences");
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
}

/// The reason each broken entry is listed with, by name.
fn broken(storage: &Storage) -> Vec<(String, String)> {
    list(storage)
        .unwrap()
        .broken
        .into_iter()
        .map(|b| (b.name, b.error.to_string()))
        .collect()
}

#[test]
fn a_fifo_a_link_and_a_huge_file_are_broken_entries_never_read() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(Put::new(&hello("good"))).unwrap();
    let dir = sequences_dir(data.path());
    mkfifo(&dir.join("fifo.json"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    // A link to a good file is refused too: stored files are never links.
    std::os::unix::fs::symlink(dir.join("good.json"), dir.join("linked.json")).unwrap();
    // Sparse: its size says too big, and it is never read (reading it would take gigabytes).
    let huge = fs::File::create(dir.join("huge.json")).unwrap();
    huge.set_len(u64::try_from(MAX_STORED_BYTES).unwrap() * 8)
        .unwrap();

    let listing = list(&storage).unwrap();
    assert_eq!(
        listing
            .sequences
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["good"]
    );
    let reasons = broken(&storage);
    let reason = |name: &str| {
        reasons
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert!(
        reason("fifo").contains("it is a FIFO, not a regular file"),
        "{reasons:?}"
    );
    assert!(reason("zero").contains("a symbolic link"), "{reasons:?}");
    assert!(reason("linked").contains("a symbolic link"), "{reasons:?}");
    assert!(
        reason("huge").contains("more than the 256 MiB"),
        "{reasons:?}"
    );
    // Each is an error when asked for by name, not a hang or an allocation.
    for name in ["fifo", "zero", "huge"] {
        assert!(matches!(
            stored(&storage, name),
            Err(StorageError::Corrupt { .. })
        ));
        assert!(storage.exists(name).unwrap());
    }
    // And the readable ones are what a check or a run is given.
    assert_eq!(readable(&storage).unwrap().len(), 1);
}

/// The lock file is the data directory's too, so trusted for nothing: a link there (to a file
/// the user can write, or dangling) or a FIFO makes writes fail, and nothing is written or
/// created through it.
#[test]
fn a_link_or_a_fifo_as_the_lock_file_is_refused_and_written_through_never() {
    let data = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim.txt");
    fs::write(&victim, b"precious").unwrap();
    let lock = data.path().join("sequences.lock");
    let storage = Storage::new(data.path());

    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    assert!(matches!(
        storage.put(Put::new(&hello("one"))),
        Err(StorageError::Io { .. })
    ));
    assert_eq!(fs::read(&victim).unwrap(), b"precious");

    fs::remove_file(&lock).unwrap();
    let dangling = elsewhere.path().join("created.txt");
    std::os::unix::fs::symlink(&dangling, &lock).unwrap();
    assert!(storage.put(Put::new(&hello("one"))).is_err());
    assert!(!dangling.exists());

    fs::remove_file(&lock).unwrap();
    mkfifo(&lock);
    assert!(storage.put(Put::new(&hello("one"))).is_err());

    // A regular lock file again, and writes go on.
    fs::remove_file(&lock).unwrap();
    storage.put(Put::new(&hello("one"))).unwrap();
    assert!(storage.exists("one").unwrap());
}

#[test]
fn what_was_read_is_read_again_only_when_the_file_changes() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(Put::new(&hello("one"))).unwrap();
    assert_eq!(readable(&storage).unwrap().len(), 1);
    // Replaced behind the storage's back (a new file, as every write makes): read afresh.
    let path = storage.path_of("one").unwrap();
    let text = json!({
        "name": "one",
        "groups": [{"name": "two", "tools": r#"{"tool":"echo","args":{"value":"ho"}} ;"#}]
    })
    .to_string();
    let changed = seq_syntax::parse(&text).sequence.unwrap();
    Storage::new(data.path())
        .put(Put::new(&changed).replace(true))
        .unwrap();
    assert_eq!(stored(&storage, "one").unwrap(), Some(changed));
    // Broken in place: reported, not served from what was read before.
    fs::write(&path, b"{not json").unwrap();
    assert!(matches!(
        stored(&storage, "one"),
        Err(StorageError::Corrupt { .. })
    ));
    fs::remove_file(&path).unwrap();
    assert_eq!(stored(&storage, "one").unwrap(), None);
    assert!(list(&storage).unwrap().sequences.is_empty());
}

/// Bytes this process has read through system calls (`rchar` of /proc/self/io).
fn bytes_read() -> u64 {
    let io = fs::read_to_string("/proc/self/io").unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("rchar: "))
        .unwrap()
        .parse()
        .unwrap()
}

/// A broken entry is remembered by the identity of its file: asked for again and again (every
/// listing, check and run asks), it is not read and parsed again until it changes.
#[test]
fn a_broken_entry_is_read_once_until_it_changes() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(Put::new(&hello("good"))).unwrap();
    let dir = sequences_dir(data.path());
    let big = 4 * 1024 * 1024;
    let path = dir.join("bad.json");
    fs::write(
        &path,
        format!("{{\"format\": 1, \"pad\": \"{}", "x".repeat(big)),
    )
    .unwrap();
    assert!(matches!(
        stored(&storage, "bad"),
        Err(StorageError::Corrupt { .. })
    ));
    let before = bytes_read();
    for _ in 0..10 {
        assert!(matches!(
            stored(&storage, "bad"),
            Err(StorageError::Corrupt { .. })
        ));
        assert_eq!(readable(&storage).unwrap().len(), 1);
    }
    let again = bytes_read() - before;
    assert!(again < big as u64, "read {again} bytes again");
    // Changed, it is read again: fixed now.
    fs::remove_file(&path).unwrap();
    Storage::new(data.path())
        .put(Put::new(&hello("bad")))
        .unwrap();
    assert_eq!(stored(&storage, "bad").unwrap(), Some(hello("bad")));
}

/// The listing kept by one storage follows what another one (another process, say) and other
/// programs do to the directory at once: the writers count their writes in the lock file, and
/// any other change changes the directory.
#[test]
fn the_listing_kept_follows_every_change_to_the_directory() {
    let data = tempfile::tempdir().unwrap();
    let mine = Storage::new(data.path());
    let theirs = Storage::new(data.path());
    let names = |storage: &Storage| -> Vec<String> {
        let listing = list(storage).unwrap();
        listing
            .sequences
            .into_iter()
            .map(|s| s.name)
            .chain(
                listing
                    .broken
                    .into_iter()
                    .map(|b| format!("broken {}", b.name)),
            )
            .collect()
    };
    mine.put(Put::new(&hello("one"))).unwrap();
    assert_eq!(names(&mine), ["one"]);
    theirs.put(Put::new(&hello("two"))).unwrap();
    assert_eq!(names(&mine), ["one", "two"]);
    theirs.delete("one", None, false).unwrap();
    assert_eq!(names(&mine), ["two"]);
    // Replaced by another writer: the new one is read.
    let text = json!({
        "name": "two",
        "groups": [{"name": "a", "tools": r#"{"tool":"echo","args":{"value":"ho"}} ;"#},
                   {"name": "b", "tools": r#"{"tool":"echo","args":{"value":"ho"}} ;"#}]
    })
    .to_string();
    theirs
        .put(Put::new(&seq_syntax::parse(&text).sequence.unwrap()).replace(true))
        .unwrap();
    assert_eq!(list(&mine).unwrap().sequences[0].groups, 2);
    // Another program adds a file, and removes one.
    fs::write(mine.dir().join("three.json"), b"{not json").unwrap();
    assert_eq!(names(&mine), ["two", "broken three"]);
    fs::remove_file(mine.dir().join("two.json")).unwrap();
    assert_eq!(names(&mine), ["broken three"]);
    // The look-alike check sees the names as they are.
    theirs.put(Put::new(&hello("look"))).unwrap();
    assert!(matches!(
        mine.put(Put::new(&hello("l\u{43e}ok"))),
        Err(StorageError::Confusable { .. })
    ));
}

/// The policy file's spelling is read by the server (seq-mcp's `policy_file`, tested there).
#[test]
fn the_default_quota() {
    assert_eq!(
        Quota::default(),
        Quota {
            sequences: 1000,
            bytes: 64 * 1024 * 1024
        }
    );
    assert!(serde_json::from_value::<Quota>(json!({"count": 5})).is_err());
}
