//! `--format human`: ariadne reports with the source snippet, then a summary line.
//!
//! Reports go to stdout, like ruff and eslint: the report is what `seqc check` produces, so it
//! pipes into a pager or a file; stderr is kept for problems of the command itself.

use super::SourceFile;
use super::Totals;
use super::excerpt::Excerpt;
use ariadne::{Color, Config, Fmt, IndexType, Label, Report, ReportKind, Source};
use seq_syntax::printable::{Lines, printable};
use seq_syntax::{Diagnostic, LineIndex, Severity, Span};
use std::io::{self, Write};
use std::ops::Range;

/// Diagnostics drawn per file; the rest are counted in one line (the summary stays exact, and
/// `--format json` lists every one).
pub const MAX_SHOWN: usize = 50;

pub fn render(out: &mut dyn Write, files: &[SourceFile], color: bool) -> io::Result<()> {
    for file in files {
        if file.diagnostics.is_empty() {
            continue;
        }
        let mut whole = File {
            path: file.path.as_str(),
            text: &file.text,
            index: LineIndex::new(&file.text),
            cache: None,
        };
        for diagnostic in file.diagnostics.iter().take(MAX_SHOWN) {
            write_report(out, &mut whole, diagnostic, color)?;
            writeln!(out)?;
        }
        if let Some(more) = file.diagnostics.get(MAX_SHOWN..).filter(|m| !m.is_empty()) {
            let totals = Totals::of_diagnostics(more);
            writeln!(
                out,
                "... and {} more in {} ({}): `--format json` lists every one\n",
                more.len(),
                file.path,
                totals.counts()
            )?;
        }
    }
    writeln!(out, "{}", Totals::of(files))
}

/// A file being reported: its text, its line index, and ariadne's copy of it, made when a
/// diagnostic first needs the whole file.
struct File<'a> {
    path: &'a str,
    text: &'a str,
    index: LineIndex,
    cache: Option<(&'a str, Source<&'a str>)>,
}

fn write_report(
    out: &mut dyn Write,
    file: &mut File<'_>,
    diagnostic: &Diagnostic,
    color: bool,
) -> io::Result<()> {
    let path = file.path;
    let (kind, tint) = match diagnostic.severity {
        Severity::Error => (ReportKind::Error, Color::Red),
        Severity::Warning => (ReportKind::Warning, Color::Yellow),
    };
    let tint = color.then_some(tint);
    let secondary = color.then_some(Color::Blue);
    let primary = clamp(file.text, diagnostic.span);
    let mut labels: Vec<(Range<usize>, &str, Option<Color>)> = Vec::new();
    labels.push((primary.clone(), diagnostic.code.title(), tint));
    for label in &diagnostic.labels {
        labels.push((clamp(file.text, label.span), &label.message, secondary));
    }
    let spans: Vec<Range<usize>> = labels.iter().map(|(range, _, _)| range.clone()).collect();
    // A long line is drawn as a window: ariadne then sees only the excerpt, so the spans move
    // into it, and the location it prints is put back to the file's own.
    let excerpt = Excerpt::of(file.text, &file.index, &spans);
    let (location, relocated) = match &excerpt {
        Some(excerpt) => {
            for (range, _, _) in &mut labels {
                *range = excerpt.map(range.start)..excerpt.map(range.end);
            }
            let start = excerpt.map(primary.start);
            let line = file
                .index
                .line_of(u32::try_from(primary.start).unwrap_or(u32::MAX))
                .0;
            let real = file
                .index
                .line_col(file.text, u32::try_from(primary.start).unwrap_or(u32::MAX));
            let line = line as usize + 1;
            let drawn = format!("{path}:{line}:{}", excerpt.column(start));
            let real = format!("{path}:{line}:{}", real.column);
            (start..excerpt.map(primary.end), Some((drawn, real)))
        }
        None => (primary, None),
    };
    // ariadne starts a new snippet whenever a label sits above the one before it, so labels go
    // in in file order: the duplicate and its original share one snippet.
    labels.sort_by_key(|(range, _, _)| (range.start, range.end));

    let mut report = Report::build(kind, (path, location)).with_config(
        Config::new()
            .with_index_type(IndexType::Byte)
            .with_color(color),
    );
    for (range, message, tint) in labels {
        let label = Label::new((path, range)).with_message(message);
        report.add_label(match tint {
            Some(tint) => label.with_color(tint),
            None => label,
        });
    }
    if let Some(help) = &diagnostic.help {
        report.set_help(help);
    }

    // ariadne's header reads `[E0101] Error: ...`; seqc's reads like rustc's
    // `error[E0101]: ...`, so the report is drawn without a message and its header line replaced.
    let mut body = Vec::new();
    let report = report.finish();
    match &excerpt {
        Some(excerpt) => {
            let source = Source::from(excerpt.text.as_str());
            report.write_for_stdout((path, source), &mut body)?;
        }
        None => {
            let cache = file
                .cache
                .get_or_insert_with(|| (path, Source::from(file.text)));
            report.write_for_stdout(cache, &mut body)?;
        }
    }
    let mut body = body
        .iter()
        .position(|&b| b == b'\n')
        .and_then(|newline| body.get(newline + 1..))
        .unwrap_or(&body)
        .to_vec();
    if let Some((drawn, real)) = relocated {
        body = relocate(&body, &drawn, &real);
    }
    let severity = diagnostic.severity.as_str();
    let head = format!("{severity}[{}]", diagnostic.code);
    // A message may quote what a file holds: escaped.
    writeln!(
        out,
        "{}: {}",
        head.fg(tint),
        printable(&diagnostic.message, Lines::Kept)
    )?;
    out.write_all(&body)
}

/// The body with the location on its first line (`path:line:column` of the excerpt) replaced
/// by the file's own.
fn relocate(body: &[u8], drawn: &str, real: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(body);
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let first = first.replacen(drawn, real, 1);
    format!("{first}\n{rest}").into_bytes()
}

/// A span that ariadne can draw without panicking: within the text, on character boundaries,
/// never reversed. Spans come from the front end and should already be so; this is the guard.
fn clamp(text: &str, span: Span) -> Range<usize> {
    let len = text.len();
    let mut start = (span.start as usize).min(len);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (span.end as usize).clamp(start, len);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use seq_syntax::Code;

    fn file(text: &str, diagnostics: Vec<Diagnostic>) -> SourceFile {
        SourceFile {
            path: "dir/f.json".to_owned(),
            text: text.to_owned(),
            diagnostics,
        }
    }

    fn rendered(files: &[SourceFile], color: bool) -> String {
        let mut out = Vec::new();
        render(&mut out, files, color).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_report_has_header_snippet_labels_help_and_summary() {
        let text = "{\n  \"说明\": 1,\n  \"说明\": 2\n}\n";
        let second = text.rfind("\"说明\"").unwrap();
        let first = text.find("\"说明\"").unwrap();
        let diagnostic = Diagnostic::new(
            Code::DuplicateKey,
            Span::from_range(second..second + 8),
            "duplicate key `说明`",
        )
        .with_label(Span::from_range(first..first + 8), "first defined here")
        .with_help("remove one of the two");
        let out = rendered(&[file(text, vec![diagnostic])], false);
        let expected = "\
error[E0008]: duplicate key `说明`
   ╭─[ dir/f.json:3:3 ]
   │
 2 │   \"说明\": 1,
   │   ───┬──  
   │      ╰──── first defined here
 3 │   \"说明\": 2
   │   ───┬──  
   │      ╰──── duplicate key
   │ 
   │ Help: remove one of the two
───╯

1 error, 0 warnings in 1 file
";
        assert_eq!(out, expected);
    }

    #[test]
    fn colour_is_only_added_on_request() {
        let diagnostic = Diagnostic::new(Code::JsonSyntax, Span::new(0, 1), "expected a value");
        let files = [file("?", vec![diagnostic])];
        assert!(!rendered(&files, false).contains('\x1b'));
        assert!(rendered(&files, true).contains("\x1b["));
    }

    #[test]
    fn clean_files_print_only_the_summary() {
        let files = [file("{}", Vec::new()), file("{}", Vec::new())];
        assert_eq!(rendered(&files, false), "0 errors, 0 warnings in 2 files\n");
    }

    /// Spans come from other crates; a wrong one must not take the command line down.
    #[test]
    fn odd_spans_never_panic() {
        for text in ["", "a", "主\n", "a\r\nb", "x\n\n", "\t😀\u{2028}z"] {
            let len = u32::try_from(text.len()).unwrap();
            for start in 0..len + 3 {
                for end in 0..len + 3 {
                    let span = Span::new(start, end);
                    let diagnostic = Diagnostic::new(Code::JsonSyntax, span, "m")
                        .with_label(Span::new(end, start), "l");
                    rendered(&[file(text, vec![diagnostic])], false);
                }
            }
        }
    }

    #[test]
    fn clamped_spans_stay_on_character_boundaries() {
        let text = "a主b";
        assert_eq!(clamp(text, Span::new(2, 3)), 1..4);
        assert_eq!(clamp(text, Span::new(9, 3)), 5..5);
        assert_eq!(clamp(text, Span::new(3, 1)), 1..1);
        assert_eq!(clamp("", Span::new(0, 1)), 0..0);
    }
}
