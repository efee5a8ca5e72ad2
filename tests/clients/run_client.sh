#!/bin/sh
# Generates the input of a client test with mesh-export, then runs the client's check script.
# Usage: run_client.sh blender|paraview|tinyusdz SCRIPT_DIR CACHE_TOOL MESH_EXPORT WORK_DIR [TINYUSDZ_DIR]
set -eu
client=$1 scripts=$2 make_cache=$3 mesh_export=$4 work=$5 tinyusdz=${6:-}
frames=6

rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$make_cache" cache.h5 $frames seams.h5 core.h5 cloth_rest.obj

case $client in
blender)
  command -v blender >/dev/null || { echo "blender is not installed (make test-clients installs it)" >&2; exit 1; }
  "$mesh_export" -q -i cache.h5 --sequence cloth -o cloth_pc2.pc2
  "$mesh_export" -q -i cache.h5 --sequence cloth -o cloth_mdd.mdd
  "$mesh_export" -q -i cache.h5 --sequence cloth --frames 1 -o cloth.####.ply
  "$mesh_export" -q -i cache.h5 --sequence water -o water.####.vdb
  "$mesh_export" -q -i seams.h5 --sequence sheet --frames 1 -o sheet.####.obj
  "$mesh_export" -q -i seams.h5 --sequence sheet --frames 1 -o sheet.####.ply
  "$mesh_export" -q -i core.h5 -o core.pc2
  # The cloth on a mesh of its own vertex order, Z up in centimetres, as a DCC tool holds it.
  "$mesh_export" -q -i cache.h5 --sequence cloth --set match.file=cloth_rest.obj \
    --set match.scale=100 --set match.up_axis=Z -o cloth_match.pc2
  # That mesh with a quad, a pentagon and a triangle: the matched OBJ keeps them as they are.
  { grep '^v ' cloth_rest.obj; printf 'f 20 15 14 19\nf 13 12 6 2 8\nf 19 14 18\n'; } >cloth_ngon.obj
  "$mesh_export" -q -i cache.h5 --sequence cloth --set match.file=cloth_ngon.obj \
    --set match.scale=100 --set match.up_axis=Z --frames 1 -o cloth_ngon.####.obj
  blender -b --factory-startup --python-exit-code 3 --python "$scripts/blender_check.py" -- \
    "$work" $frames
  ;;
paraview)
  command -v pvpython >/dev/null || { echo "pvpython is not installed (make test-clients installs paraview)" >&2; exit 1; }
  "$mesh_export" -q -i cache.h5 --sequence cloth --set attributes=stiffness -o cloth.xmf
  "$mesh_export" -q -i cache.h5 --sequence water -o water.xmf
  "$mesh_export" -q -i cache.h5 --sequence drops -o drops.xmf
  # ParaView's Xdmf3 reader needs a directory part in the path.
  pvpython "$scripts/paraview_check.py" ./cloth.xmf ./water.xmf $frames ./drops.xmf
  ;;
tinyusdz)
  command -v node >/dev/null || { echo "node is not installed (make test-clients installs it)" >&2; exit 1; }
  [ -f "$tinyusdz/tinyusdz.wasm" ] ||
    { echo "no TinyUSDZ in '$tinyusdz' (make test-clients fetches it)" >&2; exit 1; }
  "$mesh_export" -q -i cache.h5 --sequence cloth --set attributes=stiffness,velocity -o cloth.usda
  "$mesh_export" -q -i seams.h5 --sequence sheet -o sheet.usda
  "$mesh_export" -q -i cache.h5 --sequence cloth --set match.file=cloth_rest.obj \
    --set match.scale=100 --set match.up_axis=Z -o cloth_match.usda
  "$mesh_export" -q -i cache.h5 --sequence water -o water.usda
  node "$scripts/usd_check.mjs" "$tinyusdz" "$work" $frames
  ;;
*)
  echo "unknown client $client" >&2
  exit 2
  ;;
esac
