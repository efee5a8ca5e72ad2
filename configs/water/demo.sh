#!/usr/bin/env bash
# Small water demo for `make demo` (seconds): mps-gen's breaking-wave database made coarse - 4
# column heights at l0 = 2.5 cm, 1.5 s each - written to OUT_DIR/db.h5 and listed.
# Usage: bash configs/water/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: configs/water/demo.sh BIN_DIR OUT_DIR}
out=${2:?usage: configs/water/demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out"
"$bin/mps-gen" -q -c "$here/db.json" --set scene.l0=0.025 --set scene.duration=1.5 \
  --set sweep.heights=0.25,0.32,0.4,0.48 -o "$out/db.h5"
"$bin/dd-cache" info -q -i "$out/db.h5"
echo "water demo: $out/db.h5 (4 simulations; the full database: mps-gen -c $here/db.json)"
# The edit of configs/water/edit.json with a crest this small database can reach.
"$bin/wave-edit" -q -c "$here/edit.json" --set "target.points=[[0,0.18],[0.45,0.25],[0.9,0.18]]" \
  -i "$out/db.h5" -o "$out/surface.h5"
mkdir -p "$out/frames"
"$bin/mesh-export" -q -i "$out/surface.h5" --frames 1-46x5 -o "$out/frames/surface.####.vdb"
"$bin/mesh-export" -q -i "$out/surface.h5" --frames 1-46x5 -o "$out/frames/water.####.obj"
echo "water demo: $out/surface.h5 -> $out/frames/ (VDB level sets and OBJ meshes)," \
     "report $out/surface.report.json, picture $out/surface.heights.svg"
