#!/usr/bin/env bash
# Runs every elastic scene (configs/elastic/*.json) through sm-example-sim, then mesh-export turns
# each body's surface into an OBJ + PC2 point cache (Blender's Mesh Cache modifier) and a USDA.
# Usage: configs/elastic/run.sh BIN_DIR OUT_DIR [SCENE...]   (scene names without .json)
set -euo pipefail
bin=$(cd "${1:?usage: configs/elastic/run.sh BIN_DIR OUT_DIR [SCENE...]}" && pwd)
out=${2:?usage: configs/elastic/run.sh BIN_DIR OUT_DIR [SCENE...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
scenes=("$@")
if [ ${#scenes[@]} -eq 0 ]; then
  for f in "$here"/*.json; do scenes+=("$(basename "$f" .json)"); done
fi
for scene in "${scenes[@]}"; do
  echo "== elastic: $scene"
  mkdir -p "$out/$scene"
  "$bin/sm-example-sim" -q -c "$here/$scene.json" -o "$out/$scene/$scene.h5"
  # The surface sequences are the ones without the _particles suffix.
  bodies=$("$bin/dd-cache" info -q -i "$out/$scene/$scene.h5" |
           sed -n 's|^ */sequences/\([A-Za-z0-9_-]*\): .*|\1|p' |
           grep -v '_particles$' | sort -u)
  for body in $bodies; do
    "$bin/mesh-export" -q -i "$out/$scene/$scene.h5" --sequence "$body" -o "$out/$scene/$body.pc2"
    "$bin/mesh-export" -q -i "$out/$scene/$scene.h5" --sequence "$body" -o "$out/$scene/$body.usda"
  done
  echo "   $(ls "$out/$scene" | tr '\n' ' ')"
done
