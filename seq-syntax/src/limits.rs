//! The bounds that keep hostile or runaway input from exhausting the stack, memory or time. Each
//! one is reported as a diagnostic (or, for suggestions, simply not exceeded): input beyond a
//! bound is never a crash and never an unbounded wait. `docs/robustness.md` lists them all.

pub use crate::json::MAX_DEPTH;

/// Largest sequence file, in bytes: 64 MiB. A larger one is reported (E0009) and not parsed.
/// Spans are `u32` offsets, so this also keeps every offset far below 4 GiB.
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// Largest `seq_create` parameter form, as compact JSON, that is parsed from pretty-printed text:
/// 1 MiB. A larger one is parsed compact (its excerpts on one line), so that a 16 MiB message
/// does not become a 50 MB text to parse.
pub const MAX_PRETTY_VALUE_BYTES: usize = 1024 * 1024;

/// Longest JSON string, in bytes as written (quotes included): 16 MiB (E0009).
pub const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

/// Largest result one tool call may return, and largest its filled-in arguments may grow, as
/// compact JSON: 16 MiB (reason `failed` past it). Built-in tools stop reading a command's output
/// or a file at the same bound, so that nothing larger is ever held.
pub const MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;

/// Most groups in one sequence: 100,000 (E0009). The 10 MB benchmark file has about 10,600.
pub const MAX_GROUPS: usize = 100_000;

/// Most slots a group declares in `in`, and in `out`: 1,000 each (E0009). Every reference
/// looks its slot up among them.
pub const MAX_SLOTS: usize = 1_000;

/// Most items in one group's `tools`: 10,000 (E0009). Every item of a parallel group runs at
/// once.
pub const MAX_ITEMS: usize = 10_000;

/// Most retries a group may ask for (`retries`): ten, so that a typo cannot make a group retry
/// for hours.
pub const MAX_RETRIES: u32 = 10;

/// The most cross-sequence calls that may be nested on the stack: `#A → #B → #C → #D → #E`
/// is the deepest legal chain (E0603). A structural bound, not a setting; the engine enforces
/// it again at run time.
pub const MAX_CALL_DEPTH: u32 = 4;

/// The most groups that may run one inside another through calls of any kind (E0606); the
/// engine's default `Limits::max_nested_groups`.
pub const MAX_NESTED_GROUPS: u32 = 32;

/// `retry_backoff` is bounded for the same reason: 10 over 10 retries is already days.
pub const MAX_RETRY_BACKOFF: u32 = 10;

/// Longest word, and longest candidate, that "did you mean" compares: similarity is quadratic
/// in length, and a name longer than this is no typo of a short one.
pub const MAX_SUGGEST_LEN: usize = 64;

/// Most candidates "did you mean" looks at for one word (the first ones): every mistake asks
/// once, so without a bound a file of many groups calling unknown targets would be quadratic.
pub const MAX_SUGGEST_SCAN: usize = 1_000;

/// Most work "did you mean" does for one word, in byte pairs compared (word length times
/// candidate length, summed): 80 names of 10 bytes, the closest in length first.
pub const MAX_SUGGEST_WORK: usize = 8_192;

/// About how long a list of names in a diagnostic gets ("its groups are `a`, `b`, ... or 9,980
/// more"): one is written per mistake, so uncut lists would be quadratic in the file's size.
pub const MAX_LISTED_BYTES: usize = 1_000;

/// Most tests in one condition (`when`): 256 (E0009). With [`MAX_CONDITION_DEPTH`] this keeps
/// every walk of a condition, which recurses over its parts, shallow.
pub const MAX_CONDITION_TESTS: usize = 256;

/// Deepest nesting of parentheses and `!` in one condition: 32 (E0009).
pub const MAX_CONDITION_DEPTH: usize = 32;

/// How far past its opening quote the end of a broken `tools` or `when` string is looked for
/// (see "Unescaped quotes and line breaks" in docs/reference.md): 64 KiB.
pub const MAX_READ_BACK_BYTES: usize = 64 * 1024;

/// How many inner quotes of one broken string are tried as its end.
pub const MAX_READ_BACK_QUOTES: usize = 1_024;

/// The lexing that reading back the broken strings of one file may do in all: four times the
/// file, plus [`MAX_READ_BACK_BYTES`].
pub fn read_back_budget(file_bytes: usize) -> usize {
    file_bytes
        .saturating_mul(4)
        .saturating_add(MAX_READ_BACK_BYTES)
}

/// Elements an `each` item runs at most, the same bound as items per group: a literal array
/// past it is an error, a longer array at run time fails the item before anything runs. Also
/// the largest `max_parallel`.
pub const MAX_EACH: u32 = 10_000;

/// What one run may hold by default, at every depth: its values (as compact JSON) and its item
/// runs (below), 256 MiB. A run past it fails with reason `budget`; the checker warns of a
/// fan-out whose worst case passes it (W0555).
pub const RUN_BYTES: usize = 16 * MAX_RESULT_BYTES;

/// What an item run holds of its run's budget while it runs (its state, awaiting its tool):
/// measured at about 1.8 KB for an element of a called `each`, counted as 2 KiB.
pub const ITEM_RUN_BYTES: usize = 2 * 1024;

/// What an item run's report keeps of its run's budget until the run ends.
pub const ITEM_REPORT_BYTES: usize = 256;
