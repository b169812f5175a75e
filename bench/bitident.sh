#!/usr/bin/env bash
# bitident.sh BASE [OUT]: trains every solver with a fixed seed on the
# bundled data (heart_scale for the classification losses, housing_scale for
# the squared loss), once with the code at git revision BASE and once with
# the work tree, and compares the saved models' weights bit for bit. A
# refactoring that moves no number prints only "same" lines and exits 0;
# any model that differs is named, and the script exits 1.
#
# The runs use -deterministic and -threads 1, so that the comparison
# measures the code, not the schedule; solvers that refuse a problem are
# skipped on both sides alike.
set -euo pipefail
base=${1:?usage: bitident.sh BASE [OUT]}
out=${2:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
git -C "$root" worktree add -q --detach "$out/base" "$base"
trap 'git -C "$root" worktree remove --force "$out/base"' EXIT
(cd "$out/base" && go build -o "$out/adaspdc-base" ./cmd/adaspdc)
(cd "$root" && go build -o "$out/adaspdc-new" ./cmd/adaspdc)
solvers=$("$out/adaspdc-new" solvers | awk 'NF && $0 !~ /^ / {print $1}')
status=0
for s in $solvers; do
  for case in "logistic heart_scale" "sqhinge heart_scale" "hinge heart_scale" "squared housing_scale"; do
    set -- $case
    args=(train -quiet -solver "$s" -loss "$1" -data "$root/testdata/$2" -lambda 0.01 -seed 7
      -deterministic -threads 1 -max-epochs 200 -tol 1e-8)
    for side in base new; do
      "$out/adaspdc-$side" "${args[@]}" -model "$out/$s-$1-$side.json" >/dev/null 2>&1 || true
    done
    b="$out/$s-$1-base.json"; n="$out/$s-$1-new.json"
    if [ ! -f "$b" ] && [ ! -f "$n" ]; then continue; fi
    if [ -f "$b" ] && [ -f "$n" ] && cmp -s "$b" "$n"; then
      echo "same     $s $1"
    else
      echo "DIFFERS  $s $1"; status=1
    fi
  done
done
exit $status
