#!/usr/bin/env bash
# The elastic pipeline's demo (called by scripts/demo.sh): sm-example-sim's built-in scene, the
# twisted cuboid dropped on the floor, then mesh-export to an OBJ + PC2 point cache and a USDA,
# with texture coordinates projected from the rest pose (a checker texture shows the twist).
# Usage: configs/elastic/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=$(cd "${1:?usage: configs/elastic/demo.sh BIN_DIR OUT_DIR}" && pwd)
out=${2:?usage: configs/elastic/demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out"
"$bin/sm-example-sim" -o "$out/cuboid.h5"
"$bin/mesh-export" -i "$out/cuboid.h5" --sequence cuboid --set uv_projection=box -o "$out/cuboid.pc2"
"$bin/mesh-export" -i "$out/cuboid.h5" --sequence cuboid --set uv_projection=box -o "$out/cuboid.usda"
echo "elastic demo: the twisted cuboid in $out/cuboid.usda (or cuboid.pc2 on cuboid.obj)"
