#!/usr/bin/env bash
# The water pipeline as Slurm jobs, each stage waiting for the one before (afterok):
#   mps-gen, TASKS array tasks (simulations split)  -> dd-cache merge -> OUT_DIR/db.h5
#   wave-edit, TASKS array tasks (frames split)      -> dd-cache merge -> OUT_DIR/surface.h5
#   mesh-export, TASKS array tasks (frames split)    -> OUT_DIR/frames/surface.####.vdb and
#                                                        OUT_DIR/frames/water.####.obj
# The merged caches equal what configs/water/run.sh writes on one machine, byte for byte, when
# SOURCE_DATE_EPOCH is set (the jobs inherit the environment).
# Usage: configs/water/slurm.sh BIN_DIR OUT_DIR TASKS
#   MPS_FLAGS / EDIT_FLAGS: extra flags for mps-gen / wave-edit (e.g. --set scene.l0=0.025);
#   SBATCH_PARTITION, SBATCH_ACCOUNT, ...: Slurm's own variables reach every sbatch;
#   WAIT=0: return after submitting (default: wait for the last stage, exit 1 if any task failed).
# A failed task cancels the stages after it (--kill-on-invalid-dep); its log is in OUT_DIR/logs.
# The results of an earlier run in OUT_DIR stay until a stage replaces them: the script judges
# this run by the outputs written after it submitted, so a stage that fails leaves them as they were.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:?usage: configs/water/slurm.sh BIN_DIR OUT_DIR TASKS}" && pwd)
out=${2:?usage: configs/water/slurm.sh BIN_DIR OUT_DIR TASKS}
tasks=${3:?usage: configs/water/slurm.sh BIN_DIR OUT_DIR TASKS}
mps_flags=${MPS_FLAGS:-}
edit_flags=${EDIT_FLAGS:-}
# Before anything is written or removed: is there a Slurm controller to submit to?
if ! command -v sbatch >/dev/null; then
  echo "water on Slurm: sbatch not found (is Slurm's client installed and on PATH?)" >&2
  exit 2
fi
if ! sinfo_err=$(sinfo -h 2>&1 >/dev/null); then
  echo "water on Slurm: no Slurm controller answers (sinfo: ${sinfo_err:-failed}); nothing submitted" >&2
  exit 2
fi
mkdir -p "$out"/{parts,logs,frames}
out=$(cd "$out" && pwd)
# The parts and logs of an earlier run are this script's own intermediates; its results stay.
rm -f "$out"/parts/*.h5 "$out"/logs/*.log
stamp="$out/logs/submitted"
touch "$stamp"
task='$SLURM_ARRAY_TASK_ID'
parts() {  # -i flags for the TASKS parts of NAME
  local list=""
  for k in $(seq 1 "$tasks"); do list+=" -i $out/parts/$1.$k.h5"; done
  echo "$list"
}
submit() {  # submit [sbatch options...] -- command
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  sbatch --parsable --kill-on-invalid-dep=yes "${opts[@]}" --wrap "$*"
}

db=$(submit --job-name=mps-gen --array=1-"$tasks" -o "$out/logs/mps-gen.%a.log" -- \
  "$bin/mps-gen" -q -c "$here/db.json" $mps_flags --shard "$task/$tasks" -o "$out/parts/db.$task.h5")
db_merge=$(submit --job-name=merge-db --dependency=afterok:"$db" -o "$out/logs/merge-db.log" -- \
  "$bin/dd-cache" merge -q "$(parts db)" -o "$out/db.h5")
# Every wave-edit task makes the same slice selection; the database's features file is written
# atomically, so tasks that compute it at the same time leave one identical file.
edit=$(submit --job-name=wave-edit --dependency=afterok:"$db_merge" --array=1-"$tasks" \
  -o "$out/logs/wave-edit.%a.log" -- \
  "$bin/wave-edit" -q -c "$here/edit.json" $edit_flags -i "$out/db.h5" --shard "$task/$tasks" \
  -o "$out/parts/surface.$task.h5")
# The report and picture are the same in every part: keep the first. The picture is the single
# run's byte for byte; the report's provenance names part 1's command line (--shard, -o).
edit_merge=$(submit --job-name=merge-surface --dependency=afterok:"$edit" \
  -o "$out/logs/merge-surface.log" -- \
  "$bin/dd-cache" merge -q "$(parts surface)" -o "$out/surface.h5" \
  "&& cp $out/parts/surface.1.report.json $out/surface.report.json" \
  "&& cp $out/parts/surface.1.heights.svg $out/surface.heights.svg")
vdb=$(submit --job-name=mesh-export --dependency=afterok:"$edit_merge" --array=1-"$tasks" \
  -o "$out/logs/mesh-export.%a.log" -- \
  "$bin/mesh-export" -q -i "$out/surface.h5" --shard "$task/$tasks" \
  -o "$out/frames/surface.####.vdb" \
  "&& $bin/mesh-export -q -i $out/surface.h5 --shard $task/$tasks -o $out/frames/water.####.obj")
echo "water on Slurm: jobs $db (mps-gen), $db_merge, $edit (wave-edit), $edit_merge, $vdb (mesh-export)"
if [ "${WAIT:-1}" = 1 ]; then
  # Wait until no stage is queued or running, then judge by the outputs written since the
  # submission: a failed task cancels the stages after it, so a merged cache or frames are missing.
  while squeue -h -j "$db,$db_merge,$edit,$edit_merge,$vdb" 2>/dev/null | grep -q .; do sleep 2; done
  frames=""
  if [ "$out/db.h5" -nt "$stamp" ] && [ "$out/surface.h5" -nt "$stamp" ]; then
    frames=$("$bin/dd-cache" info -q -i "$out/surface.h5" 2>/dev/null |
             sed -n 's|.*/sequences/surface: \([0-9]*\) frames.*|\1|p' || true)
  fi
  vdbs=$(find "$out/frames" -name 'surface.*.vdb' -newer "$stamp" | wc -l)
  objs=$(find "$out/frames" -name 'water.*.obj' -newer "$stamp" | wc -l)
  if [ -z "$frames" ] || [ "$vdbs" != "$frames" ] || [ "$objs" != "$frames" ]; then
    echo "water on Slurm: a stage failed (db.h5, surface.h5 or frames not written); see $out/logs" >&2
    exit 1
  fi
  echo "water on Slurm: $out/db.h5, $out/surface.h5, $vdbs frames in" \
       "$out/frames/surface.####.vdb and water.####.obj"
fi
