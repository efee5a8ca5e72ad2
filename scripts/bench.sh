#!/usr/bin/env bash
# Runs every benchmark in <build>/bench and keeps each report in out/bench/<name>.txt.
# Usage: scripts/bench.sh BUILD_DIR [NAME...]
set -euo pipefail
build=${1:?usage: scripts/bench.sh BUILD_DIR [NAME...]}
shift
mkdir -p out/bench
status=0
for exe in "$build"/bench/bench_*; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe"); name=${name#bench_}
  if [ $# -gt 0 ] && [[ ! " $* " == *" $name "* ]]; then continue; fi
  echo "== bench $name"
  if ! "$exe" | tee "out/bench/$name.txt"; then
    echo "bench $name failed" >&2
    status=1
  fi
done
exit $status
