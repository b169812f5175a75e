#!/bin/bash
# Seconds per epoch (iterations only: iter_seconds of the trace, epochs 2..E,
# the first epoch left out as warm-up) of sdca, sdca-async and
# sdca-async-wild at -threads 1 and 2, five interleaved repeats (seeds 1-5);
# the table takes the minimum per setting. news20 is binarised as
# label <= 10 -> -1 and trained with unit rows.
# Usage: run.sh ADASPDC_BINARY OUT.csv   (from the repository root)
B=${1:-adaspdc}
out=${2:-raw.csv}
tmp=$(mktemp -d)
awk '{ $1 = ($1 <= 10 ? -1 : 1); print }' ../shared/data/news20 > $tmp/news20.binary
echo "data,solver,threads,rep,sec_per_epoch,final_relgap,loadavg1" > $out
for rep in 1 2 3 4 5; do
 for d in a9a w8a news20; do
  case $d in
   news20) f=$tmp/news20.binary; extra="-normalize unit"; E=10;;
   *) f=../shared/data/$d; extra=""; E=20;;
  esac
  for s in sdca sdca-async sdca-async-wild; do
   for t in 1 2; do
    $B train -data $f $extra -loss logistic -lambda 1e-4 -solver $s -threads $t -tol -1 -max-epochs $E -seed $rep -trace $tmp/tr.csv -quiet > /dev/null 2>&1
    load=$(cut -d' ' -f1 /proc/loadavg)
    awk -F, -v d=$d -v s=$s -v t=$t -v r=$rep -v E=$E -v l=$load 'NR==3{a=$8} NR==E+2{printf "%s,%s,%s,%s,%.6f,%s,%s\n", d,s,t,r,($8-a)/(E-1),$6,l}' $tmp/tr.csv >> $out
   done
  done
 done
done
rm -r $tmp
