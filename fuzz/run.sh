#!/usr/bin/env bash
# Builds the fuzz targets on the stable toolchain and runs each for SECONDS (default 20), from
# the seed corpus (seed.sh) with the language's dictionary. Any crash, panic, input that runs
# past 10 s or needs more than 2 GiB stops the run with a non-zero status; the input is left in
# fuzz/artifacts/<target>/. Prints the executions of each target at the end.
#
#   fuzz/run.sh 20                 # what .ci/run does
#   fuzz/run.sh 600 check run      # a longer local run of some targets
#   fuzz/run.sh 600 jq             # jq filters, evaluated by a release seqc (SEQC_BIN)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
seconds=${1:-20}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(split item condition check run jq shell)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2
    exit 2
fi

# `--sanitizer none`: no `-Z` flag reaches rustc, so the stable toolchain builds the targets
# (libFuzzer's coverage instrumentation uses only stable `-C` options).
cargo fuzz build --sanitizer none
# The `jq` target evaluates filters in children of seqc (`seqc __jq`), as seqc's commands do.
cargo build --release --manifest-path ../Cargo.toml --bin seqc
export SEQC_BIN=${SEQC_BIN:-$(cd .. && pwd)/target/release/seqc}
./seed.sh >/dev/null

mkdir -p logs
summary=()
for target in "${targets[@]}"; do
    printf '\n==> fuzz %s for %ss\n' "$target" "$seconds"
    log=logs/$target.log
    status=0
    cargo fuzz run --sanitizer none "$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -dict=seq.dict -print_final_stats=1 >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    tail -n 4 "$log"
    if [[ $status -ne 0 ]]; then
        echo "fuzz/run.sh: $target failed (status $status); the log is fuzz/$log" >&2
        grep -E 'panicked at|ERROR: libFuzzer|SUMMARY|Test unit written' "$log" >&2 || true
        exit 1
    fi
    summary+=("$(printf '%-10s %12s executions in %ss' "$target" "${runs:-?}" "$seconds")")
done

printf '\n==> fuzzing: no crash\n'
printf '%s\n' "${summary[@]}"
