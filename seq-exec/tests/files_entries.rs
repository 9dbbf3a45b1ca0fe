//! `files_stat`, `files_delete` and `files_move` (docs/reference.md, "The file tools"): what
//! each returns, `absent` for a path that is not there, and a link told, deleted and moved as
//! itself, never as what it leads to.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::Reason;
use seq_exec::builtin::BuiltinHost;
use seq_test_support::{assert_field, assert_refused, call_local, refused, root_beside_outside};
use serde_json::json;
use std::os::unix::fs::symlink;

/// A root inside a temporary directory, with a directory `outside` beside it.
fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let inside = [("a.txt", "hello"), ("d/e/deep.txt", "x")];
    let (root, _) = root_beside_outside(dir.path(), &inside, &[("keep.txt", "keep")]);
    (dir, root)
}

/// What `files_delete` returns for `args`, which must succeed.
async fn deleted(host: &BuiltinHost, args: serde_json::Value) -> serde_json::Value {
    call_local(host, "files_delete", args).await.unwrap()
}

#[tokio::test]
async fn stat_tells_each_kind_and_never_fails_for_a_missing_path() {
    let (dir, root) = tree();
    symlink(dir.path().join("outside"), root.join("out-link")).unwrap();
    let host = BuiltinHost::new(&root);
    let stat = |path: &str| {
        let host = &host;
        let path = path.to_owned();
        async move { call_local(host, "files_stat", json!({ "path": path })).await }
    };
    let file = stat("a.txt").await.unwrap();
    assert_eq!(
        (&file["exists"], &file["kind"], &file["size"]),
        (&json!(true), &json!("file"), &json!(5))
    );
    assert!(file["modified_ms"].as_i64().unwrap() > 0, "{file}");
    assert_eq!(stat("d").await.unwrap()["kind"], "dir");
    assert_eq!(stat("").await.unwrap()["kind"], "dir");
    // The link itself, though it leads outside: nothing of what is there is told.
    assert_eq!(stat("out-link").await.unwrap()["kind"], "link");
    let absent = json!({"exists": false, "kind": null, "size": null, "modified_ms": null});
    for missing in ["nope", "no/dir/nope", "a.txt/below"] {
        assert_eq!(stat(missing).await.unwrap(), absent, "{missing}");
    }
    // Through the link is outside: refused, as every file tool refuses it.
    let error = stat("out-link/keep.txt").await.unwrap_err();
    assert_eq!(error.reason, Reason::Unauthorized);
}

#[tokio::test]
async fn delete_takes_a_file_an_empty_directory_or_with_recursive_a_tree() {
    let (_dir, root) = tree();
    std::fs::create_dir(root.join("empty")).unwrap();
    let host = BuiltinHost::new(&root);
    assert_eq!(
        deleted(&host, json!({"path": "a.txt"})).await,
        json!({"path": "a.txt", "kind": "file", "removed": 1})
    );
    assert!(!root.join("a.txt").exists());
    deleted(&host, json!({"path": "empty"})).await;
    let full = refused(&host, "files_delete", json!({"path": "d"})).await;
    assert_eq!(full.reason, Reason::Failed, "{full:?}");
    assert!(full.hint.unwrap().contains("recursive"));
    assert!(root.join("d/e/deep.txt").exists());
    assert_eq!(
        deleted(&host, json!({"path": "d", "recursive": true})).await,
        json!({"path": "d", "kind": "dir", "removed": 3})
    );
    assert!(!root.join("d").exists());
    let again = refused(&host, "files_delete", json!({"path": "d"})).await;
    assert_eq!(
        (again.reason, again.detail.as_deref()),
        (Reason::Absent, Some("`d` does not exist"))
    );
    for root_itself in ["", ".", "./"] {
        let error = refused(
            &host,
            "files_delete",
            json!({"path": root_itself, "recursive": true}),
        )
        .await;
        assert_eq!(error.reason, Reason::ArgError, "{root_itself:?}");
    }
    assert!(root.exists());
}

#[tokio::test]
async fn delete_removes_a_link_never_what_it_leads_to() {
    let (dir, root) = tree();
    let outside = dir.path().join("outside");
    symlink(&outside, root.join("d/out-link")).unwrap();
    symlink(&outside, root.join("top-link")).unwrap();
    let host = BuiltinHost::new(&root);
    assert_eq!(
        deleted(&host, json!({"path": "top-link", "recursive": true})).await["kind"],
        "link"
    );
    call_local(
        &host,
        "files_delete",
        json!({"path": "d", "recursive": true}),
    )
    .await
    .unwrap();
    assert!(!root.join("top-link").exists() && !root.join("d").exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "keep"
    );
}

#[tokio::test]
async fn delete_refuses_a_tree_deeper_than_its_bound() {
    let (_dir, root) = tree();
    let mut deep = root.join("deep");
    for _ in 0..=seq_exec::builtin::MAX_DELETE_DEPTH {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("leaf"), "x").unwrap();
    let host = BuiltinHost::new(&root);
    let error = refused(
        &host,
        "files_delete",
        json!({"path": "deep", "recursive": true}),
    )
    .await;
    assert_refused(&error, Reason::Failed, "deeper than");
}

#[tokio::test]
async fn move_renames_creates_parents_and_replaces_only_when_asked() {
    let (dir, root) = tree();
    std::fs::write(root.join("b.txt"), "other").unwrap();
    symlink(dir.path().join("outside"), root.join("link")).unwrap();
    let host = BuiltinHost::new(&root);
    assert_eq!(
        call_local(
            &host,
            "files_move",
            json!({"from": "a.txt", "to": "new/dir/a.txt"})
        )
        .await
        .unwrap(),
        json!({"from": "a.txt", "to": "new/dir/a.txt"})
    );
    assert_eq!(
        std::fs::read_to_string(root.join("new/dir/a.txt")).unwrap(),
        "hello"
    );
    let onto_a_file = json!({"from": "new/dir/a.txt", "to": "b.txt"});
    let taken = refused(&host, "files_move", onto_a_file).await;
    assert_field(&taken, Reason::Failed, "to");
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "other"
    );
    call_local(
        &host,
        "files_move",
        json!({"from": "new/dir/a.txt", "to": "b.txt", "replace": true}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "hello"
    );
    // A link moves as itself.
    call_local(&host, "files_move", json!({"from": "link", "to": "d/link"}))
        .await
        .unwrap();
    assert!(
        std::fs::symlink_metadata(root.join("d/link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let gone = refused(&host, "files_move", json!({"from": "nope", "to": "x"})).await;
    assert_field(&gone, Reason::Absent, "from");
    let root_itself = refused(&host, "files_move", json!({"from": ".", "to": "x"})).await;
    assert_eq!(root_itself.reason, Reason::ArgError);
}

#[tokio::test]
async fn the_data_directory_is_neither_deleted_nor_moved_nor_held_by_what_is() {
    let (_dir, root) = tree();
    std::fs::create_dir_all(root.join("d/data")).unwrap();
    let host = BuiltinHost::new(&root).with_hidden(&root.join("d/data"));
    for (tool, args, field) in [
        (
            "files_delete",
            json!({"path": "d", "recursive": true}),
            "path",
        ),
        ("files_delete", json!({"path": "d/data/x"}), "path"),
        (
            "files_move",
            json!({"from": "d", "to": "elsewhere"}),
            "from",
        ),
        (
            "files_move",
            json!({"from": "a.txt", "to": "d/data/a"}),
            "to",
        ),
    ] {
        let error = refused(&host, tool, args.clone()).await;
        assert_eq!(
            (error.reason, error.field.as_deref()),
            (Reason::Unauthorized, Some(field)),
            "{tool} {args}"
        );
    }
    assert!(root.join("d/data").exists() && root.join("a.txt").exists());
}
