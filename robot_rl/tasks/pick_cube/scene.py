"""PickCube's scene: one free cube on the table."""

from __future__ import annotations

from robot_rl.sim.model import SceneParts
from robot_rl.tasks.pick_cube.params import PickCubeParams


def scene_parts(p: PickCubeParams) -> SceneParts:
    """MJCF for the cube, at the centre of its range (``place_objects`` moves it)."""
    h = p.cube_half_size
    return SceneParts(worldbody=f"""
<body name="cube" pos="{p.cube_xy_center[0]} {p.cube_xy_center[1]} {h}">
  <freejoint name="cube"/>
  <geom name="cube" type="box" size="{h} {h} {h}" mass="{p.cube_mass}" rgba="0.85 0.15 0.1 1"
        friction="1.2 0.01 0.0005" condim="4" solref="0.004 1"/>
</body>""")
