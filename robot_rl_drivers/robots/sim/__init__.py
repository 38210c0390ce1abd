"""The MuJoCo arm (``robot.backend: sim``): robot_rl.sim builds it inside the sim node's world.

Its code stays in the core (:mod:`robot_rl.sim`); this folder only registers it, so that
nothing needs to branch on its name to know it has no hardware block and no factory here.
"""

from __future__ import annotations

from typing import Any

from robot_rl_drivers.spec import RobotSpec


def _posture(cfg: Any) -> bool:
    """The sim Panda takes a null-space posture; the sim UR5e (six joints) does not."""
    return bool(cfg.sim.arm == "panda")


SPEC = RobotSpec(name="sim", folder="sim", node="sim_node", posture=_posture,
                 doc="the sim arm lives in the MuJoCo world (robot_rl.sim.build_world, the sim node)")
