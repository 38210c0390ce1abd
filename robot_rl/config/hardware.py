"""Typed settings for real hardware: the ``hardware:`` blocks of robot and camera configs.

``RobotConfig.hardware`` and ``CameraConfig.hardware`` are free-form mappings in
:mod:`robot_rl.config.sections`, because what they hold depends on the backend. This
module gives each backend its dataclass and checks the mapping with the same strict
loader as the rest of the config, so a typo names the file and the dotted key::

    configs/franka.yaml: unknown key 'robot.hardware.gripper.sped' (did you mean 'speed'?)

:func:`camera_settings` and :func:`robot_hardware` return the typed settings for one
section; :func:`check_hardware` checks every section of a loaded :class:`Config` at once
and replaces the mappings by the typed objects (``to_dict`` turns them back into YAML).
Nothing here imports a hardware library.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from robot_rl.config.loader import build, param
from robot_rl.config.ros import check_topic_name
from robot_rl.config.sections import CameraConfig, RobotConfig

_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")


# --------------------------------------------------------------------------- cameras


@dataclass
class RealSenseSettings:
    """An Intel RealSense (D4xx) camera, opened by serial number.

    ``exposure``, ``gain`` and ``white_balance`` are written to the sensor that delivers
    colour as the raw values of librealsense's ``exposure``, ``gain`` and
    ``white_balance`` options (their units and ranges are the device's: see
    ``rs-enumerate-devices -o``); ``null`` leaves the automatic control on. A value
    outside the device's range is a DeviceError at start, naming the camera.
    """

    serial: Union[str, int] = param(doc="serial number in quotes (rs-enumerate-devices -s)")
    exposure: Optional[float] = param(None, min=0.0, max=1_000_000.0, doc="manual exposure; null = auto exposure")
    gain: Optional[float] = param(None, min=0.0, max=10_000.0,
                                  doc="manual gain (only with a manual exposure); null = device default")
    white_balance: Optional[float] = param(None, min=0.0, max=20_000.0, doc="Kelvin; null = auto white balance")
    depth: bool = param(False, doc="also stream depth (Frame.depth, uint16 millimetres)")
    align_depth: bool = param(True, doc="resample depth into the colour camera's pixels")
    depth_width: Optional[int] = param(None, min=8, max=4096, doc="null = the colour width (or 640 when aligned)")
    depth_height: Optional[int] = param(None, min=8, max=4096, doc="null = the colour height (or 480 when aligned)")
    frame_timeout_s: float = param(1.0, min=0.05, max=30.0, doc="no frame for this long means the camera is gone")
    global_time: bool = param(True, doc="ask the device to stamp frames in host time (librealsense global time)")

    def __post_init__(self) -> None:
        if not isinstance(self.serial, str):
            raise ValueError(f"write the serial in quotes, e.g. serial: \"{self.serial}\" "
                             "(YAML reads bare digits as a number and drops leading zeros)")
        if not self.serial.strip():
            raise ValueError("serial must name the camera (rs-enumerate-devices -s lists them)")
        if self.gain is not None and self.exposure is None:
            raise ValueError("gain needs a manual exposure (set exposure too, or leave gain null)")
        if (self.depth_width is None) != (self.depth_height is None):
            raise ValueError("set both depth_width and depth_height, or neither")


@dataclass
class OpenCVSettings:
    """A V4L2 camera (webcam, capture card) read through ``cv2.VideoCapture``.

    ``device`` is an index (``0`` is ``/dev/video0``) or a path; a path that is not a
    ``/dev`` node is opened as a video file, through the same code (useful to replay).
    """

    device: Union[int, str] = param(0, min=0, max=1023,
                                    doc="index or path, e.g. 0 or /dev/v4l/by-id/usb-...-video-index0")
    api: Literal["auto", "v4l2", "any"] = param("auto", doc="auto: V4L2 for indices and /dev nodes, else any")
    fourcc: Optional[str] = param(None, doc="pixel format to ask for, e.g. MJPG (most webcams need it for 1080p30)")
    frame_timeout_s: float = param(1.0, min=0.05, max=30.0, doc="no frame for this long means the camera is gone")

    def __post_init__(self) -> None:
        if isinstance(self.device, int) and self.device < 0:
            raise ValueError(f"device index must be >= 0, got {self.device}")
        if self.fourcc is not None and len(self.fourcc) != 4:
            raise ValueError(f"fourcc must have 4 characters, got {self.fourcc!r}")


@dataclass
class TopicCameraSettings:
    """A camera another driver publishes: robot_rl starts no camera node for it, the actor
    subscribes to ``topic``.

    ``transport: raw`` reads ``sensor_msgs/Image`` (``rgb8``, ``bgr8``, ``rgba8`` or
    ``bgra8``) on ``topic``; ``compressed`` reads ``sensor_msgs/CompressedImage`` on
    ``<topic>/compressed``, image_transport's name for it (a colour JPEG or PNG). The
    images must be the camera's ``width`` x ``height``. realsense2_camera's colour stream
    on ROS 2 Jazzy (``ros2 launch realsense2_camera rs_launch.py``, camera_namespace and
    camera_name both ``camera``) is ``/camera/camera/color/image_raw``. A relative name
    resolves under the session's namespace.
    """

    topic: str = param(doc="the image topic (the base topic for compressed), e.g. /camera/camera/color/image_raw")
    transport: Literal["raw", "compressed"] = param(
        "raw", doc="raw: sensor_msgs/Image on topic; compressed: sensor_msgs/CompressedImage on <topic>/compressed")

    def __post_init__(self) -> None:
        check_topic_name(self.topic, "topic")

    @property
    def subscribed_topic(self) -> str:
        """The topic the actor subscribes to (image_transport's ``/compressed`` appended for compressed)."""
        return self.topic if self.transport == "raw" else f"{self.topic}/compressed"


CAMERA_SETTINGS: dict[str, type] = {"realsense": RealSenseSettings, "opencv": OpenCVSettings,
                                    "topic": TopicCameraSettings}


# --------------------------------------------------------------------------- Franka


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
class LoopProcessSettings:
    """A backend's real-time loop process (the Franka torque loop, the UR loop): its
    scheduling and the statistics it keeps."""

    rt_priority: int = param(80, min=0, max=99, doc="SCHED_FIFO priority of the loop process; 0 leaves it alone")
    cpu: Optional[int] = param(None, min=0, max=4095,
                               doc="pin the loop process to this core (isolate it with isolcpus)")
    late_factor: float = param(1.5, min=1.0, max=10.0, doc="a cycle is late when its period exceeds this many "
                               "control periods (1 ms on a Franka, 2 ms on a UR e-series)")
    stats_window: int = param(10000, min=100, max=1_000_000, doc="cycles kept for the period percentiles")
    first_state_timeout_s: float = param(5.0, min=0.1, max=60.0, doc="start fails if no state arrives in time")


@dataclass
class TorqueLoopSettings(LoopProcessSettings):
    """The 1 kHz torque loop process (mode ``torque``)."""

    realtime: Literal["enforce", "ignore"] = param(
        "enforce", doc="libfranka's real-time check: 'ignore' only for a first look without an RT kernel")


# --------------------------------------------------------------------------- ros2_control


#: ``auto`` in a topic or frame key of :class:`Ros2ControlSettings`: the contract's default.
AUTO = "auto"


@dataclass(frozen=True)
class TopicContract:
    """The topics and frames one family of ros2_control Cartesian controllers speaks (the
    defaults of :class:`Ros2ControlSettings`); every name is checked against the upstream
    controller's source, see docs/real-cell.md "Any ros2_control arm"."""

    target_topic: str
    posture_topic: Optional[str]  # None: the controller takes no null-space posture
    pose_topic: str
    joint_states_topic: str
    wrench_topic: Optional[str]  # None: no F/T topic (the state reports zeros)
    frame_id: str  # the base frame: of the measured pose, of the target sent
    tcp_frame_id: Optional[str]  # the frame of the measured pose's TCP (a wrench in it is rotated to the base)
    wrench_required: bool  # the controller acts on the F/T reading: a silent or saturated sensor is a fault
    joint_prefix_default: bool  # joint_names default to <joint_prefix>1..7 (a Franka)


ROS2_CONTROL_CONTRACTS: dict[str, TopicContract] = {
    # CRISP (utiasDSL/crisp_controllers): the cartesian_impedance_controller subscribes to target_pose,
    # target_joint (the null-space posture) and target_wrench; its pose_broadcaster publishes current_pose.
    "crisp": TopicContract(
        target_topic="/target_pose", posture_topic="/target_joint", pose_topic="/current_pose",
        joint_states_topic="/joint_states", wrench_topic=None, frame_id="base", tcp_frame_id=None,
        wrench_required=False, joint_prefix_default=True),
    # FZI cartesian_controllers (ROS 2): the cartesian_compliance_controller subscribes to
    # <name>/target_frame (ignored unless its frame_id is robot_base_link) and <name>/ft_sensor_wrench (read
    # in ft_sensor_ref_link), and publishes <name>/current_pose (robot_base_link) with
    # solver.publish_state_feedback: true. It has no null-space input.
    "cartesian_controllers": TopicContract(
        target_topic="/cartesian_compliance_controller/target_frame", posture_topic=None,
        pose_topic="/cartesian_compliance_controller/current_pose", joint_states_topic="/joint_states",
        wrench_topic="/cartesian_compliance_controller/ft_sensor_wrench", frame_id="base_link",
        tcp_frame_id="tool0", wrench_required=True, joint_prefix_default=False),
}

_FRAME_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}$")
MAX_JOINTS = 32


@dataclass
class Ros2ControlSettings:
    """An arm whose Cartesian law runs in ros2_control: we publish the target pose and read
    the state the controller side publishes. ``robot.hardware`` for ``robot.backend:
    ros2_control`` (any arm), and ``robot.hardware.ros2_control`` of a Franka in ``mode:
    ros2_control``.

    ``contract`` picks the defaults of every topic and frame (``auto``): ``crisp``, CRISP's
    ``cartesian_impedance_controller`` (target ``/target_pose``, null-space posture
    ``/target_joint``, pose ``/current_pose`` in ``base``, the Franka's joints
    ``fr3_joint1..7``), or ``cartesian_controllers``, FZI's
    ``cartesian_compliance_controller`` (target ``/cartesian_compliance_controller/target_frame``
    in ``base_link``, pose ``.../current_pose``, F/T ``.../ft_sensor_wrench`` in ``tool0``, no
    posture; ``joint_names`` required). Any key may still be set. docs/real-cell.md has both
    side by side.
    """

    contract: Literal["crisp", "cartesian_controllers"] = param(
        "crisp", doc="the topic contract whose names 'auto' stands for")
    joint_names: Optional[list[str]] = param(
        None, doc="the arm's joints in joint states, in the controller's order; null: <joint_prefix>1..7 with "
        "crisp; required with cartesian_controllers (e.g. a UR's six)")
    joint_prefix: str = param("fr3_joint", doc="crisp without joint_names: the joints are <prefix>1..7 "
                                               "(panda_joint for a Panda)")
    target_topic: str = param(AUTO, doc="geometry_msgs/PoseStamped to the controller, in frame_id")
    posture_topic: Optional[str] = param(
        AUTO, doc="sensor_msgs/JointState: the controller's null-space reference posture (set_posture, the joint "
        "reset); null = the controller takes none, set_posture is refused")
    pose_topic: str = param(AUTO, doc="geometry_msgs/PoseStamped of the TCP in frame_id, from the controller side")
    joint_states_topic: str = param(AUTO, doc="sensor_msgs/JointState of the arm")
    wrench_topic: Optional[str] = param(
        AUTO, doc="geometry_msgs/WrenchStamped of the F/T sensor, in frame_id or tcp_frame_id; null = report zeros")
    frame_id: str = param(AUTO, doc="the base frame: of the measured pose and of the target sent "
                                    "(cartesian_controllers: its robot_base_link)")
    tcp_frame_id: Optional[str] = param(
        AUTO, doc="the frame of the measured TCP (cartesian_controllers: end_effector_link); a wrench stamped in "
        "it is rotated into frame_id; null = wrenches must come in frame_id")
    wrench_required: Optional[bool] = param(
        None, doc="no wrench for state_timeout_s is a fault, and none is sent before the first (the controller "
        "acts on the sensor); false: the state keeps the last reading; null = the contract's "
        "(cartesian_controllers: true, crisp: false)")
    force_limit: float = param(150.0, min=1.0, max=5000.0,
                               doc="N: an F/T reading beyond it on any axis is a fault (a saturated sensor)")
    torque_limit: float = param(15.0, min=0.1, max=500.0, doc="Nm, likewise")
    publish_hz: float = param(100.0, min=1.0, max=1000.0, doc="how often the (error-clipped) target is re-sent")
    state_timeout_s: float = param(0.5, min=0.01, max=10.0, doc="no state for this long is a RobotFault")
    first_state_timeout_s: float = param(5.0, min=0.1, max=60.0)
    recovery_commands: list[list[str]] = param(
        default_factory=list, doc="what recover() runs, in order (e.g. a controller switch); none: recover() "
        "only waits for fresh state")
    recovery_timeout_s: float = param(30.0, min=1.0, max=300.0)

    def __post_init__(self) -> None:
        contract = ROS2_CONTROL_CONTRACTS[self.contract]
        for key in ("target_topic", "posture_topic", "pose_topic", "joint_states_topic", "wrench_topic",
                    "frame_id", "tcp_frame_id"):
            if getattr(self, key) == AUTO:
                setattr(self, key, getattr(contract, key))
        if self.wrench_required is None:
            self.wrench_required = contract.wrench_required and self.wrench_topic is not None
        for key in ("target_topic", "posture_topic", "pose_topic", "joint_states_topic", "wrench_topic"):
            if getattr(self, key) is not None:
                check_topic_name(getattr(self, key), key)
        for key in ("frame_id", "tcp_frame_id"):
            value = getattr(self, key)
            if value is not None and not _FRAME_ID.match(value):
                raise ValueError(f"{key} {value[:60]!r} is not a tf frame name (letters, digits, '_', '.', '/', "
                                 "'-'; at most 200 characters)")
        if self.wrench_required and self.wrench_topic is None:
            raise ValueError("wrench_required needs a wrench_topic (the F/T sensor the controller reads)")
        if not self.joint_prefix.strip():
            raise ValueError("joint_prefix must not be empty")
        if self.joint_names is not None:
            names = self.joint_names
            if not 1 <= len(names) <= MAX_JOINTS:
                raise ValueError(f"joint_names must name 1 to {MAX_JOINTS} joints, got {len(names)}")
            bad = [n for n in names if not n.strip() or len(n) > 200]
            if bad:
                raise ValueError(f"joint_names has an empty or overlong name: {bad[0][:60]!r}")
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"joint_names names {twice[0]!r} twice")
        elif not contract.joint_prefix_default:
            raise ValueError(f"joint_names is required with contract {self.contract!r}: the controller's joints, "
                             "in its order (a UR: [shoulder_pan_joint, shoulder_lift_joint, elbow_joint, "
                             "wrist_1_joint, wrist_2_joint, wrist_3_joint])")
        if self.posture_topic is not None and len(self.joints) != 7:
            raise ValueError(f"posture_topic needs a 7-joint arm (robot.controller's joint limits and rest_posture "
                             f"have 7), this one has {len(self.joints)}: set posture_topic: null")

    @property
    def joints(self) -> list[str]:
        """The arm's joint names, in the controller's order."""
        if self.joint_names is not None:
            return list(self.joint_names)
        return [f"{self.joint_prefix}{i}" for i in range(1, 8)]


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


def check_host(host: str) -> str:
    """``host`` if it is an IP address or a host name; ValueError otherwise."""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    if not _HOSTNAME.match(host) or host.replace(".", "").isdigit():
        raise ValueError(f"ip {host!r} is not an IP address or host name")
    return host


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


#: A UR's six joints, as ur_description names them (the UR backend and the sim UR5e publish these).
UR_JOINT_NAMES = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                  "wrist_3_joint")


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

    @property
    def reach_m(self) -> float:
        """How far the model reaches from its base axis (Universal Robots' data sheet)."""
        return UR_REACH_M[self.model]


ROBOT_HARDWARE: dict[str, type] = {"franka": FrankaHardwareConfig, "ur": URHardwareConfig,
                                   "ros2_control": Ros2ControlSettings}


# --------------------------------------------------------------------------- checking


def camera_settings(cfg: CameraConfig, *, file: str = "<config>",
                    where: str = "cameras.<name>.hardware") -> Any:
    """The typed ``hardware`` settings of one camera (the mapping itself for sim)."""
    return _typed(CAMERA_SETTINGS.get(cfg.backend), cfg.hardware, file=file, where=where)


def robot_hardware(cfg: RobotConfig, *, file: str = "<config>", where: str = "robot.hardware") -> Any:
    """The typed ``hardware`` settings of the robot (the mapping itself for sim/topics)."""
    return _typed(ROBOT_HARDWARE.get(cfg.backend), cfg.hardware, file=file, where=where)


def arm_has_posture(cfg: Any) -> bool:
    """Whether the arm a :class:`robot_rl.config.Config` drives has a null-space posture
    (:meth:`robot_rl.interfaces.Robot.set_posture`, the joint reset's way in).

    A 6-DoF arm (the sim UR5e, a UR over RTDE) has none and needs no joint reset; a
    ros2_control arm has one only where its contract has a posture topic. ``topics``
    (another controller node's arm) is taken to have one, as before.
    """
    robot = cfg.robot
    if robot.backend == "sim":
        return cfg.sim.arm == "panda"
    if robot.backend == "ur":
        return False
    hw = robot_hardware(robot)
    if robot.backend == "ros2_control":
        return hw.posture_topic is not None
    if robot.backend == "franka":
        return hw.mode == "torque" or hw.ros2_control.posture_topic is not None
    return True


def check_hardware(cfg: Any, file: str = "<config>") -> None:
    """Check every hardware block of a :class:`robot_rl.config.Config`, in place.

    Each mapping is replaced by its typed settings, so that later code can rely on them.
    Raises :class:`robot_rl.errors.ConfigError` naming ``file`` and the key.
    """
    cfg.robot.hardware = robot_hardware(cfg.robot, file=file)
    for name, cam in cfg.cameras.items():
        cam.hardware = camera_settings(cam, file=file, where=f"cameras.{name}.hardware")


def _typed(cls: type | None, data: Any, *, file: str, where: str) -> Any:
    if cls is None or dataclasses.is_dataclass(data):
        return data
    return build(cls, data, file=file, where=where)
