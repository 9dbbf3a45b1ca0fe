//! Data-driven tests of the ide layer. `tests/fixtures/ide/FEATURE/` holds one case per `*.json`
//! file, or per directory of `*.json` files (a batch checked together). The cursor is marked in
//! the text with `┃` (a character no fixture uses otherwise); code actions take a range between
//! two marks. Lines at the top starting with `//! key: value` are directives (`new_name`,
//! `include_declaration`, `apply`, `catalog`: a catalog file beside the features' directories);
//! marks and directives are stripped before analysis.
//!
//! Results are rendered with the text at every returned span shown in its line, `⟦like this⟧`,
//! and snapshotted with insta; inserted texts are shown raw between `«»`. Edits are also applied
//! and the result re-checked, with the assertions that must hold whatever the snapshot says.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_lsp::ide::{Analysis, FileEdit, FileId, Location};
use seq_syntax::{LineIndex, Span};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MARK: char = '┃';

struct Case {
    name: String,
    /// (path, text without marks and directives)
    files: Vec<(String, String)>,
    /// The file holding the marks.
    file: FileId,
    /// Offsets of the marks, in the stripped text.
    marks: Vec<u32>,
    directives: Vec<(String, String)>,
}

impl Case {
    fn directive(&self, key: &str) -> Option<&str> {
        self.directives
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn cursor(&self) -> u32 {
        *self
            .marks
            .first()
            .unwrap_or_else(|| panic!("{}: no {MARK} in the fixture", self.name))
    }

    /// The built-in catalog, plus the tools of the file named by a `catalog` directive.
    fn catalog(&self) -> Catalog {
        let mut catalog = Catalog::builtin();
        if let Some(file) = self.directive("catalog") {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/ide")
                .join(file);
            let tools = Catalog::load_json(&std::fs::read_to_string(path).unwrap()).unwrap();
            catalog.merge(tools);
        }
        catalog
    }

    fn analysis(&self) -> Analysis {
        Analysis::new(self.files.clone(), Arc::new(self.catalog()))
    }

    fn text(&self, file: FileId) -> &str {
        &self.files[file.0 as usize].1
    }

    fn path(&self, file: FileId) -> &str {
        &self.files[file.0 as usize].0
    }
}

fn load(feature: &str, path: &Path) -> Case {
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    let paths = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    let mut case = Case {
        name: format!("{feature}__{stem}"),
        files: Vec::new(),
        file: FileId(0),
        marks: Vec::new(),
        directives: Vec::new(),
    };
    for (i, file) in paths.iter().enumerate() {
        let raw = std::fs::read_to_string(file).unwrap();
        let mut body = String::new();
        for line in raw.split_inclusive('\n') {
            match line.strip_prefix("//! ") {
                Some(directive) if body.is_empty() => {
                    let (key, value) = directive.trim_end_matches('\n').split_once(": ").unwrap();
                    case.directives.push((key.to_owned(), value.to_owned()));
                }
                Some(_) | None => body.push_str(line),
            }
        }
        let mut text = String::new();
        let mut marks = Vec::new();
        for ch in body.chars() {
            if ch == MARK {
                marks.push(u32::try_from(text.len()).unwrap());
            } else {
                text.push(ch);
            }
        }
        if !marks.is_empty() {
            case.file = FileId(u32::try_from(i).unwrap());
            case.marks = marks;
        }
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        case.files.push((name, text));
    }
    case
}

fn cases(feature: &str) -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ide")
        .join(feature);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "no fixtures in {}", dir.display());
    entries.iter().map(|p| load(feature, p)).collect()
}

/// The line holding `span`, with the span wrapped in `⟦⟧` (and `┃` at an empty span), cut to a
/// window around it.
fn show(text: &str, span: Span) -> String {
    let index = LineIndex::new(text);
    let (line, line_start) = index.line_of(span.start);
    let line_end = text[line_start as usize..]
        .find('\n')
        .map_or(text.len(), |i| line_start as usize + i);
    let start = span.start as usize;
    let end = (span.end as usize).min(line_end).max(start);
    let before = &text[line_start as usize..start];
    let inside = &text[start..end];
    let after = &text[end..line_end];
    let cut_before: String = {
        let chars: Vec<char> = before.chars().collect();
        let keep = chars.len().min(40);
        let lead = if keep < chars.len() { "…" } else { "" };
        format!(
            "{lead}{}",
            chars[chars.len() - keep..].iter().collect::<String>()
        )
    };
    let cut_after: String = {
        let chars: Vec<char> = after.chars().collect();
        let keep = chars.len().min(40);
        let tail = if keep < chars.len() { "…" } else { "" };
        format!("{}{tail}", chars[..keep].iter().collect::<String>())
    };
    let marked = if span.is_empty() {
        MARK.to_string()
    } else {
        format!("⟦{inside}⟧")
    };
    let more = if (span.end as usize) > line_end {
        " (continues on the next line)"
    } else {
        ""
    };
    let col = index.line_col(text, span.start).column;
    format!(
        "{}:{col} {}{marked}{}{more}",
        line + 1,
        cut_before.trim_start(),
        cut_after.trim_end()
    )
}

fn location(case: &Case, location: &Location) -> String {
    format!(
        "{}:{}",
        case.path(location.file),
        show(case.text(location.file), location.span)
    )
}

fn header(case: &Case) -> String {
    let mut out = String::new();
    if !case.marks.is_empty() {
        let span = match case.marks.as_slice() {
            [from, to, ..] => Span::new(*from, *to),
            [at] => Span::new(*at, *at),
            [] => unreachable!(),
        };
        writeln!(
            out,
            "at {}:{}",
            case.path(case.file),
            show(case.text(case.file), span)
        )
        .unwrap();
    }
    for (key, value) in &case.directives {
        writeln!(out, "{key}: {value}").unwrap();
    }
    out.push_str("---\n");
    out
}

/// Applies `edits` to the case's texts (edits of one file never overlap).
fn apply(case: &Case, edits: &[FileEdit]) -> Vec<(String, String)> {
    let mut files = case.files.clone();
    let mut sorted = edits.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse((e.file, e.span.start)));
    for pair in sorted.windows(2) {
        let (later, earlier) = (&pair[0], &pair[1]);
        assert!(
            later.file != earlier.file || earlier.span.end <= later.span.start,
            "{}: overlapping edits {earlier:?} and {later:?}",
            case.name
        );
    }
    for edit in sorted {
        files[edit.file.0 as usize]
            .1
            .replace_range(edit.span.range(), &edit.new_text);
    }
    files
}

fn error_codes(files: &[(String, String)]) -> Vec<String> {
    let analysis = Analysis::new(files.to_vec(), Arc::new(Catalog::builtin()));
    analysis
        .files()
        .flat_map(|f| analysis.diagnostics(f).to_vec())
        .filter(|d| d.is_error())
        .map(|d| d.code.to_string())
        .collect()
}

fn run(feature: &str, render: impl Fn(&Case, &Analysis) -> String) {
    for case in cases(feature) {
        let analysis = case.analysis();
        let rendered = format!("{}{}", header(&case), render(&case, &analysis));
        insta::assert_snapshot!(case.name.clone(), rendered);
    }
}

#[test]
fn hover() {
    run("hover", |case, analysis| {
        match analysis.hover(case.file, case.cursor()) {
            Some(hover) => format!(
                "{}\n\n{}\n",
                show(case.text(case.file), hover.span),
                hover.markdown
            ),
            None => "no hover\n".to_owned(),
        }
    });
}

#[test]
fn definition() {
    run("definition", |case, analysis| {
        let found = analysis.definition(case.file, case.cursor());
        render_locations(case, &found)
    });
}

#[test]
fn references() {
    run("references", |case, analysis| {
        let include = case.directive("include_declaration") == Some("true");
        let found = analysis.references(case.file, case.cursor(), include);
        render_locations(case, &found)
    });
}

fn render_locations(case: &Case, found: &[Location]) -> String {
    if found.is_empty() {
        return "nothing\n".to_owned();
    }
    let mut out = String::new();
    for l in found {
        writeln!(out, "{}", location(case, l)).unwrap();
        let text = case.text(l.file);
        assert!(
            text.get(l.span.range()).is_some(),
            "{}: span {:?} cuts a character",
            case.name,
            l.span
        );
    }
    out
}

#[test]
fn rename() {
    run("rename", |case, analysis| {
        let new_name = case
            .directive("new_name")
            .unwrap_or_else(|| panic!("{}: rename fixtures say `//! new_name: …`", case.name));
        let mut out = String::new();
        match analysis.prepare_rename(case.file, case.cursor()) {
            Ok(span) => writeln!(out, "renames {}", show(case.text(case.file), span)).unwrap(),
            Err(e) => writeln!(out, "prepare: {e}").unwrap(),
        }
        let edits = match analysis.rename(case.file, case.cursor(), new_name) {
            Ok(edits) => edits,
            Err(e) => {
                writeln!(out, "error: {e}").unwrap();
                return out;
            }
        };
        for edit in &edits {
            let at = Location {
                file: edit.file,
                span: edit.span,
            };
            writeln!(out, "{} -> «{}»", location(case, &at), edit.new_text).unwrap();
        }
        let renamed = apply(case, &edits);
        // A rename changes no meaning: the batch has the same errors before and after.
        assert_eq!(
            error_codes(&renamed),
            error_codes(&case.files),
            "{}: the rename changed the diagnostics",
            case.name
        );
        out.push_str("--- changed lines\n");
        for ((path, after), (_, before)) in renamed.iter().zip(&case.files) {
            for (new, old) in after.lines().zip(before.lines()) {
                if new != old {
                    writeln!(out, "{path}: {}", new.trim()).unwrap();
                }
            }
        }
        out
    });
}

#[test]
fn completion() {
    run("completion", |case, analysis| {
        let items = analysis.completion(case.file, case.cursor());
        let mut out = String::new();
        if items.is_empty() {
            out.push_str("no completions\n");
        }
        for item in &items {
            assert!(
                item.edit.start <= case.cursor() && case.cursor() <= item.edit.end,
                "{}: the edit of {} does not hold the cursor",
                case.name,
                item.label
            );
            writeln!(
                out,
                "{} ({:?}){}",
                item.label,
                item.kind,
                item.detail
                    .as_ref()
                    .map_or_else(String::new, |d| format!(" — {d}"))
            )
            .unwrap();
            let snippet = if item.snippet { " (snippet)" } else { "" };
            writeln!(
                out,
                "    insert{snippet} «{}» over {}",
                item.insert_text,
                show(case.text(case.file), item.edit)
            )
            .unwrap();
        }
        // `apply: LABEL` inserts that proposal and shows the line; the file must still parse
        // as far as before.
        if let Some(label) = case.directive("apply") {
            let item = items
                .iter()
                .find(|i| i.label == label)
                .unwrap_or_else(|| panic!("{}: no completion {label}", case.name));
            let new_text = if item.snippet {
                expand_snippet(&item.insert_text)
            } else {
                item.insert_text.clone()
            };
            let end = item.edit.start + u32::try_from(new_text.len()).unwrap();
            let edit = FileEdit {
                file: case.file,
                span: item.edit,
                new_text,
            };
            let applied = apply(case, &[edit]);
            let text = &applied[case.file.0 as usize].1;
            let syntax_errors = |text: &str| {
                seq_syntax::parse(text)
                    .diagnostics
                    .iter()
                    .filter(|d| d.is_error())
                    .count()
            };
            assert!(
                syntax_errors(text) <= syntax_errors(case.text(case.file)),
                "{}: inserting {label} breaks the file:\n{text}",
                case.name
            );
            writeln!(
                out,
                "--- after {label}\n{}",
                show(text, Span::new(item.edit.start, end))
            )
            .unwrap();
        }
        out
    });
}

/// What a client inserts for a snippet: escapes resolved, each tab stop its placeholder.
fn expand_snippet(snippet: &str) -> String {
    let mut out = String::new();
    let mut chars = snippet.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '$' => {
                let stop: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let (_, placeholder) = stop.split_once(':').unwrap();
                out.push_str(placeholder);
            }
            c => out.push(c),
        }
    }
    out
}

#[test]
fn code_actions() {
    run("code_actions", |case, analysis| {
        let range = match case.marks.as_slice() {
            [from, to, ..] => Span::new(*from, *to),
            _ => Span::new(case.cursor(), case.cursor()),
        };
        let actions = analysis.code_actions(case.file, range);
        let mut out = String::new();
        if actions.is_empty() {
            out.push_str("no actions\n");
        }
        let diagnostics = analysis.diagnostics(case.file);
        for action in &actions {
            let d = &diagnostics[action.diagnostic];
            assert_eq!(d.code, action.code);
            writeln!(
                out,
                "{} — fixes {} {}",
                action.title,
                action.code,
                show(case.text(case.file), d.span)
            )
            .unwrap();
            for edit in &action.edits {
                let at = Location {
                    file: edit.file,
                    span: edit.span,
                };
                writeln!(out, "    {} -> «{}»", location(case, &at), edit.new_text).unwrap();
            }
            let fixed = apply(case, &action.edits);
            let after = Analysis::new(fixed.clone(), Arc::new(Catalog::builtin()));
            let count = |a: &Analysis| {
                a.diagnostics(case.file)
                    .iter()
                    .filter(|x| x.code == action.code)
                    .count()
            };
            assert!(
                count(&after) < count(analysis),
                "{}: `{}` leaves {} in place:\n{}",
                case.name,
                action.title,
                action.code,
                fixed[case.file.0 as usize].1
            );
            let text = &fixed[case.file.0 as usize].1;
            let first = action.edits.first().unwrap();
            let len = u32::try_from(first.new_text.len()).unwrap();
            writeln!(
                out,
                "    after: {}",
                show(text, Span::new(first.span.start, first.span.start + len))
            )
            .unwrap();
        }
        out
    });
}

#[test]
fn document_symbols() {
    run("symbols", |case, analysis| {
        let mut out = String::new();
        fn walk(out: &mut String, text: &str, symbols: &[seq_lsp::ide::Symbol], depth: usize) {
            for s in symbols {
                assert!(
                    s.span.start <= s.selection_span.start && s.selection_span.end <= s.span.end,
                    "the selection of {} is outside its span",
                    s.name
                );
                writeln!(
                    out,
                    "{}{:?} {}{} @ {}",
                    "  ".repeat(depth),
                    s.kind,
                    s.name,
                    s.detail
                        .as_ref()
                        .map_or_else(String::new, |d| format!(" — {d}")),
                    show(text, s.selection_span)
                )
                .unwrap();
                walk(out, text, &s.children, depth + 1);
            }
        }
        for file in analysis.files() {
            if case.files.len() > 1 {
                writeln!(out, "== {}", case.path(file)).unwrap();
            }
            walk(
                &mut out,
                case.text(file),
                &analysis.document_symbols(file),
                0,
            );
        }
        out
    });
}

#[test]
fn semantic_tokens() {
    run("tokens", |case, analysis| {
        let mut out = String::new();
        for file in analysis.files() {
            let text = case.text(file);
            let tokens = analysis.semantic_tokens(file);
            for pair in tokens.windows(2) {
                assert!(
                    pair[0].span.end <= pair[1].span.start,
                    "{}: tokens overlap: {pair:?}",
                    case.name
                );
            }
            let index = LineIndex::new(text);
            for token in &tokens {
                let slice = &text[token.span.range()];
                assert!(!slice.contains('\n'), "a token crosses a line");
                let at = index.line_col(text, token.span.start);
                writeln!(out, "{}:{} {:?} {slice}", at.line, at.column, token.kind).unwrap();
            }
        }
        out
    });
}
