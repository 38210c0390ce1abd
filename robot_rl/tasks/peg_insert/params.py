"""PegInsert's parameters and their defaults (``task.params`` in a config).

Kept apart from the rest of the folder and light to import: every config load types
``task.params`` with this dataclass, including where no sim is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_rl.config.loader import param


@dataclass
class PegInsertParams:
    peg_half_width: float = param(0.01, min=0.005, max=0.03)
    peg_length: float = param(0.06, min=0.03, max=0.12)
    peg_protrusion: float = param(0.04, min=0.01, max=0.1, doc="peg length below the TCP, metres")
    clearance: float = param(0.002, min=0.0002, max=0.002, doc="hole width minus peg width, metres")
    hole_xy: tuple[float, float] = (0.55, 0.0)
    hole_xy_range: tuple[float, float] = param(
        (0.0, 0.0), min=0.0, max=0.05,
        doc="+- metres in x and y: the board (and its hole) moves this far from hole_xy each episode")
    board_half_size: float = param(0.06, min=0.03, max=0.15)
    board_thickness: float = param(0.03, min=0.015, max=0.08)
    insert_depth: float = param(0.015, min=0.002, max=0.05)
    start_pos_range: tuple[float, float, float] = param((0.03, 0.03, 0.01), min=0.0, max=0.1)
    start_yaw_range: float = param(0.0, min=0.0, max=0.2)

    @property
    def hole_half_width(self) -> float:
        """The square hole's half width (the peg's plus half the clearance): what the scene cuts
        and what success asks the tip to be within."""
        return self.peg_half_width + self.clearance / 2.0
