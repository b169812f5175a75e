#!/bin/sh
# Whole-process time to a 1e-6 relative gap with default settings (the
# automatic choice of solver), two threads against -threads 1: issue 9,
# "cores buy time" (bench/README.md, "Cores buy time"). Logistic loss,
# λ = 1e-5; news20 (binarised: label ≤ 10 → −1), rcv1-shaped and
# url-shaped data (bench/synth, seed 1, 200k rows) with -normalize unit,
# a9a and w8a as they are. Runs alternate between the thread counts, RUNS
# times each. Run from the repository root:
#
#	bench/cores-time.sh [OUTDIR] [RUNS]     # default /tmp/cores 5; about 5 minutes on two cores
#
# It prints and writes OUTDIR/cores.csv: data,threads,run,seconds,passes,solver.
set -eu
out=${1:-/tmp/cores}
runs=${2:-5}
. bench/prepare.sh
echo "data,threads,run,seconds,passes,solver" | tee "$out/cores.csv"
for spec in "../shared/data/a9a none" "../shared/data/w8a none" "$out/news20.binary unit" "$out/rcv1-200k.svm unit" "$out/url-200k.svm unit"; do
	set -- $spec
	for r in $(seq "$runs"); do
		for t in 1 2; do
			start=$(date +%s.%N)
			line=$("$out/adaspdc" train -data "$1" -normalize "$2" -loss logistic -lambda 1e-5 -threads "$t" -quiet | tail -1)
			end=$(date +%s.%N)
			pa=$(echo "$line" | sed 's/.*passes=\([^ ]*\).*/\1/')
			so=$(echo "$line" | sed 's/.*solver=\([^ ]*\).*/\1/')
			echo "$(basename "$1"),$t,$r,$(echo "$end - $start" | bc),$pa,$so" | tee -a "$out/cores.csv"
		done
	done
done
