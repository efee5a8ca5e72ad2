#!/usr/bin/env bash
# The farm workflow on a real scheduler: a private Slurm (slurmctld + slurmd on this machine,
# its own config, ports and spool in WORK_DIR) runs array jobs of sharded tools; dd-cache merge
# joins their outputs; the merged caches must equal single-machine runs byte for byte. Then the
# water pipeline script (configs/water/slurm.sh) end to end, and with a stage that fails.
# Usage: tests/farm/slurm_test.sh BIN_DIR WORK_DIR     (as root; needs slurmctld, slurmd, sbatch)
set -euo pipefail
bin=$(cd "${1:?usage: slurm_test.sh BIN_DIR WORK_DIR}" && pwd)
work=${2:?usage: slurm_test.sh BIN_DIR WORK_DIR}
for cmd in slurmctld slurmd sbatch sinfo; do
  command -v "$cmd" >/dev/null || { echo "slurm_test: $cmd not found (make test-farm installs it)" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"/{state,spool,log,single,merged,parts}
work=$(cd "$work" && pwd)
host=$(hostname)

# auth/none: the daemons and the jobs are this machine's root; nothing listens beyond it that a
# job could not already do. Ports away from Slurm's defaults (6817/6818) so a real installation
# is left alone; addresses given as 127.0.0.1 so the machine's name need not resolve.
cat > "$work/slurm.conf" <<EOF
ClusterName=datadyn-farm-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=farm Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"

stop() {
  local pids=()
  for d in slurmd slurmctld; do
    [ -f "$work/$d.pid" ] && pids+=("$(cat "$work/$d.pid")")
  done
  [ ${#pids[@]} -eq 0 ] && return
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 20); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  sinfo -h -o '%T' 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o '%T' | grep -q idle || { echo "slurm_test: the node never became idle" >&2; cat "$work"/log/*.log >&2; exit 1; }

# Pinned timestamps: the single run and the shards record the same created_utc.
export SOURCE_DATE_EPOCH=1700000000
fail=0
check() {  # name, tool command (without -o and --shard), shards
  local name=$1 cmd=$2 shards=$3
  (cd "$work/single" && eval "$cmd -q -o $name.h5")
  # One array task per shard; each job sees the submitting environment (sbatch --export=ALL).
  (cd "$work/parts" && sbatch --wait --array=1-"$shards" -o "$work/log/$name-%a.out" \
    --wrap "$cmd -q --shard \$SLURM_ARRAY_TASK_ID/$shards -o $name.\$SLURM_ARRAY_TASK_ID.h5" >/dev/null)
  local inputs=()
  for k in $(seq 1 "$shards"); do inputs+=(-i "../parts/$name.$k.h5"); done
  (cd "$work/merged" && "$bin/dd-cache" merge -q "${inputs[@]}" -o "$name.h5")
  if cmp -s "$work/single/$name.h5" "$work/merged/$name.h5"; then
    echo "slurm_test: $name: $shards array tasks merged equal the single run byte for byte"
  else
    echo "slurm_test: $name: merged cache differs from the single run" >&2
    fail=1
  fi
}
check db "$bin/mps-gen --set scene.duration=0.2 --set scene.l0=0.025" 4
check cuboid "$bin/sm-example-sim --frames 1-60" 3

# The whole water pipeline as dependent Slurm stages (configs/water/slurm.sh), small, against
# the same steps on this machine.
here=$(cd "$(dirname "$0")/../.." && pwd)
mps="--set scene.l0=0.025 --set scene.duration=0.6 --set sweep.heights=0.25,0.32,0.4,0.48"
edit="--set target.points=[[0,0.18],[0.45,0.25],[0.9,0.18]]"
# The single run writes where the Slurm run will (the recorded command lines name the outputs),
# then moves aside.
water="$work/water"
mkdir -p "$water"
"$bin/mps-gen" -q -c "$here/configs/water/db.json" $mps -o "$water/db.h5"
"$bin/wave-edit" -q -c "$here/configs/water/edit.json" $edit -i "$water/db.h5" \
  -o "$water/surface.h5"
mv "$water" "$work/water-single"
if MPS_FLAGS="$mps" EDIT_FLAGS="$edit" bash "$here/configs/water/slurm.sh" "$bin" "$water" 3; then
  frames=$("$bin/dd-cache" info -q -i "$work/water-single/surface.h5" |
           sed -n 's|.*/sequences/surface: \([0-9]*\) frames.*|\1|p')
  vdbs=$(ls "$water/frames"/surface.*.vdb | wc -l)
  objs=$(ls "$water/frames"/water.*.obj | wc -l)
  if cmp -s "$work/water-single/db.h5" "$water/db.h5" &&
     cmp -s "$work/water-single/surface.h5" "$water/surface.h5" && [ "$vdbs" = "$frames" ] &&
     [ "$objs" = "$frames" ]; then
    echo "slurm_test: water pipeline: 5 dependent stages, caches equal the single run, $vdbs VDB and OBJ frames"
  else
    echo "slurm_test: water pipeline: caches differ from the single run or $vdbs VDBs, $objs OBJs for $frames frames" >&2
    fail=1
  fi
else
  echo "slurm_test: configs/water/slurm.sh failed" >&2
  cat "$water"/logs/*.log >&2 || true
  fail=1
fi
# A task that fails (a bad config key) cancels the later stages and the script says so.
if MPS_FLAGS="--set no_such_key=1" bash "$here/configs/water/slurm.sh" "$bin" "$work/water-bad" 2 \
     2>"$work/water-bad.err"; then
  echo "slurm_test: configs/water/slurm.sh succeeded with a failing stage" >&2
  fail=1
elif grep -q "a stage failed" "$work/water-bad.err" &&
     grep -q 'unknown key "no_such_key"' "$work"/water-bad/logs/mps-gen.1.log; then
  echo "slurm_test: water pipeline: a failing stage stops it with exit 1 and its log"
else
  echo "slurm_test: a failing stage was not reported as expected" >&2
  cat "$work/water-bad.err" >&2
  fail=1
fi
# With no controller to submit to, the script stops before it touches the results of an earlier
# run in OUT_DIR (it used to remove them first).
vdbs_before=$(ls "$water/frames"/surface.*.vdb 2>/dev/null | wc -l)
if SLURM_CONF=/nonexistent/slurm.conf bash "$here/configs/water/slurm.sh" "$bin" "$water" 2 \
     2>"$work/water-nocontroller.err"; then
  echo "slurm_test: configs/water/slurm.sh succeeded without a Slurm controller" >&2
  fail=1
elif grep -q "no Slurm controller answers" "$work/water-nocontroller.err" &&
     cmp -s "$work/water-single/db.h5" "$water/db.h5" && [ -f "$water/surface.h5" ] &&
     [ "$vdbs_before" -gt 0 ] &&
     [ "$(ls "$water/frames"/surface.*.vdb | wc -l)" = "$vdbs_before" ]; then
  echo "slurm_test: water pipeline: no controller stops it before it touches earlier results"
else
  echo "slurm_test: without a controller, the script did not stop cleanly" >&2
  cat "$work/water-nocontroller.err" >&2
  fail=1
fi
exit $fail
