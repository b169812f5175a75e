#!/bin/sh
# The parallel routes of issue 9, §3, side by side: time and passes to a
# 1e-6 relative gap, logistic loss, λ = 1e-5, -normalize unit, on news20
# (binarised: label ≤ 10 → −1) and on rcv1-shaped and url-shaped data
# (bench/synth, seed 1, 200k rows), each solver with one thread and with
# two. Solvers: spdc-async (asynchronous SPDC), sdca-async (PASSCoDe-Atomic),
# cocoa (CoCoA+ with thread-private replicas), adaspdc with -m 16 (the
# synchronous ESO batch) and newton (what the automatic choice runs on
# news20 and rcv1-shaped data). Runs alternate over solvers and thread
# counts, RUNS rounds. Run from the repository root:
#
#	bench/async-routes.sh [OUTDIR] [RUNS]     # default /tmp/routes 3; about 6 minutes on two cores
#
# It writes OUTDIR/routes.csv: data,solver,threads,run,wall,seconds,passes,
# where wall is the whole process and seconds the solver's own clock.
set -eu
out=${1:-/tmp/routes}
runs=${2:-3}
. bench/prepare.sh
echo "data,solver,threads,run,wall,seconds,passes" | tee "$out/routes.csv"
for data in news20.binary rcv1-200k.svm url-200k.svm; do
	for r in $(seq "$runs"); do
		for s in spdc-async sdca-async cocoa adaspdc newton; do
			m=1
			[ "$s" = adaspdc ] && m=16
			for t in 1 2; do
				start=$(date +%s.%N)
				line=$("$out/adaspdc" train -data "$out/$data" -normalize unit -loss logistic -lambda 1e-5 \
					-solver "$s" -m "$m" -threads "$t" -max-epochs 2000 -quiet 2>/dev/null | tail -1)
				end=$(date +%s.%N)
				sec=$(echo "$line" | sed 's/.*seconds=\([^ ]*\).*/\1/')
				pa=$(echo "$line" | sed 's/.*passes=\([^ ]*\).*/\1/')
				echo "$data,$s,$t,$r,$(echo "$end - $start" | bc),$sec,$pa" | tee -a "$out/routes.csv"
			done
		done
	done
done
