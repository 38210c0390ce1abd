"""``robot.hardware`` of ``robot.backend: franka``: the connection, the gripper, the
collision thresholds, the 1 kHz torque loop and the ros2_control mode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from robot_rl.config.loader import param
from robot_rl_drivers.robots.ros2_control.settings import Ros2ControlSettings
from robot_rl_drivers.robots.settings import LoopProcessSettings, check_host


@dataclass
class FrankaGripperSettings:
    """The Franka Hand, driven through libfranka's Gripper (a connection of its own).

    ``binary``: an opening fraction below ``threshold`` grasps (closes with ``force``
    until the fingers stop), anything else opens fully; this is what grasping policies
    want. ``continuous``: the fingers move to ``fraction * width`` without force control.
    """

    enabled: bool = True
    mode: Literal["binary", "continuous"] = "binary"
    threshold: float = param(0.5, min=0.0, max=1.0)
    speed: float = param(0.1, min=0.001, max=0.2, doc="m/s")
    force: float = param(20.0, min=1.0, max=70.0, doc="N, grasp force")
    epsilon_inner: float = param(0.005, min=0.0, max=0.1, doc="m; a grasp narrower than asked by more fails")
    epsilon_outer: float = param(0.08, min=0.0, max=0.1, doc="m; a grasp wider than asked by more fails")
    deadband: float = param(0.02, min=0.0, max=1.0, doc="continuous mode: ignore changes smaller than this fraction")
    homing: bool = param(False, doc="home the fingers on start (after a power cycle)")
    state_hz: float = param(20.0, min=1.0, max=200.0, doc="how often the finger width is read")


@dataclass
class FrankaCollisionSettings:
    """libfranka ``set_collision_behavior``: contact thresholds flag contact, collision
    thresholds trigger a reflex (the arm stops; see :meth:`recover`). Raise with care."""

    contact_torque: tuple[float, float, float, float, float, float, float] = param(
        (20.0, 20.0, 18.0, 18.0, 16.0, 14.0, 12.0), min=0.0, max=100.0, doc="Nm per joint")
    collision_torque: tuple[float, float, float, float, float, float, float] = param(
        (20.0, 20.0, 18.0, 18.0, 16.0, 14.0, 12.0), min=0.0, max=100.0, doc="Nm per joint")
    contact_force: tuple[float, float, float, float, float, float] = param(
        (20.0, 20.0, 20.0, 25.0, 25.0, 25.0), min=0.0, max=100.0, doc="N, Nm at the TCP")
    collision_force: tuple[float, float, float, float, float, float] = param(
        (20.0, 20.0, 20.0, 25.0, 25.0, 25.0), min=0.0, max=100.0, doc="N, Nm at the TCP")

    def __post_init__(self) -> None:
        for low, high, what in ((self.contact_torque, self.collision_torque, "torque"),
                                (self.contact_force, self.collision_force, "force")):
            if any(lo > hi for lo, hi in zip(low, high)):
                raise ValueError(f"contact_{what} must not exceed collision_{what} on any axis")


@dataclass
class TorqueLoopSettings(LoopProcessSettings):
    """The 1 kHz torque loop process (mode ``torque``)."""

    realtime: Literal["enforce", "ignore"] = param(
        "enforce", doc="libfranka's real-time check: 'ignore' only for a first look without an RT kernel")


def _franka_error_recovery() -> list[list[str]]:
    return [["ros2", "action", "send_goal", "/action_server/error_recovery", "franka_msgs/action/ErrorRecovery", "{}"]]


@dataclass
class FrankaRos2ControlSettings(Ros2ControlSettings):
    """``robot.hardware.ros2_control`` of a Franka in ``mode: ros2_control``: a Cartesian
    impedance controller in ros2_control (CRISP's ``cartesian_impedance_controller``, or a
    franka_ros2 one) does the 1 kHz work. As :class:`Ros2ControlSettings`, except that
    recovery runs franka_ros2's error-recovery action by default."""

    recovery_commands: list[list[str]] = param(
        default_factory=_franka_error_recovery,
        doc="what recover() runs, in order (franka_ros2's error recovery; add a controller switch if yours needs it)")


@dataclass
class FrankaHardwareConfig:
    """``robot.hardware`` for ``robot.backend: franka``.

    ``mode: torque`` runs robot_rl's own impedance law at 1 kHz through pylibfranka;
    ``mode: ros2_control`` delegates the law to a ros2_control controller.
    """

    ip: str = param(doc="the robot's FCI address (the arm's control box, not the Desk pilot)")
    mode: Literal["torque", "ros2_control"] = "torque"
    connect_timeout_s: float = param(5.0, min=0.1, max=120.0, doc="a robot that does not answer in time is an error")
    gripper: FrankaGripperSettings = field(default_factory=FrankaGripperSettings)
    collision: FrankaCollisionSettings = field(default_factory=FrankaCollisionSettings)
    loop: TorqueLoopSettings = field(default_factory=TorqueLoopSettings)
    ros2_control: FrankaRos2ControlSettings = field(default_factory=FrankaRos2ControlSettings)

    def __post_init__(self) -> None:
        check_host(self.ip)

    @property
    def has_posture(self) -> bool:
        """The torque loop takes a null-space posture; a ros2_control controller only with a posture topic."""
        return self.mode == "torque" or self.ros2_control.posture_topic is not None

    def arm_joints(self, default_prefix: str = "fr3_joint") -> list[str]:
        """The seven joints as the controller node publishes them: ``<default_prefix>1..7``."""
        return [f"{default_prefix}{i}" for i in range(1, 8)]
