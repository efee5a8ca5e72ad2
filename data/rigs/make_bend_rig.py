"""Makes data/rigs/: a small rig as an artist builds it in Blender, exported three ways, and
Blender's own evaluation of it as the reference the tests compare the loaders with.

The rig: a capped cylinder (radius 0.1 m, 0.8 m tall, 12 sides, 8 cuts; UV-unwrapped) skinned
with automatic weights to three bones along it; the armature object is moved, turned 30 degrees
about Z and scaled 0.8 without applying it (as after a layout), and the bones bend and travel
over 16 frames at 24 fps.

Files:
  bend_rig.fbx        Blender's default FBX export (-Z forward, Y up: a root rotation to Y up)
  bend_rig_zup.fbx    the same with Y forward, Z up (the data left Z up, and declared so)
  bend_rig.glb        Blender's default glTF binary export (metres, Y up)
  bend_rig_still.fbx  the default FBX export without its animation (Bake Animation off)
  bend_rig_blender.json  Blender's world positions of every vertex, rest pose and frames 1, 8,
                      16, converted to Y up as (x, z, -y), metres, in Blender's vertex order

Run with Blender 3.4: blender -b --factory-startup --python make_bend_rig.py -- OUTDIR
"""
import json
import math
import os
import sys

import bmesh
import bpy

out = sys.argv[sys.argv.index("--") + 1]
os.makedirs(out, exist_ok=True)
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = 24
scene.frame_start, scene.frame_end = 1, 16

bpy.ops.mesh.primitive_cylinder_add(vertices=12, radius=0.1, depth=0.8, location=(0, 0, 0.4))
body = bpy.context.active_object
body.name = "Body"
bpy.ops.object.transform_apply(location=True)
bpy.ops.object.mode_set(mode="EDIT")
bm = bmesh.from_edit_mesh(body.data)
sides = [e for e in bm.edges if abs(e.verts[0].co.z - e.verts[1].co.z) > 0.4]
bmesh.ops.subdivide_edges(bm, edges=sides, cuts=8, use_grid_fill=True)
bmesh.update_edit_mesh(body.data)
bpy.ops.mesh.select_all(action="SELECT")
bpy.ops.uv.smart_project()
bpy.ops.object.mode_set(mode="OBJECT")
bpy.ops.object.shade_smooth()

bpy.ops.object.armature_add(location=(0, 0, 0))
rig = bpy.context.active_object
rig.name = "Rig"
bpy.ops.object.mode_set(mode="EDIT")
bones = rig.data.edit_bones
names = ["lower", "middle", "upper"]
previous = None
for k, name in enumerate(names):
    b = bones[0] if k == 0 else bones.new(name)
    b.name = name
    b.head, b.tail = (0, 0, 0.8 * k / 3), (0, 0, 0.8 * (k + 1) / 3)
    if previous:
        b.parent, b.use_connect = previous, True
    previous = b
bpy.ops.object.mode_set(mode="OBJECT")
bpy.ops.object.select_all(action="DESELECT")
body.select_set(True)
rig.select_set(True)
bpy.context.view_layer.objects.active = rig
bpy.ops.object.parent_set(type="ARMATURE_AUTO")

rig.location = (0.4, 0.1, 0.05)
rig.rotation_euler = (0, 0, math.radians(30))
rig.scale = (0.8, 0.8, 0.8)

bpy.ops.object.mode_set(mode="POSE")
pose = rig.pose.bones
for frame, angle, shift in ((1, 0, 0), (8, 40, 0.1), (16, -25, -0.05)):
    for name in ("middle", "upper"):
        pose[name].rotation_mode = "XYZ"
        pose[name].rotation_euler = (math.radians(angle), 0, 0)
        pose[name].keyframe_insert("rotation_euler", frame=frame)
    pose["lower"].location = (shift, 0, 0)
    pose["lower"].keyframe_insert("location", frame=frame)
bpy.ops.object.mode_set(mode="OBJECT")


def world_positions():
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = body.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    points = []
    for v in mesh.vertices:
        p = body.matrix_world @ v.co
        points.append([round(p.x, 7), round(p.z, 7), round(-p.y, 7)])  # Z up -> Y up
    evaluated.to_mesh_clear()
    return points


reference = {"fps": 24, "frames": [1, 8, 16], "posed": []}
scene.frame_set(1)
rig.data.pose_position = "REST"
reference["rest"] = world_positions()
rig.data.pose_position = "POSE"
for frame in reference["frames"]:
    scene.frame_set(frame)
    reference["posed"].append(world_positions())
scene.frame_set(1)
with open(os.path.join(out, "bend_rig_blender.json"), "w") as f:
    json.dump(reference, f, separators=(",", ":"))

bpy.ops.object.select_all(action="DESELECT")
bpy.ops.export_scene.fbx(filepath=os.path.join(out, "bend_rig.fbx"))
bpy.ops.export_scene.fbx(filepath=os.path.join(out, "bend_rig_zup.fbx"), axis_forward="Y",
                         axis_up="Z")
bpy.ops.export_scene.gltf(filepath=os.path.join(out, "bend_rig.glb"), export_format="GLB")
bpy.ops.export_scene.fbx(filepath=os.path.join(out, "bend_rig_still.fbx"), bake_anim=False)
print("wrote", out)
