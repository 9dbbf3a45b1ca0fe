//! Admission: the one check a sequence passes before it is stored or run, behind every door
//! (`seqc check`'s verdict on one file, `seqc create`, `seqc run FILE` and `seqc run '#name'`,
//! `seq_create`, `seq_run`). The doors only read what they are given and render what comes
//! back, so that one broken file gets the same diagnostics through each of them.
//!
//! A new sequence ([`admit`]) is its parse plus the rules run on whatever was built, against the
//! stored sequences it joins (it replaces a stored one of its name); a stored sequence
//! ([`admit_stored`]) is checked again the same way, since what it calls may have changed since
//! it was stored. Both return the sequence's own diagnostics and the errors it would cause in
//! the stored ones (see [`check_into_store`]).

use crate::batch::check_into_store;
use seq_catalog::Catalog;
use seq_syntax::ast::Sequence;
use seq_syntax::{Diagnostic, Parse};
use std::borrow::Borrow;

/// What admitting a sequence found.
#[derive(Clone, Debug, Default)]
pub struct Admission {
    /// The sequence, when one could be built (`None` only when the text's top level is not an
    /// object).
    pub sequence: Option<Sequence>,
    /// Its own diagnostics, syntax and rules together, sorted by position: those `seqc check`
    /// gives the same file beside the same stored sequences.
    pub own: Vec<Diagnostic>,
    /// Errors of stored sequences, by name, that they get only with this sequence (a cycle
    /// through it, a chain of calls too deep once it exists).
    pub caused: Vec<(String, Diagnostic)>,
}

impl Admission {
    /// Whether the sequence is refused: an error of its own, or one it causes elsewhere.
    pub fn has_errors(&self) -> bool {
        !self.caused.is_empty() || self.own.iter().any(Diagnostic::is_error)
    }

    /// Its own errors (not its warnings).
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.own.iter().filter(|d| d.is_error())
    }
}

/// Admits a new sequence from its parse, among `stored` (every readable stored sequence; a
/// stored one of the same name is replaced), owned or shared (`Arc`): a store of thousands is
/// borrowed, never copied. Every rule runs on whatever the front end built,
/// also when the text has syntax errors, as `seqc check` does: one pass reports every mistake.
///
/// ```
/// use seq_catalog::Catalog;
/// use seq_check::admit;
///
/// let text = r#"{"name": "demo", "groups": [{"name": "g", "timeout": 5,
///     "tools": "{\"tool\":\"ech\",\"args\":{}} ;"}]}"#;
/// let admission = admit(seq_syntax::parse(text), &[] as &[seq_syntax::ast::Sequence], &Catalog::builtin());
/// let codes: Vec<&str> = admission.own.iter().map(|d| d.code.as_str()).collect();
/// // A shape error and an unknown tool, in one answer.
/// assert_eq!(codes.len(), 2, "{codes:?}");
/// assert!(admission.has_errors());
/// ```
pub fn admit<S: Borrow<Sequence>>(parse: Parse, stored: &[S], catalog: &Catalog) -> Admission {
    let Parse {
        sequence,
        diagnostics,
    } = parse;
    let mut own = diagnostics;
    let mut caused = Vec::new();
    if let Some(sequence) = &sequence {
        let checked = check_into_store(sequence, stored, catalog);
        own.extend(checked.own);
        caused = checked.caused;
    }
    seq_syntax::diagnostic::sort(&mut own);
    Admission {
        sequence,
        own,
        caused,
    }
}

/// Admits a stored sequence again before it runs, among `stored` as it is now. A stored
/// sequence was parsed when it was stored, so its diagnostics are the rules'.
pub fn admit_stored<S: Borrow<Sequence>>(
    sequence: Sequence,
    stored: &[S],
    catalog: &Catalog,
) -> Admission {
    admit(
        Parse {
            sequence: Some(sequence),
            diagnostics: Vec::new(),
        },
        stored,
        catalog,
    )
}
