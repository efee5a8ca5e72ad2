#!/usr/bin/env bash
# The paper's table 5 for one scene: the same target runs trained with five network shapes
# (4xFC-64, the paper's, against 4xFC-32, 3xFC-64, 5xFC-64 and 4xFC-128; "4xFC-64" is three
# hidden layers of 64 and the output layer), one evaluate report comparing them.
# Usage: configs/cloth/architectures.sh [BIN_DIR] [OUT_DIR] [SCENE: curtain|flag|collision] [extra flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/bin}
out=${2:-out/cloth-architectures}
scene=${3:-curtain}
shift $(( $# > 3 ? 3 : $# ))
cfg="$here/$scene.json"
ct="$bin/cloth-train"
mkdir -p "$out"
"$ct" simulate -c "$cfg" -o "$out/$scene.target.h5" "$@"
models=()
for shape in "4xFC-64 64,64,64" "4xFC-32 32,32,32" "3xFC-64 64,64" "5xFC-64 64,64,64,64" \
             "4xFC-128 128,128,128"; do
  name=${shape% *}
  hidden=${shape#* }
  "$ct" train -c "$cfg" --set "train.hidden=[$hidden]" -i "$out/$scene.target.h5" \
    -o "$out/$scene.$name.h5" "$@"
  models+=(-i "$out/$scene.$name.h5")
done
"$ct" evaluate -c "$cfg" -i "$out/$scene.target.h5" "${models[@]}" -o "$out/$scene.architectures" \
  "$@" >/dev/null
echo "cloth: table $out/$scene.architectures.md (test MSE per network shape)"
