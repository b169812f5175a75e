#!/usr/bin/env bash
# Whole-process load time: `adaspdc info` against LIBLINEAR on the same files.
#
# LIBLINEAR has no load-only command, so two stand-ins are timed: a training
# run so loose (-e 10) that it is mostly reading, and liblinear-predict with a
# model trained beforehand, which reads the file and takes one dot product per
# row. adaspdc is also timed with one thread and on a binary cache of the
# file (made by bench/load/mkcache). The one-thread run of adaspdc goes through env(1), which adds its own
# exec to the time. Needs hyperfine and liblinear-tools (apt-get install -y hyperfine
# liblinear-tools) and the data in ../shared/data beside the repository.
#
# Usage: bench/load/compare.sh [runs] [file ...]   (default: 40 runs; a9a w8a)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-40}
shift || true
if [ $# -eq 0 ]; then set -- a9a w8a; fi
data=$(cd ../shared/data && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/adaspdc" ./cmd/adaspdc
go build -o "$tmp/mkcache" ./bench/load/mkcache
for f in "$@"; do
	liblinear-train -q -e 10 "$data/$f" "$tmp/$f.model"
	"$tmp/mkcache" -o "$tmp/$f.cache" "$data/$f"
	hyperfine -N -w 5 -r "$runs" --export-markdown "$tmp/$f.md" \
		-n "adaspdc info ($f)" "$tmp/adaspdc info -data $data/$f" \
		-n "adaspdc info, GOMAXPROCS=1 ($f)" "env GOMAXPROCS=1 $tmp/adaspdc info -data $data/$f" \
		-n "adaspdc info, binary cache ($f)" "$tmp/adaspdc info -data $tmp/$f.cache" \
		-n "liblinear-train -e 10 ($f)" "liblinear-train -q -e 10 $data/$f $tmp/$f.m2" \
		-n "liblinear-predict ($f)" "liblinear-predict $data/$f $tmp/$f.model $tmp/$f.out"
	cat "$tmp/$f.md"
done
