//! Peak heap of `seq_syntax::parse` on the generated 10 MB file, as a multiple of the file's
//! size, next to serde_json's `Value` of the same file. A counting
//! global allocator sees every byte allocated; the file itself, allocated before, is not counted.
//!
//! `cargo bench -p seq-syntax --bench memory`. Under `cargo test --benches` or
//! `cargo bench -- --test` the input is 256 KB.

use peak_alloc::PeakAlloc;
use seq_gen::bench::full_size;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

const MB: f64 = 1024.0 * 1024.0;

/// Runs `f`; returns its result, the peak heap it reached and the heap its result keeps.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    let result = f();
    let peak = ALLOCATOR.peak_usage().saturating_sub(before);
    let kept = ALLOCATOR.current_usage().saturating_sub(before);
    (result, peak, kept)
}

fn report(what: &str, file: usize, peak: usize, kept: usize) {
    let (file, peak, kept) = (file as f64, peak as f64, kept as f64);
    println!(
        "{what}: peak heap: {:.1} MB = {:.1}x file size; result kept: {:.1} MB = {:.1}x",
        peak / MB,
        peak / file,
        kept / MB,
        kept / file,
    );
}

fn main() {
    let benchmarking = full_size();
    let size = if benchmarking { 10 << 20 } else { 256 << 10 };
    let text = seq_gen::sequence_file(size);
    println!("file: {:.1} MB", text.len() as f64 / MB);

    let (parse, peak, kept) = measure(|| seq_syntax::parse(&text));
    assert!(!parse.has_errors(), "the generated file has errors");
    drop(parse);
    report("seq_syntax::parse", text.len(), peak, kept);

    let (value, peak, kept) = measure(|| seq_gen::baseline::file_level(text.as_bytes()));
    assert!(value.is_some(), "the generated file is not JSON");
    drop(value);
    report("serde_json Value (floor)", text.len(), peak, kept);
}
