"""Robot arm backends behind :class:`robot_rl.interfaces.Robot`.

``make_robot(cfg)`` builds the Franka backend that ``robot.hardware.mode`` selects:

* ``torque``: :class:`~robot_rl_drivers.robots.franka_torque.FrankaTorqueRobot`, robot_rl's
  impedance law at 1 kHz through pylibfranka, in a process of its own;
* ``ros2_control``: :class:`~robot_rl_drivers.robots.franka_ros2.FrankaRos2ControlRobot`,
  targets to a ros2_control Cartesian impedance controller over topics (needs a node).

Faults mid-episode surface as :class:`~robot_rl_drivers.robots.faults.RobotFault`; the
contract between backends and the env is written in that module. Hardware libraries
and the node layer are imported only when a backend is built.
"""

from __future__ import annotations

from typing import Any, Optional

from robot_rl.config.hardware import FrankaHardwareConfig, robot_hardware
from robot_rl.config.sections import RobotConfig
from robot_rl.errors import ConfigError
from robot_rl.interfaces import Robot
from robot_rl_drivers.robots.faults import RobotFault


def make_robot(cfg: RobotConfig, *, file: str = "<config>", node: Optional[Any] = None,
               lib: str = "pylibfranka") -> Robot:
    """Connect to the arm ``cfg`` describes; errors are one line (ConfigError, DeviceError).

    ``node`` (a :mod:`robot_rl.ros` node, spun by the caller) is needed by
    ``mode: ros2_control``; ``lib`` names the libfranka binding (tests pass a fake).
    """
    if cfg.backend != "franka":
        raise ConfigError(f"{file}: robot.backend is {cfg.backend!r}; make_robot builds real arms ('franka'), "
                          "the sim and topics backends come from robot_rl.sim and robot_rl.nodes")
    hw = robot_hardware(cfg, file=file)
    assert isinstance(hw, FrankaHardwareConfig)
    if hw.mode == "torque":
        from robot_rl_drivers.robots.franka_torque import FrankaTorqueRobot

        return FrankaTorqueRobot(cfg, hw, lib=lib)
    if node is None:
        raise ConfigError(f"{file}: robot.hardware.mode 'ros2_control' talks over ROS topics; build it with a "
                          "node (the controller node passes its own)")
    from robot_rl_drivers.robots.franka_ros2 import FrankaRos2ControlRobot

    return FrankaRos2ControlRobot(cfg, hw, node, lib=lib)


__all__ = ["RobotFault", "make_robot"]
