#!/usr/bin/env bash
# before-after.sh BASE [REPEATS] [OUT]: times the same training runs with the
# code at git revision BASE and with the work tree, interleaved (base, new,
# base, new, …) so that both see the same host load, and prints for each run
# the median solve seconds (train's `seconds=`) of each side and their
# ratio. A change that loses no speed shows ratios within the spread of
# the repeats. Data come from ../shared/data (DATA overrides), news20
# binarised as bench/prepare.sh does. RUNS, a regular expression, picks
# runs by name.
set -euo pipefail
base=${1:?usage: before-after.sh BASE [REPEATS] [OUT]}
reps=${2:-5}
out=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$root/../shared/data}
mkdir -p "$out"
news20="$out/news20.binary" # binarised: label ≤ 10 → −1
awk '{ $1 = ($1 <= 10 ? -1 : 1); print }' "$data/news20" > "$news20"
git -C "$root" worktree add -q --detach "$out/base" "$base"
trap 'git -C "$root" worktree remove --force "$out/base"' EXIT
(cd "$out/base" && go build -o "$out/adaspdc-base" ./cmd/adaspdc)
(cd "$root" && go build -o "$out/adaspdc-new" ./cmd/adaspdc)
runs=(
  "auto-a9a|-data $data/a9a -loss logistic -lambda 1e-5 -tol 1e-6"
  "auto-w8a|-data $data/w8a -loss logistic -lambda 1e-5 -tol 1e-6"
  "auto-news20-unit|-data $news20 -loss logistic -lambda 1e-5 -tol 1e-6 -normalize unit"
  "sdca-a9a|-data $data/a9a -loss logistic -lambda 1e-5 -tol 1e-6 -solver sdca"
  "adaspdc-w8a|-data $data/w8a -loss logistic -lambda 1e-5 -tol 1e-6 -solver adaspdc"
  "cocoa-ijcnn1|-data $data/ijcnn1 -loss sqhinge -lambda 1e-5 -tol 1e-6 -solver cocoa"
  "glmnet-a9a-l1|-data $data/a9a -loss logistic -lambda 0 -l1 3.07e-5 -tol 1e-6"
  "sdca-epochs-w8a|-data $data/w8a -loss logistic -lambda 1e-5 -tol 0 -max-epochs 20 -solver sdca"
  "adaspdc-epochs-w8a|-data $data/w8a -loss logistic -lambda 1e-5 -tol 0 -max-epochs 20 -solver adaspdc"
)
if [ -n "${RUNS:-}" ]; then # a regular expression on the run names
  keep=(); for r in "${runs[@]}"; do [[ ${r%%|*} =~ $RUNS ]] && keep+=("$r"); done; runs=("${keep[@]}")
fi
csv="$out/times.csv"
echo "run,side,rep,seconds" > "$csv"
for rep in $(seq "$reps"); do
  for r in "${runs[@]}"; do
    name=${r%%|*}; args=${r#*|}
    for side in base new; do
      line=$("$out/adaspdc-$side" train -quiet $args 2>/dev/null | grep -o 'seconds=[0-9.e+-]*' | tail -1 || true)
      echo "$name,$side,$rep,${line#seconds=}" >> "$csv"
    done
  done
done
echo "run | base median s | new median s | new/base"
echo "---|---:|---:|---:"
for r in "${runs[@]}"; do
  name=${r%%|*}
  med() { awk -F, -v n="$name" -v s="$1" '$1==n && $2==s && $4!="" {print $4}' "$csv" | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "NA"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
  b=$(med base); n=$(med new)
  ratio=$(awk -v b="$b" -v n="$n" 'BEGIN { if (b+0 > 0) printf "%.2f", n/b; else print "NA" }')
  echo "$name | $b | $n | $ratio"
done
echo "(times: $csv)"
