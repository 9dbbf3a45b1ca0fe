//! Checking a batch: several sequences checked together, so that `#name` calls, cycles and depth
//! across files are seen.

use crate::{dataflow, graph, rules};
use seq_catalog::Catalog;
use seq_syntax::ast::Sequence;
use seq_syntax::{Code, Diagnostic};
use std::borrow::Borrow;
use std::cell::OnceCell;
use std::collections::HashMap;

/// One file's text, named by its path (or any label the caller likes).
#[derive(Clone, Debug)]
pub struct Source {
    pub path: String,
    pub text: String,
}

impl Source {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// The result of checking several files together.
#[derive(Clone, Debug)]
pub struct Check {
    /// One entry per source, in the order given.
    pub files: Vec<FileCheck>,
}

#[derive(Clone, Debug)]
pub struct FileCheck {
    pub path: String,
    /// The sequence built from the file (`None` when its top level is not an object).
    pub sequence: Option<Sequence>,
    /// Syntax and semantic diagnostics of this file, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Check {
    pub fn has_errors(&self) -> bool {
        self.files
            .iter()
            .any(|f| f.diagnostics.iter().any(Diagnostic::is_error))
    }
}

/// Parses and checks `sources` as one batch against `catalog`: `#name` in one file resolves to
/// the file whose sequence has that name.
///
/// Every rule runs on whatever the front end built, so that independent mistakes are reported
/// together, however many of them there are and at whatever level. What could not be built is a
/// hole in the AST (`holes` of the sequence, group or item), and a rule that needs a hole stays
/// quiet rather than report a consequence of it.
///
/// ```
/// use seq_catalog::Catalog;
/// use seq_check::{Source, check};
///
/// let text = r#"{"name": "demo", "groups": [{
///     "name": "greet", "in": {"who": "string"}, "out": {"said": "string"},
///     "tools": "{\"tool\":\"echo\",\"args\":{\"value\":\"hi $args.whom\"},\"as\":\"said\"} ;"
/// }]}"#;
/// let result = check(&[Source::new("demo.json", text)], &Catalog::builtin());
/// assert!(result.has_errors());
/// let codes: Vec<&str> = result.files[0].diagnostics.iter().map(|d| d.code.as_str()).collect();
/// // `who` is declared but never read; `$args.whom` reads what `in` does not declare.
/// assert_eq!(codes, ["W0503", "E0502"]);
/// let undeclared = &result.files[0].diagnostics[1];
/// assert_eq!(&text[undeclared.span.range()], "$args.whom");
/// assert_eq!(undeclared.help.as_deref(), Some("did you mean `$args.who`?"));
/// ```
pub fn check(sources: &[Source], catalog: &Catalog) -> Check {
    check_with_stored(sources, &[], catalog)
}

/// As [`check`], with sequences already stored (a data directory's) beside the files: `#name`
/// calls resolve to them too, and cycles and depth run through them, as `seqc run` and
/// `seq_create` will see them. A file defining a stored name stands in for the stored one (as
/// storing it would replace it). Only the files get diagnostics.
pub fn check_with_stored(sources: &[Source], stored: &[Sequence], catalog: &Catalog) -> Check {
    let parses: Vec<_> = sources.iter().map(|s| seq_syntax::parse(&s.text)).collect();
    let parsed: Vec<(usize, &Sequence)> = parses
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.sequence.as_ref().map(|s| (i, s)))
        .collect();
    let mut sequences: Vec<&Sequence> = parsed.iter().map(|&(_, s)| s).collect();
    let defined: std::collections::HashSet<&str> =
        sequences.iter().map(|s| s.name.value.as_str()).collect();
    sequences.extend(
        stored
            .iter()
            .filter(|s| !defined.contains(s.name.value.as_str())),
    );
    // The stored sequences come last: their findings are left over once the files have theirs.
    let mut semantic = check_batch(&sequences, catalog).into_iter();
    let mut by_file: Vec<Vec<Diagnostic>> = vec![Vec::new(); sources.len()];
    for &(file, _) in &parsed {
        if let (Some(found), Some(slot)) = (semantic.next(), by_file.get_mut(file)) {
            *slot = found;
        }
    }
    duplicate_names(sources, &parsed, &mut by_file);
    let files = sources
        .iter()
        .zip(parses)
        .zip(by_file)
        .map(|((source, parse), semantic)| {
            let mut diagnostics = parse.diagnostics;
            diagnostics.extend(semantic);
            seq_syntax::diagnostic::sort(&mut diagnostics);
            FileCheck {
                path: source.path.clone(),
                sequence: parse.sequence,
                diagnostics,
            }
        })
        .collect();
    Check { files }
}

/// Two files of one batch defining the same sequence name (E0527): `#name` resolves to the first
/// file given, so the later ones are reported, naming that first file (a label cannot point into
/// another file).
fn duplicate_names(
    sources: &[Source],
    parsed: &[(usize, &Sequence)],
    by_file: &mut [Vec<Diagnostic>],
) {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(parsed.len());
    for &(file, sequence) in parsed {
        let name = sequence.name.value.as_str();
        let Some(&earlier) = first.get(name) else {
            first.insert(name, file);
            continue;
        };
        let (Some(other), Some(out)) = (sources.get(earlier), by_file.get_mut(file)) else {
            continue;
        };
        out.push(
            Diagnostic::new(
                Code::DuplicateSequence,
                sequence.name.span,
                format!("sequence `{name}` is already defined in {}", other.path),
            )
            .with_help(format!(
                "rename this sequence or the one in {0}: `#{name}` calls run the one in {0}",
                other.path
            )),
        );
    }
}

/// Checks sequences that are already parsed (e.g. the stored ones plus the one `seq_create` is
/// creating). Returns, for each sequence in order, its semantic diagnostics, sorted.
pub fn check_batch(sequences: &[&Sequence], catalog: &Catalog) -> Vec<Vec<Diagnostic>> {
    let batch = rules::Batch::new(sequences);
    let mut found: Vec<Vec<Diagnostic>> = sequences
        .iter()
        .map(|sequence| rules::check_sequence(sequence, &batch, catalog))
        .collect();
    let more = [
        graph::check_graph(sequences, catalog),
        dataflow::check_dataflow(sequences, catalog),
    ];
    for extra in more {
        for (mine, theirs) in found.iter_mut().zip(extra) {
            mine.extend(theirs);
        }
    }
    for diagnostics in &mut found {
        seq_syntax::diagnostic::sort(diagnostics);
    }
    found
}

/// What putting one sequence into a store would bring, checked: the sequence's own diagnostics,
/// and the errors it would cause in the sequences already stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreCheck {
    /// The sequence's semantic diagnostics in the store, sorted.
    pub own: Vec<Diagnostic>,
    /// Errors of stored sequences, by name, that they do not have without this sequence (a
    /// cycle through it, a chain of calls that gets too deep once it exists). Warnings of other
    /// sequences are not its business.
    pub caused: Vec<(String, Diagnostic)>,
}

impl StoreCheck {
    pub fn has_errors(&self) -> bool {
        !self.caused.is_empty() || self.own.iter().any(Diagnostic::is_error)
    }
}

/// Checks `sequence` as a member of the store `stored`, where it replaces a stored sequence of
/// its name: the one store check behind `seq_create`, `seqc create` and running a stored or a
/// file's sequence (`seqc run`, `seq_run`), so that every one of them refuses the same
/// sequences. `sequence` is parsed and free of syntax errors; a stored sequence that could not
/// be read is left out of `stored` (`#name` calls cannot reach it either).
///
/// ```
/// use seq_catalog::Catalog;
/// use seq_check::check_into_store;
/// use seq_syntax::ast::Sequence;
///
/// let parse = |text: &str| seq_syntax::parse(text).sequence.unwrap();
/// let a = parse(r##"{"name": "a", "groups": [{"name": "g",
///     "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"#b\"}} ;"}]}"##);
/// let b = parse(r##"{"name": "b", "groups": [{"name": "g",
///     "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"#a\"}} ;"}]}"##);
/// // `#a` alone calls a sequence that does not exist yet: a warning, not an error.
/// let alone = check_into_store(&a, &[] as &[Sequence], &Catalog::builtin());
/// assert!(!alone.has_errors());
/// // `#b` closes a cycle through the stored `#a`: an error in both.
/// let found = check_into_store(&b, &[a], &Catalog::builtin());
/// assert_eq!(found.own[0].code.as_str(), "E0602");
/// assert_eq!(found.caused[0].0, "a");
/// ```
pub fn check_into_store<S: Borrow<Sequence>>(
    sequence: &Sequence,
    stored: &[S],
    catalog: &Catalog,
) -> StoreCheck {
    // Only the sequences joined to this one by calls can change its findings or get new ones
    // from it: checking those alone keeps a store of thousands as cheap as an empty one. What
    // the whole store's names decide (the suggestion for an unknown target) is checked whole.
    let near = neighbourhood(sequence, stored);
    if near.len() < stored.len() {
        let checked = check_among(sequence, &near, catalog);
        let by_name = checked
            .own
            .iter()
            .any(|d| matches!(d.code, Code::UnknownSequence | Code::UnknownGroup));
        if !by_name {
            return checked;
        }
    }
    check_among(
        sequence,
        &stored.iter().map(Borrow::borrow).collect::<Vec<_>>(),
        catalog,
    )
}

/// The stored sequences that call `sequence`'s name (directly or through others), and every
/// sequence that these, it, or the stored one it replaces call: all that its findings, and the
/// findings it may change, depend on.
fn neighbourhood<'a, S: Borrow<Sequence>>(
    sequence: &Sequence,
    stored: &'a [S],
) -> Vec<&'a Sequence> {
    fn calls(s: &Sequence) -> impl Iterator<Item = &str> {
        s.groups
            .iter()
            .flat_map(seq_catalog::calls::sequence_calls)
            .map(|(_, name)| name)
    }
    let stored: Vec<&'a Sequence> = stored.iter().map(Borrow::borrow).collect();
    // Every call between stored sequences in one list, not a list each: the names that
    // `stored[at]` calls are `called[starts[at]..starts[at + 1]]`.
    let mut called: Vec<&'a str> = Vec::new();
    let mut starts = Vec::with_capacity(stored.len() + 1);
    for s in &stored {
        starts.push(called.len());
        called.extend(calls(s));
    }
    starts.push(called.len());
    let callees = |at: usize| {
        starts
            .get(at)
            .zip(starts.get(at + 1))
            .and_then(|(&from, &to)| called.get(from..to))
            .unwrap_or_default()
    };
    // Names to places, built at the first call followed: a new sequence calls and is called
    // by none of thousands as often as not.
    let index: OnceCell<HashMap<&str, usize>> = OnceCell::new();
    let place = |name: &str| {
        index
            .get_or_init(|| {
                let mut index = HashMap::with_capacity(stored.len());
                for (at, s) in stored.iter().enumerate() {
                    index.entry(s.name.value.as_str()).or_insert(at);
                }
                index
            })
            .get(name)
            .copied()
    };
    let name = sequence.name.value.as_str();
    let mut keep = vec![false; stored.len()];
    let mut reach: Vec<usize> = Vec::new();
    // Upwards: who reaches this name (the callers' index only when someone calls it).
    if called.contains(&name) {
        let mut callers: HashMap<&str, Vec<usize>> = HashMap::new();
        for at in 0..stored.len() {
            for &callee in callees(at) {
                callers.entry(callee).or_default().push(at);
            }
        }
        let mut names = vec![name];
        while let Some(name) = names.pop() {
            for &at in callers.get(name).map_or(&[][..], Vec::as_slice) {
                if let Some(slot) = keep.get_mut(at).filter(|kept| !**kept) {
                    *slot = true;
                    reach.push(at);
                    if let Some(caller) = stored.get(at) {
                        names.push(caller.name.value.as_str());
                    }
                }
            }
        }
    }
    // Downwards: what they, the new sequence and the one it replaces call.
    reach.extend(calls(sequence).filter_map(place));
    reach.extend(stored.iter().position(|s| s.name.value == name));
    while let Some(at) = reach.pop() {
        if let Some(slot) = keep.get_mut(at) {
            *slot = true;
        }
        for &callee in callees(at) {
            if let Some(next) = place(callee)
                && let Some(slot) = keep.get_mut(next).filter(|kept| !**kept)
            {
                *slot = true;
                reach.push(next);
            }
        }
    }
    stored
        .into_iter()
        .zip(keep)
        .filter(|(_, kept)| *kept)
        .map(|(s, _)| s)
        .collect()
}

/// [`check_into_store`] among the stored sequences `stored`.
fn check_among(sequence: &Sequence, stored: &[&Sequence], catalog: &Catalog) -> StoreCheck {
    let before: Vec<&Sequence> = stored.to_vec();
    let others: Vec<&Sequence> = stored
        .iter()
        .copied()
        .filter(|s| s.name.value != sequence.name.value)
        .collect();
    let mut after = others.clone();
    after.push(sequence);
    let mut checked = check_batch(&after, catalog);
    let own = checked.pop().unwrap_or_default();
    // Only a store that holds something else can get new errors from this sequence.
    let baseline = if others.is_empty() {
        Vec::new()
    } else {
        check_batch(&before, catalog)
    };
    let mut caused = Vec::new();
    for (other, diagnostics) in others.iter().zip(&checked) {
        let had: &[Diagnostic] = before
            .iter()
            .position(|s| s.name.value == other.name.value)
            .and_then(|i| baseline.get(i))
            .map_or(&[], Vec::as_slice);
        caused.extend(
            diagnostics
                .iter()
                .filter(|d| d.is_error() && !had.contains(d))
                .map(|d| (other.name.value.to_string(), d.clone())),
        );
    }
    StoreCheck { own, caused }
}
