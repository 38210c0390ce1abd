"""PickCube: lift a randomly placed cube off the table."""

from __future__ import annotations

import numpy as np

from robot_rl.control.transforms import rpy_to_quat
from robot_rl.sim.model import SceneParts
from robot_rl.sim.task import SimTask
from robot_rl.tasks.pick_cube.backward import PickCubeSpec
from robot_rl.tasks.pick_cube.expert import PickCubeExpert
from robot_rl.tasks.pick_cube.params import PickCubeParams
from robot_rl.tasks.pick_cube.reset import PickCubeReset
from robot_rl.tasks.pick_cube.scenarios import PickCubeScenarios
from robot_rl.tasks.pick_cube.scene import decoy_name, scene_parts

DECOY_DRAWS = 64  # a decoy goes to the farthest of this many draws from the cube and the others


class PickCube(SimTask):
    name = "PickCube"
    Params = PickCubeParams
    Expert = PickCubeExpert
    Reset = PickCubeReset
    Backward = PickCubeSpec
    Scenarios = PickCubeScenarios
    state_dim = 6  # cube position, cube position relative to the TCP

    def scene_parts(self) -> SceneParts:
        return scene_parts(self.params)

    def bind(self, world) -> None:
        super().bind(world)
        joint = world.model.joint("cube")
        self._qpos = joint.qposadr[0]
        self._dof = joint.dofadr[0]
        self._body = world.model.body("cube").id
        self._decoys = [world.model.body(decoy_name(i)).id for i in range(self.params.decoys)]

    def cube_pos(self) -> np.ndarray:
        return self._world().data.xpos[self._body].copy()

    def place_objects(self, rng: np.random.Generator) -> None:
        p, d = self.params, self._world().data
        xy = np.asarray(p.cube_xy_center) + rng.uniform(-1, 1, 2) * np.asarray(p.cube_xy_range)
        yaw = rng.uniform(-1, 1) * p.cube_yaw_range
        d.qpos[self._qpos:self._qpos + 3] = [xy[0], xy[1], p.cube_half_size + 1e-4]
        d.qpos[self._qpos + 3:self._qpos + 7] = rpy_to_quat([0.0, 0.0, yaw])
        d.qvel[self._dof:self._dof + 6] = 0.0
        self.place_decoys(rng, xy)

    def place_decoys(self, rng: np.random.Generator, cube_xy: np.ndarray) -> None:
        """Each decoy somewhere in the cube's range, away from the cube and the decoys before it.

        The draws come from a child of ``rng``: the parent's draws (the arm's start pose next)
        stay those of the scene without decoys, so the state observation's episodes are unchanged.
        """
        if not self._decoys:
            return
        rng = rng.spawn(1)[0]
        p, world = self.params, self._world()
        centre, span = np.asarray(p.cube_xy_center), np.asarray(p.cube_xy_range)
        taken = [np.asarray(cube_xy, dtype=float)]
        for body in self._decoys:
            draws = centre + rng.uniform(-1, 1, (DECOY_DRAWS, 2)) * span
            gaps = np.min([np.linalg.norm(draws - t, axis=1) for t in taken], axis=0)
            xy = draws[int(np.argmax(gaps))]
            taken.append(xy)
            world.model.body_pos[body] = [xy[0], xy[1], p.cube_half_size]
            world.model.body_quat[body] = rpy_to_quat([0.0, 0.0, rng.uniform(-1, 1) * p.cube_yaw_range])
        world.forward()

    def decoy_xy(self) -> np.ndarray:
        """Where the decoys are (one row of x, y per decoy; none without decoys)."""
        return self._world().model.body_pos[self._decoys, :2].copy().reshape(-1, 2)

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
