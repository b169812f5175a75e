#!/usr/bin/env bash
# l1-peers.sh OUT: L1-regularized logistic regression and squared-hinge SVM,
# ours (glmnet, train's own choice for an L1 term) against LIBLINEAR's -s 6
# and -s 5 at tightening -e, whole process, on a9a, w8a, news20 binarised
# with unit rows and rcv1-shaped data (200k rows), at l1 = 1/n and 1/(10n)
# (LIBLINEAR's C = 1 and 10). The objective is
#
#   P(w) = (1/n) Σ φ(aᵢᵀw, bᵢ) + l1‖w‖₁ = F_LIBLINEAR(w) / (C·n),  l1 = 1/(nC),
#
# so LIBLINEAR's printed objective value divided by C·n is ours. The
# reference optimum P* is ours certified to a relative gap of 1e-10; each
# LIBLINEAR run counts if its objective is within 1e-6·P* of P*, and the
# fastest one that does is LIBLINEAR's time. Ours runs with -tol 0
# -target-primal P*(1 + 1e-6). Prints one line per (data, loss, C) with
# both times and the ratio, and the supports (nonzero weights).
#
# Needs liblinear-tools (apt-get install liblinear-tools) and ../shared/data.
set -euo pipefail
out=${1:?usage: l1-peers.sh OUT}
cd "$(dirname "$0")/.."
source bench/prepare.sh
[ -f "$out/news20.unit" ] || awk '{ s = 0; for (i = 2; i <= NF; i++) { split($i, a, ":"); s += a[2] * a[2] }
  s = sqrt(s); printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, a, ":"); printf " %s:%.17g", a[1], a[2] / s }; print "" }' \
  "$out/news20.binary" > "$out/news20.unit"
now() { date +%s.%N; }
for data in ../shared/data/a9a ../shared/data/w8a "$out/news20.unit" "$out/rcv1-200k.svm"; do
  n=$(wc -l < "$data")
  for loss in logistic sqhinge; do
    s=6; [ "$loss" = sqhinge ] && s=5
    for C in 1 10; do
      l1=$(echo "scale=20; 1 / ($n * $C)" | bc)
      ref=$("$out/adaspdc" train -quiet -data "$data" -loss "$loss" -lambda 0 -l1 "$l1" -tol 1e-10 -max-epochs 5000 -model "$out/ref.json" | sed 's/.*primal=\([^ ]*\).*/\1/')
      ours_nnz=$(awk '/"weights"/ {f = 1; next} f && /\]/ {f = 0} f {gsub(/[ ,]/, ""); if ($0 + 0 != 0) c++} END {print c + 0}' "$out/ref.json")
      target=$(echo "scale=20; $ref * (1 + 0.000001)" | bc)
      t0=$(now); "$out/adaspdc" train -quiet -data "$data" -loss "$loss" -lambda 0 -l1 "$l1" -tol 0 -target-primal "$target" >/dev/null; t1=$(now)
      ours=$(echo "$t1 - $t0" | bc)
      best=""; lnnz=""
      for e in 1e-1 3e-2 1e-2 3e-3 1e-3 3e-4 1e-4 3e-5 1e-5 1e-6; do
        t0=$(now); liblinear-train -s $s -c $C -e $e "$data" "$out/ll.model" > "$out/ll.out"; t1=$(now)
        obj=$(grep -o 'Objective value = [^ ]*' "$out/ll.out" | tail -1 | awk '{print $4}')
        p=$(echo "scale=20; $obj / ($C * $n)" | bc)
        if [ "$(echo "$p <= $target" | bc)" = 1 ]; then
          best=$(echo "$t1 - $t0" | bc); lnnz=$(awk 'f && $1 != 0 {c++} /^w$/ {f=1} END {print c+0}' "$out/ll.model"); break
        fi
      done
      echo "$(basename "$data") $loss C=$C P*=$ref ours=${ours}s liblinear=${best:-none}s (-e $e) ratio=$( [ -n "$best" ] && echo "scale=3; $ours / $best" | bc) nnz ours=$ours_nnz liblinear=$lnnz"
    done
  done
done
