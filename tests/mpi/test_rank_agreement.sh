#!/usr/bin/env bash
# Ranks that disagree end the job instead of hanging it. A wrapper gives one rank its own flags (chosen by
# OMPI_COMM_WORLD_RANK, as a site's wrapper script would): an invalid --N on rank 1 alone, then on rank 0 alone, must
# end every rank within the time limit, non-zero, with one error line naming N and no output; a checkpoint that rank 0
# finds and rank 1 does not (their --out folders differ, as node-local scratch would) must not leave rank 1 alone in a
# collective call: the job ends 0 with the CSV of a run without mpirun.
# Usage: test_rank_agreement.sh <studies dir> <mpiexec>
set -euo pipefail
studies=$1
mpiexec=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI runs as root
export OMPI_MCA_btl=self,vader  # one machine: shared memory, no network probing
limit=60  # seconds; each job here takes about one when it ends cleanly
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
quick=(--quick --N 8,16 --trials 6 --threads 1)

# on_rank <rank> <extra flags...>: a wrapper that adds the extra flags on that rank only.
on_rank() {
  local wrapper="$scratch/on-rank-$1.sh"
  printf '#!/usr/bin/env bash\nif [[ $OMPI_COMM_WORLD_RANK == %s ]]; then exec "$@" %s; else exec "$@"; fi\n' \
    "$1" "${*:2}" >"$wrapper"
  chmod +x "$wrapper"
  echo "$wrapper"
}

# job <log> <wrapper> <flags...>: poly_frobenius on 2 ranks under the time limit; sets rc and seconds.
job() {
  local log=$1 wrapper=$2 start=$SECONDS
  shift 2
  rc=0
  timeout "$limit" "$mpiexec" --oversubscribe -n 2 "$wrapper" "$studies/poly_frobenius" "$@" >"$log" 2>&1 || rc=$?
  seconds=$((SECONDS - start))
}

for bad_rank in 1 0; do
  out="$scratch/invalid-on-$bad_rank"
  job "$out.log" "$(on_rank "$bad_rank" --N=-5)" "${quick[@]}" --out "$out"
  before=$failures
  if ((rc == 124)); then
    fail "invalid --N on rank $bad_rank alone: the job still ran after ${limit} s (hung)"
    continue
  fi
  ((rc != 0)) || fail "invalid --N on rank $bad_rank alone: the job exited 0"
  errors=$(grep -c "error" "$out.log" || true)
  [[ $errors == 1 ]] || fail "invalid --N on rank $bad_rank alone: $errors error lines, not 1: $(cat "$out.log")"
  grep -q "poly_frobenius: error.*N" "$out.log" || fail "invalid --N on rank $bad_rank alone: no error names N: $(cat "$out.log")"
  [[ ! -e $out/poly_frobenius.csv ]] || fail "invalid --N on rank $bad_rank alone: wrote $out/poly_frobenius.csv"
  ((failures > before)) ||
    echo "ok: invalid --N on rank $bad_rank alone ends the job in ${seconds} s, exit $rc: $(grep error "$out.log")"
done

# A checkpoint of every configuration in rank 0's --out alone (each rank's own folder, as on node-local scratch): the run
# stops at its first output, where a folder stands in the CSV's way.
per_rank_out="$scratch/per-rank-out.sh"
printf '#!/usr/bin/env bash\nexec "$@" --out "%s-$OMPI_COMM_WORLD_RANK"\n' "$scratch/node-local" >"$per_rank_out"
chmod +x "$per_rank_out"
cached="$scratch/node-local-0"
mkdir -p "$cached/poly_frobenius.csv"
"$studies/poly_frobenius" "${quick[@]}" --out "$cached" >"$cached.log" 2>&1 &&
  fail "the run meant to leave a checkpoint wrote its outputs"
rmdir "$cached/poly_frobenius.csv"
[[ -s $cached/.partial/poly_frobenius.jsonl ]] || fail "no checkpoint left: $(tail -1 "$cached.log")"
"$studies/poly_frobenius" "${quick[@]}" --out "$scratch/alone" >/dev/null 2>&1 || fail "the run without mpirun failed"
job "$scratch/cache-on-rank-0.log" "$per_rank_out" "${quick[@]}"
before=$failures
if ((rc == 124)); then
  fail "a checkpoint on rank 0 alone: the job still ran after ${limit} s (hung)"
else
  ((rc == 0)) || fail "a checkpoint on rank 0 alone: exit $rc: $(tail -2 "$scratch/cache-on-rank-0.log")"
  grep -q "resumed 2 finished configurations" "$scratch/cache-on-rank-0.log" ||
    fail "rank 0 did not resume its checkpoint: $(cat "$scratch/cache-on-rank-0.log")"
  cmp -s "$cached/poly_frobenius.csv" "$scratch/alone/poly_frobenius.csv" ||
    fail "a checkpoint on rank 0 alone: the CSV differs from the run without mpirun"
  [[ ! -e $scratch/node-local-1/poly_frobenius.csv ]] || fail "rank 1 wrote outputs"
  ((failures > before)) ||
    echo "ok: a checkpoint that rank 0 alone finds: the job ends in ${seconds} s with the CSV of a run without mpirun"
fi

((failures == 0)) || { echo "$failures failures"; exit 1; }
