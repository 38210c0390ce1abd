"""``robot.hardware`` of ``robot.backend: ur``: a UR e-series arm through ur_rtde, and
the Robotiq gripper on its tool connector."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from robot_rl.arms import UR_JOINT_NAMES
from robot_rl.config.loader import param
from robot_rl_drivers.robots.settings import LoopProcessSettings, check_host

# --------------------------------------------------------------------------- UR e-series

# Reach (m, from the base axis to the tool flange) of each model, from Universal Robots' data sheets.
UR_REACH_M: dict[str, float] = {"ur3e": 0.50, "ur5e": 0.85, "ur10e": 1.30, "ur16e": 0.90, "ur20": 1.75, "ur30": 1.30}


@dataclass
class RobotiqSettings:
    """A Robotiq 2F gripper (2F-85, 2F-140) on the UR's tool connector, driven through the
    Robotiq URCap's socket on the UR (port 63352; the URCap must be installed and the
    gripper set up in it).

    ``binary``: an opening fraction below ``threshold`` closes with ``force`` until the
    fingers stop (on an object or fully closed), anything else opens fully; ``continuous``:
    the fingers go to the position the fraction maps to. Positions are the gripper's
    register values, 0..255; ``open_position``/``closed_position`` are the ends a fraction
    of 1 and 0 map to (the gripper's own calibration leaves them at 0 and 255 or near).
    """

    enabled: bool = param(False, doc="true: a Robotiq gripper is on the tool connector")
    port: int = param(63352, min=1, max=65535, doc="the Robotiq URCap's socket on the UR")
    mode: Literal["binary", "continuous"] = "binary"
    threshold: float = param(0.5, min=0.0, max=1.0)
    speed: int = param(255, min=0, max=255, doc="finger speed register, 0 slowest .. 255 fastest")
    force: int = param(100, min=0, max=255, doc="grip force register, 0 weakest .. 255 strongest")
    open_position: int = param(0, min=0, max=255, doc="position register of a fully open gripper")
    closed_position: int = param(255, min=0, max=255, doc="position register of a fully closed gripper")
    deadband: float = param(0.02, min=0.0, max=1.0, doc="continuous mode: ignore changes smaller than this fraction")
    state_hz: float = param(20.0, min=1.0, max=100.0, doc="how often the finger position is read")
    activation_timeout_s: float = param(5.0, min=0.5, max=30.0, doc="activating the gripper must end within this")
    socket_timeout_s: float = param(2.0, min=0.1, max=30.0, doc="a request the URCap does not answer in time fails")

    def __post_init__(self) -> None:
        if self.open_position >= self.closed_position:
            raise ValueError(f"open_position ({self.open_position}) must be below closed_position "
                             f"({self.closed_position}): a Robotiq closes toward 255")


@dataclass
class URRecoverySettings:
    """What ``recover()`` does after the UR stopped itself.

    A protective stop (a collision, a joint or speed limit) can be unlocked from robot_rl
    through the UR's dashboard server, but the UR refuses to unlock it within 5 s of the
    stop. Every other stop (emergency stop, safeguard stop, a fault, power off, local
    control) needs a person at the robot.
    """

    auto_unlock: bool = param(True, doc="unlock a protective stop from robot_rl once the UR allows it; false: a "
                                        "person unlocks it on the teach pendant")
    unlock_delay_s: float = param(5.0, min=0.0, max=60.0, doc="wait this long after a protective stop before "
                                  "unlocking it (the UR refuses earlier than 5 s; a refusal is retried)")
    timeout_s: float = param(30.0, min=1.0, max=300.0, doc="recover() gives up (and asks a person) after this long")


@dataclass
class URHardwareConfig:
    """``robot.hardware`` for ``robot.backend: ur``: a UR e-series arm through ur_rtde.

    robot_rl's Cartesian admittance law (``robot.admittance``) runs at ``rate_hz`` in a
    process of its own and sends the arm a TCP twist every cycle (``command: speedl``) or
    the compliant reference pose (``command: servol``). The UR must be in Remote Control
    (teach pendant, top right) with nothing else running a program on it.
    """

    ip: str = param(doc="the UR's address (Settings > System > Network on the teach pendant)")
    model: Literal["ur3e", "ur5e", "ur10e", "ur16e", "ur20", "ur30"] = param(
        "ur5e", doc="which arm: the safety box must lie within its reach")
    command: Literal["speedl", "servol"] = param(
        "speedl", doc="speedl: the law's twist each cycle; servol: its compliant reference pose each cycle")
    rate_hz: float = param(500.0, min=50.0, max=500.0, doc="control rate; an e-series UR runs RTDE at 500 Hz")
    connect_timeout_s: float = param(10.0, min=0.5, max=120.0, doc="a UR that does not answer in time is an error")
    state_timeout_s: float = param(
        0.05, min=0.004, max=2.0, doc="no new RTDE sample for this long (the UR's clock stands still) is a lost "
                                      "connection")
    rtde_watchdog_hz: float = param(
        20.0, min=0.0, max=250.0, doc="the UR stops the control script when the loop's commands come less often "
                                      "than this (the arm stops if the loop process dies); 0 disables it")
    stop_acc: float = param(3.0, min=0.1, max=20.0, doc="m/s^2: the deceleration when the loop stops the arm")
    servo_lookahead_s: float = param(0.1, min=0.03, max=0.2, doc="servol: the UR's lookahead time")
    servo_gain: float = param(300.0, min=100.0, max=2000.0, doc="servol: the UR's proportional gain")
    zero_ft_on_start: bool = param(True, doc="zero the wrist force-torque sensor when a control session starts "
                                             "(the arm is at rest then)")
    ft_stale_check: bool = param(True, doc="an F/T reading that repeats the last one exactly is a stopped sensor "
                                           "(its noise never repeats); false on URSim, whose sensor reads constant 0")
    tcp_offset: Optional[tuple[float, float, float, float, float, float]] = param(
        None, min=(-0.5, -0.5, -0.5, -3.2, -3.2, -3.2), max=(0.5, 0.5, 0.5, 3.2, 3.2, 3.2),
        doc="the TCP in the flange frame, x y z (m) rx ry rz (rotation vector), set on connect; null keeps the "
            "TCP configured on the teach pendant")
    loop: LoopProcessSettings = field(default_factory=LoopProcessSettings)
    gripper: RobotiqSettings = field(default_factory=RobotiqSettings)
    recovery: URRecoverySettings = field(default_factory=URRecoverySettings)

    def __post_init__(self) -> None:
        check_host(self.ip)
        if self.rtde_watchdog_hz >= self.rate_hz / 2.0:
            raise ValueError(f"rtde_watchdog_hz ({self.rtde_watchdog_hz:g}) must be below half of rate_hz "
                             f"({self.rate_hz:g}), or one late cycle stops the arm")
        if self.state_timeout_s < 2.0 / self.rate_hz:
            raise ValueError(f"state_timeout_s ({self.state_timeout_s:g}) must cover at least two control periods "
                             f"(2 / rate_hz = {2.0 / self.rate_hz:g} s)")

    #: A UR has no null-space posture (six joints) and needs no joint reset.
    has_posture = False

    def arm_joints(self, default_prefix: str = "") -> list[str]:
        """The six joints as ur_description names them (``default_prefix`` does not apply)."""
        return list(UR_JOINT_NAMES)

    @property
    def reach_m(self) -> float:
        """How far the model reaches from its base axis (Universal Robots' data sheet)."""
        return UR_REACH_M[self.model]
