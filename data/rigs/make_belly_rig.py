"""Makes data/rigs/belly_*.fbx: a soft character torso as an artist rigs it in Blender, with
three motions, for spring-fit's pipeline on a rigged mesh (configs/flesh/run.sh).

The body: a bean 0.75 m tall (a UV sphere of 32 segments and 16 rings, scaled to 0.2 x 0.17 x
0.375 m around z = 0.5) with a belly bulging 6 cm forward (-Y, Blender's front) below its middle,
smooth-shaded, UV-unwrapped by its sphere; skinned with automatic weights to a chain of three
bones along it (hips, spine, chest), the hips the root.

The motions, 24 fps, frames 1-49 (2 s), one animation per file (Blender's default FBX export:
-Z forward, Y up, centimetres):
  belly_hop.fbx    the hips bounce 8 cm up and down twice a second, the chest nodding with them
  belly_sway.fbx   the spine and chest bend 14 degrees to each side, once a second
  belly_twist.fbx  the chest turns 25 degrees about the spine and back, the hips shift 4 cm
                   sideways, 0.75 times a second
  belly_walk.fbx   all three at once, smaller, as in a walk: the hips bob 4 cm twice a second,
                   the spine sways 8 degrees and the chest turns 12 degrees once a second

Run with Blender 3.4: blender -b --factory-startup --python make_belly_rig.py -- OUTDIR
"""
import math
import os
import sys

import bpy

out = sys.argv[sys.argv.index("--") + 1]
os.makedirs(out, exist_ok=True)
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = 24
scene.frame_start, scene.frame_end = 1, 49

bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=1.0,
                                     location=(0, 0, 0.5), calc_uvs=True)
body = bpy.context.active_object
body.name = "Belly"
body.scale = (0.2, 0.17, 0.375)
bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
# The belly: the front below the middle pushed forward, a smooth bump (no vertex crosses
# another: the push falls to zero at the sides and at the top and bottom of the bump).
for v in body.data.vertices:
    front = max(0.0, -v.co.y / 0.17)
    height = math.exp(-((v.co.z + 0.12) / 0.14) ** 2)
    v.co.y -= 0.06 * front ** 2 * height
bpy.ops.object.shade_smooth()

bpy.ops.object.armature_add(location=(0, 0, 0))
rig = bpy.context.active_object
rig.name = "Rig"
bpy.ops.object.mode_set(mode="EDIT")
bones = rig.data.edit_bones
joints = [0.2, 0.45, 0.65, 0.85]
previous = None
for k, name in enumerate(["hips", "spine", "chest"]):
    b = bones[0] if k == 0 else bones.new(name)
    b.name = name
    b.head, b.tail = (0, 0, joints[k]), (0, 0, joints[k + 1])
    if previous:
        b.parent, b.use_connect = previous, True
    previous = b
bpy.ops.object.mode_set(mode="OBJECT")
bpy.ops.object.select_all(action="DESELECT")
body.select_set(True)
rig.select_set(True)
bpy.context.view_layer.objects.active = rig
bpy.ops.object.parent_set(type="ARMATURE_AUTO")


def key_motion(name, pose_at):
    """An action `name` keyed on every frame 1-49 from pose_at(t) -> {bone: (location,
    rotation_euler)} at t seconds."""
    rig.animation_data_create()
    action = bpy.data.actions.new(name)
    rig.animation_data.action = action
    pose = rig.pose.bones
    for frame in range(1, 50):
        t = (frame - 1) / 24.0
        for bone, (location, rotation) in pose_at(t).items():
            pb = pose[bone]
            pb.rotation_mode = "XYZ"
            pb.location = location
            pb.rotation_euler = [math.radians(a) for a in rotation]
            pb.keyframe_insert("location", frame=frame)
            pb.keyframe_insert("rotation_euler", frame=frame)
    return action


def hop(t):
    up = 0.08 * abs(math.sin(2 * math.pi * t))  # two bounces a second
    nod = 8 * math.sin(4 * math.pi * t)
    return {"hips": ((0, up, 0), (0, 0, 0)), "chest": ((0, 0, 0), (nod, 0, 0))}


def sway(t):
    bend = 14 * math.sin(2 * math.pi * t)
    return {"spine": ((0, 0, 0), (0, 0, bend)), "chest": ((0, 0, 0), (0, 0, bend))}


def twist(t):
    turn = 25 * math.sin(1.5 * math.pi * t)
    return {"hips": ((0.04 * math.sin(1.5 * math.pi * t), 0, 0), (0, 0, 0)),
            "chest": ((0, 0, 0), (0, turn, 0))}


def walk(t):
    step = 2 * math.pi * t
    return {"hips": ((0, 0.04 * abs(math.sin(step)), 0), (0, 0, 0)),
            "spine": ((0, 0, 0), (0, 0, 8 * math.sin(step))),
            "chest": ((0, 0, 0), (0, 12 * math.sin(step), 0))}


for name, motion in (("hop", hop), ("sway", sway), ("twist", twist), ("walk", walk)):
    key_motion(name, motion)
    bpy.ops.object.select_all(action="DESELECT")
    bpy.ops.export_scene.fbx(filepath=os.path.join(out, f"belly_{name}.fbx"),
                             bake_anim_use_all_actions=False, bake_anim_use_nla_strips=False)
print("wrote", out, len(body.data.vertices), "vertices")
