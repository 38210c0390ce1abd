"""A Franka (FR3, Panda) arm: ``robot.backend: franka``.

``mode: torque`` runs robot_rl's impedance law at 1 kHz through pylibfranka in a process
of its own (:mod:`.torque`, :mod:`.loop`); ``mode: ros2_control`` sends targets to a
ros2_control Cartesian impedance controller over topics (:mod:`.ros2`). The gripper is
:mod:`.gripper`; ``robot-rl franka check|recover`` is :mod:`robot_rl.cli.franka`.
"""

from __future__ import annotations

from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
from robot_rl_drivers.spec import RobotSpec

SPEC = RobotSpec(name="franka", folder="franka", settings=FrankaHardwareConfig,
                 factory="robot_rl_drivers.robots.franka.factory:make", check="robot_rl.cli.franka",
                 check_help="check a Franka arm's connection and state, or recover it after a reflex")
