"""PlugInsert's parameters and their defaults (``task.params`` in a config).

Kept apart from the rest of the folder and light to import: every config load types
``task.params`` with this dataclass, including where no sim is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_rl.config.loader import param


@dataclass
class PlugInsertParams:
    plug_half_length: float = param(0.012, min=0.005, max=0.03, doc="along the tool's x axis, metres")
    plug_half_width: float = param(0.005, min=0.003, max=0.02, doc="along the tool's y axis, metres")
    plug_length: float = param(0.05, min=0.03, max=0.1)
    plug_protrusion: float = param(0.04, min=0.01, max=0.1, doc="plug length below the TCP, metres")
    key_half_width: float = param(0.002, min=0.001, max=0.01, doc="the key: a tab on the plug's +x end")
    key_depth: float = param(0.003, min=0.001, max=0.01, doc="how far the key stands out, metres")
    clearance: float = param(0.002, min=0.0005, max=0.004, doc="slot width minus plug width, metres")
    socket_xy: tuple[float, float] = param((0.55, 0.0), min=(0.3, -0.3), max=(0.8, 0.3))
    socket_xy_range: tuple[float, float] = param(
        (0.0, 0.0), min=0.0, max=0.05,
        doc="+- metres in x and y: the board (and its slot) moves this far from socket_xy each episode")
    board_half_size: float = param(0.06, min=0.03, max=0.15)
    board_thickness: float = param(0.03, min=0.015, max=0.08)
    insert_depth: float = param(0.012, min=0.002, max=0.03, doc="plug tip below the board's top, metres")
    start_pos_range: tuple[float, float, float] = param((0.03, 0.03, 0.01), min=0.0, max=0.1)
    start_yaw_range: float = param(0.3, min=0.0, max=0.5, doc="+- radians: the plug starts turned")

    @property
    def slot_half_size(self) -> tuple[float, float]:
        """The slot's half length and half width (the plug's plus half the clearance): what the
        scene cuts and what success asks the tip to be within."""
        c = self.clearance / 2.0
        return self.plug_half_length + c, self.plug_half_width + c
