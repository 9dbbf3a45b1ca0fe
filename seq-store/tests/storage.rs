//! Storage: the stored format, names checked before they touch the file system, unreadable
//! files reported. (Atomic writes under a simulated crash are the disk store's unit tests.)

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::SequenceSource;
use seq_store::storage::{
    FORMAT, Put, SequenceStorage, Storage, StorageError, Summary, check_name, encode, list,
    owner_of,
};
use seq_syntax::ast::Sequence;
use seq_test_support::{files_in, stored};
use serde_json::json;
use std::fs;
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
    seq_test_support::parsed(&text)
}

#[test]
fn stores_the_ast_with_a_format_version() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    let hello = sequence("hello", "hi");
    storage.put(Put::new(&hello)).unwrap();

    let path = data.path().join("sequences/hello.json");
    assert_eq!(storage.path_of("hello").unwrap(), path);
    let stored: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(stored["format"], json!(FORMAT));
    assert_eq!(stored["sequence"], serde_json::to_value(&hello).unwrap());
    assert_eq!(
        seq_test_support::stored(&storage, "hello").unwrap(),
        Some(hello.clone())
    );
    assert_eq!(seq_test_support::stored(&storage, "absent").unwrap(), None);
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
    storage.put(Put::new(&sequence("s", "first"))).unwrap();
    let error = storage.put(Put::new(&sequence("s", "second"))).unwrap_err();
    assert!(matches!(error, StorageError::Exists { ref name } if name == "s"));
    assert_eq!(stored(&storage, "s").unwrap(), Some(sequence("s", "first")));
    storage
        .put(Put::new(&sequence("s", "second")).replace(true))
        .unwrap();
    assert_eq!(
        stored(&storage, "s").unwrap(),
        Some(sequence("s", "second"))
    );
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
        list(&storage).unwrap().sequences.is_empty(),
        "no directory yet"
    );
    storage.put(Put::new(&sequence("zeta", "z"))).unwrap();
    storage
        .put(
            Put::new(&sequence("alpha", "a"))
                .replace(false)
                .owner(Some("ann")),
        )
        .unwrap();
    let listing = list(&storage).unwrap();
    assert_eq!(
        listing.sequences,
        [("alpha", Some("ann")), ("zeta", None)].map(|(name, owner)| Summary {
            name: name.into(),
            groups: 2,
            items: 3,
            description: Some(format!("says {}", &name[..1])),
            args: [("who".into(), "string".into())].into(),
            owner: owner.map(Into::into),
        })
    );
    assert!(listing.broken.is_empty());

    storage.delete("zeta", None, false).unwrap();
    assert!(matches!(
        storage.delete("zeta", None, false).unwrap_err(),
        StorageError::NotFound { .. }
    ));
    let names: Vec<String> = list(&storage)
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
    storage.put(Put::new(&sequence("good", "g"))).unwrap();
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
        stored(&storage, "torn").unwrap_err(),
        StorageError::Corrupt { .. }
    ));
    assert!(matches!(
        stored(&storage, "future").unwrap_err(),
        StorageError::UnknownFormat { ref found, .. } if found == "2"
    ));
    assert!(matches!(
        stored(&storage, "renamed").unwrap_err(),
        StorageError::Corrupt { ref detail, .. } if detail.contains("`good`")
    ));
    assert!(storage.sequence("torn").is_none());

    let listing = list(&storage).unwrap();
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
    storage.put(Put::new(&sequence("deploy", "hi"))).unwrap();
    match storage.put(Put::new(&sequence("d\u{435}ploy", "planted"))) {
        Err(StorageError::Confusable { name, stored }) => {
            assert_eq!((name.as_str(), stored.as_str()), ("d\u{435}ploy", "deploy"));
        }
        other => panic!("{other:?}"),
    }
    storage
        .put(Put::new(&sequence("deploy", "again")).replace(true))
        .unwrap();
    storage
        .put(Put::new(&sequence("deploy-prod", "other")))
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
            stored(&storage, bad).unwrap_err(),
            storage.delete(bad, None, false).unwrap_err(),
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
        storage.put(Put::new(&escaping).replace(true)).unwrap_err(),
        StorageError::InvalidName { .. }
    ));
    assert_eq!(files_in(data.path()), Vec::<String>::new());
    assert!(check_name(&"x".repeat(64)).is_ok());
    assert!(check_name("巡检三节点").is_ok());
    assert!(check_name(".hidden").is_ok());
}

#[test]
fn leftovers_of_other_processes_are_removed_only_when_stale() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(Put::new(&sequence("s", "x"))).unwrap();
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
    storage
        .put(Put::new(&sequence("s", "y")).replace(true))
        .unwrap();
    assert!(fresh.exists(), "possibly another process's write in flight");
    assert!(!stale.exists());
}

#[test]
fn delete_is_by_name_only() {
    let data = tempfile::tempdir().unwrap();
    let storage = Storage::new(data.path());
    storage.put(Put::new(&sequence("keep", "k"))).unwrap();
    fs::write(data.path().join("outside.json"), "{}").unwrap();
    assert!(matches!(
        storage.delete("../outside", None, false).unwrap_err(),
        StorageError::InvalidName { .. }
    ));
    assert!(data.path().join("outside.json").exists());
    assert!(storage.exists("keep").unwrap());
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
