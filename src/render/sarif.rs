//! `--format sarif`: one SARIF 2.1.0 log on stdout, for code-scanning services.
//!
//! One run; its driver lists one rule per code that occurs (title, the explanation's first
//! paragraph, default level). Each diagnostic is a result: its labels are related locations and
//! its fix, when machine-applicable, a SARIF fix (services offer those to apply as they are; a
//! fix that may change what the sequence does stays a suggestion of `--format json` and
//! `--unsafe-fixes`). Columns are counted in Unicode code points, as the run's
//! `columnKind` says, and `endColumn` is the column just past the region; a file's URI is its path
//! as given, relative unless it was given absolute.

use super::SourceFile;
use seq_syntax::{Code, Diagnostic, LineIndex, Severity, Span};
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::Path;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

#[derive(Debug, Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Debug, Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    /// The code's variant name, e.g. `DuplicateKey`: SARIF wants an identifier here.
    name: String,
    short_description: Text,
    full_description: Text,
    help: Text,
    default_configuration: Configuration,
}

#[derive(Debug, Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Debug, Serialize)]
struct Text {
    text: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<Fix<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    artifact_location: &'a ArtifactLocation,
    region: Region,
}

#[derive(Debug, Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
    end_line: u32,
    end_column: u32,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Fix<'a> {
    description: Text,
    artifact_changes: [ArtifactChange<'a>; 1],
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange<'a> {
    artifact_location: &'a ArtifactLocation,
    replacements: Vec<Replacement>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: Region,
    inserted_content: Text,
}

pub fn render(out: &mut dyn Write, files: &[SourceFile]) -> io::Result<()> {
    let codes: BTreeSet<Code> = files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .map(|d| d.code)
        .collect();
    let codes: Vec<Code> = codes.into_iter().collect();
    let artifacts: Vec<ArtifactLocation> = files
        .iter()
        .map(|f| ArtifactLocation {
            uri: artifact_uri(&f.path),
        })
        .collect();
    let mut results = Vec::new();
    // A clean file needs no line index: building one reads all of its text.
    for (file, artifact) in files
        .iter()
        .zip(&artifacts)
        .filter(|(f, _)| !f.diagnostics.is_empty())
    {
        let place = Place {
            text: &file.text,
            index: LineIndex::new(&file.text),
            artifact,
        };
        for diagnostic in &file.diagnostics {
            let rule_index = codes.binary_search(&diagnostic.code).unwrap_or_default();
            results.push(result(&place, diagnostic, rule_index));
        }
    }
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "seqc",
                    version: env!("CARGO_PKG_VERSION"),
                    rules: codes.iter().map(|&code| rule(code)).collect(),
                },
            },
            column_kind: "unicodeCodePoints",
            results,
        }],
    };
    serde_json::to_writer_pretty(&mut *out, &log).map_err(io::Error::from)?;
    writeln!(out)
}

/// One file, to turn spans into regions.
struct Place<'a> {
    text: &'a str,
    index: LineIndex,
    artifact: &'a ArtifactLocation,
}

impl<'a> Place<'a> {
    fn region(&self, span: Span) -> Region {
        let start = self.index.line_col(self.text, span.start);
        let end = self.index.line_col(self.text, span.end.max(span.start));
        Region {
            start_line: start.line,
            start_column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }

    fn location(&self, span: Span) -> PhysicalLocation<'a> {
        PhysicalLocation {
            artifact_location: self.artifact,
            region: self.region(span),
        }
    }
}

fn result<'a>(place: &Place<'a>, diagnostic: &Diagnostic, rule_index: usize) -> SarifResult<'a> {
    let message = match &diagnostic.help {
        Some(help) => format!("{}\nhelp: {help}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    let related_locations = diagnostic
        .labels
        .iter()
        .enumerate()
        .map(|(id, label)| Location {
            id: Some(id),
            physical_location: place.location(label.span),
            message: Some(Text {
                text: label.message.clone(),
            }),
        })
        .collect();
    let fixes = diagnostic
        .fix
        .iter()
        .filter(|fix| fix.is_machine_applicable())
        .map(|fix| Fix {
            description: Text {
                text: fix.title.clone(),
            },
            artifact_changes: [ArtifactChange {
                artifact_location: place.artifact,
                replacements: fix
                    .edits
                    .iter()
                    .map(|edit| Replacement {
                        deleted_region: place.region(edit.span),
                        inserted_content: Text {
                            text: edit.text.clone(),
                        },
                    })
                    .collect(),
            }],
        })
        .collect();
    SarifResult {
        rule_id: diagnostic.code.as_str(),
        rule_index,
        level: level(diagnostic.severity),
        message: Text { text: message },
        locations: vec![Location {
            id: None,
            physical_location: place.location(diagnostic.span),
            message: None,
        }],
        related_locations,
        fixes,
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn rule(code: Code) -> Rule {
    let summary = first_paragraph(code.explanation());
    Rule {
        id: code.as_str(),
        name: format!("{code:?}"),
        short_description: Text {
            text: code.title().to_owned(),
        },
        full_description: Text {
            text: summary.clone(),
        },
        help: Text { text: summary },
        default_configuration: Configuration {
            level: level(code.severity()),
        },
    }
}

/// The first paragraph after the `# CODE: title` heading, its lines joined.
fn first_paragraph(markdown: &str) -> String {
    markdown
        .lines()
        .skip_while(|line| line.starts_with('#') || line.trim().is_empty())
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A URI reference for a path as the user gave it: relative paths stay relative (code-scanning
/// services resolve them against the checkout), absolute ones become `file://` URIs; separators
/// become `/`, and bytes that a URI cannot hold are percent-encoded.
fn artifact_uri(path: &str) -> String {
    let slashed = if std::path::MAIN_SEPARATOR == '\\' {
        path.replace('\\', "/")
    } else {
        path.to_owned()
    };
    let absolute = Path::new(path).is_absolute();
    let mut uri = String::with_capacity(slashed.len() + 8);
    if absolute {
        uri.push_str("file://");
        if !slashed.starts_with('/') {
            // `C:/dir` on Windows.
            uri.push('/');
        }
    }
    for byte in slashed.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/')
            // A colon in a relative reference would read as a scheme; a drive's is fine.
            || (absolute && byte == b':');
        if keep {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn uris_keep_relative_paths_and_encode_what_a_uri_cannot_hold() {
        assert_eq!(artifact_uri("examples/a.json"), "examples/a.json");
        assert_eq!(artifact_uri("./a b.json"), "./a%20b.json");
        assert_eq!(artifact_uri("a:b.json"), "a%3Ab.json");
        assert_eq!(artifact_uri("巡检.json"), "%E5%B7%A1%E6%A3%80.json");
        assert_eq!(artifact_uri("a%.json"), "a%25.json");
        if cfg!(unix) {
            assert_eq!(artifact_uri("/tmp/x y.json"), "file:///tmp/x%20y.json");
        }
    }

    #[test]
    fn the_first_paragraph_skips_the_heading_and_joins_lines() {
        let markdown = "# E0101: unknown field\n\nOne line\nand two.\n\nMore.\n";
        assert_eq!(first_paragraph(markdown), "One line and two.");
        for &code in Code::ALL {
            let summary = first_paragraph(code.explanation());
            assert!(!summary.is_empty(), "{code}");
            assert!(!summary.starts_with('#'), "{code}");
        }
    }

    #[test]
    fn regions_count_code_points_and_end_past_the_region() {
        let text = "{\"说明\": x}\n\"y\"";
        let place = Place {
            text,
            index: LineIndex::new(text),
            artifact: &ArtifactLocation { uri: "f".into() },
        };
        let x = u32::try_from(text.find('x').unwrap()).unwrap();
        let region = place.region(Span::new(x, x + 1));
        assert_eq!(
            (
                region.start_line,
                region.start_column,
                region.end_line,
                region.end_column
            ),
            (1, 8, 1, 9)
        );
        let empty = place.region(Span::new(x, x));
        assert_eq!(empty.start_column, empty.end_column);
        let across = place.region(Span::new(0, u32::try_from(text.len()).unwrap()));
        assert_eq!((across.end_line, across.end_column), (2, 4));
    }
}
