//! Which JSON documents are tool sequences, decided by content so that `package.json` and other
//! JSON in the workspace stay quiet.

use seq_syntax::fields::key;
use seq_syntax::json::lenient::{Kind, Role, Tokens, Walker};

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
    // Read lazily: in a sequence the deciding `"groups": [` comes within its first lines, and
    // this runs on every keystroke in a file of any size.
    let mut tokens = Tokens::new(text).peekable();
    if tokens.peek().map(|t| t.kind) != Some(Kind::LBrace) {
        return false;
    }
    let mut walker = Walker::shape_only();
    let mut groups_key = false;
    for tok in tokens {
        if groups_key {
            if tok.kind == Kind::LBrack {
                return true;
            }
            if tok.kind != Kind::Colon {
                groups_key = false;
            }
        }
        let depth = walker.frames.len();
        match walker.feed(text, &tok) {
            Role::Key(key) if depth == 1 && key == key::GROUPS => groups_key = true,
            Role::Key(key)
                if depth == 3
                    && key == key::TOOLS
                    && walker.frames.get(1).is_some_and(|f| !f.object) =>
            {
                return true;
            }
            Role::Key(_) | Role::Value | Role::Other => {}
        }
        if walker.frames.is_empty() {
            // The top-level value is complete.
            return false;
        }
    }
    false
}
