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
class TorqueLoopSettings:
    """The 1 kHz torque loop process (mode ``torque``)."""

    realtime: Literal["enforce", "ignore"] = param(
        "enforce", doc="libfranka's real-time check: 'ignore' only for a first look without an RT kernel")
    rt_priority: int = param(80, min=0, max=99, doc="SCHED_FIFO priority of the loop process; 0 leaves it alone")
    cpu: Optional[int] = param(None, min=0, max=4095,
                               doc="pin the loop process to this core (isolate it with isolcpus)")
    late_factor: float = param(1.5, min=1.0, max=10.0, doc="a cycle is late when its period exceeds this many ms")
    stats_window: int = param(10000, min=100, max=1_000_000, doc="cycles kept for the period percentiles")
    first_state_timeout_s: float = param(5.0, min=0.1, max=60.0, doc="start fails if no state arrives in time")


@dataclass
class Ros2ControlSettings:
    """Mode ``ros2_control``: a Cartesian impedance controller running in ros2_control
    (CRISP's ``cartesian_impedance_controller``, or a franka_ros2 one) does the 1 kHz
    work; we publish its target pose and read the state it publishes. The defaults are
    CRISP's topics (``target_pose`` and ``target_joint``, the null-space posture, in;
    ``current_pose`` from its pose broadcaster)."""

    target_topic: str = param("/target_pose", doc="geometry_msgs/PoseStamped to the controller")
    posture_topic: Optional[str] = param(
        "/target_joint", doc="sensor_msgs/JointState: the controller's null-space reference posture "
        "(set_posture, the joint reset); null = the controller takes none, set_posture is refused")
    pose_topic: str = param("/current_pose", doc="geometry_msgs/PoseStamped of the TCP, from the robot")
    joint_states_topic: str = "/joint_states"
    wrench_topic: Optional[str] = param(None, doc="geometry_msgs/WrenchStamped at the TCP; null = report zeros")
    frame_id: str = param("base", doc="frame of the published target (the controller's base frame)")
    joint_prefix: str = param("fr3_joint", doc="arm joints are <prefix>1..7 in joint states (panda_joint for a Panda)")
    publish_hz: float = param(100.0, min=1.0, max=1000.0, doc="how often the (error-clipped) target is re-sent")
    state_timeout_s: float = param(0.5, min=0.01, max=10.0, doc="no state for this long is a RobotFault")
    first_state_timeout_s: float = param(5.0, min=0.1, max=60.0)
    recovery_commands: list[list[str]] = param(
        default_factory=lambda: [["ros2", "action", "send_goal", "/action_server/error_recovery",
                                  "franka_msgs/action/ErrorRecovery", "{}"]],
        doc="what recover() runs, in order (franka_ros2's error recovery; add a controller switch if yours needs it)")
    recovery_timeout_s: float = param(30.0, min=1.0, max=300.0)


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
    ros2_control: Ros2ControlSettings = field(default_factory=Ros2ControlSettings)

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


ROBOT_HARDWARE: dict[str, type] = {"franka": FrankaHardwareConfig}


# --------------------------------------------------------------------------- checking


def camera_settings(cfg: CameraConfig, *, file: str = "<config>",
                    where: str = "cameras.<name>.hardware") -> Any:
    """The typed ``hardware`` settings of one camera (the mapping itself for sim)."""
    return _typed(CAMERA_SETTINGS.get(cfg.backend), cfg.hardware, file=file, where=where)


def robot_hardware(cfg: RobotConfig, *, file: str = "<config>", where: str = "robot.hardware") -> Any:
    """The typed ``hardware`` settings of the robot (the mapping itself for sim/topics)."""
    return _typed(ROBOT_HARDWARE.get(cfg.backend), cfg.hardware, file=file, where=where)


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
