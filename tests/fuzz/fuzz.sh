#!/usr/bin/env bash
# Fuzzes each target for SECONDS under ASan + UBSan (the fuzz preset), then merges into its committed corpus the
# inputs that added edges. Crashes land in build-fuzz/crashes/ and stop the script: a reproducer to fix, then add
# to tests/fuzz/corpus/<target>/. Usage: tests/fuzz/fuzz.sh [SECONDS] [TARGET...]  (default 600 s, every target)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx cifar10 toml_config csv_matrix csv_rows trainer_state sweep_point result_table checkpoint_lines)
cd "$root"
cmake --preset fuzz > /dev/null
cmake --build build-fuzz --target "${targets[@]/#/fuzz_}"
mkdir -p build-fuzz/crashes build-fuzz/logs
for target in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/$target found=build-fuzz/found/$target log=build-fuzz/logs/$target.log
  mkdir -p "$corpus" "$found"
  # New inputs go to the first folder; the committed corpus seeds the run.
  build-fuzz/tests/fuzz/fuzz_$target "$found" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$target-" > "$log" 2>&1 || {
    tail -40 "$log"
    echo "fuzz.sh: $target crashed; reproducer in build-fuzz/crashes/" >&2
    exit 1
  }
  # New edges only (no hit-count buckets): the committed corpus stays small enough to replay in every CI run.
  build-fuzz/tests/fuzz/fuzz_$target -merge=1 -use_counters=0 "$corpus" "$found" >> "$log" 2>&1
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  edges=$(awk '/^Done [0-9]+ runs/ { print c; exit } /^#[0-9]+.*cov:/ { for (i = 1; i < NF; ++i) if ($i == "cov:") c = $(i + 1) }' "$log")
  printf '%-17s %10s runs in %s s, %5s edges covered, %4s inputs in the corpus\n' "$target" "$runs" "$seconds" "$edges" \
    "$(ls "$corpus" | wc -l)"
done
