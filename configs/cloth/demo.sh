#!/usr/bin/env bash
# The cloth pipeline's demo (called by scripts/demo.sh) on the built-in defaults: cloth-train's
# curtain simulated, a network trained on its miniature as in the paper, the miniature upscaled
# by it, and mesh-export to an OBJ sequence. Beside it, the option beyond the paper that works
# best at this small training budget (patch-local residual features, trained on the simulated
# miniature as its corrector); evaluate compares both with interpolation in cloth.eval.md.
# About 50 s on 2 cores.
# Usage: configs/cloth/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=${1:?usage: configs/cloth/demo.sh BIN_DIR OUT_DIR}
out=${2:?usage: configs/cloth/demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out/frames"
ct="$bin/cloth-train"
corrector=(--set features.local=true --set features.residual=true --set train.miniature=simulated)
"$ct" simulate -o "$out/cloth.target.h5"
"$ct" train -i "$out/cloth.target.h5" -o "$out/cloth.model.h5"
"$ct" train "${corrector[@]}" -i "$out/cloth.target.h5" -o "$out/cloth.corrector.h5"
"$ct" upscale -i "$out/cloth.model.h5" -o "$out/cloth.upscaled.h5"
"$ct" upscale "${corrector[@]}" -i "$out/cloth.corrector.h5" -o "$out/cloth.corrected.h5"
"$ct" evaluate -i "$out/cloth.target.h5" -i "$out/cloth.model.h5" -i "$out/cloth.corrector.h5" \
  -o "$out/cloth.eval" >/dev/null
"$bin/mesh-export" -i "$out/cloth.upscaled.h5" -o "$out/frames/cloth.####.obj"
"$bin/mesh-export" -i "$out/cloth.corrected.h5" -o "$out/frames/corrected.####.obj"
echo "cloth demo: the upscaled curtain in $out/frames/: cloth.####.obj by the paper's network" \
     "(after this short training still rough), corrected.####.obj by the corrector;" \
     "errors and roughness in $out/cloth.eval.md"
