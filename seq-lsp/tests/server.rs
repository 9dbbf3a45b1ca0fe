//! The server through the protocol: an in-process client (tests/common) sends what an editor
//! sends and checks what the server publishes and answers.

mod common;

use common::{Client, Offer, codes, marked, with_code, workspace};
use lsp_types::{DiagnosticSeverity, FileChangeType, FileEvent};

/// A `tools` string whose culprit sits after CJK text and escaped quotes on the same line: UTF-8
/// and UTF-16 columns differ there, and both differ from columns in the unescaped item.
const CJK_ESCAPED: &str = r#"{"name": "问候", "groups": [{"name": "打招呼", "in": {"who": "string"}, "out": {"said": "string"},
  "tools": "{\"tool\":\"echo\",\"args\":{\"value\":\"你好 \\\"主机\\\" ┃$args.whom┃\"},\"as\":\"said\"} ;"}]}
"#;

#[test]
fn ranges_follow_the_negotiated_encoding_through_cjk_and_escapes() {
    let (text, at) = marked(CJK_ESCAPED);
    let mut columns = Vec::new();
    for (offer, kind) in [
        (Offer::Default, lsp_types::PositionEncodingKind::UTF16),
        (Offer::Utf8, lsp_types::PositionEncodingKind::UTF8),
    ] {
        let root = workspace(&format!("encoding-{}", kind.as_str()), &[]);
        let mut client = Client::start(&root, offer);
        assert_eq!(client.encoding, kind);
        let uri = client.open("greet.json", &text);
        let published = client.diagnostics_of_version(&uri, 1);
        let undeclared = with_code(&published, "E0502");
        assert_eq!(undeclared.range, client.range(&text, at[0], at[1]));
        assert_eq!(undeclared.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(undeclared.source.as_deref(), Some("seqc"));
        columns.push(undeclared.range.start.character);
        client.shutdown();
    }
    // The same byte offset, counted in UTF-16 units and in bytes: the CJK text is before it.
    assert!(columns[0] < columns[1], "{columns:?}");
}

#[test]
fn a_json_file_that_is_not_a_sequence_stays_quiet() {
    let package = r#"{"name": "web", "version": "1.0.0", "scripts": {"build": "vite"}}"#;
    // Broken sequences where the walk never looks: dependencies, build output, version control.
    let broken = DEPLOY.replace("$args.version", "$args.verison");
    let root = workspace(
        "quiet",
        &[
            ("package.json", package),
            ("tsconfig.json", "{}"),
            ("node_modules/dep/seq.json", &broken),
            ("target/seq.json", &broken),
            (".git/seq.json", &broken),
        ],
    );
    let mut client = Client::start(&root, Offer::Default);
    let package_uri = client.open("package.json", package);
    let (text, _) = marked(CJK_ESCAPED);
    let sequence = client.open("greet.json", &text);
    client.diagnostics_of_version(&sequence, 1);
    client.sync();
    for published in &client.published {
        assert!(
            published.diagnostics.is_empty() || published.uri == sequence,
            "a non-sequence file lit up: {published:#?}"
        );
    }
    assert!(client.last_diagnostics(&package_uri).is_empty());
    client.shutdown();
}

const DEPLOY: &str = r#"{"name": "deploy", "groups": [{"name": "ship", "in": {"version": "string"},
  "tools": "{\"tool\":\"cmd_run\",\"args\":{\"command\":\"./ship.sh $args.version\"}} ;"}]}
"#;

const DEPLOY_CALLING_ROLLBACK: &str = r##"{"name": "deploy", "groups": [{"name": "ship", "in": {"version": "string"},
  "tools": "{\"tool\":\"cmd_run\",\"args\":{\"command\":\"./ship.sh $args.version\"}} ; {\"tool\":\"seq_call\",\"args\":{\"target\":\"#rollback\",\"args\":{\"version\":\"$args.version\"}}} ;"}]}
"##;

const ROLLBACK: &str = r##"{"name": "rollback", "groups": [{"name": "restore", "in": {"version": "string"},
  "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"#deploy\",\"args\":{\"version\":\"$args.version\"}}} ;"}]}
"##;

#[test]
fn a_cycle_across_files_appears_in_both_and_disappears_from_both() {
    let root = workspace(
        "cycle",
        &[("deploy.json", DEPLOY), ("sub/rollback.json", ROLLBACK)],
    );
    let mut client = Client::start(&root, Offer::Default);
    let rollback = client.uri("sub/rollback.json");
    let deploy = client.open("deploy.json", DEPLOY);
    let clean = client.diagnostics_of_version(&deploy, 1);
    assert!(clean.diagnostics.is_empty(), "{clean:#?}");

    client.replace(&deploy, 2, DEPLOY_CALLING_ROLLBACK);
    let cyclic = client.diagnostics_of_version(&deploy, 2);
    assert_eq!(codes(&cyclic.diagnostics), ["E0602"]);
    // rollback.json is not open: the workspace index checked it from disk, and it depends on
    // deploy.json, so it is re-checked and republished too.
    let other = client.diagnostics_until(&rollback, "the cycle in rollback.json", |p| {
        codes(&p.diagnostics) == ["E0602"]
    });
    assert_eq!(other.version, None);

    client.replace(&deploy, 3, DEPLOY);
    let fixed = client.diagnostics_of_version(&deploy, 3);
    assert!(fixed.diagnostics.is_empty(), "{fixed:#?}");
    client.diagnostics_until(&rollback, "the cycle gone from rollback.json", |p| {
        p.diagnostics.is_empty()
    });
    client.shutdown();
}

/// Version `k` reads an undeclared slot `k` columns further right than version 0 would.
fn version_text(k: usize) -> (String, Vec<u32>) {
    let padding = " ".repeat(k);
    let fixture = format!(
        r#"{{"name": "fast", "groups": [{{"name": "g", "out": {{"said": "string"}},
  "tools": "{{\"tool\":\"echo\",\"args\":{{\"value\":\"{padding}┃$args.late┃\"}},\"as\":\"said\"}} ;"}}]}}
"#
    );
    marked(&fixture)
}

#[test]
fn results_for_older_versions_are_never_published_after_newer_ones() {
    let root = workspace("stale", &[]);
    let mut client = Client::start(&root, Offer::Default);
    let uri = client.open("fast.json", &version_text(1).0);
    const LAST: usize = 80;
    for k in 2..=LAST {
        client.replace(&uri, k as i32, &version_text(k).0);
    }
    let last = client.diagnostics_of_version(&uri, LAST as i32);
    let (text, at) = version_text(LAST);
    let undeclared = with_code(&last, "E0502");
    assert_eq!(undeclared.range, client.range(&text, at[0], at[1]));

    client.sync();
    let versions: Vec<i32> = client
        .published
        .iter()
        .filter(|p| p.uri == uri)
        .map(|p| p.version.unwrap())
        .collect();
    assert!(
        versions.windows(2).all(|w| w[0] < w[1]),
        "a publish for an older version came after a newer one: {versions:?}"
    );
    assert_eq!(versions.last(), Some(&(LAST as i32)));
    client.shutdown();
}

#[test]
fn incremental_edits_apply_in_the_negotiated_encoding() {
    for offer in [Offer::Default, Offer::Utf8] {
        let root = workspace(&format!("incremental-{offer:?}"), &[]);
        let mut client = Client::start(&root, offer);
        let (text, at) = marked(CJK_ESCAPED);
        let uri = client.open("greet.json", &text);
        client.diagnostics_of_version(&uri, 1);
        // Turn `whom` into `who` by deleting its last character, addressed after the CJK text.
        let range = client.range(&text, at[1] - 1, at[1]);
        client.edit(&uri, 2, Some(range), "");
        let fixed = client.diagnostics_of_version(&uri, 2);
        assert!(fixed.diagnostics.is_empty(), "{offer:?}: {fixed:#?}");
        client.shutdown();
    }
}

#[test]
fn a_closed_document_falls_back_to_the_file_on_disk() {
    let root = workspace("close", &[("deploy.json", DEPLOY)]);
    let mut client = Client::start(&root, Offer::Default);
    let uri = client.open("deploy.json", DEPLOY);
    client.diagnostics_of_version(&uri, 1);
    client.replace(&uri, 2, &DEPLOY.replace("$args.version", "$args.verison"));
    let broken = client.diagnostics_of_version(&uri, 2);
    assert_eq!(codes(&broken.diagnostics), ["W0503", "E0502"]);
    // Closed without saving: what counts again is the clean file on disk.
    client.close(&uri);
    let back = client.diagnostics_until(&uri, "the disk's diagnostics", |p| p.version.is_none());
    assert!(back.diagnostics.is_empty(), "{back:#?}");

    // A file outside the workspace is the client's only while open: closed, it is cleared.
    let outside = workspace("close-outside", &[("stray.json", DEPLOY)]).join("stray.json");
    let stray = common::file_uri(&outside);
    client.notify::<lsp_types::notification::DidOpenTextDocument>(
        lsp_types::DidOpenTextDocumentParams {
            text_document: lsp_types::TextDocumentItem::new(
                stray.clone(),
                "json".to_owned(),
                1,
                DEPLOY.replace("$args.version", "$args.verison"),
            ),
        },
    );
    client.diagnostics_until(&stray, "the stray file's errors", |p| {
        codes(&p.diagnostics) == ["W0503", "E0502"]
    });
    client.close(&stray);
    client.diagnostics_until(&stray, "the stray file cleared", |p| {
        p.diagnostics.is_empty()
    });
    client.shutdown();
}

const USES_DEPLOY_TOOL: &str = r#"{"name": "release", "groups": [{"name": "go",
  "tools": "{\"tool\":\"deploy\",\"args\":{\"service\":\"web\"}} ;"}]}
"#;

const GOOD_CATALOG: &str = r#"[{"name": "deploy", "description": "Rolls a service out.",
  "parameters": {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]},
  "parallel_safe": true}]
"#;

#[test]
fn the_workspace_catalog_is_loaded_watched_and_reported_when_broken() {
    let root = workspace(
        "catalog",
        &[("seq-catalog.json", "[{\"name\": \"deploy\",,}]\n")],
    );
    let mut client = Client::start(&root, Offer::Default);
    let catalog = client.uri("seq-catalog.json");
    let release = client.open("release.json", USES_DEPLOY_TOOL);
    // The broken catalog is reported in its own file; the built-in catalog is used meanwhile.
    let unknown = client.diagnostics_of_version(&release, 1);
    assert_eq!(codes(&unknown.diagnostics), ["W0505"]);
    let broken = client.diagnostics_until(&catalog, "the catalog's problem", |p| {
        !p.diagnostics.is_empty()
    });
    assert_eq!(codes(&broken.diagnostics), ["E0802"]);
    assert_eq!(
        broken.diagnostics[0].severity,
        Some(DiagnosticSeverity::ERROR)
    );
    assert_eq!(broken.diagnostics[0].range.start.line, 0);
    // The server asked to be told about changed JSON files.
    assert!(
        client
            .server_requests
            .iter()
            .any(|r| r.method == "client/registerCapability"),
        "{:?}",
        client.server_requests
    );

    std::fs::write(root.join("seq-catalog.json"), GOOD_CATALOG).unwrap();
    client.files_changed(vec![FileEvent::new(
        catalog.clone(),
        FileChangeType::CHANGED,
    )]);
    client.diagnostics_until(&catalog, "the catalog clean", |p| p.diagnostics.is_empty());
    client.diagnostics_until(&release, "`deploy` known", |p| p.diagnostics.is_empty());

    // Saving the catalog in the editor reloads it too.
    std::fs::write(root.join("seq-catalog.json"), "{\"tools\": 3}").unwrap();
    client.save(&catalog);
    client.diagnostics_until(&catalog, "the catalog broken again", |p| {
        !p.diagnostics.is_empty()
    });
    client.diagnostics_until(&release, "`deploy` unknown again", |p| {
        codes(&p.diagnostics) == ["W0505"]
    });
    client.shutdown();
}

#[test]
fn files_changed_on_disk_join_and_leave_the_workspace() {
    let root = workspace("disk", &[("deploy.json", DEPLOY)]);
    let mut client = Client::start(&root, Offer::Default);
    let deploy = client.uri("deploy.json");
    let rollback_path = root.join("rollback.json");
    std::fs::write(&rollback_path, ROLLBACK).unwrap();
    std::fs::write(root.join("deploy.json"), DEPLOY_CALLING_ROLLBACK).unwrap();
    let rollback = client.uri("rollback.json");
    client.files_changed(vec![
        FileEvent::new(rollback.clone(), FileChangeType::CREATED),
        FileEvent::new(deploy.clone(), FileChangeType::CHANGED),
    ]);
    client.diagnostics_until(&deploy, "the cycle", |p| codes(&p.diagnostics) == ["E0602"]);
    client.diagnostics_until(&rollback, "the cycle", |p| {
        codes(&p.diagnostics) == ["E0602"]
    });

    // A file changed where the walk never looks stays out of the workspace.
    let vendored = root.join("node_modules/seq.json");
    std::fs::create_dir_all(vendored.parent().unwrap()).unwrap();
    std::fs::write(&vendored, DEPLOY.replace("$args.version", "$args.verison")).unwrap();
    let vendored = common::file_uri(&vendored);
    client.files_changed(vec![FileEvent::new(
        vendored.clone(),
        FileChangeType::CREATED,
    )]);
    client.sync();

    std::fs::remove_file(&rollback_path).unwrap();
    client.files_changed(vec![FileEvent::new(
        rollback.clone(),
        FileChangeType::DELETED,
    )]);
    // Without rollback.json, `#rollback` is a call to a sequence outside the workspace.
    client.diagnostics_until(&deploy, "the cycle gone", |p| {
        codes(&p.diagnostics) == ["W0501"]
    });
    client.diagnostics_until(&rollback, "rollback cleared", |p| p.diagnostics.is_empty());
    assert!(client.published.iter().all(|p| p.uri != vendored));
    client.shutdown();
}

#[test]
fn malformed_messages_get_errors_and_the_server_carries_on() {
    let root = workspace("malformed", &[]);
    let mut client = Client::start(&root, Offer::Default);
    let unknown = client.request_raw("seqc/nonsense", serde_json::json!({}));
    assert_eq!(
        unknown.unwrap_err().code,
        lsp_server::ErrorCode::MethodNotFound as i32
    );
    // A notification with the wrong parameters is logged and ignored.
    client.notify_raw(
        "textDocument/didOpen",
        serde_json::json!({"textDocument": 3}),
    );
    client.notify_raw("textDocument/didChange", serde_json::json!(null));
    let (text, _) = marked(CJK_ESCAPED);
    let uri = client.open("greet.json", &text);
    client.diagnostics_of_version(&uri, 1);
    client.sync();
    assert!(
        client
            .notifications
            .iter()
            .any(|n| n.method == "window/logMessage"),
        "{:?}",
        client.notifications
    );
    client.shutdown();
}
