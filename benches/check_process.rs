//! Whole-process `seqc check` (the bench profile's binary, spawned) against a program that does
//! the same work with serde_json: read the files, parse each, split every `tools` string, parse
//! every item (`seq_gen::baseline::same_work`), and print a clean JSON report. The baseline is
//! this benchmark's own executable run again with `SEQC_BENCH_BASELINE` set, so both sides pay
//! a process's start-up, the reading of the files and the writing of a report.
//!
//! Inputs: the generated 10 MB file, and stores of 1,000 and 4,000 sequences × 10 groups with
//! cross-sequence calls (`seq_gen::batch`), checked as a directory. Each child runs under an
//! intermediate copy of this executable (`SEQC_BENCH_MEASURE`), which waits for it alone and
//! reports its CPU time (user + system) and peak resident memory from `getrusage`: CPU time is
//! what a machine busy with other work disturbs least. The rounds alternate the two programs and
//! every figure printed is a ratio within a round (the median of the rounds), besides the peak
//! memory as a multiple of the input's size.
//!
//! `cargo bench --bench check_process`; `-- --rounds N` (default 7), `--seqc PATH` (another
//! build of seqc). Without `--bench`
//! (`cargo test --benches`) one small round runs, as a smoke test.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark that cannot set up should stop there, and prints its figures"
)]
#![allow(
    unsafe_code,
    reason = "getrusage, the one way to read a child's own figures"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Set (to anything) in the baseline's environment: the executable is the baseline program.
const BASELINE: &str = "SEQC_BENCH_BASELINE";
/// Set in the intermediate's environment: run the arguments as a command and measure it.
const MEASURE: &str = "SEQC_BENCH_MEASURE";

fn main() {
    // The intermediate first: it passes `BASELINE` on to the baseline it measures.
    if std::env::var_os(MEASURE).is_some() {
        measure_child(std::env::args_os().skip(1).collect());
        return;
    }
    if std::env::var_os(BASELINE).is_some() {
        baseline(std::env::args_os().skip(1).map(PathBuf::from));
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|at| args.get(at + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(if full { 7 } else { 1 });
    let dir = tempfile::tempdir().unwrap();
    let (file_size, store) = if full {
        (10 << 20, 1_000)
    } else {
        (256 << 10, 50)
    };

    let file = dir.path().join("big.json");
    std::fs::write(&file, seq_gen::sequence_file(file_size)).unwrap();
    let small = write_store(&dir.path().join("store-1x"), store);
    let large = write_store(&dir.path().join("store-4x"), 4 * store);

    println!("check_process: {rounds} rounds, CPU time (user + system) of the whole process");
    // An empty data directory: no stored sequence joins the check.
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    compare(
        &format!("{} MB file", file_size >> 20),
        &[file],
        &data,
        rounds,
    );
    let one = compare(&format!("{store} sequences"), &[small], &data, rounds);
    let four = compare(&format!("{} sequences", 4 * store), &[large], &data, rounds);
    println!(
        "growth {store} -> {} sequences: seqc {:.2}x, serde_json {:.2}x (4.00x is linear)",
        4 * store,
        four.seqc / one.seqc,
        four.baseline / one.baseline,
    );
}

/// Writes a store of `sequences` × 10 groups into `dir`, one file per sequence.
fn write_store(dir: &Path, sequences: usize) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for (path, text) in seq_gen::batch(sequences, 10) {
        let name = Path::new(&path).file_name().unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir.to_path_buf()
}

/// One child's figures, as the intermediate reports them.
#[derive(Clone, Copy, Debug)]
struct Run {
    cpu: f64,
    wall: f64,
    peak_rss: f64,
}

/// Medians of the seqc and baseline CPU times, in seconds.
struct Medians {
    seqc: f64,
    baseline: f64,
}

fn compare(what: &str, paths: &[PathBuf], data: &Path, rounds: usize) -> Medians {
    let bytes: u64 = paths.iter().map(|p| input_bytes(p)).sum();
    // `--seqc PATH` measures another build of seqc (an earlier commit's, say) on the same inputs.
    let seqc = std::env::args()
        .skip_while(|a| a != "--seqc")
        .nth(1)
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_seqc")), PathBuf::from);
    let me = std::env::current_exe().unwrap();
    let mut seqc_args: Vec<String> = vec!["check".into(), "--format".into(), "json".into()];
    seqc_args.extend(["--data-dir".into(), data.display().to_string()]);
    seqc_args.extend(paths.iter().map(|p| p.display().to_string()));
    let base_args: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    // One of each first, unmeasured: the files are then in the page cache for both.
    run(&seqc, &seqc_args, false);
    run(&me, &base_args, true);
    let mut pairs = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let ours = run(&seqc, &seqc_args, false);
        let theirs = run(&me, &base_args, true);
        pairs.push((ours, theirs));
    }
    let median = |f: &dyn Fn(&(Run, Run)) -> f64| {
        let mut v: Vec<f64> = pairs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let cpu_ratio = median(&|(a, b)| a.cpu / b.cpu);
    let wall_ratio = median(&|(a, b)| a.wall / b.wall);
    let (seqc_cpu, base_cpu) = (median(&|(a, _)| a.cpu), median(&|(_, b)| b.cpu));
    let (seqc_rss, base_rss) = (median(&|(a, _)| a.peak_rss), median(&|(_, b)| b.peak_rss));
    let mb = bytes as f64 / 1e6;
    println!(
        "{what} ({mb:.1} MB): seqc check / serde_json same work = {cpu_ratio:.2}x CPU \
         ({:.0} / {:.0} ms), {wall_ratio:.2}x wall; peak RSS {:.0} MB = {:.1}x the input \
         (serde_json {:.0} MB = {:.1}x)",
        seqc_cpu * 1e3,
        base_cpu * 1e3,
        seqc_rss / 1e6,
        seqc_rss / bytes as f64,
        base_rss / 1e6,
        base_rss / bytes as f64,
    );
    Medians {
        seqc: seqc_cpu,
        baseline: base_cpu,
    }
}

/// The bytes of a file, or of the files directly in a directory.
fn input_bytes(path: &Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    } else {
        std::fs::metadata(path).unwrap().len()
    }
}

/// Runs `program args` under the intermediate and reads its figures.
fn run(program: &Path, args: &[String], baseline: bool) -> Run {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(MEASURE, "1").arg(program).args(args);
    if baseline {
        command.env(BASELINE, "1");
    } else {
        command.env_remove(BASELINE);
    }
    let output = command.stderr(Stdio::inherit()).output().unwrap();
    assert!(output.status.success(), "{program:?} {args:?} failed");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut fields = text.split_whitespace().map(|f| f.parse::<f64>().unwrap());
    let mut next = || fields.next().unwrap();
    Run {
        cpu: next(),
        wall: next(),
        peak_rss: next(),
    }
}

/// The intermediate: runs its arguments as a command (output discarded, after checking it is a
/// clean report) and prints `cpu_seconds wall_seconds peak_rss_bytes` of that child alone.
fn measure_child(command: Vec<std::ffi::OsString>) {
    let (program, args) = command.split_first().unwrap();
    let started = Instant::now();
    let output = Command::new(program)
        .args(args)
        .env_remove(MEASURE)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(output.status.success(), "{program:?} failed: {output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["errors"], 0, "the generated input has errors");
    assert_eq!(report["warnings"], 0, "the generated input has warnings");
    // SAFETY: getrusage writes into the struct it is given, nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    // ru_maxrss is in kilobytes on Linux.
    println!("{cpu} {wall} {}", usage.ru_maxrss as f64 * 1024.0);
}

/// The baseline program: serde_json doing the front end's work on every file given (a
/// directory: every file in it), then a clean report in `seqc check --format json`'s shape.
fn baseline(paths: impl Iterator<Item = PathBuf>) {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            files.extend(entries);
        } else {
            files.push(path);
        }
    }
    let mut failed = 0;
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        failed += seq_gen::baseline::same_work(&bytes).failed;
    }
    assert_eq!(failed, 0, "serde_json rejected generated items");
    let report = serde_json::json!({"diagnostics": [], "errors": 0, "warnings": 0});
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &report).unwrap();
    writeln!(out).unwrap();
}
