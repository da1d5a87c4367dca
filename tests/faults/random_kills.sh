#!/usr/bin/env bash
# Kills studies with SIGKILL at random moments and reruns each until it finishes: its final CSVs must be byte-identical
# to an uninterrupted run's, and no temporary file may be left anywhere under its output folder.
# Usage: random_kills.sh <studies dir> <kills per study> [seed]
set -euo pipefail
studies=$1
kills=$2
RANDOM=${3:-20261124}
echo "seed ${3:-20261124} (the third argument replays it)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# job <name> <CSVs to compare> -- <study> <flags>
job() {
  local name=$1 csvs=()
  shift
  while [[ $1 != -- ]]; do csvs+=("$1"); shift; done
  shift
  local study=$1
  shift
  local ref="$scratch/$name-ref" out="$scratch/$name-out"
  local t0
  t0=$(date +%s%N)
  "$studies/$study" "$@" --out "$ref" >/dev/null 2>&1
  local span_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  ((span_ms > 50)) || span_ms=50
  local done_kills=0 attempts=0
  while ((done_kills < kills && attempts < 4 * kills)); do
    attempts=$((attempts + 1))
    [[ -e $out/${csvs[0]} ]] && rm -rf "$out"  # finished: start over, so that every kill lands in a run
    # A process group of its own, killed whole: a plotting child left running would write into the folder being reused.
    setsid "$studies/$study" "$@" --out "$out" >/dev/null 2>&1 &
    local pid=$!
    sleep "$(awk -v ms=$((RANDOM % span_ms)) 'BEGIN { printf "%.3f", ms / 1000 }')"
    kill -9 -- "-$pid" 2>/dev/null || true
    local status=0
    wait "$pid" 2>/dev/null || status=$?
    # Landed only when SIGKILL ended the run: one that had finished exits 0, and signalling its zombie succeeds too.
    if ((status == 128 + 9)); then done_kills=$((done_kills + 1)); fi
  done
  ((done_kills > 0)) || { echo "FAIL: $name: no kill landed in $attempts tries"; failures=$((failures + 1)); return; }
  "$studies/$study" "$@" --out "$out" >"$scratch/$name.log" 2>&1 || { echo "FAIL: $name's final run: $(tail -1 "$scratch/$name.log")"; failures=$((failures + 1)); return; }
  for csv in "${csvs[@]}"; do
    cmp -s "$ref/$csv" "$out/$csv" || { echo "FAIL: $name: $csv differs from the uninterrupted run's"; failures=$((failures + 1)); }
  done
  local left
  left=$(find "$out" -name '*.tmp.*' | head -3)
  [[ -z $left ]] || { echo "FAIL: $name left temporary files: $left"; failures=$((failures + 1)); }
  echo "ok: $name killed $done_kills times at random moments within ${span_ms} ms, final ${csvs[*]} identical"
}

job verify verify.csv claims.csv -- verify --quick --claims poly.frob_growth,relu.row_sum_constant,soft.prop1.small_alpha --threads 1
job monte_carlo poly_frobenius.csv -- poly_frobenius --quick --N 8,16,32,64 --trials 40 --threads 1
job training train.csv -- train --model micro --steps 40 --batch 16 --checkpoint-every 4 --train-limit 512 \
  --validation 64 --eval-every 10 --threads 1
job sweep k_sweep.csv -- k_sweep --quick --seed 4 --steps 60 --threads 1

((failures == 0)) || { echo "$failures failures"; exit 1; }
