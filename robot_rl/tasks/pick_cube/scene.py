"""PickCube's scene: one free cube on the table, and the decoys (``decoys`` in the params).

A decoy is a cube of the same size in another colour, on a static body with no contacts:
the cameras see it, nothing touches it. It makes the task harder only where the policy
must find the cube in the images (from pixels); the physics, the scripted expert, the
scripted reset and the state observation are exactly those of the scene without it. Every
reset puts the decoys somewhere new (``PickCube.place_decoys``), the teleport and the
scripted reset alike.
"""

from __future__ import annotations

from robot_rl.sim.model import SceneParts
from robot_rl.tasks.pick_cube.params import PickCubeParams

CUBE_RGBA = "0.85 0.15 0.1 1"
DECOY_RGBA = ("0.15 0.35 0.85 1", "0.15 0.65 0.2 1", "0.9 0.75 0.1 1")  # blue, green, yellow


def decoy_name(i: int) -> str:
    return f"decoy{i}"


def scene_parts(p: PickCubeParams) -> SceneParts:
    """MJCF for the cube and its decoys, at the centre of the range (``place_objects`` moves them)."""
    h = p.cube_half_size
    x, y = p.cube_xy_center
    decoys = "".join(f"""
<body name="{decoy_name(i)}" pos="{x} {y} {h}">
  <geom name="{decoy_name(i)}" type="box" size="{h} {h} {h}" rgba="{DECOY_RGBA[i]}" contype="0" conaffinity="0"/>
</body>""" for i in range(p.decoys))
    return SceneParts(worldbody=f"""
<body name="cube" pos="{x} {y} {h}">
  <freejoint name="cube"/>
  <geom name="cube" type="box" size="{h} {h} {h}" mass="{p.cube_mass}" rgba="{CUBE_RGBA}"
        friction="1.2 0.01 0.0005" condim="4" solref="0.004 1"/>
</body>{decoys}""")
