//! `--format json`: exactly one JSON object on stdout, for programs and CI.
//!
//! `{"diagnostics":[{"file","severity","code","message","start","end","line","column","hint",
//! "fix"}],"errors":N,"warnings":N}`, with `start`/`end` byte offsets into the file and
//! `line`/`column` 1-based, the column counted in characters. Order: files as given, then by
//! position. `fix` is null or `{"title","applicability","edits":[{"start","end","text"}]}`: the
//! edits' offsets are bytes of the file as read, their texts already escaped for where they go;
//! only a `"machine-applicable"` fix keeps the meaning for sure (`--fix` applies those alone).
//!
//! With `check --fix`, a `"fixed"` array comes first: `{"file","code","title","pass","start",
//! "end","line","column"}` per fix applied, positions in the file as it was read; the
//! diagnostics are then those of the fixed files.

use super::SourceFile;
use super::Totals;
use super::fixes::FixedIn;
use seq_syntax::LineIndex;
use seq_syntax::diagnostic::Fix;
use serde::Serialize;
use std::io::{self, Write};

#[derive(Debug, Serialize)]
struct Output<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed: Option<Vec<JsonFix<'a>>>,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    errors: usize,
    warnings: usize,
}

#[derive(Debug, Serialize)]
struct JsonDiagnostic<'a> {
    file: &'a str,
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    start: u32,
    end: u32,
    line: u32,
    column: u32,
    hint: Option<&'a str>,
    fix: Option<JsonSuggestion<'a>>,
}

/// A diagnostic's fix, applied or not.
#[derive(Debug, Serialize)]
struct JsonSuggestion<'a> {
    title: &'a str,
    applicability: &'static str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Debug, Serialize)]
struct JsonEdit<'a> {
    start: u32,
    end: u32,
    text: &'a str,
}

impl<'a> JsonSuggestion<'a> {
    fn of(fix: &'a Fix) -> JsonSuggestion<'a> {
        JsonSuggestion {
            title: &fix.title,
            applicability: fix.applicability.as_str(),
            edits: fix
                .edits
                .iter()
                .map(|edit| JsonEdit {
                    start: edit.span.start,
                    end: edit.span.end,
                    text: &edit.text,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize)]
struct JsonFix<'a> {
    file: &'a str,
    code: &'static str,
    title: &'a str,
    pass: u32,
    start: u32,
    end: u32,
    line: u32,
    column: u32,
}

pub fn render(out: &mut dyn Write, files: &[SourceFile]) -> io::Result<()> {
    write(out, files, None)
}

/// The report of `check --fix`: what was fixed, then what remains.
pub fn render_fixed(
    out: &mut dyn Write,
    files: &[SourceFile],
    fixed: &[FixedIn<'_>],
) -> io::Result<()> {
    let fixes = fixed
        .iter()
        .flat_map(|file| {
            file.located().map(|(fix, at)| JsonFix {
                file: file.path,
                code: fix.code.as_str(),
                title: &fix.title,
                pass: fix.pass,
                start: fix.span.start,
                end: fix.span.end,
                line: at.line,
                column: at.column,
            })
        })
        .collect();
    write(out, files, Some(fixes))
}

fn write(
    out: &mut dyn Write,
    files: &[SourceFile],
    fixed: Option<Vec<JsonFix<'_>>>,
) -> io::Result<()> {
    let totals = Totals::of(files);
    let mut diagnostics = Vec::with_capacity(totals.errors + totals.warnings);
    // A clean file needs no line index: building one reads all of its text.
    for file in files.iter().filter(|f| !f.diagnostics.is_empty()) {
        let index = LineIndex::new(&file.text);
        for diagnostic in &file.diagnostics {
            let at = index.line_col(&file.text, diagnostic.span.start);
            diagnostics.push(JsonDiagnostic {
                file: &file.path,
                severity: diagnostic.severity.as_str(),
                code: diagnostic.code.as_str(),
                message: &diagnostic.message,
                start: diagnostic.span.start,
                end: diagnostic.span.end,
                line: at.line,
                column: at.column,
                hint: diagnostic.help.as_deref(),
                fix: diagnostic.fix.as_ref().map(JsonSuggestion::of),
            });
        }
    }
    let output = Output {
        fixed,
        diagnostics,
        errors: totals.errors,
        warnings: totals.warnings,
    };
    serde_json::to_writer(&mut *out, &output).map_err(io::Error::from)?;
    writeln!(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use seq_syntax::{Code, Diagnostic, Span};

    #[test]
    fn one_object_with_character_columns_fixes_and_null_hints() {
        let text = "{\n  \"主机\": 1, \"x\": 2\n}";
        let x = u32::try_from(text.find("\"x\"").unwrap()).unwrap();
        let files = [
            SourceFile {
                path: "a.json".to_owned(),
                text: text.to_owned(),
                diagnostics: vec![
                    Diagnostic::new(Code::UnknownField, Span::new(x, x + 3), "unknown field `x`")
                        .with_help("remove it")
                        .with_replacement("rename to `y`", Span::new(x, x + 3), "\"y\"")
                        .maybe_incorrect(),
                ],
            },
            SourceFile {
                path: "b.json".to_owned(),
                text: String::new(),
                diagnostics: vec![Diagnostic::new(Code::JsonSyntax, Span::new(0, 0), "empty")],
            },
        ];
        let mut out = Vec::new();
        render(&mut out, &files).unwrap();
        let expected = concat!(
            r#"{"diagnostics":["#,
            r#"{"file":"a.json","severity":"error","code":"E0101","message":"unknown field `x`","#,
            r#""start":17,"end":20,"line":2,"column":12,"hint":"remove it","#,
            r#""fix":{"title":"rename to `y`","applicability":"maybe-incorrect","#,
            r#""edits":[{"start":17,"end":20,"text":"\"y\""}]}},"#,
            r#"{"file":"b.json","severity":"error","code":"E0001","message":"empty","#,
            r#""start":0,"end":0,"line":1,"column":1,"hint":null,"fix":null}"#,
            r#"],"errors":2,"warnings":0}"#,
            "\n"
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}
