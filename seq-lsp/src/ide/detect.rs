//! Which JSON documents are tool sequences, decided by content so that `package.json` and other
//! JSON in the workspace stay quiet.

use seq_syntax::escape::unescape;
use seq_syntax::fields::key;
use seq_syntax::json::cursor::{Kind, Tok, Tokens};
use std::borrow::Cow;

/// Whether `text` is a tool sequence. The rule, read from the text's tokens (so that it holds
/// for a file being typed, with syntax errors):
///
/// 1. the first token is `{`: the top-level value is an object; and
/// 2. either that object has a `groups` key whose value starts with `[`, or an object in an
///    array under one of its keys has a `tools` key (a group, under a `groups` key still
///    misspelt).
///
/// Comments are skipped like whitespace. An empty file, an array, or an object without either
/// key (`package.json`, `tsconfig.json`, a catalog file) is not a sequence.
///
/// ```
/// use seq_lsp::ide::is_sequence_document;
///
/// assert!(is_sequence_document(r#"{"name": "demo", "groups": []}"#));
/// assert!(is_sequence_document(r#"{"name": "demo", "groups": [{"name": "g", "tools": "#));
/// assert!(is_sequence_document(r#"{"grups": [{"name": "g", "tools": ""}]}"#));
/// assert!(!is_sequence_document(r#"{"name": "app", "dependencies": {"groups": []}}"#));
/// assert!(!is_sequence_document(r#"{"config": {"tools": "x"}}"#));
/// assert!(!is_sequence_document(r#"[{"name": "cmd_run", "parameters": {}}]"#));
/// ```
pub fn is_sequence_document(text: &str) -> bool {
    // Read lazily, a bracket stack over the lexer's tokens rather than the grammar's tree: in a
    // sequence the deciding `"groups": [` comes within its first lines, and this runs on every
    // keystroke in a file of any size.
    let mut tokens = Tokens::new(text).peekable();
    if tokens.peek().map(|t| t.kind) != Some(Kind::LBrace) {
        return false;
    }
    // Open structures, `true` for an object.
    let mut open: Vec<bool> = Vec::new();
    let mut before = Kind::Other;
    let mut groups_key = false;
    for tok in tokens {
        if groups_key {
            if tok.kind == Kind::LBrack {
                return true;
            }
            groups_key = tok.kind == Kind::Colon;
        }
        let is_key = matches!(tok.kind, Kind::String { .. } | Kind::Word)
            && open.last() == Some(&true)
            && matches!(before, Kind::LBrace | Kind::Comma);
        if is_key {
            let key = key_text(text, &tok);
            if open.len() == 1 && key == key::GROUPS {
                groups_key = true;
            } else if open.len() == 3 && key == key::TOOLS && open.get(1) == Some(&false) {
                return true;
            }
        }
        match tok.kind {
            Kind::LBrace => open.push(true),
            Kind::LBrack => open.push(false),
            Kind::RBrace | Kind::RBrack => {
                open.pop();
                if open.is_empty() {
                    // The top-level value is complete.
                    return false;
                }
            }
            Kind::Colon
            | Kind::Comma
            | Kind::String { .. }
            | Kind::Number
            | Kind::Word
            | Kind::Ref
            | Kind::Other => {}
        }
        before = tok.kind;
    }
    false
}

/// A key's text, unescaped only when it holds an escape.
fn key_text<'t>(text: &'t str, tok: &Tok) -> Cow<'t, str> {
    let raw = text.get(tok.content()).unwrap_or("");
    if raw.contains('\\') {
        Cow::Owned(unescape(raw, 0).0.text.into_owned())
    } else {
        Cow::Borrowed(raw)
    }
}
