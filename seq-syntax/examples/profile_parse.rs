//! One run of the front end (or of its serde_json baselines) on a generated file, for profilers
//! that want a single process rather than criterion's loop:
//!
//! ```text
//! cargo build --release -p seq-syntax --example profile_parse
//! valgrind --tool=callgrind --toggle-collect='seq_syntax::parse' \
//!     target/release/examples/profile_parse 2097152 parse
//! valgrind --tool=callgrind --toggle-collect='seq_gen::baseline::file_level' \
//!     target/release/examples/profile_parse 2097152 floor
//! ```
//!
//! Arguments: the file's size in bytes (default 2 MiB) and what to run: `parse` (default),
//! `floor` (serde_json's `Value` of the file) or `same` (serde_json doing the same work).

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2 << 20);
    let what = args.next().unwrap_or_else(|| "parse".to_owned());
    let text = seq_gen::sequence_file(size);
    let started = std::time::Instant::now();
    match what.as_str() {
        "floor" => drop(std::hint::black_box(seq_gen::baseline::file_level(
            text.as_bytes(),
        ))),
        "same" => drop(std::hint::black_box(seq_gen::baseline::same_work(
            text.as_bytes(),
        ))),
        _ => drop(std::hint::black_box(seq_syntax::parse(
            std::hint::black_box(&text),
        ))),
    }
    eprintln!("{what}: {:?}", started.elapsed());
}
