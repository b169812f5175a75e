#!/bin/sh
# The many-core model of issue 9 at 1M rows ("Many cores, modelled" in
# bench/README.md): rcv1-shaped and url-shaped data (bench/synth, seed 1,
# 1M rows), each row scaled to norm 1 and written with 9 significant
# digits, so that LIBLINEAR and adaspdc read the same file and solve the
# same objective (logistic, λ = 1e-5, C = 0.1). It runs
#
#  1. adaspdc-bench peers on both files: LIBLINEAR's whole-process times
#     to relative suboptimalities 1e-2, 1e-4, 1e-6, ours on two threads, and
#     the certified optimum P*;
#  2. adaspdc train to P*(1 + 1e-6) with -threads 1 and -threads 2, RUNS
#     times each, alternating, for the fit T(p) = S + P/p.
#
# Run from the repository root; about 35 minutes on two cores and 9 GB of
# disk under OUTDIR:
#
#	bench/model-1m.sh [OUTDIR] [RUNS]     # default /tmp/m1 3
set -eu
out=${1:-/tmp/m1}
runs=${2:-3}
mkdir -p "$out"
go build -o "$out/adaspdc" ./cmd/adaspdc
go build -o "$out/adaspdc-bench" ./cmd/adaspdc-bench
go build -o "$out/synthgen" ./bench/synth/cmd/synthgen
for shape in rcv1 url; do
	f="$out/$shape-1m"
	[ -f "$f.svm" ] || "$out/synthgen" -shape "$shape" -rows 1000000 -seed 1 -o "$f.svm"
	[ -f "$f.unit.svm" ] || awk '{ s = 0; for (i = 2; i <= NF; i++) { split($i, p, ":"); s += p[2] * p[2] }
		s = sqrt(s); printf "%s", $1
		for (i = 2; i <= NF; i++) { split($i, p, ":"); printf " %s:%.9g", p[1], p[2] / s }
		printf "\n" }' "$f.svm" > "$f.unit.svm"
done
"$out/adaspdc-bench" peers -data "$out/url-1m.unit.svm,$out/rcv1-1m.unit.svm" -objectives logistic:1e-5 \
	-solvers auto -m 1 -runs 1 -python /nonexistent -timeout 900s -out "$out/peers" 2>&1 | tee "$out/peers.log"
echo "data,threads,run,seconds,solver_seconds,passes,solver" | tee "$out/model.csv"
for r in $(seq "$runs"); do
	for spec in "url 1" "rcv1 2"; do
		set -- $spec
		shape=$1
		f="$out/$shape-1m.unit.svm"
		# P* of the $2-th file given to peers (its log prints them in order).
		pstar=$(sed -n 's/^peers: P\* = \([0-9.e+-]*\).*/\1/p' "$out/peers.log" | sed -n "$2p")
		target=$(echo "$pstar" | awk '{ printf "%.12g", $1 * (1 + 1e-6) }')
		for t in 1 2; do
			start=$(date +%s.%N)
			line=$("$out/adaspdc" train -data "$f" -loss logistic -lambda 1e-5 -threads "$t" -tol -1 -max-epochs 5000 \
				-target-primal "$target" -quiet | tail -1)
			end=$(date +%s.%N)
			so=$(echo "$line" | sed 's/.*seconds=\([^ ]*\).*/\1/')
			pa=$(echo "$line" | sed 's/.*passes=\([^ ]*\).*/\1/')
			sv=$(echo "$line" | sed 's/.*solver=\([^ ]*\).*/\1/')
			echo "$shape-1m,$t,$r,$(echo "$end - $start" | bc),$so,$pa,$sv" | tee -a "$out/model.csv"
		done
	done
done
