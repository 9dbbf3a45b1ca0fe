//! No user-facing text cites the design document or its decisions (`§7.3`, `D-2`): a user has
//! neither. Checked here: the explanations of `seqc explain`, every built-in tool definition and
//! the string literals of the crates' sources (messages, hints and help are built from them).

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use std::path::Path;

/// `§`, or a decision such as `D-10` (not `CD-ROM` nor `2D-3`).
fn citation(text: &str) -> Option<&str> {
    if let Some(at) = text.find('§') {
        return Some(&text[at..]);
    }
    text.match_indices("D-").find_map(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + 2..].chars().next();
        (!before.is_some_and(char::is_alphanumeric) && after.is_some_and(|c| c.is_ascii_digit()))
            .then(|| &text[at..])
    })
}

fn files(dir: &Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

#[test]
fn the_explanations_cite_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = Vec::new();
    files(&root.join("seq-syntax/explain"), "md", &mut pages);
    assert!(!pages.is_empty());
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        assert_eq!(citation(&text), None, "{}", page.display());
    }
}

#[test]
fn the_built_in_tool_definitions_cite_nothing() {
    for tool in seq_catalog::Catalog::builtin().tools() {
        let text = format!(
            "{} {} {:?}",
            tool.description, tool.raw_parameters, tool.output
        );
        assert_eq!(citation(&text), None, "{}", tool.name);
    }
}

/// Comments may cite what they like; the text outside them is what users read.
#[test]
fn no_string_in_the_sources_cites_anything() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    for dir in [
        "src",
        "seq-syntax/src",
        "seq-check/src",
        "seq-exec/src",
        "seq-lsp/src",
        "seq-mcp/src",
    ] {
        files(&root.join(dir), "rs", &mut sources);
    }
    for source in sources {
        let text = std::fs::read_to_string(&source).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert_eq!(citation(code), None, "{}:{}", source.display(), n + 1);
        }
    }
}

#[test]
fn citations_are_recognised() {
    assert!(citation("see D-10").is_some());
    assert!(citation("rule §7.3").is_some());
    assert_eq!(citation("a CD-ROM, D-x, 2D-3"), None);
}
