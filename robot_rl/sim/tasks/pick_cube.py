"""PickCube: lift a randomly placed cube off the table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_rl.config.loader import param
from robot_rl.control.transforms import rpy_to_quat
from robot_rl.sim.model import SceneParts
from robot_rl.sim.tasks.base import SimTask


@dataclass
class PickCubeParams:
    cube_half_size: float = param(0.02, min=0.01, max=0.035)
    cube_mass: float = param(0.05, min=0.005, max=1.0)
    cube_xy_center: tuple[float, float] = (0.5, 0.0)
    cube_xy_range: tuple[float, float] = param((0.08, 0.08), min=0.0, max=0.2, doc="+- metres")
    cube_yaw_range: float = param(0.3, min=0.0, max=3.15, doc="+- radians")
    lift_height: float = param(0.05, min=0.01, max=0.3, doc="cube bottom above the table, metres")
    start_pos_range: tuple[float, float, float] = param((0.02, 0.02, 0.01), min=0.0, max=0.1)
    start_yaw_range: float = param(0.0, min=0.0, max=0.5)


class PickCube(SimTask):
    name = "PickCube"
    Params = PickCubeParams
    state_dim = 6  # cube position, cube position relative to the TCP

    def scene_parts(self) -> SceneParts:
        h = self.params.cube_half_size
        return SceneParts(worldbody=f"""
<body name="cube" pos="{self.params.cube_xy_center[0]} {self.params.cube_xy_center[1]} {h}">
  <freejoint name="cube"/>
  <geom name="cube" type="box" size="{h} {h} {h}" mass="{self.params.cube_mass}" rgba="0.85 0.15 0.1 1"
        friction="1.2 0.01 0.0005" condim="4" solref="0.004 1"/>
</body>""")

    def bind(self, world) -> None:
        super().bind(world)
        joint = world.model.joint("cube")
        self._qpos = joint.qposadr[0]
        self._dof = joint.dofadr[0]
        self._body = world.model.body("cube").id

    def cube_pos(self) -> np.ndarray:
        return self._world().data.xpos[self._body].copy()

    def place_objects(self, rng: np.random.Generator) -> None:
        p, d = self.params, self._world().data
        xy = np.asarray(p.cube_xy_center) + rng.uniform(-1, 1, 2) * np.asarray(p.cube_xy_range)
        yaw = rng.uniform(-1, 1) * p.cube_yaw_range
        d.qpos[self._qpos:self._qpos + 3] = [xy[0], xy[1], p.cube_half_size + 1e-4]
        d.qpos[self._qpos + 3:self._qpos + 7] = rpy_to_quat([0.0, 0.0, yaw])
        d.qvel[self._dof:self._dof + 6] = 0.0

    def object_in_start_range(self) -> bool:
        p = self.params
        pos = self.cube_pos()
        off = np.abs(pos[:2] - np.asarray(p.cube_xy_center))
        return bool(np.all(off <= np.asarray(p.cube_xy_range) + 1e-3) and abs(pos[2] - p.cube_half_size) < 3e-3)

    def task_state(self) -> np.ndarray:
        world = self._world()
        cube = self.cube_pos()
        tcp = world.data.site_xpos[world.tcp_site]
        return np.concatenate([cube, cube - tcp]).astype(np.float32)

    def success(self) -> bool:
        bottom = self.cube_pos()[2] - self.params.cube_half_size
        return bool(bottom > self.params.lift_height)
