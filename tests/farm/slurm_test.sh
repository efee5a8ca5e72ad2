#!/usr/bin/env bash
# The farm workflow on a real scheduler: a private Slurm (slurmctld + slurmd on this machine,
# its own config, ports and spool in WORK_DIR) runs array jobs of sharded tools; dd-cache merge
# joins their outputs; the merged caches must equal single-machine runs byte for byte.
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
exit $fail
