"""Robot arm backends behind :class:`robot_rl.interfaces.Robot`.

``make_robot(cfg)`` builds the Franka backend that ``robot.hardware.mode`` selects:

* ``torque``: :class:`~robot_rl_drivers.robots.franka_torque.FrankaTorqueRobot`, robot_rl's
  impedance law at 1 kHz through pylibfranka, in a process of its own;
* ``ros2_control``: :class:`~robot_rl_drivers.robots.franka_ros2.FrankaRos2ControlRobot`,
  targets to a ros2_control Cartesian impedance controller over topics (needs a node).

``robot.backend: ur`` builds :class:`~robot_rl_drivers.robots.ur_robot.URRobot`: a UR
e-series arm driven by robot_rl's admittance law at 500 Hz through ur_rtde, in a process
of its own.

``robot.backend: ros2_control`` builds
:class:`~robot_rl_drivers.robots.ros2_control.Ros2ControlRobot`: any arm whose Cartesian
controller runs in ros2_control (CRISP's or FZI's cartesian_controllers' topic contract),
over topics too (needs a node).

Faults mid-episode surface as :class:`~robot_rl_drivers.robots.faults.RobotFault`; the
contract between backends and the env is written in that module. Hardware libraries
and the node layer are imported only when a backend is built.
"""

from __future__ import annotations

from typing import Any, Optional

from robot_rl.config.hardware import UR_JOINT_NAMES, FrankaHardwareConfig, robot_hardware
from robot_rl.config.sections import RobotConfig
from robot_rl.errors import ConfigError
from robot_rl.interfaces import Robot
from robot_rl_drivers.robots.faults import RobotFault


def make_robot(cfg: RobotConfig, *, file: str = "<config>", node: Optional[Any] = None,
               lib: Optional[str] = None) -> Robot:
    """Connect to the arm ``cfg`` describes; errors are one line (ConfigError, DeviceError).

    ``node`` (a :mod:`robot_rl.ros` node, spun by the caller) is needed by
    ``mode: ros2_control``; ``lib`` names the hardware library to import, None for the
    backend's own (``pylibfranka``, ``ur_rtde``; tests pass a fake).
    """
    if cfg.backend == "ur":
        from robot_rl_drivers.robots.ur_robot import URRobot, check_reach

        hw = robot_hardware(cfg, file=file)
        check_reach(cfg, hw, file)
        return URRobot(cfg, hw, lib=lib or "ur_rtde")
    if cfg.backend == "ros2_control":
        if node is None:
            raise ConfigError(f"{file}: robot.backend 'ros2_control' talks over ROS topics; build it with a node "
                              "(the controller node passes its own)")
        from robot_rl_drivers.robots.ros2_control import Ros2ControlRobot

        return Ros2ControlRobot(cfg, robot_hardware(cfg, file=file), node)
    if cfg.backend != "franka":
        raise ConfigError(f"{file}: robot.backend is {cfg.backend!r}; make_robot builds real arms ('franka', 'ur', "
                          "'ros2_control'), "
                          "the sim and topics backends come from robot_rl.sim and robot_rl.nodes")
    hw = robot_hardware(cfg, file=file)
    assert isinstance(hw, FrankaHardwareConfig)
    if hw.mode == "torque":
        from robot_rl_drivers.robots.franka_torque import FrankaTorqueRobot

        return FrankaTorqueRobot(cfg, hw, lib=lib or "pylibfranka")
    if node is None:
        raise ConfigError(f"{file}: robot.hardware.mode 'ros2_control' talks over ROS topics; build it with a "
                          "node (the controller node passes its own)")
    from robot_rl_drivers.robots.franka_ros2 import FrankaRos2ControlRobot

    return FrankaRos2ControlRobot(cfg, hw, node, lib=lib or "pylibfranka")


def arm_joint_names(cfg: RobotConfig, default_prefix: str = "fr3_joint", *, file: str = "<config>") -> list[str]:
    """The arm's joint names as the controller node publishes them: a ros2_control arm's
    configured joints, a UR's as ur_description names them, else ``<default_prefix>1..7`` (a Franka)."""
    if cfg.backend == "ros2_control":
        return robot_hardware(cfg, file=file).joints
    if cfg.backend == "ur":
        return list(UR_JOINT_NAMES)
    return [f"{default_prefix}{i}" for i in range(1, 8)]


__all__ = ["RobotFault", "arm_joint_names", "make_robot"]
