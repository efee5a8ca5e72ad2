#!/usr/bin/env bash
# Runs every pipeline end to end on the tools' built-in defaults (configs/<pipeline>/demo.sh):
# about 2 minutes on 2 cores.
# Usage: scripts/demo.sh BIN_DIR OUT_DIR
set -euo pipefail
bin=$(cd "${1:?usage: scripts/demo.sh BIN_DIR OUT_DIR}" && pwd)
out=${2:?usage: scripts/demo.sh BIN_DIR OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ran=0
all_start=$(date +%s)
for script in configs/*/demo.sh; do
  [ -f "$script" ] || continue
  pipeline=$(basename "$(dirname "$script")")
  echo "== demo: $pipeline"
  mkdir -p "$out/$pipeline"
  start=$(date +%s)
  bash "$script" "$bin" "$out/$pipeline"
  echo "== demo: $pipeline done in $(( $(date +%s) - start )) s, outputs in $out/$pipeline"
  ran=$((ran + 1))
done
if [ "$ran" = 0 ]; then
  echo "no pipeline demos yet (configs/*/demo.sh)" >&2
  exit 1
fi
echo "== demo: $ran pipelines in $(( $(date +%s) - all_start )) s, outputs in $out"
