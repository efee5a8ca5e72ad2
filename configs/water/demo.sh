#!/usr/bin/env bash
# The water pipeline's demo (called by scripts/demo.sh) on the built-in defaults: mps-gen's
# database of 15 breaking waves, wave-edit's built-in cross-section, and mesh-export to OpenVDB
# level sets and OBJ meshes. About 35 s on 2 cores.
# Usage: configs/water/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=${1:?usage: configs/water/demo.sh BIN_DIR OUT_DIR}
out=${2:?usage: configs/water/demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out/frames"
"$bin/mps-gen" -o "$out/db.h5"
"$bin/wave-edit" -i "$out/db.h5" -o "$out/surface.h5"
"$bin/mesh-export" -i "$out/surface.h5" -o "$out/frames/surface.####.vdb"
"$bin/mesh-export" -i "$out/surface.h5" -o "$out/frames/water.####.obj"
echo "water demo: the edited 3D wave in $out/frames/ (surface.####.vdb level sets, water.####.obj meshes)"
