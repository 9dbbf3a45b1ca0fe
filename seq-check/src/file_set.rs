//! The file set: one rule for which files under a directory are sequence files, the same for
//! `seqc check DIR` and the language server's workspace, so that the terminal and the editor
//! judge the same files.
//!
//! Under a directory, a file is a sequence file when
//! 1. no directory on the way down is skipped: [`SKIPPED_DIRS`] (build output, dependencies,
//!    version control) and hidden directories (`.seqc`, `.venv`, …) hold copies or tooling
//!    JSON, never the user's sequences;
//! 2. its name ends in `.json` and it is not the workspace catalog [`CATALOG_FILE`] at the top;
//! 3. its content is a sequence ([`is_sequence_document`]): `package.json`, `tsconfig.json`
//!    and other JSON stay quiet.
//!
//! A file named explicitly (on the command line, or opened in the editor) is a sequence file
//! whatever its name; the editor still asks its content. [`walk`] is the walk (steps 1 and 2,
//! the only file-system reading in this crate); step 3 is asked of the text once read.

use seq_syntax::escape::unescape;
use seq_syntax::fields::key;
use seq_syntax::json::cursor::{Kind, Tok, Tokens};
use std::borrow::Cow;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

/// Directories never walked, besides hidden ones.
pub const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".git"];

/// The name of the workspace catalog file, read from a walked directory's top (the language
/// server's workspace folders): a catalog, not a sequence.
pub const CATALOG_FILE: &str = "seq-catalog.json";

/// Whether a walk goes into the directory named `name`: not a skipped one, not a hidden one.
pub fn walks_into(name: &OsStr) -> bool {
    name.to_str()
        .is_none_or(|name| !name.starts_with('.') && !SKIPPED_DIRS.contains(&name))
}

/// Whether the walk of `root` reads the file at `path` (below `root`): no skipped directory on
/// the way, a `*.json` name, not the catalog at the top. Its content is asked separately.
pub fn is_candidate(root: &Path, path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(root) else {
        return false;
    };
    let mut dirs = rest.components().rev().skip(1);
    path.extension().is_some_and(|ext| ext == "json")
        && !(path.parent() == Some(root) && path.file_name() == Some(OsStr::new(CATALOG_FILE)))
        && dirs.all(|c| walks_into(c.as_os_str()))
}

/// A walk's findings: the candidate files in sorted order, and the directories or entries that
/// could not be read (the command line reports them; the editor passes over them).
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<PathBuf>,
    pub errors: Vec<(PathBuf, io::Error)>,
}

/// The candidate files below `root` ([`is_candidate`]), sorted. Symbolic links to files are
/// followed; links to directories are not, so a link cycle cannot make the walk endless. A
/// dangling link is kept: reading it reports the problem instead of skipping it.
pub fn walk(root: &Path) -> Walk {
    let mut found = Walk::default();
    walk_into(root, root, &mut found);
    found.files.sort();
    found
}

fn walk_into(root: &Path, dir: &Path, found: &mut Walk) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            found.errors.push((dir.to_path_buf(), error));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                found.errors.push((dir.to_path_buf(), error));
                continue;
            }
        };
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if walks_into(&entry.file_name()) {
                walk_into(root, &path, found);
            }
        } else if is_candidate(root, &path) && !std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            found.files.push(path);
        }
    }
}

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
/// use seq_check::file_set::is_sequence_document;
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
