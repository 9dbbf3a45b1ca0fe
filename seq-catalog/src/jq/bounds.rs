//! How big a filter may be before jaq sees it. jaq's lexer, parser and compiler descend the
//! filter recursively, one frame or more per level, and a level costs as little as one byte
//! (`[[[[…`, `((((…`, `- - - …`, a chain `1|1|1|…` is a tree as deep as it is long): a 2 KB
//! filter overflowed a thread's stack. So a filter's size is measured first, by a scan that
//! does not recurse ([`size`]), and refused past [`MAX_NESTING`] or [`MAX_TOKENS`]; what
//! passes runs on a stack of [`STACK`] ([`on_stack`]), sized so that the worst filter within
//! both bounds fits, on any thread (a tokio worker's 2 MiB ones too) and in debug builds.

use super::{Problem, ProblemKind};

/// How deep brackets, parentheses, braces and string interpolations may nest in a filter.
pub const MAX_NESTING: usize = 256;

/// How many tokens a filter may have. Every token may deepen jaq's descent by a level, so this
/// bounds the depth of what the delimiters do not show (operator chains, prefixes, `if`s).
pub const MAX_TOKENS: usize = 4096;

/// The stack jaq's descent into a filter within the bounds runs on. Measured at about 1.2 KiB
/// a token for the deepest shapes in a debug build (`seq-catalog`'s tests prove the worst ones
/// fit); only the pages the descent touches are committed.
pub const STACK: usize = 512 * 1024 * 1024;

/// The most stack kept free before `f` runs on the current thread rather than on a new one.
const RED_ZONE: usize = STACK;

/// What a scan found of a filter: how deep its delimiters nest and how many tokens it has,
/// each with the byte where it first passed its bound.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Size {
    pub nesting: usize,
    pub tokens: usize,
    /// The nesting where the scan is.
    current: usize,
    deep_at: Option<usize>,
    long_at: Option<usize>,
}

/// Measures `filter` without recursion: a token is a word, a number, a string, or one byte of
/// punctuation (so `==` counts two: an upper bound is all that is needed).
pub fn size(filter: &str) -> Size {
    let bytes = filter.as_bytes();
    let mut size = Size::default();
    // The nesting at which each open string interpolation `\(` started.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let start = i;
        i += 1;
        if in_string {
            match b {
                b'\\' if bytes.get(i) == Some(&b'(') => {
                    i += 1;
                    in_string = false;
                    size.open(start);
                    interpolations.push(size.depth_now());
                    size.token(start);
                }
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                size.token(start);
            }
            b'#' => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                size.open(start);
                size.token(start);
            }
            b')' | b']' | b'}' => {
                if b == b')' && interpolations.last() == Some(&size.depth_now()) {
                    interpolations.pop();
                    in_string = true;
                }
                size.close();
                size.token(start);
            }
            c if c.is_ascii_whitespace() => {}
            c if is_word(c) => {
                while bytes.get(i).is_some_and(|&c| is_word(c)) {
                    i += 1;
                }
                size.token(start);
            }
            _ => size.token(start),
        }
    }
    size
}

/// Bytes of words, numbers, variables and field names, read as one token.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'@') || !b.is_ascii()
}

impl Size {
    fn depth_now(&self) -> usize {
        self.current
    }

    fn open(&mut self, at: usize) {
        self.current += 1;
        self.nesting = self.nesting.max(self.current);
        if self.current > MAX_NESTING && self.deep_at.is_none() {
            self.deep_at = Some(at);
        }
    }

    fn close(&mut self) {
        self.current = self.current.saturating_sub(1);
    }

    fn token(&mut self, at: usize) {
        self.tokens += 1;
        if self.tokens > MAX_TOKENS && self.long_at.is_none() {
            self.long_at = Some(at);
        }
    }
}

/// The problem of a filter past a bound, at the byte where it passed it.
pub(crate) fn check(filter: &str) -> Result<(), Problem> {
    let size = size(filter);
    let at = |at: usize| at..filter.len().min(at + 1);
    if let Some(deep) = size.deep_at {
        return Err(Problem {
            range: at(deep),
            kind: ProblemKind::TooBig,
            message: format!(
                "the filter nests deeper than {MAX_NESTING} levels of brackets, parentheses, \
                 braces or string interpolations"
            ),
            help: help(),
        });
    }
    if let Some(long) = size.long_at {
        return Err(Problem {
            range: at(long),
            kind: ProblemKind::TooBig,
            message: format!("the filter has more than {MAX_TOKENS} tokens"),
            help: help(),
        });
    }
    Ok(())
}

fn help() -> String {
    "split the work over several `jq` items, or name repeated parts with `def`; a deep value \
     is data: pass it as `input` (see `seqc explain E1004`)"
        .to_owned()
}

/// `f` on a stack of at least [`STACK`]: the current thread's when it has that much left, a
/// new segment's otherwise.
pub(crate) fn on_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, STACK, f)
}
