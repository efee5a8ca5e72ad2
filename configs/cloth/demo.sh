#!/usr/bin/env bash
# Small cloth demo for `make demo` (well under a minute): a 17 x 17 curtain, 4 runs of 40 frames,
# two networks trained for a few epochs, upscaled and evaluated against the held-out run.
# Usage: bash configs/cloth/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: demo.sh BIN_DIR OUT_DIR}
out=${2:?usage: demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out/frames"
small=(--set cloth.nx=17 --set cloth.ny=17 --set cloth.spacing=0.0625 --set cloth.frames=40
       --set runs.mass=0.008,0.012 --set runs.k_structural=1500,2500 --set runs.time_step=0.02
       --set train.max_epochs=15 --set train.batch_size=256 --set train.learning_rate=1e-3
       --set features.local=true --set features.residual=true)
ct="$bin/cloth-train"
"$ct" simulate -c "$here/curtain.json" "${small[@]}" -o "$out/curtain.target.h5"
# Two networks: pairs from the DSDS of the target (the paper) and from the simulated miniature.
"$ct" train -c "$here/curtain.json" "${small[@]}" -i "$out/curtain.target.h5" \
  -o "$out/curtain.model.h5"
"$ct" train -c "$here/curtain.json" "${small[@]}" --set train.miniature=simulated \
  -i "$out/curtain.target.h5" -o "$out/curtain.model.simulated.h5"
"$ct" upscale -c "$here/curtain.json" "${small[@]}" -i "$out/curtain.model.simulated.h5" \
  -o "$out/curtain.upscaled.h5"
"$ct" evaluate -c "$here/curtain.json" "${small[@]}" -i "$out/curtain.target.h5" \
  -i "$out/curtain.model.h5" -i "$out/curtain.model.simulated.h5" -o "$out/curtain.eval" >/dev/null
if [ -x "$bin/mesh-export" ]; then
  "$bin/mesh-export" -i "$out/curtain.upscaled.h5" --sequence curtain_000 \
    -o "$out/frames/curtain.####.obj"
fi
echo "cloth demo: $out/curtain.eval.md"
