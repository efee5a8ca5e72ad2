"""Blender imports mesh-export's files as an artist would (run by run_client.sh):

- the OBJ with its PC2 and with its MDD through the Mesh Cache modifier, and sees the cache's
  positions at several frames (1e-5 m: the point caches hold float32, Blender evaluates in
  float32), also with the importer's default axes (the object turned upright, its vertices the
  file's) and with the MDD in the modifier's time mode in a scene of another frame rate;
- that OBJ's faces smooth-shaded (its `s 1`; Blender shades an OBJ without it flat);
- the cache's texture coordinates as the UV map of that OBJ and of a PLY (1e-6: float32 in both
  files and in Blender), and face-varying ones with a seam as the UV map of another OBJ and of
  a PLY, which holds them per vertex by copying the vertices on the seam;
- the OBJ and PC2 of a tetrahedral mesh with an interior vertex, paired through the Mesh Cache
  modifier (the importer drops vertices no face uses, so both files hold the surface's only);
- a PC2 written in the vertex order of another mesh (match.file: the cloth as a DCC tool holds
  it, another order, a vertex split at a seam, Z up in centimetres), through the Mesh Cache
  modifier on that mesh as Blender imports it, and an OBJ matched to a mesh with a pentagon,
  which keeps it as one face;
- a .vdb level set as a volume, whose grids list `surface` as a float grid.

Usage: blender -b --factory-startup --python-exit-code 3 --python blender_check.py -- DIR FRAMES
Any failed check raises, and Blender exits 3.
"""
import math
import os
import sys

import bpy

work = sys.argv[sys.argv.index("--") + 1]
frames = int(sys.argv[sys.argv.index("--") + 2])
NX, NZ = 5, 4  # tests/support/export_caches.hpp
TOL = 1e-5


def cloth_position(i, f):
    """Vertex i of the "cloth" sequence at frame f, as export_caches.hpp writes it."""
    x, z = 0.1 * (i % NX), 0.1 * (i // NX)
    t = (f - 1) / 24.0
    return (x, 0.05 * math.sin(3.0 * x + 2.0 * t) + 0.01 * f, z)


def cloth_uv(i):
    """Texture coordinates of cloth vertex i, as export_caches.hpp writes them."""
    return ((i % NX) / (NX - 1), (i // NX) / (NZ - 1))


def check_uv(obj, what):
    layer = obj.data.uv_layers.active
    assert layer is not None, f"{what}: no UV map"
    worst = 0.0
    for loop in obj.data.loops:
        expected = cloth_uv(loop.vertex_index)
        worst = max(worst, max(abs(a - b) for a, b in zip(layer.data[loop.index].uv, expected)))
    assert worst <= 1e-6, f"{what}: UVs off by {worst}"
    print(f"{what}: UV map matches ({len(obj.data.loops)} corners, max error {worst:.1e})")


def cloth_triangles():
    """The cloth's triangles, as export_caches.hpp's cloth_triangles writes them."""
    tris = []
    for j in range(NZ - 1):
        for i in range(NX - 1):
            a = j * NX + i
            b, c, d = a + 1, a + NX, a + NX + 1
            tris += [(a, c, b), (b, c, d)]
    return tris


def check_seam_uv(obj, what, copies=False):
    """Corner k of triangle t has the cloth's (u, v), u shifted by 1 on the second half of the
    triangles (export_caches.hpp's seam_uv with shift 1): the vertices both halves share have
    two coordinates. With `copies` a corner may sit on a copy of its vertex, appended after the
    cache's vertices at the same position (frame 1)."""
    tris = cloth_triangles()
    layer = obj.data.uv_layers.active
    assert layer is not None, f"{what}: no UV map"
    assert len(obj.data.polygons) == len(tris), f"{what}: {len(obj.data.polygons)} faces"
    worst = 0.0
    used = set()
    for t, poly in enumerate(obj.data.polygons):
        for k, li in enumerate(poly.loop_indices):
            v = tris[t][k]
            at = obj.data.loops[li].vertex_index
            if at != v:
                assert copies and at >= NX * NZ, f"{what}: face {t} corner {k} moved"
                co = obj.data.vertices[at].co
                off = max(abs(a - b) for a, b in zip(co, cloth_position(v, 1)))
                assert off <= TOL, f"{what}: the copy {at} of vertex {v} is {off} m away"
                used.add(at)
            u, w = cloth_uv(v)
            expected = (u + (1.0 if 2 * t >= len(tris) else 0.0), w)
            worst = max(worst, max(abs(a - b) for a, b in zip(layer.data[li].uv, expected)))
    assert worst <= 1e-6, f"{what}: UVs off by {worst}"
    if copies:
        assert used and len(obj.data.vertices) == NX * NZ + len(used), f"{what}: unused copies"
    print(f"{what}: face-varying UV map matches, seam kept (max error {worst:.1e}"
          f", {len(used)} vertices copied)")


def import_obj(path):
    before = set(bpy.data.objects)
    # forward Y / up Z: no axis conversion, and this importer keeps the vertex order.
    bpy.ops.wm.obj_import(filepath=path, forward_axis="Y", up_axis="Z")
    new = [o for o in bpy.data.objects if o not in before]
    assert len(new) == 1, f"{path}: expected one object, got {len(new)}"
    return new[0]


def check_positions(obj, frame, what):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).to_mesh()
    assert len(mesh.vertices) == NX * NZ, f"{what}: {len(mesh.vertices)} vertices"
    worst = 0.0
    for i, v in enumerate(mesh.vertices):
        expected = cloth_position(i, frame)
        worst = max(worst, max(abs(a - b) for a, b in zip(v.co, expected)))
    obj.evaluated_get(depsgraph).to_mesh_clear()
    assert worst <= TOL, f"{what} frame {frame}: off by {worst} m"
    print(f"{what} frame {frame}: positions match (max error {worst:.2e} m)")


scene = bpy.context.scene
for fmt in ("PC2", "MDD"):
    stem = os.path.join(work, f"cloth_{fmt.lower()}")
    obj = import_obj(stem + ".obj")
    scene.frame_set(1)
    check_positions(obj, 1, f"{fmt} mesh without the modifier")
    check_uv(obj, f"{fmt}'s OBJ")
    flat = sum(not p.use_smooth for p in obj.data.polygons)
    assert flat == 0, f"{fmt}'s OBJ: {flat} of {len(obj.data.polygons)} faces flat-shaded"
    print(f"{fmt}'s OBJ: all {len(obj.data.polygons)} faces smooth-shaded")
    mod = obj.modifiers.new(name="cache", type="MESH_CACHE")
    mod.cache_format = fmt
    mod.filepath = stem + "." + fmt.lower()
    mod.frame_start = 1
    for f in sorted({1, 2, frames // 2 + 1, frames}):
        scene.frame_set(f)
        check_positions(obj, f, f"{fmt} through the Mesh Cache modifier")

# The importer's default axes (forward -Z, up Y: the files') stand the mesh upright by turning
# the object, and leave its vertices as the file has them: the point cache still fits.
before = set(bpy.data.objects)
bpy.ops.wm.obj_import(filepath=os.path.join(work, "cloth_mdd.obj"))
upright = [o for o in bpy.data.objects if o not in before][0]
assert abs(upright.rotation_euler[0] - math.pi / 2) < 1e-6, f"rotation {upright.rotation_euler[:]}"
mod = upright.modifiers.new(name="cache", type="MESH_CACHE")
mod.cache_format = "MDD"
mod.filepath = os.path.join(work, "cloth_mdd.mdd")
mod.frame_start = 1
scene.frame_set(3)
check_positions(upright, 3, "MDD on the OBJ imported with the default axes")
# An MDD holds its samples' times: in the modifier's time mode, with its start in seconds at
# scene frame 1, the 24 fps cache plays at its own speed in a 60 fps scene (scene frame 11 is
# 1/6 s, the cache's frame 5).
scene.render.fps = 60
mod.time_mode = "TIME"
mod.frame_start = 1 / scene.render.fps
scene.frame_set(11)
check_positions(upright, 5, "MDD in time mode at 60 fps, scene frame 11")
scene.render.fps = 24


def import_ply(path):
    before = set(bpy.data.objects)
    try:  # Blender 4.0 and later
        bpy.ops.wm.ply_import(filepath=path, forward_axis="Y", up_axis="Z")
    except AttributeError:  # no such operator: the Python add-on of Blender 3
        bpy.ops.import_mesh.ply(filepath=path)
    new = [o for o in bpy.data.objects if o not in before]
    assert len(new) == 1, f"{path}: expected one object, got {len(new)}"
    return new[0]


check_uv(import_ply(os.path.join(work, "cloth.0001.ply")), "PLY")
check_seam_uv(import_obj(os.path.join(work, "sheet.0001.obj")), "OBJ with a seam")
check_seam_uv(import_ply(os.path.join(work, "sheet.0001.ply")), "PLY with a seam", copies=True)

# The tetrahedral cube of export_caches.hpp's write_core_cache: its surface vertices are cache
# vertices 0-3 and 5-8 (4 is the centre), the cube's corners (bit 0: x, 1: y, 2: z), moved 0.1 f
# along x at frame f.
core = import_obj(os.path.join(work, "core.obj"))
mod = core.modifiers.new(name="cache", type="MESH_CACHE")
mod.cache_format = "PC2"
mod.filepath = os.path.join(work, "core.pc2")
mod.frame_start = 1
for f in (1, frames):
    scene.frame_set(f)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = core.evaluated_get(depsgraph).to_mesh()
    assert len(mesh.vertices) == 8, f"core.obj: {len(mesh.vertices)} vertices, expected 8"
    worst = 0.0
    for k, v in enumerate(mesh.vertices):
        expected = ((k & 1) + 0.1 * f, (k >> 1) & 1, (k >> 2) & 1)
        worst = max(worst, max(abs(a - b) for a, b in zip(v.co, expected)))
    core.evaluated_get(depsgraph).to_mesh_clear()
    assert worst <= TOL, f"core.obj with core.pc2 frame {f}: off by {worst} m"
    print(f"tetrahedral cube with its PC2, frame {f}: 8 surface vertices match ({worst:.1e} m)")

# export_caches.hpp's write_cloth_reference: file vertex j is cloth vertex 19 - j, and 20-23
# repeat the cloth's column x = 0.2 (2, 7, 12, 17); Z up in centimetres, so imported with forward
# Y, up Z its coordinates are Blender's own and the PC2 plays on it with the modifier's defaults.
def cloth_vertex(j):
    return NX * NZ - 1 - j if j < NX * NZ else 2 + NX * (j - NX * NZ)


artist = import_obj(os.path.join(work, "cloth_rest.obj"))
mod = artist.modifiers.new(name="cache", type="MESH_CACHE")
mod.cache_format = "PC2"
mod.filepath = os.path.join(work, "cloth_match.pc2")
mod.frame_start = 1
for f in (1, 2, frames):
    scene.frame_set(f)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = artist.evaluated_get(depsgraph).to_mesh()
    assert len(mesh.vertices) == NX * NZ + NZ, f"cloth_rest.obj: {len(mesh.vertices)} vertices"
    worst = 0.0
    for j, v in enumerate(mesh.vertices):
        x, y, z = cloth_position(cloth_vertex(j), f)
        worst = max(worst, max(abs(a - b) for a, b in zip(v.co, (100 * x, -100 * z, 100 * y))))
    artist.evaluated_get(depsgraph).to_mesh_clear()
    assert worst <= 100 * TOL, f"cloth_rest.obj with cloth_match.pc2 frame {f}: off by {worst} cm"
    print(f"the artist's cloth with its matched PC2, frame {f}: 24 vertices match ({worst:.1e} cm)")

# The OBJ matched to a mesh of a quad, a pentagon and a triangle (run_client.sh): Blender reads
# them as three faces of 4, 5 and 3 corners in that order, the pentagon's corners on the cloth's
# vertices 7, 8, 14, 18 and 12 at frame 1.
ngon = import_obj(os.path.join(work, "cloth_ngon.0001.obj"))
sizes = [len(p.vertices) for p in ngon.data.polygons]
assert sizes == [4, 5, 3], f"cloth_ngon.0001.obj: faces of {sizes} corners, expected [4, 5, 3]"
worst = 0.0
for corner, i in zip(ngon.data.polygons[1].vertices, (7, 8, 14, 18, 12)):
    x, y, z = cloth_position(i, 1)
    co = ngon.data.vertices[corner].co
    worst = max(worst, max(abs(a - b) for a, b in zip(co, (100 * x, -100 * z, 100 * y))))
assert worst <= 100 * TOL, f"cloth_ngon.0001.obj: the pentagon is off by {worst} cm"
print(f"the matched OBJ keeps a quad, a pentagon and a triangle ({worst:.1e} cm)")

vdb = os.path.join(work, "water.0001.vdb")
before = set(bpy.data.objects)
bpy.ops.object.volume_import(filepath=vdb, directory=work,
                             files=[{"name": f"water.{f:04d}.vdb"} for f in range(1, frames + 1)])
volumes = [o for o in bpy.data.objects if o not in before]
assert len(volumes) == 1, f"{vdb}: expected one volume object"
grids = volumes[0].data.grids
grids.load()
names = [(g.name, g.data_type) for g in grids]
print(f"{vdb}: grids {names}, sequence of {volumes[0].data.frame_duration} frames")
assert ("surface", "FLOAT") in names, f"{vdb}: no float grid 'surface' in {names}"
assert volumes[0].data.is_sequence and volumes[0].data.frame_duration == frames
print("blender: all checks passed")
