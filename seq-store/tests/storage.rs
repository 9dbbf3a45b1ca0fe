//! Storage: the stored format, atomic writes under a simulated crash, names checked before
//! they touch the file system, unreadable files reported.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::SequenceSource;
use seq_store::storage::{
    FORMAT, SequenceStorage, Storage, StorageError, Summary, WriteStage, check_name, encode,
    owner_of,
};
use seq_syntax::ast::Sequence;
use serde_json::json;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

fn sequence(name: &str, greeting: &str) -> Sequence {
    let text = json!({
        "name": name,
        "description": format!("says {greeting}"),
        "groups": [
            {"name": "one", "in": {"who": "string"}, "out": {"said": "string"},
             "tools": format!(r#"{{"tool":"echo","args":{{"value":"{greeting}"}},"as":"said"}} ;"#)},
            {"name": "two",
             "tools": r#"{"tool":"sleep","args":{"ms":1}} ; {"tool":"sleep","args":{"ms":2}} ;"#}
        ]
    })
    .to_string();
    let parse = seq_syntax::parse(&text);
    assert!(!parse.has_errors(), "{:?}", parse.diagnostics);
    parse.sequence.unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn stores_the_ast_with_a_format_version() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    let hello = sequence("hello", "hi");
    storage.put(&hello, false).unwrap();

    let path = data.path().join("sequences/hello.json");
    assert_eq!(storage.path_of("hello").unwrap(), path);
    let stored: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(stored["format"], json!(FORMAT));
    assert_eq!(stored["sequence"], serde_json::to_value(&hello).unwrap());
    assert_eq!(storage.get("hello").unwrap(), Some(hello.clone()));
    assert_eq!(storage.get("absent").unwrap(), None);
    assert_eq!(
        storage.sequence("hello").as_deref(),
        Some(&hello),
        "the engine's source reads the same"
    );
}

#[test]
fn replace_is_needed_to_overwrite() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(&sequence("s", "first"), false).unwrap();
    let error = storage.put(&sequence("s", "second"), false).unwrap_err();
    assert!(matches!(error, StorageError::Exists { ref name } if name == "s"));
    assert_eq!(storage.get("s").unwrap(), Some(sequence("s", "first")));
    storage.put(&sequence("s", "second"), true).unwrap();
    assert_eq!(storage.get("s").unwrap(), Some(sequence("s", "second")));
    // Read afresh: the engine sees the replacement.
    assert_eq!(
        storage.sequence("s").as_deref(),
        Some(&sequence("s", "second"))
    );
}

#[test]
fn lists_names_counts_and_descriptions_and_deletes() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    assert!(
        storage.list().unwrap().sequences.is_empty(),
        "no directory yet"
    );
    storage.put(&sequence("zeta", "z"), false).unwrap();
    storage
        .put_owned(&sequence("alpha", "a"), false, Some("ann"))
        .unwrap();
    let listing = storage.list().unwrap();
    assert_eq!(
        listing.sequences,
        [
            Summary {
                name: "alpha".into(),
                groups: 2,
                items: 3,
                description: Some("says a".into()),
                args: [("who".into(), "string".into())].into(),
                owner: Some("ann".into()),
            },
            Summary {
                name: "zeta".into(),
                groups: 2,
                items: 3,
                description: Some("says z".into()),
                args: [("who".into(), "string".into())].into(),
                owner: None,
            },
        ]
    );
    assert!(listing.broken.is_empty());

    storage.delete("zeta").unwrap();
    assert!(matches!(
        storage.delete("zeta").unwrap_err(),
        StorageError::NotFound { .. }
    ));
    let names: Vec<String> = storage
        .list()
        .unwrap()
        .sequences
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["alpha"]);
}

#[test]
fn unreadable_files_are_reported_not_fatal() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(&sequence("good", "g"), false).unwrap();
    let dir = storage.dir().to_path_buf();
    fs::write(dir.join("torn.json"), r#"{"format": 1, "sequence": {"na"#).unwrap();
    let future = json!({"format": 2, "sequence": sequence("future", "f")});
    fs::write(dir.join("future.json"), future.to_string()).unwrap();
    let other = json!({"format": 1, "sequence": sequence("good", "g")});
    fs::write(dir.join("renamed.json"), other.to_string()).unwrap();
    fs::write(dir.join("shape.json"), r#"{"format": 1, "sequence": 7}"#).unwrap();
    // Not the storage's: no `.json`, or a name that could not be a sequence's.
    fs::write(dir.join("README"), "notes").unwrap();
    fs::write(dir.join("#x.json"), "{}").unwrap();

    assert!(matches!(
        storage.get("torn").unwrap_err(),
        StorageError::Corrupt { .. }
    ));
    assert!(matches!(
        storage.get("future").unwrap_err(),
        StorageError::UnknownFormat { ref found, .. } if found == "2"
    ));
    assert!(matches!(
        storage.get("renamed").unwrap_err(),
        StorageError::Corrupt { ref detail, .. } if detail.contains("`good`")
    ));
    assert!(storage.sequence("torn").is_none());

    let listing = storage.list().unwrap();
    let names: Vec<&str> = listing.sequences.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let broken: Vec<&str> = listing.broken.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(broken, ["future", "renamed", "shape", "torn"]);
}

/// `dеploy` with a Cyrillic `е` lists like `deploy`: a caller asking for one would get the
/// other. Refused, naming the stored one; replacing `deploy` itself stays possible.
#[test]
fn a_name_that_looks_like_a_stored_one_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(&sequence("deploy", "hi"), false).unwrap();
    match storage.put(&sequence("d\u{435}ploy", "planted"), false) {
        Err(StorageError::Confusable { name, stored }) => {
            assert_eq!((name.as_str(), stored.as_str()), ("d\u{435}ploy", "deploy"));
        }
        other => panic!("{other:?}"),
    }
    storage.put(&sequence("deploy", "again"), true).unwrap();
    storage
        .put(&sequence("deploy-prod", "other"), false)
        .unwrap();
    assert_eq!(files_in(storage.dir()), ["deploy-prod.json", "deploy.json"]);
}

#[test]
fn names_are_checked_before_touching_the_file_system() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    let long = "x".repeat(65);
    // 64 characters, but 256 bytes: `<name>.json` would not fit a file name.
    let wide = "\u{1F680}".repeat(64);
    for bad in [
        wide.as_str(),
        "deploy\u{200B}",
        "de\u{202E}ploy",
        "deploy ",
        "",
        ".",
        "..",
        "../escape",
        "a/b",
        "a\\b",
        "/etc/passwd",
        "tab\there",
        "nul\0",
        "#hash",
        long.as_str(),
    ] {
        assert!(check_name(bad).is_err(), "{bad:?}");
        for error in [
            storage.get(bad).unwrap_err(),
            storage.delete(bad).unwrap_err(),
            storage.path_of(bad).unwrap_err(),
        ] {
            assert!(
                matches!(error, StorageError::InvalidName { .. }),
                "{bad:?}: {error}"
            );
        }
    }
    // A sequence whose name would escape is refused too (the front end refuses it first; the
    // storage does not rely on that).
    let mut escaping = sequence("fine", "x");
    escaping.name.value = "../escape".into();
    assert!(matches!(
        storage.put(&escaping, true).unwrap_err(),
        StorageError::InvalidName { .. }
    ));
    assert_eq!(files_in(data.path()), Vec::<String>::new());
    assert!(check_name(&"x".repeat(64)).is_ok());
    assert!(check_name("巡检三节点").is_ok());
    assert!(check_name(".hidden").is_ok());
}

/// A crash at each stage of a write: the old file stays whole, no torn file is listed, and the
/// temporary file left behind is cleaned by the next write.
#[test]
fn a_crash_mid_write_leaves_the_old_sequence_intact() {
    for stage in [WriteStage::HalfWritten, WriteStage::BeforeRename] {
        let data = tempfile::tempdir().unwrap();
        let storage = Storage::new(data.path());
        storage.put(&sequence("s", "old"), false).unwrap();
        let crashing = storage
            .clone()
            .with_write_hook(Arc::new(move |at| at != stage));
        let error = crashing.put(&sequence("s", "new"), true).unwrap_err();
        assert!(
            matches!(error, StorageError::Interrupted { stage: at } if at == stage),
            "{error}"
        );

        assert_eq!(
            storage.get("s").unwrap(),
            Some(sequence("s", "old")),
            "{stage:?}"
        );
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
        let listing = storage.list().unwrap();
        assert_eq!(listing.sequences.len(), 1);
        assert!(
            listing.broken.is_empty(),
            "the temporary file is not listed"
        );

        // The next write, of any sequence, removes the leftover.
        storage.put(&sequence("t", "other"), false).unwrap();
        assert_eq!(files_in(storage.dir()), ["s.json", "t.json"]);
    }
}

#[test]
fn a_crash_creating_a_new_sequence_leaves_no_sequence() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path()).with_write_hook(Arc::new(|_| false));
    storage.put(&sequence("s", "new"), false).unwrap_err();
    assert_eq!(Storage::new(data.path()).get("s").unwrap(), None);
    assert!(storage.list().unwrap().sequences.is_empty());
}

#[test]
fn leftovers_of_other_processes_are_removed_only_when_stale() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(&sequence("s", "x"), false).unwrap();
    let dir = storage.dir();
    let fresh = dir.join(".s.json.4000000001-0.tmp");
    let stale = dir.join(".s.json.4000000002-0.tmp");
    fs::write(&fresh, "{").unwrap();
    fs::write(&stale, "{").unwrap();
    fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    storage.put(&sequence("s", "y"), true).unwrap();
    assert!(fresh.exists(), "possibly another process's write in flight");
    assert!(!stale.exists());
}

#[test]
fn delete_is_by_name_only() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(&sequence("keep", "k"), false).unwrap();
    fs::write(data.path().join("outside.json"), "{}").unwrap();
    assert!(matches!(
        storage.delete("../outside").unwrap_err(),
        StorageError::InvalidName { .. }
    ));
    assert!(data.path().join("outside.json").exists());
    assert!(storage.exists("keep").unwrap());
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
    let error = racing.put(&sequence("s", "mine"), false).unwrap_err();
    assert!(matches!(error, StorageError::Exists { .. }), "{error}");
    let storage = Storage::new(data.path());
    assert_eq!(storage.get("s").unwrap(), Some(sequence("s", "theirs")));
    assert_eq!(
        files_in(storage.dir()),
        ["s.json"],
        "no temporary file is left"
    );
}

/// The owner an envelope names is read without its sequence: also one nested past serde_json's
/// default depth; a text that is no envelope is an error, never a guess.
#[test]
fn an_envelopes_owner_is_read_alone() {
    let greet = sequence("greet", "hello");
    let owned = encode(&greet, Some("alice")).unwrap();
    assert_eq!(owner_of("greet", &owned).unwrap().as_deref(), Some("alice"));
    let ownerless = encode(&greet, None).unwrap();
    assert_eq!(owner_of("greet", &ownerless).unwrap(), None);
    let deep = format!(
        r#"{{"format": 1, "owner": "bob", "sequence": {}1{}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    assert_eq!(
        owner_of("deep", deep.as_bytes()).unwrap().as_deref(),
        Some("bob")
    );
    for broken in [
        &b"{"[..],
        b"[]",
        br#"{"owner": "bob"}"#,
        br#"{"owner": 1, "sequence": {}}"#,
    ] {
        assert!(
            matches!(owner_of("x", broken), Err(StorageError::Corrupt { .. })),
            "{}",
            String::from_utf8_lossy(broken)
        );
    }
}
