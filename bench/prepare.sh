# Sourced by bench/cores-time.sh and bench/async-routes.sh, from the
# repository root, with $out set: builds adaspdc and synthgen into $out and
# writes the data sets both scripts time, once (later runs reuse them):
# news20 binarised (label ≤ 10 → −1), and rcv1-shaped and url-shaped data
# (bench/synth, seed 1, 200k rows).
mkdir -p "$out"
go build -o "$out/adaspdc" ./cmd/adaspdc
go build -o "$out/synthgen" ./bench/synth/cmd/synthgen
[ -f "$out/news20.binary" ] || awk '{ $1 = ($1 <= 10 ? -1 : 1); print }' ../shared/data/news20 > "$out/news20.binary"
[ -f "$out/rcv1-200k.svm" ] || "$out/synthgen" -shape rcv1 -rows 200000 -seed 1 -o "$out/rcv1-200k.svm"
[ -f "$out/url-200k.svm" ] || "$out/synthgen" -shape url -rows 200000 -seed 1 -o "$out/url-200k.svm"
