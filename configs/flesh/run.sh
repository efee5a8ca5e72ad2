#!/usr/bin/env bash
# The flesh pipeline end to end: simulate two training motions and one held-out motion, fit
# per-vertex springs to the training pairs (quasistatic target, backward-Euler ground truth),
# apply them to the held-out motion's targets, and export meshes when mesh-export is built.
# Usage: bash configs/flesh/run.sh [BIN_DIR] [OUT_DIR] [extra flags for simulate...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/bin}
out=${2:-out/flesh}
shift $(( $# > 2 ? 2 : $# )) || true
mkdir -p "$out"
sf="$bin/spring-fit"

for motion in swing bounce shake; do
  "$sf" simulate -c "$here/body.json" --set motion.kind=$motion "$@" -o "$out/$motion.h5"
done
# Fit on two motions, never on the held-out one.
"$sf" fit -c "$here/fit.json" -i "$out/swing.h5" -i "$out/bounce.h5" -o "$out/springs.h5"
"$sf" apply -i "$out/shake.h5" -i "$out/springs.h5" -o "$out/shake_springs.h5"
echo "held-out error (rms, metres):"
cat "$out/shake_springs.report.json"
# Motion captures the springs never saw (Debian's assimp-testmodels: CMU captures 01_01 and
# 01_03, 120 fps). Segments from 8 s and 20 s in: the captures' first frame is a reference pose
# with every rotation zero, a jump no body makes.
bvh=/usr/share/assimp/models/BVH
for capture in 01_01:8 01_03:20; do
  name=${capture%%:*}
  start=${capture##*:}
  [ -f "$bvh/$name.bvh" ] || continue
  "$sf" simulate -c "$here/body.json" --set motion.kind=bvh --set motion.file="$bvh/$name.bvh" \
    --set motion.start="$start" "$@" -o "$out/mocap_$name.h5"
  "$sf" apply -i "$out/mocap_$name.h5" -i "$out/springs.h5" -o "$out/mocap_${name}_springs.h5"
  echo "held-out capture $name from $start s (rms, metres):"
  cat "$out/mocap_${name}_springs.report.json"
done

# A rigged mesh from a file (assimp-testmodels' huesitos.fbx, 5.4 m -> 0.54 m) moving by
# its own animation: springs fitted on its first second, applied to the second one.
rig=/usr/share/assimp/models/FBX/huesitos.fbx
if [ -f "$rig" ]; then
  for part in 0 1; do
    "$sf" simulate -q --set motion.kind=skin --set body.mesh="$rig" --set body.scale=0.1 \
      --set motion.frames=31 --set motion.start=$part -o "$out/rig_$part.h5"
  done
  "$sf" fit -q -c "$here/fit.json" -i "$out/rig_0.h5" -o "$out/rig_springs.h5"
  "$sf" apply -q -i "$out/rig_1.h5" -i "$out/rig_springs.h5" -o "$out/rig_1_springs.h5"
  echo "rigged mesh, held-out second (rms, metres):"
  cat "$out/rig_1_springs.report.json"
fi

# A character torso rigged in Blender (data/rigs/belly_*.fbx, made by make_belly_rig.py): a
# soft belly around a bony core (pin_radius 0.1 m: the vertices within 10 cm of the spine follow
# it), springs fitted on hop, sway and twist, applied to the walk they never saw.
rigs="$here/../../data/rigs"
for motion in hop sway twist walk; do
  "$sf" simulate -q --set motion.kind=skin --set body.mesh="$rigs/belly_$motion.fbx" \
    --set body.pin_radius=0.1 --set motion.frames=60 -o "$out/belly_$motion.h5"
done
"$sf" fit -q -c "$here/fit.json" -i "$out/belly_hop.h5" -i "$out/belly_sway.h5" \
  -i "$out/belly_twist.h5" -o "$out/belly_springs.h5"
"$sf" apply -q -i "$out/belly_walk.h5" -i "$out/belly_springs.h5" -o "$out/belly_walk_springs.h5"
echo "rigged torso, held-out walk (rms, metres):"
cat "$out/belly_walk_springs.report.json"

if [ -x "$bin/mesh-export" ]; then
  mkdir -p "$out/mesh"
  "$bin/mesh-export" -i "$out/shake_springs.h5" --sequence dynamic --format obj \
    -o "$out/mesh/shake_springs.####.obj" ||
    echo "mesh-export of the animation failed (see above)" >&2
  "$bin/mesh-export" -i "$out/springs.h5" --sequence springs --format ply \
    -o "$out/mesh/springs.ply" ||
    echo "mesh-export of the ks/kd maps failed (see above)" >&2
else
  echo "mesh-export not built: skipping mesh export" >&2
fi
