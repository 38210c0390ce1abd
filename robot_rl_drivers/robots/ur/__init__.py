"""A UR e-series arm through ur_rtde: ``robot.backend: ur``.

robot_rl's admittance law runs at 500 Hz in a process of its own (:mod:`.robot`,
:mod:`.loop`); a Robotiq gripper on the tool connector is :mod:`.robotiq`; ``robot-rl ur
check`` is :mod:`robot_rl.cli.ur`.
"""

from __future__ import annotations

from robot_rl_drivers.robots.ur.settings import URHardwareConfig
from robot_rl_drivers.spec import RobotSpec

SPEC = RobotSpec(name="ur", folder="ur", settings=URHardwareConfig, factory="robot_rl_drivers.robots.ur.robot:make",
                 check="robot_rl.cli.ur", check_help="check a UR e-series arm's connection, modes and state")
