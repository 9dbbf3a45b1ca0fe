//! Requests: positions in, positions out; every answer comes from the ide layer. A request about
//! a document that is not a sequence gets an empty answer, not an error.

use super::analysis::Analysis;
use super::diagnostics;
use super::encoding::Lines;
use super::semantic;
use super::workspace::Document;
use crate::ide::{self, FileId};
use lsp_server::{ErrorCode, Request, Response};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest,
    PrepareRenameRequest, References, Rename, Request as _, SemanticTokensFullRequest,
};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CompletionItemKind,
    CompletionParams, CompletionResponse, CompletionTextEdit, DocumentSymbol, DocumentSymbolParams,
    DocumentSymbolResponse, Documentation, GotoDefinitionParams, GotoDefinitionResponse, Hover,
    HoverContents, HoverParams, InsertTextFormat, Location, MarkupContent, MarkupKind,
    PrepareRenameResponse, ReferenceParams, RenameParams, SemanticTokens, SemanticTokensParams,
    SemanticTokensResult, SymbolInformation, SymbolKind, TextDocumentPositionParams, TextEdit, Uri,
    WorkspaceEdit,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;

const METHODS: &[&str] = &[
    HoverRequest::METHOD,
    GotoDefinition::METHOD,
    References::METHOD,
    PrepareRenameRequest::METHOD,
    Rename::METHOD,
    Completion::METHOD,
    CodeActionRequest::METHOD,
    DocumentSymbolRequest::METHOD,
    SemanticTokensFullRequest::METHOD,
];

/// Whether `method` is a request the worker answers.
pub fn handles(method: &str) -> bool {
    METHODS.contains(&method)
}

/// Why a request got no result: the JSON-RPC error code and a message for the user.
struct Failure(ErrorCode, String);

pub fn handle(analysis: &Analysis, request: Request) -> Response {
    let id = request.id.clone();
    let answer = match request.method.as_str() {
        HoverRequest::METHOD => answer(analysis, request, hover),
        GotoDefinition::METHOD => answer(analysis, request, definition),
        References::METHOD => answer(analysis, request, references),
        PrepareRenameRequest::METHOD => answer(analysis, request, prepare_rename),
        Rename::METHOD => answer(analysis, request, rename),
        Completion::METHOD => answer(analysis, request, completion),
        CodeActionRequest::METHOD => answer(analysis, request, code_actions),
        DocumentSymbolRequest::METHOD => answer(analysis, request, document_symbols),
        SemanticTokensFullRequest::METHOD => answer(analysis, request, semantic_tokens),
        other => Err(Failure(
            ErrorCode::MethodNotFound,
            format!("seqc does not handle `{other}`"),
        )),
    };
    match answer {
        Ok(value) => Response::new_ok(id, value),
        Err(Failure(code, message)) => Response::new_err(id, code as i32, message),
    }
}

/// Parses the parameters (malformed ones are an `InvalidParams` error) and serializes the answer.
fn answer<P: DeserializeOwned, R: Serialize>(
    analysis: &Analysis,
    request: Request,
    f: fn(&Analysis, P) -> Result<R, Failure>,
) -> Result<serde_json::Value, Failure> {
    let params: P = serde_json::from_value(request.params).map_err(|err| {
        Failure(
            ErrorCode::InvalidParams,
            format!("invalid parameters for `{}`: {err}", request.method),
        )
    })?;
    let result = f(analysis, params)?;
    serde_json::to_value(result).map_err(|err| Failure(ErrorCode::InternalError, err.to_string()))
}

fn lines<'a>(analysis: &'a Analysis, doc: &'a Document) -> Lines<'a> {
    Lines {
        text: &doc.text,
        index: &doc.index,
        encoding: analysis.snapshot.encoding,
    }
}

/// The sequence file and the byte offset a position names.
fn at<'a>(
    analysis: &'a Analysis,
    params: &TextDocumentPositionParams,
) -> Option<(FileId, &'a Document, u32)> {
    let (file, doc) = analysis.file(&params.text_document.uri)?;
    let offset = lines(analysis, doc).offset(params.position);
    Some((file, doc, offset))
}

fn location(analysis: &Analysis, found: ide::Location) -> Option<Location> {
    let doc = analysis.document(found.file)?;
    Some(Location::new(
        doc.uri.clone(),
        lines(analysis, doc).range(found.span),
    ))
}

#[allow(
    clippy::mutable_key_type,
    reason = "lsp-types hashes and compares a Uri by its text; the cell inside is a parse cache"
)]
fn workspace_edit(analysis: &Analysis, edits: Vec<ide::FileEdit>) -> WorkspaceEdit {
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for edit in edits {
        let Some(doc) = analysis.document(edit.file) else {
            continue;
        };
        changes.entry(doc.uri.clone()).or_default().push(TextEdit {
            range: lines(analysis, doc).range(edit.span),
            new_text: edit.new_text,
        });
    }
    WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    }
}

fn hover(analysis: &Analysis, params: HoverParams) -> Result<Option<Hover>, Failure> {
    let Some((file, doc, offset)) = at(analysis, &params.text_document_position_params) else {
        return Ok(None);
    };
    Ok(analysis.ide.hover(file, offset).map(|found| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: found.markdown,
        }),
        range: Some(lines(analysis, doc).range(found.span)),
    }))
}

fn definition(
    analysis: &Analysis,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>, Failure> {
    let Some((file, _, offset)) = at(analysis, &params.text_document_position_params) else {
        return Ok(None);
    };
    let found: Vec<Location> = analysis
        .ide
        .definition(file, offset)
        .into_iter()
        .filter_map(|l| location(analysis, l))
        .collect();
    Ok((!found.is_empty()).then_some(GotoDefinitionResponse::Array(found)))
}

fn references(
    analysis: &Analysis,
    params: ReferenceParams,
) -> Result<Option<Vec<Location>>, Failure> {
    let Some((file, _, offset)) = at(analysis, &params.text_document_position) else {
        return Ok(None);
    };
    let include = params.context.include_declaration;
    Ok(Some(
        analysis
            .ide
            .references(file, offset, include)
            .into_iter()
            .filter_map(|l| location(analysis, l))
            .collect(),
    ))
}

fn prepare_rename(
    analysis: &Analysis,
    params: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>, Failure> {
    let Some((file, doc, offset)) = at(analysis, &params) else {
        return Ok(None);
    };
    match analysis.ide.prepare_rename(file, offset) {
        Ok(span) => Ok(Some(PrepareRenameResponse::Range(
            lines(analysis, doc).range(span),
        ))),
        Err(err) => Err(Failure(ErrorCode::RequestFailed, err.message)),
    }
}

fn rename(analysis: &Analysis, params: RenameParams) -> Result<Option<WorkspaceEdit>, Failure> {
    let Some((file, _, offset)) = at(analysis, &params.text_document_position) else {
        return Err(Failure(
            ErrorCode::RequestFailed,
            "only names in sequence files can be renamed".to_owned(),
        ));
    };
    match analysis.ide.rename(file, offset, &params.new_name) {
        Ok(edits) => Ok(Some(workspace_edit(analysis, edits))),
        Err(err) => Err(Failure(ErrorCode::RequestFailed, err.message)),
    }
}

fn completion(
    analysis: &Analysis,
    params: CompletionParams,
) -> Result<Option<CompletionResponse>, Failure> {
    let Some((file, doc, offset)) = at(analysis, &params.text_document_position) else {
        return Ok(None);
    };
    let lines = lines(analysis, doc);
    let snippets = analysis.snapshot.client.snippets;
    let items = analysis
        .ide
        .completion(file, offset)
        .into_iter()
        .enumerate()
        .map(|(rank, item)| completion_item(item, rank, lines, offset, snippets))
        .collect();
    Ok(Some(CompletionResponse::Array(items)))
}

fn completion_item(
    item: ide::CompletionItem,
    rank: usize,
    lines: Lines<'_>,
    cursor: u32,
    snippets: bool,
) -> lsp_types::CompletionItem {
    let plain = if item.snippet {
        plain_snippet(&item.insert_text)
    } else {
        item.insert_text.clone()
    };
    let (new_text, format) = if item.snippet && snippets {
        (item.insert_text, InsertTextFormat::SNIPPET)
    } else {
        (plain.clone(), InsertTextFormat::PLAIN_TEXT)
    };
    // Clients filter on the text between the edit's start and the cursor: when that is the
    // start of what gets inserted (a quote, `$args.`) rather than of the label, say so.
    let typed = lines
        .text
        .get(item.edit.start as usize..cursor as usize)
        .unwrap_or_default();
    let filter_text = (plain != item.label && plain.starts_with(typed)).then_some(plain);
    lsp_types::CompletionItem {
        label: item.label,
        kind: Some(completion_kind(item.kind)),
        detail: item.detail,
        documentation: item.documentation.map(|value| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            })
        }),
        // The ide's order is meaningful (required fields first, closest names first).
        sort_text: Some(format!("{rank:05}")),
        filter_text,
        insert_text_format: Some(format),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: lines.range(item.edit),
            new_text,
        })),
        ..lsp_types::CompletionItem::default()
    }
}

fn completion_kind(kind: ide::CompletionKind) -> CompletionItemKind {
    match kind {
        ide::CompletionKind::Field => CompletionItemKind::FIELD,
        ide::CompletionKind::EnumValue => CompletionItemKind::ENUM_MEMBER,
        ide::CompletionKind::Slot => CompletionItemKind::VARIABLE,
        ide::CompletionKind::Tool => CompletionItemKind::FUNCTION,
        ide::CompletionKind::Group => CompletionItemKind::METHOD,
        ide::CompletionKind::Sequence => CompletionItemKind::MODULE,
        ide::CompletionKind::Snippet => CompletionItemKind::SNIPPET,
    }
}

/// A snippet as plain text, for clients without snippet support: placeholders become their
/// default text, tab stops disappear, escapes are undone.
fn plain_snippet(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len());
    let mut chars = snippet.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                if let Some(escaped) = chars.next() {
                    out.push(escaped);
                }
            }
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                if chars.peek() == Some(&':') {
                    chars.next();
                }
            }
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            // The end of a placeholder (a literal `}` is escaped).
            '}' => {}
            other => out.push(other),
        }
    }
    out
}

fn code_actions(
    analysis: &Analysis,
    params: CodeActionParams,
) -> Result<Option<Vec<CodeActionOrCommand>>, Failure> {
    let wants_fixes = params.context.only.as_ref().is_none_or(|only| {
        only.iter()
            .any(|kind| CodeActionKind::QUICKFIX.as_str().starts_with(kind.as_str()))
    });
    let Some((file, doc)) = analysis.file(&params.text_document.uri) else {
        return Ok(None);
    };
    if !wants_fixes {
        return Ok(Some(Vec::new()));
    }
    let lines = lines(analysis, doc);
    let found = analysis.ide.diagnostics(file);
    let actions = analysis
        .ide
        .code_actions(file, lines.span(params.range))
        .into_iter()
        .map(|action| {
            let fixed = found
                .get(action.diagnostic)
                .map(|d| diagnostics::to_lsp(d, lines, &doc.uri));
            CodeActionOrCommand::CodeAction(CodeAction {
                title: action.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: fixed.map(|d| vec![d]),
                edit: Some(workspace_edit(analysis, action.edits)),
                is_preferred: Some(action.preferred),
                ..CodeAction::default()
            })
        })
        .collect();
    Ok(Some(actions))
}

fn document_symbols(
    analysis: &Analysis,
    params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>, Failure> {
    let Some((file, doc)) = analysis.file(&params.text_document.uri) else {
        return Ok(None);
    };
    let lines = lines(analysis, doc);
    let symbols = analysis.ide.document_symbols(file);
    if analysis.snapshot.client.nested_symbols {
        let nested = symbols.into_iter().map(|s| nested(s, lines)).collect();
        return Ok(Some(DocumentSymbolResponse::Nested(nested)));
    }
    let mut flat = Vec::new();
    for symbol in symbols {
        flatten(symbol, None, &doc.uri, lines, &mut flat);
    }
    Ok(Some(DocumentSymbolResponse::Flat(flat)))
}

fn symbol_kind(kind: ide::SymbolKind) -> SymbolKind {
    match kind {
        ide::SymbolKind::Sequence => SymbolKind::MODULE,
        ide::SymbolKind::Group => SymbolKind::FUNCTION,
        ide::SymbolKind::Item => SymbolKind::EVENT,
    }
}

#[allow(deprecated)] // `deprecated` is a required field of the struct, superseded by `tags`.
fn nested(symbol: ide::Symbol, lines: Lines<'_>) -> DocumentSymbol {
    DocumentSymbol {
        name: symbol.name,
        detail: symbol.detail,
        kind: symbol_kind(symbol.kind),
        tags: None,
        deprecated: None,
        range: lines.range(symbol.span),
        selection_range: lines.range(symbol.selection_span),
        children: Some(
            symbol
                .children
                .into_iter()
                .map(|child| nested(child, lines))
                .collect(),
        ),
    }
}

#[allow(deprecated)] // As above.
fn flatten(
    symbol: ide::Symbol,
    container: Option<&str>,
    uri: &Uri,
    lines: Lines<'_>,
    out: &mut Vec<SymbolInformation>,
) {
    out.push(SymbolInformation {
        name: symbol.name.clone(),
        kind: symbol_kind(symbol.kind),
        tags: None,
        deprecated: None,
        location: Location::new(uri.clone(), lines.range(symbol.span)),
        container_name: container.map(str::to_owned),
    });
    for child in symbol.children {
        flatten(child, Some(&symbol.name), uri, lines, out);
    }
}

fn semantic_tokens(
    analysis: &Analysis,
    params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>, Failure> {
    let Some((file, doc)) = analysis.file(&params.text_document.uri) else {
        return Ok(None);
    };
    let tokens = analysis.ide.semantic_tokens(file);
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: None,
        data: semantic::encode(&tokens, lines(analysis, doc)),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_read_as_plain_text() {
        assert_eq!(
            plain_snippet(r#"{\\"tool\\":\\"echo\\",\\"args\\":{\\"value\\":${1:null}\}\} ;"#),
            r#"{\"tool\":\"echo\",\"args\":{\"value\":null}} ;"#
        );
        assert_eq!(plain_snippet("a$1b$0"), "ab");
        assert_eq!(plain_snippet(r"\$args"), "$args");
    }
}
