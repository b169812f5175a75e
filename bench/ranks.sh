#!/usr/bin/env bash
# The scaling study over MPI ranks: distributed training (adaspdc train under
# mpirun) with each solver of SOLVERS (default newton,cocoa: truncated Newton
# over the ranks and CoCoA+ rounds) on one data file at P = 1, 2, 4, … ranks,
# each rank reading its byte range of the file.
#
#   bench/ranks.sh DATA [RANKS] [extra adaspdc train flags…]
#
# RANKS is a comma list (default 1,2,4). For every P it runs one job per
# tolerance in TOLS (default 1e-2,1e-4,1e-6), each stopping at its tolerance,
# so that "rounds to ε" is the round at which the run certified ε (the driver
# certifies every round near its tolerance; a Newton step is a round). P = 1
# is mpirun -np 1: a job of one rank, which runs the distributed path and
# counts its collectives. From the last tolerance's run it takes allreduces=
# (every collective call of the run), the seconds per round and, from the
# note that rank 0 prints, for cocoa the doubles and bytes of the round's
# allreduce (the change of v, d values, plus the samples stepped and two stop
# flags) and the mean wall time of the rounds' allreduces and of the small
# ones (the certificates' and the step search's sums); for newton the doubles
# of all its allreduces and their mean wall time. It prints a Markdown table.
#
# Environment: BIN, an adaspdc built with -tags mpi (default: built into
# /tmp/adaspdc-mpi); SOLVERS; THREADS, each rank's threads (default 2); MAXR,
# the -max-epochs cap (default 1000); TOLS; MPIRUN_FLAGS (default
# "--oversubscribe --bind-to none --allow-run-as-root").
#
# On a machine with fewer cores than P × THREADS the ranks are oversubscribed:
# the rounds and the bytes are what a job of P nodes would see, the seconds
# are not.
set -euo pipefail
data=${1:?usage: bench/ranks.sh DATA [RANKS] [train flags…]}
ranks=${2:-1,2,4}
shift $(( $# >= 2 ? 2 : 1 ))
threads=${THREADS:-2}
maxr=${MAXR:-1000}
tols=${TOLS:-1e-2,1e-4,1e-6}
solvers=${SOLVERS:-newton,cocoa}
mpiflags=${MPIRUN_FLAGS:---oversubscribe --bind-to none --allow-run-as-root}
bin=${BIN:-}
if [ -z "$bin" ]; then
  bin=/tmp/adaspdc-mpi
  (cd "$(dirname "$0")/.." && go build -tags mpi -o "$bin" ./cmd/adaspdc)
fi
export MALLOC_MMAP_THRESHOLD_=1000000000000 MALLOC_TRIM_THRESHOLD_=1000000000000 MALLOC_TOP_PAD_=1000000000
extra=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # run SOLVER P TOL: the summary on stdout, the note in $tmp/err
  local solver=$1 p=$2 tol=$3
  local flags=(train -data "$data" -solver "$solver" -tol "$tol" -threads "$threads" -max-epochs "$maxr" -stall-epochs 0 "${extra[@]}")
  # shellcheck disable=SC2086
  mpirun $mpiflags -np "$p" -x MALLOC_MMAP_THRESHOLD_ -x MALLOC_TRIM_THRESHOLD_ -x MALLOC_TOP_PAD_ \
    "$bin" "${flags[@]}" 2>"$tmp/err" || true
}
field() { sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p" | head -1; }

IFS=, read -r -a tolist <<<"$tols"
IFS=, read -r -a plist <<<"$ranks"
IFS=, read -r -a slist <<<"$solvers"
head="| solver | P |"; rule="|---|---:|"
for t in "${tolist[@]}"; do head+=" rounds to $t |"; rule+="---:|"; done
echo "data: $data; threads per rank: $threads; cap: $maxr rounds; extra flags: ${extra[*]:-none}"
echo
echo "$head allreduces | round allreduce doubles | bytes | ms per round allreduce | ms per small allreduce | s per round | s | rounds moved by the search |"
echo "$rule---:|---:|---:|---:|---:|---:|---:|---:|"
for solver in "${slist[@]}"; do
for p in "${plist[@]}"; do
  row="| $solver | $p |"
  for t in "${tolist[@]}"; do
    out=$(run "$solver" "$p" "$t")
    ep=$(echo " $out" | field epochs)
    rg=$(echo " $out" | field rel_gap)
    sec=$(echo " $out" | field seconds)
    ar=$(echo " $out" | field allreduces)
    if awk -v g="$rg" -v t="$t" 'BEGIN{exit !(g+0 <= t+0)}'; then row+=" $ep |"; else row+=" > $ep (gap $rg) |"; fi
  done
  note=$(grep -h "collectives:" "$tmp/err" || true)
  doubles=$(echo "$note" | sed -n 's/.*round allreduces of \([0-9]*\) doubles.*/\1/p')
  bytes=$(echo "$note" | sed -n 's/.*doubles (\([0-9]*\) bytes).*/\1/p')
  msl=$(echo "$note" | sed -n 's/.* bytes), \([0-9.e+-]*\) ms each.*/\1/p')
  mss=$(echo "$note" | sed -n 's/.*doubles in all), \([0-9.e+-]*\) ms each.*/\1/p')
  moved=$(echo "$note" | sed -n 's/.*summed change in \([0-9]*\) rounds.*/\1/p')
  if [ "$solver" = newton ]; then
    # newton's note: N allreduces of D doubles (B bytes) in all, T ms each.
    doubles=$(echo "$note" | sed -n 's/.*allreduces of \([0-9]*\) doubles.*/\1/p')
    bytes=$(echo "$note" | sed -n 's/.*doubles (\([0-9]*\) bytes) in all.*/\1/p')
    msl=$(echo "$note" | sed -n 's/.* bytes) in all, \([0-9.e+-]*\) ms each.*/\1/p')
    doubles="${doubles:+$doubles in all}"; mss=""
  fi
  spr=$(awk -v s="$sec" -v e="$ep" 'BEGIN{ if (e > 0) printf "%.4f", s/e }')
  echo "$row ${ar:-—} | ${doubles:-—} | ${bytes:-—} | ${msl:-—} | ${mss:-—} | $spr | $sec | ${moved:-—} |"
done
done
