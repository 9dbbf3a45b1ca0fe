//! What a filter may call: jaq's core, standard and JSON libraries less everything that reads
//! the environment, the clock or the time zone, writes to standard error or stops the process.
//! `input`, `inputs`, `input_filename`, `$ENV` and `$__loc__` are never given, and a filter
//! cannot import modules (the loader reads no file), so those are unknown names too.

use jaq_core::DataT;
use jaq_core::load::parse::Def;
use jaq_core::native::Fun;
use jaq_json::Val;
use std::sync::LazyLock;

/// Native functions left out: `env` reads the environment, `now` the clock, `localtime` and
/// `strflocaltime` the time zone; `halt` stops the process, `debug_empty` and `stderr_empty`
/// write to standard error.
pub const IMPURE_NATIVES: [&str; 7] = [
    "env",
    "now",
    "localtime",
    "strflocaltime",
    "halt",
    "debug_empty",
    "stderr_empty",
];

/// Definitions left out: they stand on the natives above.
pub const IMPURE_DEFS: [&str; 4] = ["stderr", "debug", "halt", "halt_error"];

/// `range` in jq rather than jaq's native loop, which counts without a step of the interpreter,
/// so a stop flag met at every step (the engine's bounds) could not stop `last(range(1e18))`.
/// The meaning is jq's: `range/2` counts up by 1 from each `$from` to each `$upto` and fails on
/// bounds that are not numbers; `range/3` counts by a negative `$by` down and by `0` not at all.
const RANGE: &str = r#"
def range($from; $upto; $by):
    if $by > 0 then $from | while(. < $upto; . + $by)
  elif $by < 0 then $from | while(. > $upto; . + $by)
  else empty end;
def range($from; $upto):
  if ($from | type) == "number" and ($upto | type) == "number"
  then $from | while(. < $upto; . + 1)
  else error("Range bounds must be numeric") end;
def range($upto): range(0; $upto);
"#;

/// Natives replaced by definitions above.
const REPLACED_NATIVES: [&str; 1] = ["range"];

/// The definitions, parsed once (jaq parses its library text on every call otherwise). The
/// `range` ones follow jaq's core and standard libraries (they stand on `while` and `type`) and
/// precede the JSON one (its `transpose` calls `range`).
static DEFS: LazyLock<Vec<Def<&'static str>>> = LazyLock::new(|| {
    let range = jaq_core::load::parse(RANGE, |p| p.defs()).unwrap_or_default();
    jaq_core::defs()
        .filter(|def| def.name != "range")
        .chain(jaq_std::defs())
        .chain(range)
        .chain(jaq_json::defs())
        .filter(|def| !IMPURE_DEFS.contains(&def.name))
        .collect()
});

pub(crate) fn defs() -> impl Iterator<Item = Def<&'static str>> {
    DEFS.iter().cloned()
}

pub(crate) fn funs<D: for<'a> DataT<V<'a> = Val>>() -> impl Iterator<Item = Fun<D>> {
    jaq_core::funs::<D>()
        .chain(jaq_std::funs::<D>())
        .chain(jaq_json::funs::<D>())
        .filter(|(name, _, _)| !IMPURE_NATIVES.contains(name) && !REPLACED_NATIVES.contains(name))
}

/// Every name a filter can call, for "did you mean": the definitions' and the natives' (those
/// starting with `!` or ending in `_empty` are the library's own helpers).
pub(crate) fn names() -> &'static [&'static str] {
    static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let mut names: Vec<&'static str> = defs()
            .map(|def| def.name)
            .chain(funs::<jaq_core::data::JustLut<Val>>().map(|(name, _, _)| name))
            .filter(|name| !name.starts_with('!') && !name.ends_with("_empty"))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    });
    &NAMES
}

/// Whether `name` is one of the functions left out on purpose (or `input`, `inputs`, `$ENV`…).
pub(crate) fn is_impure(name: &str) -> bool {
    const NEVER_GIVEN: [&str; 6] = [
        "input",
        "inputs",
        "input_filename",
        "input_line_number",
        "$ENV",
        "$__loc__",
    ];
    IMPURE_NATIVES.contains(&name)
        || IMPURE_DEFS.contains(&name)
        || NEVER_GIVEN.contains(&name)
        || name == "get_search_list"
}
