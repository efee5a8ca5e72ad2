#!/usr/bin/env bash
# Small flesh demo for `make demo` (a few seconds): a coarse body and short motions.
# Usage: bash configs/flesh/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: demo.sh BIN_DIR OUT_DIR}
out=${2:?usage: demo.sh BIN_DIR OUT_DIR}
bash "$here/run.sh" "$bin" "$out" -q --set body.layers=8 --set body.segments=10 \
  --set body.rings=3 --set motion.frames=45 --set solver.substeps=2 \
  --set solver.quasistatic_iterations=15
