"""PegInsert: push a held square peg into a square hole with at most 2 mm clearance.

The peg is held rigidly between the closed fingers (a geom on the hand), as in a
fixed grasp; the hole is cut into a board built from four boxes. With 1 mm per side,
the peg only goes in when the arm is compliant and well aligned: contact and the
impedance law matter. Success is the peg's tip ``insert_depth`` below the board's top.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_rl.config.loader import param
from robot_rl.sim.model import FINGER_TRAVEL, TCP_OFFSET, SceneParts
from robot_rl.sim.tasks.base import SimTask


@dataclass
class PegInsertParams:
    peg_half_width: float = param(0.01, min=0.005, max=0.03)
    peg_length: float = param(0.06, min=0.03, max=0.12)
    peg_protrusion: float = param(0.04, min=0.01, max=0.1, doc="peg length below the TCP, metres")
    clearance: float = param(0.002, min=0.0002, max=0.002, doc="hole width minus peg width, metres")
    hole_xy: tuple[float, float] = (0.55, 0.0)
    board_half_size: float = param(0.06, min=0.03, max=0.15)
    board_thickness: float = param(0.03, min=0.015, max=0.08)
    insert_depth: float = param(0.015, min=0.002, max=0.05)
    start_pos_range: tuple[float, float, float] = param((0.03, 0.03, 0.01), min=0.0, max=0.1)
    start_yaw_range: float = param(0.0, min=0.0, max=0.2)


class PegInsert(SimTask):
    name = "PegInsert"
    Params = PegInsertParams
    state_dim = 6  # peg tip position, peg tip relative to the hole's top centre

    def scene_parts(self) -> SceneParts:
        p = self.params
        w = p.peg_half_width + p.clearance / 2.0  # hole half width
        b, t = p.board_half_size, p.board_thickness / 2.0
        hx, hy = p.hole_xy
        side = (b - w) / 2.0
        off = (w + b) / 2.0
        walls = [
            (hx + off, hy, side, b), (hx - off, hy, side, b),
            (hx, hy + off, w, side), (hx, hy - off, w, side),
        ]
        board = "\n".join(
            f'<geom class="board" type="box" pos="{x} {y} {t}" size="{sx} {sy} {t}"/>' for x, y, sx, sy in walls)
        peg_center = TCP_OFFSET + p.peg_protrusion - p.peg_length / 2.0
        return SceneParts(
            defaults="""<default class="board">
  <geom contype="1" conaffinity="1" rgba="0.25 0.45 0.8 1" friction="0.4 0.005 0.0001" solref="0.004 1"
        solimp="0.95 0.99 0.0005"/>
</default>""",
            worldbody=f'<body name="board" pos="0 0 0">\n{board}\n'
                      f'<site name="hole" pos="{hx} {hy} {2 * t}" size="0.003" rgba="0 1 0 1" group="4"/>\n</body>',
            hand=f'<geom name="peg" type="box" pos="0 0 {peg_center}" size="{p.peg_half_width} {p.peg_half_width} '
                 f'{p.peg_length / 2.0}" mass="0.05" rgba="0.9 0.75 0.2 1" friction="0.4 0.005 0.0001" '
                 f'solref="0.004 1" solimp="0.95 0.99 0.0005" contype="1" conaffinity="1"/>',
        )

    def bind(self, world) -> None:
        super().bind(world)
        self._hole_site = world.model.site("hole").id

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
        """The board is fixed and the peg is in the hand: nothing to place."""

    def object_in_start_range(self) -> bool:
        """The peg starts out of the hole, above the board, within the start range."""
        tip = self.peg_tip()
        centre = np.asarray(self.cfg.robot.reset_pos)
        tcp = self._world().data.site_xpos[self._world().tcp_site]
        return bool(tip[2] > self.hole_top()[2] + 1e-3
                    and np.all(np.abs(tcp - centre) <= np.asarray(self.params.start_pos_range) + 2e-3))

    def task_state(self) -> np.ndarray:
        tip = self.peg_tip()
        return np.concatenate([tip, tip - self.hole_top()]).astype(np.float32)

    def success(self) -> bool:
        return bool(self.peg_tip()[2] <= self.hole_top()[2] - self.params.insert_depth)
