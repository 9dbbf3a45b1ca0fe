//! jq filters, for the built-in `jq` tool (on jaq): the pure library a filter may call
//! (`library`), the compile whose errors point into the filter's text ([`compile`]), and the
//! result type a filter makes evident ([`result_type`]; a `jq` item's, [`item_result`]). Evaluation, which needs bounds and a
//! thread, is the engine's (seq-exec's `builtin::jq`); it compiles with [`compile`] too, so the
//! check and the run know the same names.

mod bounds;
mod library;
mod pieces;
mod types;

pub use bounds::{MAX_NESTING, MAX_TOKENS, Size, size};
pub use library::{IMPURE_DEFS, IMPURE_NATIVES};
pub use pieces::{Piece, pieces};
pub use types::result_type;

use crate::JsonType;
use jaq_core::DataT;
use jaq_core::load::{self, Arena, File, Loader};
use jaq_json::Val;
use seq_syntax::ast::{Item, Value, ValueKind};
use std::ops::Range;

/// A filter's mistake, at its bytes in the filter's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub range: Range<usize>,
    pub kind: ProblemKind,
    pub message: String,
    pub help: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// The text does not parse (or imports a module).
    Syntax,
    /// A function or variable that does not exist, or is left out on purpose.
    Unknown,
    /// The filter nests deeper or is longer than a filter may be ([`MAX_NESTING`],
    /// [`MAX_TOKENS`]); nothing else of it was looked at.
    TooBig,
}

/// A compiled filter for the data kind `D` (the engine's, with its bounds; the checker's plain).
pub type Filter<D> = jaq_core::Filter<D>;

/// Compiles `filter` against the pure library; every problem, at its bytes, when it does not.
/// A filter past the bounds of its size is refused before jaq reads it; the rest is compiled
/// on a stack sized for those bounds (`bounds`), on whatever thread calls this.
pub fn compile<D: for<'a> DataT<V<'a> = Val>>(filter: &str) -> Result<Filter<D>, Vec<Problem>> {
    bounds::check(filter).map_err(|problem| vec![problem])?;
    bounds::on_stack(|| compile_bounded(filter))
}

fn compile_bounded<D: for<'a> DataT<V<'a> = Val>>(filter: &str) -> Result<Filter<D>, Vec<Problem>> {
    let arena = Arena::default();
    let loader = Loader::new(library::defs());
    let file = File {
        code: filter,
        path: (),
    };
    let modules = loader
        .load(&arena, file)
        .map_err(|errors| load_problems(filter, errors))?;
    jaq_core::Compiler::default()
        .with_funs(library::funs::<D>())
        .compile(modules)
        .map_err(|errors| {
            errors
                .into_iter()
                .flat_map(|(_, undefined)| undefined)
                .map(|(name, what)| unknown(filter, name, what))
                .collect()
        })
}

/// Compiles `filter` only to report its problems (the checker).
pub fn problems(filter: &str) -> Vec<Problem> {
    compile::<jaq_core::data::JustLut<Val>>(filter)
        .err()
        .unwrap_or_default()
}

/// Where `part`, a slice of `whole` jaq handed back, lies in it; the end of `whole` for a slice
/// that is not in it (an error at the end of the text).
fn range_of(whole: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize);
    match start {
        Some(start) if start + part.len() <= whole.len() => start..start + part.len(),
        Some(_) | None => whole.len()..whole.len(),
    }
}

/// A range that shows something: an error at a spot covers the character there, if any.
fn at_least_one(whole: &str, range: Range<usize>) -> Range<usize> {
    if !range.is_empty() {
        return range;
    }
    let end = whole
        .get(range.start..)
        .and_then(|rest| rest.chars().next())
        .map_or(range.start, |c| range.start + c.len_utf8());
    range.start..end
}

#[allow(
    clippy::wildcard_enum_match_arm,
    reason = "jaq's error enums are not ours: what is not named gets jaq's own wording"
)]
fn load_problems(filter: &str, errors: load::Errors<&str, ()>) -> Vec<Problem> {
    let mut out = Vec::new();
    for (_, error) in errors {
        match error {
            load::Error::Io(paths) => {
                for (path, _) in paths {
                    out.push(Problem {
                        range: range_of(filter, path),
                        kind: ProblemKind::Syntax,
                        message: "a filter cannot import or include modules".to_owned(),
                        help: "write the definitions you need in the filter itself, with `def`"
                            .to_owned(),
                    });
                }
            }
            load::Error::Lex(lex) => {
                for (expected, at) in lex {
                    let what = match &expected {
                        load::lex::Expect::Delim(open) => match *open {
                            "(" => "a closing parenthesis".to_owned(),
                            "[" => "a closing bracket".to_owned(),
                            "{" => "a closing brace".to_owned(),
                            other => format!("the end of `{other}`"),
                        },
                        other => other.as_str().to_owned(),
                    };
                    let range = at_least_one(filter, range_of(filter, at));
                    out.push(syntax(range, &what, filter));
                }
            }
            load::Error::Parse(parse) => {
                for (expected, found) in parse {
                    let range = at_least_one(filter, range_of(filter, found));
                    out.push(syntax(range, expected.as_str(), filter));
                }
            }
        }
    }
    out
}

fn syntax(range: Range<usize>, expected: &str, filter: &str) -> Problem {
    let found = filter.get(range.clone()).unwrap_or("");
    let message = if found.is_empty() {
        format!("the filter ends where {expected} was expected")
    } else {
        format!("expected {expected}, found `{found}`")
    };
    Problem {
        range,
        kind: ProblemKind::Syntax,
        message,
        help: "see the jq manual for the syntax; strings inside a filter are written `\\\"…\\\"` \
               in an item"
            .to_owned(),
    }
}

#[allow(
    clippy::wildcard_enum_match_arm,
    reason = "jaq's error enums are not ours: what is not named gets jaq's own wording"
)]
fn unknown(filter: &str, name: &str, what: jaq_core::compile::Undefined) -> Problem {
    use jaq_core::compile::Undefined;
    let kind = what.as_str();
    let arity = match &what {
        Undefined::Filter(arity) => format!("/{arity}"),
        other => {
            let _ = other;
            String::new()
        }
    };
    let help = if library::is_impure(name) {
        "a filter is pure: it cannot read the environment, files, the clock or standard input, \
         nor write anywhere; pass what it needs as `input`"
            .to_owned()
    } else if let Some(best) =
        seq_syntax::diagnostic::did_you_mean(name, library::names().iter().copied())
    {
        format!("did you mean `{best}`?")
    } else if name.starts_with('$') {
        "bind the variable first (`... as $x | ...`), or pass the value in `input`".to_owned()
    } else {
        "define it with `def`, or use one of jq's built-in functions".to_owned()
    };
    Problem {
        range: range_of(filter, name),
        kind: ProblemKind::Unknown,
        message: format!("unknown {kind} `{name}{arity}`"),
        help,
    }
}

#[cfg(test)]
mod tests;

/// What a `jq` item's literal filter evidently gives, on its literal `input` when it has one.
pub fn item_result(item: &Item) -> Option<JsonType> {
    let ValueKind::String(filter) = &item.arg(seq_syntax::jq::FILTER)?.kind else {
        return None;
    };
    let input = match item.arg(seq_syntax::jq::INPUT) {
        None => Some(JsonType::Null),
        Some(value) => literal_type(value),
    };
    result_type(filter.as_literal()?, input)
}

/// The JSON type of a value written in `args`; `None` for a bare reference.
fn literal_type(value: &Value) -> Option<JsonType> {
    Some(match &value.kind {
        ValueKind::Null => JsonType::Null,
        ValueKind::Bool(_) => JsonType::Boolean,
        ValueKind::Number(n) if n.is_f64() => JsonType::Number,
        ValueKind::Number(_) => JsonType::Integer,
        ValueKind::String(_) => JsonType::String,
        ValueKind::Array(_) => JsonType::Array,
        ValueKind::Object(_) => JsonType::Object,
        ValueKind::Ref(_) => return None,
    })
}
