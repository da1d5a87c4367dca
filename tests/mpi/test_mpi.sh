#!/usr/bin/env bash
# Studies under mpirun: the outputs of R = 1, 2, 3 ranks are byte-identical to a run without mpirun (a Monte-Carlo
# sweep, claims with Monte-Carlo trials, a training sweep), a sweep's points are trained once across the ranks, and a
# job whose rank is killed ends with a message, keeps its finished points and resumes to the same outputs.
# Usage: test_mpi.sh <studies dir> <mpiexec>
set -euo pipefail
studies=$1
mpiexec=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI runs as root
export OMPI_MCA_btl=self,vader  # one machine: shared memory, no network probing
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# same <name> <study> <files to compare> -- <flags>: one process, then R = 1, 2, 3 ranks.
same() {
  local name=$1 study=$2 files=()
  shift 2
  while [[ $1 != -- ]]; do files+=("$1"); shift; done
  shift
  "$studies/$study" "$@" --threads 1 --out "$scratch/$name-alone" >"$scratch/$name-alone.log" 2>&1 ||
    { fail "$name without mpirun: $(tail -1 "$scratch/$name-alone.log")"; return; }
  for ranks in 1 2 3; do
    local out="$scratch/$name-$ranks"
    "$mpiexec" --oversubscribe -n "$ranks" "$studies/$study" "$@" --threads 1 --out "$out" >"$out.log" 2>&1 ||
      { fail "$name on $ranks ranks: $(tail -1 "$out.log")"; continue; }
    for f in "${files[@]}"; do
      cmp -s "$scratch/$name-alone/$f" "$out/$f" || fail "$name: $f on $ranks ranks differs from the run without mpirun"
    done
    [[ $(grep -c "wrote .* rows" "$out.log") == 1 ]] || fail "$name on $ranks ranks: outputs reported by more than rank 0"
    # Checkpoints go once a run is done; a sweep's finished points stay for its re-analysis, as without mpirun.
    if [[ -e $out/.partial && ! -e $scratch/$name-alone/.partial ]]; then
      fail "$name on $ranks ranks: left $out/.partial behind"
    fi
  done
  echo "ok: $name identical without mpirun and on 1, 2, 3 ranks"
}

same sweep poly_frobenius poly_frobenius.csv -- --quick --N 8,16,32 --trials 9
same accelerated poly_frobenius poly_frobenius.csv -- --quick --backend thrust --N 8,16,32 --trials 7
same claims relu_scaling relu_scaling.csv claims.csv -- --quick --claims relu.frob_constant,relu.softmax_frob_level
same training k_sweep k_sweep.csv -- --quick --seed 4 --steps 4

# Each point trained once: the ranks' "trained N of M (refined) points here" add up to the points the sweep kept.
points=$(compgen -G "$scratch/training-3/points/k_sweep/*.json" | wc -l)
trained=$(grep -ho "trained [0-9]* of" "$scratch/training-3.log" | awk '{s += $2} END {print s}')
[[ $trained == "$points" ]] || fail "k_sweep on 3 ranks trained $trained points in all, not $points (once each)"

# A rank killed mid-sweep: the job ends non-zero with a message, finished points stay, and a rerun trains only the rest.
killed="$scratch/killed"
grid_only=(--quick --seed 4 --steps 600 --refine-seeds 0 --threads 1)  # 12 points: the kill lands mid-grid
"$mpiexec" --oversubscribe -n 2 "$studies/k_sweep" "${grid_only[@]}" --out "$killed" >"$killed.log" 2>&1 &
job=$!
deadline=$((SECONDS + 120))
until compgen -G "$killed/points/k_sweep/*.json" >/dev/null || ((SECONDS > deadline)); do sleep 0.2; done
victim=$(pgrep -P "$job" | tail -1 || true)  # a rank: mpiexec starts them as its children
[[ -n $victim ]] && kill -9 "$victim"
if wait "$job"; then
  fail "the job with a killed rank exited 0"
else
  grep -qE "rank [0-9]+ .* signal 9" "$killed.log" || fail "no message names the killed rank: $(tail -3 "$killed.log")"
fi
kept=$(compgen -G "$killed/points/k_sweep/*.json" | wc -l)
((kept >= 1)) || fail "no finished point kept after the kill"
"$mpiexec" --oversubscribe -n 2 "$studies/k_sweep" "${grid_only[@]}" --out "$killed" \
  >"$killed-rerun.log" 2>&1 || fail "the rerun after the kill failed: $(tail -1 "$killed-rerun.log")"
"$studies/k_sweep" "${grid_only[@]}" --out "$scratch/uninterrupted" >/dev/null 2>&1
cmp -s "$killed/k_sweep.csv" "$scratch/uninterrupted/k_sweep.csv" ||
  fail "the resumed job's k_sweep.csv differs from an uninterrupted run"
retrained=$(grep -ho "trained [0-9]* of" "$killed-rerun.log" | awk '{s += $2} END {print s}')
((retrained <= 12 - kept)) || fail "the rerun trained $retrained points, but $kept of 12 were kept"
echo "ok: a killed rank ends the job; $kept points kept, the rerun trained $retrained and matches the uninterrupted CSV"

((failures == 0)) || { echo "$failures failures"; exit 1; }
