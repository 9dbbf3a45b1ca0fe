//! The words of the timeline's rows: counts, durations, failures and plurals.

/// `words` counted: `3 ok, 1 failed`, in order of first appearance.
pub(super) fn counts(words: impl Iterator<Item = &'static str>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for word in words {
        match counts.iter_mut().find(|(w, _)| *w == word) {
            Some((_, n)) => *n += 1,
            None => counts.push((word, 1)),
        }
    }
    counts
        .iter()
        .map(|(word, n)| format!("{n} {word}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn error_text(error: Option<&seq_exec::ToolError>) -> String {
    reason(error)
        .map(|why| format!(" · {why}"))
        .unwrap_or_default()
}

/// Why a row failed, as its bar's text: `reason: detail`.
pub(super) fn reason(error: Option<&seq_exec::ToolError>) -> Option<String> {
    error.map(|error| match &error.detail {
        Some(detail) => format!("{}: {detail}", error.reason.as_str()),
        None => error.reason.as_str().to_owned(),
    })
}

pub(super) fn span_text(started_ms: u64, duration_ms: u64) -> String {
    format!("at {} for {}", duration(started_ms), duration(duration_ms))
}

/// `850 ms`, `1.5 s`, `2 min 5 s`: an axis label or a tooltip's figure.
pub fn duration(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        let tenths = ms / 100;
        if tenths.is_multiple_of(10) {
            format!("{} s", tenths / 10)
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        }
    } else {
        let s = ms / 1_000;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// `1 more group`, `3 more groups`.
pub(super) fn more(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 more {word}")
    } else {
        format!("{n} more {word}s")
    }
}

pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
