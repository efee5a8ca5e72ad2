#!/usr/bin/env bash
# The flesh pipeline's demo (called by scripts/demo.sh) on the built-in defaults: spring-fit's
# body simulated under its default motion (swing) and a second one (bounce), springs fitted to
# both, applied to a motion they never saw (shake, whose ground truth gives the held-out error in
# shake_springs.report.json), and mesh-export to a PC2 point cache. About 40 s on 2 cores.
# Usage: configs/flesh/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=${1:?usage: configs/flesh/demo.sh BIN_DIR OUT_DIR}
out=${2:?usage: configs/flesh/demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out"
sf="$bin/spring-fit"
"$sf" simulate -o "$out/swing.h5"
"$sf" simulate --set motion.kind=bounce -o "$out/bounce.h5"
"$sf" fit -i "$out/swing.h5" -i "$out/bounce.h5" -o "$out/springs.h5"
"$sf" simulate --set motion.kind=shake -o "$out/shake.h5"
"$sf" apply -i "$out/shake.h5" -i "$out/springs.h5" -o "$out/shake_springs.h5"
"$bin/mesh-export" -i "$out/shake_springs.h5" --set uv_projection=box -o "$out/shake_springs.pc2"
echo "flesh demo: jiggle on a held-out motion in $out/shake_springs.pc2 (on shake_springs.obj);" \
     "errors in $out/shake_springs.report.json"
