"""PickCube's parameters and their defaults (``task.params`` in a config).

Kept apart from the rest of the folder and light to import: every config load types
``task.params`` with this dataclass, including where no sim is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_rl.config.loader import param


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
    decoys: int = param(0, min=0, max=3, doc="cubes of other colours in the cube's range that only the cameras see")
