"""PlugInsert: insert a held, keyed plug into its slot; the slot admits it only at the right yaw.

A USB-style insertion that a real cell practises: the plug is a flat box with a key on
one end, held rigidly between the closed fingers; the slot in the board is 1 mm wider
per side than the plug and has a notch for the key. Every episode starts with the plug
turned by up to ``start_yaw_range`` (as a grasp never quite repeats), several times
what the slot tolerates, so the policy must turn the plug as well as place it: its
actions include the yaw (``env.active_dims: [x, y, z, rz]``). Success is the plug's tip
``insert_depth`` below the board's top within the slot, which only a plug aligned in x, y and yaw reaches.
With ``socket_xy_range`` the board moves between episodes (``robot_rl.sim.fixture``).
"""

from __future__ import annotations

import numpy as np

from robot_rl.sim.fixture import MovingFixture, inserted
from robot_rl.sim.model import FINGER_TRAVEL, SceneParts
from robot_rl.sim.task import SimTask
from robot_rl.tasks.plug_insert.backward import PlugInsertSpec
from robot_rl.tasks.plug_insert.expert import PlugInsertExpert
from robot_rl.tasks.plug_insert.geometry import YAW_RANGE_TOLERANCE, mat_yaw, wrap_angle
from robot_rl.tasks.plug_insert.params import PlugInsertParams
from robot_rl.tasks.plug_insert.reset import PlugInsertReset
from robot_rl.tasks.plug_insert.scenarios import PlugInsertScenarios
from robot_rl.tasks.plug_insert.scene import scene_parts


class PlugInsert(SimTask):
    name = "PlugInsert"
    Params = PlugInsertParams
    Expert = PlugInsertExpert
    Reset = PlugInsertReset
    Backward = PlugInsertSpec
    Scenarios = PlugInsertScenarios
    state_dim = 7  # plug tip position, tip relative to the slot's top centre, plug yaw relative to the slot

    def scene_parts(self) -> SceneParts:
        return scene_parts(self.params)

    def bind(self, world) -> None:
        super().bind(world)
        self._socket_site = world.model.site("socket").id
        self.board = MovingFixture(world, "socket_board", self.params.socket_xy_range)

    def start_gripper(self) -> float:
        """Fingers closed on the plug."""
        return float(np.clip(self.params.plug_half_width / FINGER_TRAVEL, 0.0, 1.0))

    # --- ground truth -----------------------------------------------------------------
    def socket_top(self) -> np.ndarray:
        return self._world().data.site_xpos[self._socket_site].copy()

    def plug_tip(self) -> np.ndarray:
        world = self._world()
        tool_z = world.data.site_xmat[world.tcp_site].reshape(3, 3)[:, 2]
        return world.data.site_xpos[world.tcp_site] + self.params.plug_protrusion * tool_z

    def plug_yaw(self) -> float:
        """Yaw of the plug's long axis (the tool's x axis) about the base z axis; the slot's is 0."""
        world = self._world()
        return mat_yaw(world.data.site_xmat[world.tcp_site].reshape(3, 3))

    def yaw_error(self) -> float:
        return wrap_angle(self.plug_yaw())

    # --- EpisodeTask --------------------------------------------------------------------
    def place_objects(self, rng: np.random.Generator) -> None:
        """The plug is in the hand; the board moves within ``socket_xy_range`` (fixed where that is zero)."""
        self.board.place(rng)

    def object_in_start_range(self) -> bool:
        """The plug is out of the slot, above the board, the TCP within the start range (yaw included), the board
        within its range."""
        tcp = self._world().data.site_xpos[self._world().tcp_site]
        centre = np.asarray(self.cfg.robot.reset_pos)
        return bool(self.plug_tip()[2] > self.socket_top()[2] + 1e-3
                    and np.all(np.abs(tcp - centre) <= np.asarray(self.params.start_pos_range) + 2e-3)
                    and abs(self.yaw_error()) <= self.params.start_yaw_range + YAW_RANGE_TOLERANCE
                    and self.board.in_range())

    def task_state(self) -> np.ndarray:
        tip = self.plug_tip()
        return np.concatenate([tip, tip - self.socket_top(), [self.yaw_error()]]).astype(np.float32)

    def success(self) -> bool:
        """The tip ``insert_depth`` down in the slot (beside the board it goes as low: :func:`inserted`)."""
        return inserted(self.plug_tip(), self.socket_top(), self.params.slot_half_size, self.params.insert_depth)
