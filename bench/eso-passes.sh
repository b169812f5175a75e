#!/bin/sh
# Passes to a 1e-6 relative gap against m, with the paper's steps and the
# ESO steps (bench/README.md, "ESO steps: passes against m"): logistic,
# λ = 1e-5, -normalize unit, one thread (passes do not depend on the host),
# two runs at a time. Run from the repository root:
#
#	bench/eso-passes.sh [OUTDIR]        # default /tmp/eso; about an hour on two cores
#
# It writes OUTDIR/passes.csv and OUTDIR/eso-mean.csv.
set -eu
out=${1:-/tmp/eso}
if [ "$out" = "-run" ]; then
	# One run: -run OUTDIR data cap m steps → a CSV line.
	out=$2 data=$3 cap=$4 m=$5 steps=$6
	line=$("$out/adaspdc" train -data "$out/$data" -normalize unit -loss logistic -lambda 1e-5 \
		-m "$m" -steps "$steps" -threads 1 -max-epochs "$cap" -stall-epochs 0 -quiet 2>&1 |
		grep '^epochs=' | tail -1)
	ep=$(echo "$line" | sed 's/.*epochs=\([^ ]*\).*/\1/')
	pa=$(echo "$line" | sed 's/.*passes=\([^ ]*\).*/\1/')
	gap=$(echo "$line" | sed 's/.*rel_gap=\([^ ]*\).*/\1/')
	echo "$data,$m,$steps,$cap,$ep,$pa,$gap"
	exit 0
fi
mkdir -p "$out"
go build -o "$out/adaspdc" ./cmd/adaspdc
go build -o "$out/synthgen" ./bench/synth/cmd/synthgen
go build -o "$out/esomean" ./bench/esomean
[ -f "$out/news20.binary" ] || awk '{ $1 = ($1 <= 10 ? -1 : 1); print }' ../shared/data/news20 > "$out/news20.binary"
[ -f "$out/rcv1-200k.svm" ] || "$out/synthgen" -shape rcv1 -rows 200000 -seed 1 -o "$out/rcv1-200k.svm"
[ -f "$out/url-200k.svm" ] || "$out/synthgen" -shape url -rows 200000 -seed 1 -o "$out/url-200k.svm"

jobs=$out/jobs.txt
: > "$jobs"
for d in "news20.binary 1000" "rcv1-200k.svm 600" "url-200k.svm 600"; do
	for m in 1 16 256 1024 8192; do
		for s in paper eso; do
			echo "$out $d $m $s" >> "$jobs"
		done
	done
done
echo "data,m,steps,cap,epochs,passes,rel_gap" > "$out/passes.csv"
xargs -P 2 -L 1 "$0" -run < "$jobs" >> "$out/passes.csv"
for d in news20.binary rcv1-200k.svm url-200k.svm; do
	"$out/esomean" -data "$out/$d" | tail -n +2 | sed "s/^/$d,/"
done > "$out/eso-mean.csv"
