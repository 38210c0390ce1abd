"""Build the Franka backend ``robot.hardware.mode`` selects (the SPEC's factory)."""

from __future__ import annotations

from typing import Any, Optional

from robot_rl.config.sections import RobotConfig
from robot_rl.errors import ConfigError
from robot_rl.interfaces import Robot
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig


def make(cfg: RobotConfig, hw: FrankaHardwareConfig, *, file: str = "<config>", node: Optional[Any] = None,
         lib: Optional[str] = None) -> Robot:
    """``mode: torque``: the 1 kHz loop through pylibfranka; ``mode: ros2_control``: a
    controller over topics (needs ``node``)."""
    if hw.mode == "torque":
        from robot_rl_drivers.robots.franka.torque import FrankaTorqueRobot

        return FrankaTorqueRobot(cfg, hw, lib=lib or "pylibfranka")
    if node is None:
        raise ConfigError(f"{file}: robot.hardware.mode 'ros2_control' talks over ROS topics; build it with a "
                          "node (the controller node passes its own)")
    from robot_rl_drivers.robots.franka.ros2 import FrankaRos2ControlRobot

    return FrankaRos2ControlRobot(cfg, hw, node, lib=lib or "pylibfranka")
