//! The front end of seqc: turns the text of a tool sequence into a typed [`ast::Sequence`] and
//! reports every mistake as a [`Diagnostic`] at the exact bytes of the file where it sits.
//!
//! The pipeline, each stage its own module:
//! 1. [`json`]: the file's strict JSON into an untyped spanned tree (logos + chumsky);
//! 2. `lower`: that tree into the typed AST, checking fields, enums, types and durations;
//!    on the way each `tools` string is [`escape`]d back to text with an offset map,
//!    [`split`] into items, and each item parsed by [`json`] in item mode; `when` strings go to
//!    [`condition`], argument strings to [`template`].
//!
//! Parsing never panics and never fails wholesale: [`parse`] returns what it built plus
//! diagnostics.

pub mod apply;
pub mod ast;
pub mod code;
pub mod condition;
pub mod diagnostic;
pub mod duration;
pub mod escape;
pub mod fields;
pub mod invariants;
pub mod jq;
pub mod json;
pub mod kind;
pub mod limits;
mod lower;
pub mod names;
pub mod printable;
pub mod reference;
pub mod shell;
pub mod span;
pub mod split;
mod swar;
pub mod template;

pub use code::Code;
pub use diagnostic::{Diagnostic, Severity};
pub use span::{LineIndex, Span, Spanned};

/// What the front end built from one file, and what it found wrong.
#[derive(Clone, Debug)]
pub struct Parse {
    /// The sequence; `None` only when the file's top level is not an object at all.
    pub sequence: Option<ast::Sequence>,
    /// Every syntax and shape diagnostic, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parse {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses the text of a sequence file. A file larger than [`limits::MAX_FILE_BYTES`] is
/// reported (E0009) and not parsed.
pub fn parse(text: &str) -> Parse {
    if text.len() > limits::MAX_FILE_BYTES {
        return too_large();
    }
    lower::lower_file(text)
}

fn too_large() -> Parse {
    Parse {
        sequence: None,
        diagnostics: vec![
            Diagnostic::new(
                Code::TooLarge,
                Span::new(0, 0),
                format!(
                    "the file is larger than {} MiB, the bound of a sequence file",
                    limits::MAX_FILE_BYTES / (1024 * 1024)
                ),
            )
            .with_help("split it into several sequences that call each other as `#name`"),
        ],
    }
}

/// Parses the bytes of a sequence file, reporting invalid UTF-8 (E0007) at its position.
pub fn parse_bytes(bytes: &[u8]) -> Parse {
    if bytes.len() > limits::MAX_FILE_BYTES {
        return too_large();
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(err) => {
            let at = err.valid_up_to();
            let len = err.error_len().unwrap_or(1);
            Parse {
                sequence: None,
                diagnostics: vec![
                    Diagnostic::new(
                        Code::NotUtf8,
                        Span::from_range(at..at + len),
                        format!("the file is not valid UTF-8 (byte {at})"),
                    )
                    .with_help(
                        "save the file as UTF-8; JSON text must be UTF-8 (RFC 8259, section 8.1)",
                    ),
                ],
            }
        }
    }
}

/// Builds the AST from the parameter form of `seq_create` (`{"name", "groups": [...], ...}` as a
/// JSON value). The value is rendered as JSON and parsed like a file, so both forms build the
/// same AST by construction; spans point into the returned text. The rendering is pretty, for
/// excerpts that read well, up to [`limits::MAX_PRETTY_VALUE_BYTES`] of compact JSON; a larger
/// value is parsed compact, since indentation would multiply the text (and the parse's work)
/// several times over.
pub fn parse_value(value: &impl serde::Serialize) -> (String, Parse) {
    let compact = serde_json::to_string(value).unwrap_or_default();
    let text = if compact.len() > limits::MAX_PRETTY_VALUE_BYTES {
        compact
    } else {
        serde_json::to_string_pretty(value).unwrap_or_default()
    };
    let parse = parse(&text);
    (text, parse)
}

/// Parses a duration in the grammar of group timeouts ([`duration`]): `"500ms"`, `"30s"`,
/// `"1m30s"`; whole numbers with units `h`, `m`, `s`, `ms`, largest first, positive. The error
/// says what is wrong, for a message to a user.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(seq_syntax::parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert!(seq_syntax::parse_duration("30").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<std::time::Duration, &'static str> {
    duration::parse(text)
}
