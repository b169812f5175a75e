#!/usr/bin/env bash
# cv-peers.sh [ROUNDS]: cross-validation and the search over λ on a9a,
# ours against LIBLINEAR, whole process, interleaved round by round so that
# both tools see the same minutes of a noisy host. Prints one line per run
# (tool, task, seconds, what it reports) and the median ratio per task.
#
#   ours -cv 5:          adaspdc train -data a9a -bias 1 -cv 5
#   LIBLINEAR -v 5:      liblinear-train -s 0 -B 1 -v 5 a9a
#   ours -lambda auto:   adaspdc train -data a9a -bias 1 -lambda auto
#   LIBLINEAR -C:        liblinear-train -s 0 -B 1 -C -v 5 a9a
#
# Needs liblinear-tools (apt-get install liblinear-tools) and ../shared/data.
set -euo pipefail
rounds=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/../shared/data/a9a
bin=$(mktemp -d)/adaspdc
(cd "$root" && go build -o "$bin" ./cmd/adaspdc)
command -v liblinear-train >/dev/null || { echo "liblinear-train not found: apt-get install liblinear-tools" >&2; exit 1; }
t() { local s=$(date +%s.%N); "$@" >/tmp/cv-peers.out 2>&1; echo "$(date +%s.%N) - $s" | bc; }
for r in $(seq "$rounds"); do
  echo "ours cv $(t "$bin" train -quiet -data "$data" -bias 1 -cv 5) $(head -1 /tmp/cv-peers.out)"
  echo "liblinear cv $(t liblinear-train -s 0 -B 1 -v 5 "$data") $(grep -o 'Accuracy = .*' /tmp/cv-peers.out)"
  echo "ours auto $(t "$bin" train -quiet -data "$data" -bias 1 -lambda auto) $(head -1 /tmp/cv-peers.out)"
  echo "liblinear auto $(t liblinear-train -s 0 -B 1 -C -v 5 "$data") $(grep -o 'Best C.*' /tmp/cv-peers.out)"
done | tee /tmp/cv-peers.log
for task in cv auto; do
  o=$(awk -v k=$task '$1=="ours" && $2==k {print $3}' /tmp/cv-peers.log | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  l=$(awk -v k=$task '$1=="liblinear" && $2==k {print $3}' /tmp/cv-peers.log | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "median $task: ours $o s, LIBLINEAR $l s, ratio $(echo "scale=2; $o / $l" | bc)"
done
