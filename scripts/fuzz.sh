#!/usr/bin/env bash
# Builds the libFuzzer targets of crates/tlv/fuzz and crates/forwarder/fuzz
# with coverage instrumentation and runs the named ones for SECONDS each,
# side by side (one process per target).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 60 reassemble mgmt)
#   scripts/fuzz.sh build                     (build only)
#
# FUZZ_ONE_AT_A_TIME=1 runs the targets one after the other instead (one
# core busy at a time, for a run beside other work).
#
# The build is what `cargo fuzz build --sanitizer none` does (cargo-fuzz
# 0.13's RUSTFLAGS, --target so build scripts and proc macros stay
# uninstrumented), on the stable toolchain: no cargo-fuzz install, no
# nightly. Safe Rust needs no ASan; debug assertions and overflow checks
# are on. Everything goes to target/fuzz-ci (its own target dir, so these
# flags never invalidate the workspace's build): binaries, the growing
# corpus (corpus/TARGET, seeded from the checked-in fuzz/seeds/TARGET) and
# crash inputs (artifacts/TARGET/). Any finding exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${FUZZ_TARGET_DIR:-$root/target/fuzz-ci}
host=$(rustc -vV | sed -n 's/^host: //p')

# target name -> fuzz crate
crate_of() {
  case "$1" in
    decode | reassemble) echo crates/tlv/fuzz ;;
    mgmt) echo crates/forwarder/fuzz ;;
    *) echo "unknown fuzz target $1" >&2; return 1 ;;
  esac
}

build=0
secs=60
if [ "${1:-}" = build ]; then
  build=1
  shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  secs=$1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(reassemble mgmt)

flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
flags+=" -Cllvm-args=-simplifycfg-branch-fold-threshold=0"
flags+=" -Cllvm-args=-sanitizer-coverage-stack-depth"
flags+=" --cfg fuzzing -Cdebug-assertions -Coverflow-checks -Ccodegen-units=1"

start=$(date +%s)
for crate in crates/tlv/fuzz crates/forwarder/fuzz; do
  RUSTFLAGS="$flags" CARGO_TARGET_DIR="$out" \
    cargo build --release --manifest-path "$crate/Cargo.toml" --target "$host" --bins
done
echo "fuzz build: $(($(date +%s) - start)) s"
[ $build = 0 ] || exit 0

bin_dir=$out/$host/release
pids=()
status=()
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  crate=$(crate_of "$t")
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  seeds=()
  [ -d "$crate/seeds/$t" ] && seeds=("$crate/seeds/$t")
  # -timeout: one input running 10 s is a finding (a hang), not a wait.
  "$bin_dir/$t" "$out/corpus/$t" "${seeds[@]}" \
    -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t/" >"$out/$t.log" 2>&1 &
  pids[$i]=$!
  if [ "${FUZZ_ONE_AT_A_TIME:-0}" = 1 ]; then
    rc=0
    wait "${pids[$i]}" || rc=$?
    status[$i]=$rc
  fi
done
failed=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if [ -z "${status[$i]:-}" ]; then
    rc=0
    wait "${pids[$i]}" || rc=$?
    status[$i]=$rc
  fi
  if [ "${status[$i]}" = 0 ]; then
    echo "fuzz $t: ${secs} s, no finding ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$t.log" | grep -o '[0-9]*$') runs, corpus $(ls "$out/corpus/$t" | wc -l))"
  else
    failed=1
    echo "fuzz $t FAILED: log $out/$t.log, inputs in $out/artifacts/$t/" >&2
    tail -n 40 "$out/$t.log" >&2
  fi
done
exit $failed
