//! jq filters and values from a small grammar of jq's constructs (deep nesting, operator
//! chains, big numbers, string repeats, loops that build, natives that descend), run through
//! the path the `jq` tool takes in seqc: the checker's compile (in this process: it must never
//! crash, whatever the filter), then evaluation in a child process (`seqc __jq`, the binary
//! at `$SEQC_BIN`, built by run.sh) with a short timeout. A child that crashes is a failed
//! call; this process must not crash, hang, or get an answer that is neither a value nor a
//! `ToolError`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_exec::builtin::{BuiltinHost, JqRunner};
use seq_exec::{Caller, Reason, ToolHost};
use serde_json::json;
use std::sync::LazyLock;
use std::time::Duration;

/// How long a filter may run before its call is dropped (its child killed).
const TIMEOUT: Duration = Duration::from_millis(500);
/// How deep the grammar nests by recursion (deeper nesting comes from repeats, written flat).
const MAX_DEPTH: u32 = 48;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[usize::from(self.next()) % from.len()]
    }
}

const ATOMS: &[&str] = &[
    ".", "null", "true", "0", "1", "-1", "1.5", "1e308", "-1e308", "100000000000000000000000",
    "\"x\"", "\"\"", "[]", "{}", ".a", ".[0]", ".[]?", "$__loc__", "range(3)", "empty", "..",
    "nan", "infinite", "input", "env",
];
const NUMBERS: &[&str] = &[
    "0", "1", "2", "40", "1000", "100000", "100000000", "100000000000000", "1e18", "-5",
    "340282366920938463463374607431768211456", "0.5",
];
const OPERATORS: &[&str] = &[
    " | ", ", ", " + ", " - ", " * ", " / ", " % ", " == ", " != ", " < ", " >= ", " and ",
    " or ", " // ", " = ", " |= ", " += ",
];
const NATIVES: &[&str] = &[
    "tojson", "tostring", "@json", "@text", "@base64", "fromjson", "length", "explode",
    "implode", "keys", "sort", "unique", "add", "flatten", "tojson | fromjson", "ascii",
    "walk(.)", "paths", "leaf_paths", "contains(.)", "inside(.)", "tostream", "pow(.; .)",
    "log", "floor", "splits(\"a\")", "ltrimstr(\"x\")", "join(\",\")", "to_entries",
    "from_entries", "getpath([\"a\"])", "indices(1)", "@sh", "test(\"a*\")", "combinations",
];

fn filter(b: &mut Bytes<'_>, depth: u32, out: &mut String) {
    if depth >= MAX_DEPTH || b.0.is_empty() {
        out.push_str(b.pick(ATOMS));
        return;
    }
    let depth = depth + 1;
    match b.next() % 18 {
        0 => out.push_str(b.pick(ATOMS)),
        1 => wrap(b, depth, out, "[", "]"),
        2 => wrap(b, depth, out, "(", ")"),
        3 => wrap(b, depth, out, "{a: ", "}"),
        4 => wrap(b, depth, out, "\"\\(", ")\""),
        5 => {
            filter(b, depth, out);
            out.push_str(b.pick(OPERATORS));
            filter(b, depth, out);
        }
        6 => {
            out.push_str("reduce range(");
            out.push_str(b.pick(NUMBERS));
            out.push_str(") as $i (");
            filter(b, depth, out);
            out.push_str("; ");
            filter(b, depth, out);
            out.push(')');
        }
        7 => {
            out.push_str("if ");
            filter(b, depth, out);
            out.push_str(" then ");
            filter(b, depth, out);
            out.push_str(" else ");
            filter(b, depth, out);
            out.push_str(" end");
        }
        8 => wrap(b, depth, out, "try ", ""),
        9 => {
            out.push_str("def f: ");
            filter(b, depth, out);
            out.push_str("; ");
            filter(b, depth, out);
        }
        10 => {
            filter(b, depth, out);
            out.push_str(" | ");
            out.push_str(b.pick(NATIVES));
        }
        // Nesting far past any bound, written flat.
        11 => {
            let (open, close) = [("[", "]"), ("(", ")"), ("{a:", "}"), ("\"\\(", ")\""), ("-", "")]
                [usize::from(b.next()) % 5];
            let times = usize::from(b.next()) * 16;
            out.push_str(&open.repeat(times));
            filter(b, depth, out);
            out.push_str(&close.repeat(times));
        }
        12 => {
            out.push_str("\"x\" * ");
            out.push_str(b.pick(NUMBERS));
        }
        13 => wrap(b, depth, out, "- ", ""),
        14 => {
            out.push_str("[limit(");
            out.push_str(b.pick(NUMBERS));
            out.push_str("; repeat(");
            filter(b, depth, out);
            out.push_str("))]");
        }
        // Chains of an operator, long enough to pass the bound of tokens.
        15 => {
            let op = b.pick(OPERATORS);
            let times = usize::from(b.next()) * 24;
            out.push('1');
            for _ in 0..times {
                out.push_str(op);
                out.push('1');
            }
        }
        16 => {
            filter(b, depth, out);
            out.push_str(" as $x | ");
            filter(b, depth, out);
        }
        _ => {
            out.push_str("label $out | ");
            filter(b, depth, out);
        }
    }
}

fn wrap(b: &mut Bytes<'_>, depth: u32, out: &mut String, open: &str, close: &str) {
    out.push_str(open);
    filter(b, depth, out);
    out.push_str(close);
}

/// The runtime and host every input shares: the children stay warm between inputs.
struct Shared {
    runtime: tokio::runtime::Runtime,
    host: BuiltinHost,
}

static SHARED: LazyLock<Shared> = LazyLock::new(|| {
    let seqc = std::env::var_os("SEQC_BIN").unwrap_or_else(|| "../target/release/seqc".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let root = std::env::temp_dir();
    Shared {
        runtime,
        host: BuiltinHost::new(root).with_jq(JqRunner::isolated(seqc, ["__jq"])),
    }
});

fuzz_target!(|data: &[u8]| {
    let (input, grammar) = data.split_at(data.len().min(1));
    let mut text = String::new();
    filter(&mut Bytes(grammar), 0, &mut text);
    // The checker's side, in this process: problems, evident type and colours never crash.
    let _ = seq_catalog::jq::problems(&text);
    let _ = seq_catalog::jq::result_type(&text, None);
    let _ = seq_catalog::jq::pieces(&text);
    let input = match input.first().map(|b| b % 4) {
        Some(1) => json!([1, "a", {"b": [null, true]}]),
        Some(2) => json!("x"),
        Some(3) => json!(100_000_000_000_000_000u64),
        Some(_) | None => json!(null),
    };
    let shared = &*SHARED;
    let caller = Caller::new("fuzz");
    let call = shared
        .host
        .call(&caller, "jq", json!({"filter": text, "input": input}));
    // A timeout drops the call, as the engine's does: its child is killed.
    if let Ok(Err(error)) = shared
        .runtime
        .block_on(async { tokio::time::timeout(TIMEOUT, call).await })
    {
        assert!(
            matches!(error.reason, Reason::Failed | Reason::Cancelled),
            "{text}: {error:?}"
        );
    }
});
