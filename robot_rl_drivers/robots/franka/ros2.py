"""A Franka driven through a ros2_control Cartesian impedance controller (``mode: ros2_control``).

Here the 1 kHz law runs in ros2_control (CRISP's ``cartesian_impedance_controller``, or
a franka_ros2 one) next to ``franka_hardware``; this backend talks to it over topics
exactly as any ros2_control arm does
(:class:`~robot_rl_drivers.robots.ros2_control.Ros2ControlRobot`, whose docstring has
the topics, the safety rules, the faults and the null-space posture), with the settings
of ``robot.hardware.ros2_control`` (CRISP's topic contract by default, the joints
``<joint_prefix>1..7``). What is the Franka's own:

* the Franka Hand, through libfranka's gripper (``robot.hardware.gripper``, a connection
  of its own), driven by the gripper opening of each command;
* recovery: :meth:`~Ros2ControlRobot.recover` runs franka_ros2's error-recovery action by
  default (:class:`~robot_rl_drivers.robots.franka.settings.FrankaRos2ControlSettings`), since the arm's
  reflexes are not on these topics but stop the state stream.
"""

from __future__ import annotations

import importlib
import logging
import subprocess
from typing import Any, Callable

from robot_rl.config.sections import RobotConfig
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
from robot_rl_drivers.robots.ros2_control.robot import Ros2ControlRobot

log = logging.getLogger("robot_rl_drivers.robots.franka.ros2")


class FrankaRos2ControlRobot(Ros2ControlRobot):
    """See the module docstring. ``lib`` names the libfranka binding (for the Hand); ``run``
    executes recovery commands (tests pass fakes)."""

    def __init__(self, robot_cfg: RobotConfig, hw: FrankaHardwareConfig, node: Any, *,
                 lib: str = "pylibfranka", run: Callable[..., Any] = subprocess.run) -> None:
        super().__init__(robot_cfg, hw.ros2_control, node, run=run, label="Franka (ros2_control)",
                         where="robot.hardware.ros2_control", logger=log)
        self.hw = hw
        self.gripper = None
        if hw.gripper.enabled:
            from robot_rl_drivers.robots.franka.gripper import FrankaGripper

            self.gripper = FrankaGripper(importlib.import_module(lib), hw.ip, hw.gripper, robot_cfg.gripper_max_width)

    def _gripper_fraction(self) -> float:
        return self.gripper.fraction if self.gripper is not None else 1.0

    def _command_gripper(self, opening: float) -> None:
        if self.gripper is not None:
            self.gripper.command(opening)

    def close(self) -> None:
        super().close()
        if self.gripper is not None:
            self.gripper.close()
