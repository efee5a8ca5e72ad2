#!/usr/bin/env bash
# The cloth pipeline for one scene: cloth-train simulate -> train (DSDS factors 2, 3, 4 with the
# paper's features; factor 2 with patch-local residual features, trained on the DSDS and on the
# simulated miniature) -> upscale -> evaluate
# (tables 4, 6, 7 as JSON and Markdown, loss curves as SVG) -> mesh-export (OBJ sequence).
# Usage: configs/cloth/run.sh [BIN_DIR] [OUT_DIR] [SCENE: curtain|flag|collision] [extra flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/bin}
out=${2:-out/cloth}
scene=${3:-curtain}
shift $(( $# > 3 ? 3 : $# ))
cfg="$here/$scene.json"
mkdir -p "$out/frames"
ct="$bin/cloth-train"
"$ct" simulate -c "$cfg" -o "$out/$scene.target.h5" "$@"
for f in 2 3 4; do
  "$ct" train -c "$cfg" --set dsds_factor=$f -i "$out/$scene.target.h5" \
    -o "$out/$scene.model.f$f.h5" "$@"
done
"$ct" train -c "$cfg" --set features.local=true --set features.residual=true \
  -i "$out/$scene.target.h5" -o "$out/$scene.model.f2-local-residual.h5" "$@"
"$ct" train -c "$cfg" --set features.local=true --set features.residual=true \
  --set train.miniature=simulated -i "$out/$scene.target.h5" \
  -o "$out/$scene.model.f2-local-residual-simulated.h5" "$@"
"$ct" upscale -c "$cfg" --method network -i "$out/$scene.model.f2.h5" \
  -o "$out/$scene.upscaled.h5" "$@"
"$ct" evaluate -c "$cfg" -i "$out/$scene.target.h5" -i "$out/$scene.model.f2.h5" \
  -i "$out/$scene.model.f2-local-residual.h5" \
  -i "$out/$scene.model.f2-local-residual-simulated.h5" -i "$out/$scene.model.f3.h5" \
  -i "$out/$scene.model.f4.h5" -o "$out/$scene.eval" "$@" >/dev/null
# The export takes the flags every tool has (-q, -v, --threads, --log-*); the others are
# cloth-train's (--set of its keys) and mean nothing to mesh-export.
common=()
while (( $# )); do
  case $1 in
    -q|--quiet|-v|-vv|--verbose) common+=("$1") ;;
    --threads|--log-level|--log-format) common+=("$1" "${2:-}"); shift ;;
    --threads=*|--log-level=*|--log-format=*) common+=("$1") ;;
  esac
  shift
done
if [ -x "$bin/mesh-export" ]; then
  "$bin/mesh-export" -i "$out/$scene.upscaled.h5" --sequence "${scene}_000" \
    -o "$out/frames/$scene.####.obj" "${common[@]}"
else
  echo "cloth: $bin/mesh-export not built; skipping the OBJ export" >&2
fi
echo "cloth: $out/$scene.upscaled.h5, tables $out/$scene.eval.md and .json," \
     "loss curves $out/$scene.eval.loss.svg"
