#!/usr/bin/env bash
# The water pipeline: mps-gen (database) -> wave-edit (3D level set) -> mesh-export (VDB + OBJ).
# Usage: configs/water/run.sh [BIN_DIR] [OUT_DIR] [extra mps-gen flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/bin}
out=${2:-out/water}
shift $(( $# > 2 ? 2 : $# ))
mkdir -p "$out/frames"
"$bin/mps-gen" -c "$here/db.json" -o "$out/db.h5" "$@"
"$bin/wave-edit" -c "$here/edit.json" -i "$out/db.h5" -o "$out/surface.h5"
"$bin/mesh-export" -i "$out/surface.h5" -o "$out/frames/surface.####.vdb"
"$bin/mesh-export" -i "$out/surface.h5" -o "$out/frames/water.####.obj"
echo "water: $out/surface.h5, $out/frames/surface.####.vdb, $out/frames/water.####.obj," \
     "report $out/surface.report.json, picture $out/surface.heights.svg"
