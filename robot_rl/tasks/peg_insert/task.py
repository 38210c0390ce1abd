"""PegInsert: push a held square peg into a square hole with at most 2 mm clearance.

The peg is held rigidly between the closed fingers (a geom on the hand), as in a
fixed grasp; the hole is cut into a board built from four boxes. With 1 mm per side,
the peg only goes in when the arm is compliant and well aligned: contact and the
impedance law matter. Success is the peg's tip ``insert_depth`` below the board's top, in the hole.
With ``hole_xy_range`` the board moves between episodes (``robot_rl.sim.fixture``).
"""

from __future__ import annotations

import numpy as np

from robot_rl.sim.fixture import MovingFixture, inserted
from robot_rl.sim.model import FINGER_TRAVEL, SceneParts
from robot_rl.sim.task import SimTask
from robot_rl.tasks.peg_insert.backward import PegInsertSpec
from robot_rl.tasks.peg_insert.expert import PegInsertExpert
from robot_rl.tasks.peg_insert.params import PegInsertParams
from robot_rl.tasks.peg_insert.reset import PegInsertReset
from robot_rl.tasks.peg_insert.scenarios import PegInsertScenarios
from robot_rl.tasks.peg_insert.scene import scene_parts


class PegInsert(SimTask):
    name = "PegInsert"
    Params = PegInsertParams
    Expert = PegInsertExpert
    Reset = PegInsertReset
    Backward = PegInsertSpec
    Scenarios = PegInsertScenarios
    state_dim = 6  # peg tip position, peg tip relative to the hole's top centre

    def scene_parts(self) -> SceneParts:
        return scene_parts(self.params)

    def bind(self, world) -> None:
        super().bind(world)
        self._hole_site = world.model.site("hole").id
        self.board = MovingFixture(world, "board", self.params.hole_xy_range)

    def start_gripper(self) -> float:
        """Fingers closed on the peg."""
        return float(np.clip(self.params.peg_half_width / FINGER_TRAVEL, 0.0, 1.0))

    def hole_top(self) -> np.ndarray:
        return self._world().data.site_xpos[self._hole_site].copy()

    def peg_tip(self) -> np.ndarray:
        world = self._world()
        tool_z = world.data.site_xmat[world.tcp_site].reshape(3, 3)[:, 2]
        return world.data.site_xpos[world.tcp_site] + self.params.peg_protrusion * tool_z

    def place_objects(self, rng: np.random.Generator) -> None:
        """The peg is in the hand; the board moves within ``hole_xy_range`` (fixed where that is zero)."""
        self.board.place(rng)

    def object_in_start_range(self) -> bool:
        """The peg starts out of the hole, above the board, within the start range; the board within its range."""
        tip = self.peg_tip()
        centre = np.asarray(self.cfg.robot.reset_pos)
        tcp = self._world().data.site_xpos[self._world().tcp_site]
        return bool(tip[2] > self.hole_top()[2] + 1e-3
                    and np.all(np.abs(tcp - centre) <= np.asarray(self.params.start_pos_range) + 2e-3)
                    and self.board.in_range())

    def task_state(self) -> np.ndarray:
        tip = self.peg_tip()
        return np.concatenate([tip, tip - self.hole_top()]).astype(np.float32)

    def success(self) -> bool:
        """The tip ``insert_depth`` down in the hole (beside the board it goes as low: :func:`inserted`)."""
        half = self.params.hole_half_width
        return inserted(self.peg_tip(), self.hole_top(), (half, half), self.params.insert_depth)
