//! Each request through the protocol, on fixtures with CJK names inside escaped `tools` strings
//! (so a wrong position conversion shows): the server converts positions and results, the ide
//! layer (tested on its own in tests/ide.rs) decides what they are.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]
#![allow(
    clippy::mutable_key_type,
    reason = "lsp-types hashes and compares a Uri by its text; the cell inside is a parse cache"
)]

mod common;

use common::{Client, Offer, codes, marked, workspace};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest,
    PrepareRenameRequest, References, Rename, SemanticTokensFullRequest,
};
use lsp_types::{
    ClientCapabilities, CodeActionContext, CodeActionOrCommand, CodeActionParams,
    CompletionItemKind, CompletionParams, CompletionResponse, DocumentSymbolParams,
    DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse, HoverContents,
    HoverParams, InsertTextFormat, PartialResultParams, PrepareRenameResponse, ReferenceContext,
    ReferenceParams, RenameParams, SemanticTokensParams, SemanticTokensResult,
    TextDocumentIdentifier, Uri, WorkDoneProgressParams,
};

/// Marks: 0 the group name, 1 the `in` key, 2 the tool, 3 `$args.host`, 4 the call target,
/// 5 after `$args.` in the caller (for completion).
const INSPECT: &str = r#"{
  "name": "巡检",
  "groups": [
    {
      "name": "拉取┃单台",
      "in": { "┃host": "string" },
      "out": { "summary": "object" },
      "tools": "{\"tool\":\"cmd┃_run\",\"args\":{\"command\":\"ssh $args.ho┃st \\\"主机\\\"\"},\"as\":\"summary\"} ;"
    },
    {
      "name": "全部",
      "in": { "h": "string" },
      "out": { "r": "object" },
      "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"拉取┃单台\",\"args\":{\"host\":\"$args.┃h\"}},\"as\":\"r\"} ;"
    }
  ]
}
"#;

/// Client capabilities with these text document capabilities.
fn capable(text_document: serde_json::Value) -> ClientCapabilities {
    ClientCapabilities {
        text_document: Some(serde_json::from_value(text_document).unwrap()),
        ..ClientCapabilities::default()
    }
}

struct Fixture {
    client: Client,
    uri: Uri,
    text: String,
    marks: Vec<u32>,
}

fn open(name: &str, offer: Offer, capabilities: ClientCapabilities) -> Fixture {
    let root = workspace(name, &[]);
    let mut client = Client::start_capable(&root, offer, capabilities);
    let (text, marks) = marked(INSPECT);
    let uri = client.open("inspect.json", &text);
    let clean = client.diagnostics_of_version(&uri, 1);
    assert!(clean.diagnostics.is_empty(), "{clean:#?}");
    Fixture {
        client,
        uri,
        text,
        marks,
    }
}

/// The place of the mark `mark` in the fixture's document.
fn position(f: &Fixture, mark: usize) -> lsp_types::TextDocumentPositionParams {
    f.client
        .text_document_position(&f.uri, &f.text, f.marks[mark])
}

/// The document symbols of the fixture's document.
fn symbols(f: &mut Fixture) -> Option<DocumentSymbolResponse> {
    let params = DocumentSymbolParams {
        text_document: TextDocumentIdentifier::new(f.uri.clone()),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    f.client.request::<DocumentSymbolRequest>(params)
}

fn hover_at(f: &mut Fixture, mark: usize) -> Option<lsp_types::Hover> {
    let params = HoverParams {
        text_document_position_params: position(f, mark),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    f.client.request::<HoverRequest>(params)
}

fn markdown(hover: &lsp_types::Hover) -> &str {
    match &hover.contents {
        HoverContents::Markup(markup) => &markup.value,
        other @ (HoverContents::Scalar(_) | HoverContents::Array(_)) => {
            panic!("not Markdown: {other:?}")
        }
    }
}

#[test]
fn hover_shows_slots_tools_and_groups_in_both_encodings() {
    for offer in [Offer::Default, Offer::Utf8] {
        let mut f = open(
            &format!("hover-{offer:?}"),
            offer,
            ClientCapabilities::default(),
        );
        let slot = hover_at(&mut f, 3).unwrap();
        assert!(markdown(&slot).contains("host: string"), "{slot:?}");
        assert_eq!(f.client.text_at(&f.text, slot.range.unwrap()), "host");

        let tool = hover_at(&mut f, 2).unwrap();
        assert!(markdown(&tool).contains("command"), "{tool:?}");

        let group = hover_at(&mut f, 4).unwrap();
        assert!(markdown(&group).contains("host: string"), "{group:?}");
        assert_eq!(f.client.text_at(&f.text, group.range.unwrap()), "拉取单台");
        f.client.shutdown();
    }
}

fn definition_at(f: &mut Fixture, mark: usize) -> Vec<lsp_types::Location> {
    let params = GotoDefinitionParams {
        text_document_position_params: position(f, mark),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    match f.client.request::<GotoDefinition>(params) {
        Some(GotoDefinitionResponse::Array(found)) => found,
        Some(GotoDefinitionResponse::Scalar(one)) => vec![one],
        Some(GotoDefinitionResponse::Link(links)) => panic!("links: {links:?}"),
        None => Vec::new(),
    }
}

#[test]
fn definition_and_references_go_through_escapes() {
    let mut f = open("definition", Offer::Default, ClientCapabilities::default());
    // `$args.host` → the `in` key.
    let found = definition_at(&mut f, 3);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].uri, f.uri);
    assert_eq!(found[0].range.start, f.client.position(&f.text, f.marks[1]));
    assert_eq!(f.client.text_at(&f.text, found[0].range), "host");
    // The call target → the group's name.
    let found = definition_at(&mut f, 4);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(f.client.text_at(&f.text, found[0].range), "拉取单台");
    assert_eq!(found[0].range.start.line, 4);

    // The `in` key's references: the read in `tools` and the caller's argument that passes it;
    // with the declaration, that too.
    for (include, expected) in [(false, 2), (true, 3)] {
        let params = ReferenceParams {
            text_document_position: position(&f, 1),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
            context: ReferenceContext {
                include_declaration: include,
            },
        };
        let found = f.client.request::<References>(params).unwrap();
        assert_eq!(found.len(), expected, "{found:?}");
        assert!(
            found
                .iter()
                .all(|l| f.client.text_at(&f.text, l.range) == "host")
        );
    }
    f.client.shutdown();
}

#[test]
fn rename_edits_the_group_and_its_calls_inside_tools_strings() {
    let mut f = open("rename", Offer::Default, ClientCapabilities::default());
    let position = position(&f, 4);
    let prepared = f
        .client
        .request::<PrepareRenameRequest>(position.clone())
        .unwrap();
    let PrepareRenameResponse::Range(range) = prepared else {
        panic!("{prepared:?}");
    };
    assert_eq!(f.client.text_at(&f.text, range), "拉取单台");

    let params = RenameParams {
        text_document_position: position,
        new_name: "拉取\"一台\"".to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let edit = f.client.request::<Rename>(params).unwrap();
    let changes = edit.changes.unwrap();
    let edits = &changes[&f.uri];
    assert_eq!(edits.len(), 2, "{edits:?}");
    let renamed = f.client.apply(&f.text, edits);
    // Escaped once in the `name` string, twice inside the item's `target` string.
    assert!(renamed.contains(r#""name": "拉取\"一台\"""#), "{renamed}");
    assert!(
        renamed.contains(r#"\"target\":\"拉取\\\"一台\\\"\""#),
        "{renamed}"
    );
    let uri = f.uri.clone();
    f.client.replace(&uri, 2, &renamed);
    let after = f.client.diagnostics_of_version(&uri, 2);
    assert!(after.diagnostics.is_empty(), "{after:#?}");

    // A slot name must be an identifier: the request fails with the reason.
    let params = RenameParams {
        text_document_position: f.client.text_document_position(&uri, &renamed, f.marks[1]),
        new_name: "not a name".to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let refused = f
        .client
        .request_raw("textDocument/rename", serde_json::to_value(params).unwrap());
    assert_eq!(
        refused.unwrap_err().code,
        lsp_server::ErrorCode::RequestFailed as i32
    );
    f.client.shutdown();
}

const CALLER: &str = r##"{"name": "caller", "groups": [{"name": "go",
  "tools": "{\"tool\":\"seq_run\",\"args\":{\"name\":\"callee\"}} ; {\"tool\":\"seq_call\",\"args\":{\"target\":\"#cal┃lee\"}} ;"}]}
"##;

const CALLEE: &str = r#"{"name": "callee", "groups": [{"name": "main",
  "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;"}]}
"#;

#[test]
fn a_hash_target_leads_to_the_other_file_even_when_it_is_not_open() {
    let root = workspace("cross-file", &[("lib/callee.json", CALLEE)]);
    let mut client = Client::start(&root, Offer::Default);
    let (text, marks) = marked(CALLER);
    let uri = client.open("caller.json", &text);
    client.diagnostics_of_version(&uri, 1);
    let params = GotoDefinitionParams {
        text_document_position_params: client.text_document_position(&uri, &text, marks[0]),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let Some(GotoDefinitionResponse::Array(found)) = client.request::<GotoDefinition>(params)
    else {
        panic!("no definition");
    };
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].uri, client.uri("lib/callee.json"));
    assert_eq!(client.text_at(CALLEE, found[0].range), "callee");
    client.shutdown();
}

fn completion_at(f: &mut Fixture, offset: u32) -> Vec<lsp_types::CompletionItem> {
    let params = CompletionParams {
        text_document_position: f.client.text_document_position(&f.uri, &f.text, offset),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    };
    match f.client.request::<Completion>(params) {
        Some(CompletionResponse::Array(items)) => items,
        Some(CompletionResponse::List(list)) => list.items,
        None => Vec::new(),
    }
}

#[test]
fn completion_offers_the_enclosing_groups_inputs_after_args() {
    let mut f = open("completion", Offer::Default, ClientCapabilities::default());
    let cursor = f.marks[5];
    let items = completion_at(&mut f, cursor);
    let slot = items
        .iter()
        .find(|i| i.label == "h")
        .unwrap_or_else(|| panic!("no `h` in {items:#?}"));
    assert_eq!(slot.kind, Some(CompletionItemKind::VARIABLE));
    let Some(lsp_types::CompletionTextEdit::Edit(edit)) = &slot.text_edit else {
        panic!("{slot:?}");
    };
    assert_eq!(edit.new_text, "h");
    // The edit covers the name typed so far, and the cursor is inside it.
    assert_eq!(edit.range.start, f.client.position(&f.text, f.marks[5]));
    f.client.shutdown();
}

#[test]
fn item_snippets_degrade_to_plain_text_for_clients_without_snippets() {
    let fixture = INSPECT.replace(r#"\"as\":\"summary\"} ;"#, r#"\"as\":\"summary\"} ; ┃"#);
    let (text, marks) = marked(&fixture);
    let with = capable(serde_json::json!({
        "completion": {"completionItem": {"snippetSupport": true}}
    }));
    for (name, capabilities, format) in [
        (
            "snippets-plain",
            ClientCapabilities::default(),
            InsertTextFormat::PLAIN_TEXT,
        ),
        ("snippets", with, InsertTextFormat::SNIPPET),
    ] {
        let root = workspace(name, &[]);
        let mut client = Client::start_capable(&root, Offer::Default, capabilities);
        let uri = client.open("inspect.json", &text);
        client.diagnostics_of_version(&uri, 1);
        let mut f = Fixture {
            client,
            uri,
            text: text.clone(),
            marks: marks.clone(),
        };
        // The new mark comes fifth, after the first group's item.
        let cursor = f.marks[4];
        let items = completion_at(&mut f, cursor);
        let echo = items
            .iter()
            .find(|i| i.label == "echo" && i.kind == Some(CompletionItemKind::SNIPPET))
            .unwrap_or_else(|| panic!("no echo item in {items:#?}"));
        assert_eq!(echo.insert_text_format, Some(format));
        let Some(lsp_types::CompletionTextEdit::Edit(edit)) = &echo.text_edit else {
            panic!("{echo:?}");
        };
        assert_eq!(
            edit.new_text.contains("${1"),
            format == InsertTextFormat::SNIPPET
        );
        if format == InsertTextFormat::PLAIN_TEXT {
            assert_eq!(
                edit.new_text,
                r#"{\"tool\":\"echo\",\"args\":{\"value\":null}} ;"#
            );
        }
        f.client.shutdown();
    }
}

const TYPO: &str = r#"{"name": "t", "groups": [{"name": "g", "┃paralell┃": false,
  "tools": "{\"tool\":\"echo\",\"args\":{\"value\":\"主机\"}} ;"}]}
"#;

#[test]
fn a_quick_fix_applies_the_checkers_fix() {
    let root = workspace("quickfix", &[]);
    let mut client = Client::start(&root, Offer::Default);
    let (text, marks) = marked(TYPO);
    let uri = client.open("typo.json", &text);
    let broken = client.diagnostics_of_version(&uri, 1);
    assert_eq!(codes(&broken.diagnostics), ["E0101"]);
    let params = CodeActionParams {
        text_document: TextDocumentIdentifier::new(uri.clone()),
        range: client.range(&text, marks[0] + 2, marks[0] + 2),
        context: CodeActionContext {
            diagnostics: broken.diagnostics.clone(),
            only: None,
            trigger_kind: None,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let actions = client.request::<CodeActionRequest>(params).unwrap();
    assert_eq!(actions.len(), 1, "{actions:#?}");
    let CodeActionOrCommand::CodeAction(action) = &actions[0] else {
        panic!("{actions:?}");
    };
    assert_eq!(action.kind, Some(lsp_types::CodeActionKind::QUICKFIX));
    assert_eq!(
        action.diagnostics.as_ref().unwrap()[0],
        broken.diagnostics[0]
    );
    let edits = &action.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri];
    let fixed = client.apply(&text, edits);
    assert!(fixed.contains("\"parallel\": false"), "{fixed}");
    client.replace(&uri, 2, &fixed);
    let after = client.diagnostics_of_version(&uri, 2);
    assert!(after.diagnostics.is_empty(), "{after:#?}");
    client.shutdown();
}

#[test]
fn document_symbols_nest_sequence_groups_and_items() {
    let nested = capable(serde_json::json!({
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": true}
    }));
    let mut f = open("symbols", Offer::Default, nested);
    let Some(DocumentSymbolResponse::Nested(symbols)) = symbols(&mut f) else {
        panic!("not nested");
    };
    assert_eq!(symbols.len(), 1);
    assert_eq!(symbols[0].name, "巡检");
    let groups: Vec<&str> = symbols[0]
        .children
        .iter()
        .flatten()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(groups, ["拉取单台", "全部"]);
    let first = &symbols[0].children.as_ref().unwrap()[0];
    assert_eq!(f.client.text_at(&f.text, first.selection_range), "拉取单台");
    assert_eq!(first.children.as_ref().unwrap().len(), 1);
    f.client.shutdown();
}

#[test]
fn document_symbols_are_flat_for_clients_that_want_a_list() {
    let mut f = open(
        "symbols-flat",
        Offer::Default,
        ClientCapabilities::default(),
    );
    let Some(DocumentSymbolResponse::Flat(symbols)) = symbols(&mut f) else {
        panic!("not flat");
    };
    // The sequence, two groups, one item each.
    assert_eq!(symbols.len(), 5, "{symbols:#?}");
    assert_eq!(symbols[1].container_name.as_deref(), Some("巡检"));
    f.client.shutdown();
}

#[test]
fn semantic_tokens_cover_the_languages_inside_strings() {
    for offer in [Offer::Default, Offer::Utf8] {
        let mut f = open(
            &format!("tokens-{offer:?}"),
            offer,
            ClientCapabilities::default(),
        );
        let legend = match f
            .client
            .initialize
            .capabilities
            .semantic_tokens_provider
            .clone()
        {
            Some(lsp_types::SemanticTokensServerCapabilities::SemanticTokensOptions(o)) => o.legend,
            other => panic!("{other:?}"),
        };
        let params = SemanticTokensParams {
            text_document: TextDocumentIdentifier::new(f.uri.clone()),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
        let Some(SemanticTokensResult::Tokens(tokens)) =
            f.client.request::<SemanticTokensFullRequest>(params)
        else {
            panic!("no tokens");
        };
        // Decode the relative positions and look at what each token covers.
        let (mut line, mut start) = (0, 0);
        let mut seen = Vec::new();
        for token in &tokens.data {
            if token.delta_line > 0 {
                start = 0;
            }
            line += token.delta_line;
            start += token.delta_start;
            let range = lsp_types::Range::new(
                lsp_types::Position::new(line, start),
                lsp_types::Position::new(line, start + token.length),
            );
            let kind = legend.token_types[token.token_type as usize]
                .as_str()
                .to_owned();
            seen.push((f.client.text_at(&f.text, range).to_owned(), kind));
        }
        for expected in [
            ("host", "parameter"),
            ("$args", "namespace"),
            ("h", "parameter"),
        ] {
            assert!(
                seen.iter()
                    .any(|(t, k)| (t.as_str(), k.as_str()) == expected),
                "{offer:?}: {expected:?} not in {seen:?}"
            );
        }
        f.client.shutdown();
    }
}

#[test]
fn requests_on_other_documents_are_empty_and_malformed_ones_are_errors() {
    let mut f = open("other-docs", Offer::Default, ClientCapabilities::default());
    let package = r#"{"name": "web", "scripts": {"build": "vite"}}"#;
    let package_uri = f.client.open("package.json", package);
    let params = HoverParams {
        text_document_position_params: f.client.text_document_position(&package_uri, package, 3),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    assert_eq!(f.client.request::<HoverRequest>(params), None);
    let bad = f.client.request_raw(
        "textDocument/hover",
        serde_json::json!({"position": "here"}),
    );
    assert_eq!(
        bad.unwrap_err().code,
        lsp_server::ErrorCode::InvalidParams as i32
    );
    // Still serving.
    assert!(hover_at(&mut f, 3).is_some());
    f.client.shutdown();
}
