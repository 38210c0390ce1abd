"""Typed config sections for the robot, controller, cameras, env and task.

Each section is a dataclass whose defaults are sensible for the MuJoCo arm; a task YAML
overrides only what it needs. Later parts of robot_rl (agent, training, learning plane,
nodes, reward, reset) add their own sections next to these in :mod:`robot_rl.config`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

import numpy as np

from robot_rl.config.loader import param

HOME_Q = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
# The Panda's published joint limits (rad) and joint torque limits (Nm).
PANDA_JOINT_LOW = (-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973)
PANDA_JOINT_HIGH = (2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973)
PANDA_TORQUE_LIMITS = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)

ActionDim = Literal["x", "y", "z", "rx", "ry", "rz", "gripper"]


@dataclass
class ControllerConfig:
    """The Cartesian impedance law and its safety limits (see robot_rl.control).

    Every value has a range a torque-controlled arm can live with: ``K * error_clip`` is
    the most spring force any target can command, so both are bounded; damping and
    null-space terms too, since a huge one destabilises the discrete law.
    """

    stiffness: tuple[float, float, float, float, float, float] = param(
        (2000.0, 2000.0, 2000.0, 150.0, 150.0, 150.0), min=0.0, max=(5000.0, 5000.0, 5000.0, 500.0, 500.0, 500.0),
        doc="K: N/m for xyz (at most 5000), Nm/rad for rotation (at most 500)")
    damping: Optional[tuple[float, float, float, float, float, float]] = param(
        (200.0, 200.0, 200.0, 12.0, 12.0, 12.0), min=0.0, max=(500.0, 500.0, 500.0, 50.0, 50.0, 50.0),
        doc="D: Ns/m (at most 500) and Nms/rad (at most 50); null means 2*sqrt(K) (critical for a unit "
            "mass). The default is about critical for the sim arm's task-space inertia at K's default")
    error_clip_mm: tuple[float, float, float] = param((10.0, 10.0, 10.0), min=0.1, max=50.0)
    error_clip_rad: tuple[float, float, float] = param((0.1, 0.1, 0.1), min=0.001, max=0.5)
    max_torque_rate: float = param(1000.0, min=1.0, max=1000.0, doc="Nm/s per joint (libfranka's own limit: 1000)")
    torque_limits: tuple[float, float, float, float, float, float, float] = param(
        PANDA_TORQUE_LIMITS, min=0.0, max=PANDA_TORQUE_LIMITS, doc="Nm per joint, at most the Panda's own limits")
    nullspace_stiffness: float = param(10.0, min=0.0, max=200.0, doc="Nm/rad")
    nullspace_damping: Optional[float] = param(None, min=0.0, max=30.0, doc="Nms/rad; null means 2*sqrt(stiffness)")
    rest_posture: tuple[float, float, float, float, float, float, float] = param(HOME_Q, min=-6.3, max=6.3)
    joint_damping: float = param(0.0, min=0.0, max=10.0, doc="extra joint-space damping, Nms/rad")
    watchdog_s: float = param(0.5, min=0.01, max=2.0, doc="hold the current pose when no target arrives for this long")
    joint_low: tuple[float, float, float, float, float, float, float] = param(
        PANDA_JOINT_LOW, min=-6.3, max=6.3, doc="rad; every null-space posture is clipped into [joint_low, joint_high]")
    joint_high: tuple[float, float, float, float, float, float, float] = param(
        PANDA_JOINT_HIGH, min=-6.3, max=6.3, doc="rad")
    max_posture_stiffness: float = param(
        200.0, min=0.0, max=1000.0, doc="Nm/rad; a posture's null-space stiffness is clipped to this")
    max_target_speed: float = param(
        1.0, min=0.01, max=1.0, doc="m/s: the law's target moves toward a new target no faster (robot_rl.control.slew)")
    max_target_rot_speed: float = param(3.0, min=0.05, max=3.2, doc="rad/s, likewise for orientation")
    max_posture_speed: float = param(
        1.0, min=0.01, max=2.0, doc="rad/s per joint: the null-space posture moves toward a new one no faster")
    max_posture_stiffness_rate: float = param(
        100.0, min=1.0, max=1000.0, doc="Nm/rad per s: the null-space stiffness changes no faster")

    def __post_init__(self) -> None:
        low, high = np.asarray(self.joint_low), np.asarray(self.joint_high)
        if np.any(low >= high):
            raise ValueError("controller.joint_low must be below joint_high for every joint")
        rest = np.asarray(self.rest_posture)
        if np.any(rest < low) or np.any(rest > high):
            raise ValueError(f"controller.rest_posture {list(self.rest_posture)} is outside the joint limits "
                             f"{list(self.joint_low)}..{list(self.joint_high)}")


@dataclass
class AdmittanceConfig:
    """The Cartesian admittance law of arms with a position/velocity interface and a wrist
    force-torque sensor (robot_rl.control.admittance): ``M a = K clip(e) - D v + W``.

    ``K * error_clip`` bounds the force the arm pushes with against a stiff contact, and
    the speed and acceleration limits bound what it commands, so all are bounded here;
    ``1/K`` is the admittance (steady displacement per newton of external force).
    """

    mass: tuple[float, float, float, float, float, float] = param(
        (8.0, 8.0, 8.0, 0.05, 0.05, 0.05), min=(0.1, 0.1, 0.1, 0.005, 0.005, 0.005),
        max=(100.0, 100.0, 100.0, 10.0, 10.0, 10.0),
        doc="M: virtual mass, kg for xyz, kg m^2 for rotation. Pressed on a rigid surface through a stiff "
            "position-servoed arm (the sim UR5e's held peg on its board) the reference chatters when the "
            "damping is under about 130 Ns/m; 8 kg at K's default gives 179 Ns/m of critical damping and "
            "still settles a 5 cm step in about 0.6 s")
    stiffness: tuple[float, float, float, float, float, float] = param(
        (1000.0, 1000.0, 1000.0, 50.0, 50.0, 50.0), min=0.0, max=(5000.0, 5000.0, 5000.0, 500.0, 500.0, 500.0),
        doc="K: N/m for xyz (at most 5000), Nm/rad for rotation (at most 500)")
    damping: Optional[tuple[float, float, float, float, float, float]] = param(
        None, min=0.0, max=(5000.0, 5000.0, 5000.0, 200.0, 200.0, 200.0),
        doc="D: Ns/m and Nms/rad; null means critical damping 2*sqrt(K M)")
    error_clip_mm: tuple[float, float, float] = param(
        (20.0, 20.0, 20.0), min=0.1, max=100.0, doc="mm; K * clip is the most force the arm pushes a contact with")
    error_clip_rad: tuple[float, float, float] = param((0.1, 0.1, 0.1), min=0.001, max=0.5, doc="rad")
    max_speed: float = param(0.5, min=0.001, max=1.0, doc="m/s: the TCP speed commanded, at most")
    max_rot_speed: float = param(1.0, min=0.001, max=3.2, doc="rad/s")
    max_acc: float = param(2.0, min=0.01, max=10.0, doc="m/s^2: the commanded TCP acceleration, at most")
    max_rot_acc: float = param(4.0, min=0.01, max=40.0, doc="rad/s^2")
    tracking_gain: float = param(
        10.0, min=0.0, max=100.0, doc="1/s: the commanded twist's feedback toward the reference pose")
    tracking_clip_mm: float = param(
        20.0, min=1.0, max=200.0, doc="mm: the reference stays this close to the measured TCP (no wind-up)")
    tracking_clip_rad: float = param(0.2, min=0.01, max=1.0, doc="rad, likewise for orientation")
    wrench_filter_hz: float = param(20.0, min=0.5, max=1000.0, doc="cut-off of the F/T reading's low-pass filter")
    force_deadband: float = param(1.0, min=0.0, max=50.0, doc="N: smaller forces (after bias removal) are ignored")
    torque_deadband: float = param(0.1, min=0.0, max=5.0, doc="Nm")
    force_limit: float = param(
        150.0, min=1.0, max=5000.0, doc="N: an F/T reading beyond it on any axis is a fault (saturated sensor)")
    torque_limit: float = param(15.0, min=0.1, max=500.0, doc="Nm, likewise")
    ft_timeout_s: float = param(0.1, min=0.002, max=2.0, doc="no F/T sample for this long is a fault")
    watchdog_s: float = param(0.5, min=0.01, max=2.0, doc="hold the current pose when no target arrives for this long")
    max_target_speed: float = param(
        1.0, min=0.01, max=1.0, doc="m/s: the law's target moves toward a new target no faster (robot_rl.control.slew)")
    max_target_rot_speed: float = param(3.0, min=0.05, max=3.2, doc="rad/s, likewise for orientation")

    def __post_init__(self) -> None:
        if self.damping is None and np.any(np.asarray(self.stiffness) <= 0.0):
            raise ValueError("admittance.stiffness of 0 needs an explicit admittance.damping (critical damping "
                             "of no spring is none)")
        if self.damping is not None and np.any(np.asarray(self.damping) <= 0.0):
            raise ValueError("admittance.damping must be > 0 on every axis (an undamped reference never settles)")


@dataclass
class WorkspaceConfig:
    """The safety box every target is clipped to before the controller sees it, and how far
    outside it the measured TCP may be pushed before the controller faults.

    Orientation limits are per-axis bounds on the rotation vector of the target
    relative to the reset orientation.
    """

    pos_low: tuple[float, float, float] = param((0.30, -0.25, 0.02), min=-2.0, max=2.0, doc="metres, base frame")
    pos_high: tuple[float, float, float] = param((0.70, 0.25, 0.45), min=-2.0, max=2.0, doc="metres, base frame")
    rot_low: tuple[float, float, float] = param((-0.5, -0.5, -1.0), min=-3.2, max=0.0)
    rot_high: tuple[float, float, float] = param((0.5, 0.5, 1.0), min=0.0, max=3.2)
    outside_margin_m: float = param(
        0.05, min=0.005, max=0.5,
        doc="metres: a TCP pushed farther than this outside the box (a collision, a person leaning on the arm) "
            "is a fault: the law stops taking targets and holds the nearest pose in the box until it is back "
            "within half of this and recovered (robot_rl.control.guard)")
    outside_margin_rad: float = param(
        0.35, min=0.02, max=1.5,
        doc="radians: a TCP turned farther than this outside the orientation bounds (rot_low/rot_high, on "
            "the rotation vector) is a fault, as outside_margin_m is for position")

    def __post_init__(self) -> None:
        if np.any(np.asarray(self.pos_low) >= np.asarray(self.pos_high)):
            raise ValueError("workspace.pos_low must be below pos_high on every axis")


@dataclass
class RobotConfig:
    """Which arm backend runs, where it resets to and what box it may move in."""

    # a name in the arm registry (robot_rl_drivers.robots), checked when the config is loaded
    backend: str = "sim"
    reset_pos: tuple[float, float, float] = param((0.5, 0.0, 0.25), min=-2.0, max=2.0, doc="metres")
    reset_rpy: tuple[float, float, float] = param((np.pi, 0.0, 0.0), min=-6.3, max=6.3, doc="rad")
    workspace: WorkspaceConfig = field(default_factory=WorkspaceConfig)
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    admittance: AdmittanceConfig = field(default_factory=AdmittanceConfig)  # arms with a velocity interface
    gripper_max_width: float = param(0.08, min=0.0, max=0.3, doc="metres, fully open")
    hardware: dict[str, Any] = field(default_factory=dict)  # typed by the backend's settings class on load

    def __post_init__(self) -> None:
        low, high = np.asarray(self.workspace.pos_low), np.asarray(self.workspace.pos_high)
        pos = np.asarray(self.reset_pos)
        if np.any(pos < low) or np.any(pos > high):
            raise ValueError(f"reset_pos {list(self.reset_pos)} is outside the workspace box "
                             f"{list(self.workspace.pos_low)}..{list(self.workspace.pos_high)}")


@dataclass
class CameraMount:
    """Where a camera sits: the pose of its optical frame in ``parent`` (a hand-eye calibration).

    The optical frame is ``<name>_color_optical_frame`` (z forward, x right, y down, as
    ``sensor_msgs/CameraInfo`` has it); ``parent`` is the arm's base (``ros.frame_id``) for a
    fixed camera or its TCP (``ros.tcp_frame_id``) for one on the hand. ``quat`` is in ROS's
    ``x, y, z, w`` order, as calibration tools and ``static_transform_publisher`` print it,
    and must be a unit quaternion. The controller node publishes it on ``tf_static``.
    """

    parent: Literal["base", "tcp"] = param(doc="base: fixed in the cell; tcp: moves with the hand")
    xyz: tuple[float, float, float] = param(min=-10.0, max=10.0, doc="metres, the optical frame's origin in parent")
    quat: tuple[float, float, float, float] = param(min=-1.0, max=1.0, doc="x, y, z, w: its orientation in parent")

    def __post_init__(self) -> None:
        norm = float(np.linalg.norm(self.quat))
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(f"quat {list(self.quat)} is not a unit quaternion (norm {norm:.6g}); "
                             "give x, y, z, w with x^2 + y^2 + z^2 + w^2 = 1")

    @property
    def quat_wxyz(self) -> np.ndarray:
        """The orientation in robot_rl's ``(w, x, y, z)`` order, normalised."""
        x, y, z, w = self.quat
        q = np.array([w, x, y, z], dtype=np.float64)
        return q / np.linalg.norm(q)


@dataclass
class CameraConfig:
    """One camera: backend, native size, and the crop/resize the observation uses.

    ``topic``: another driver publishes the images (realsense2_camera, usb_cam, ...) and
    the actor reads them from the topic ``hardware`` names (see
    :class:`robot_rl_drivers.cameras.topic.settings.TopicCameraSettings`); ``width`` and ``height`` are
    then what that driver must publish, and ``fps`` is the driver's business.
    """

    # a name in the camera registry (robot_rl_drivers.cameras), checked when the config is loaded
    backend: str = "sim"
    width: int = param(128, min=8, max=4096)
    height: int = param(128, min=8, max=4096)
    fps: float = param(30.0, min=1.0, max=120.0, doc="frames per second (not used by a topic camera)")
    crop: Optional[tuple[int, int, int, int]] = param(None, min=0, max=4096, doc="x0, y0, x1, y1 in native pixels")
    resize: Optional[tuple[int, int]] = param(None, min=8, max=4096, doc="width, height fed to the policy")
    hardware: dict[str, Any] = field(default_factory=dict)  # typed by the backend's settings class on load
    # where the camera sits, for tf (CameraMount); none: no tf for it (sim cameras: the scene says)
    mount: Optional[CameraMount] = None

    def obs_shape(self) -> tuple[int, int, int]:
        """The (H, W, 3) shape the policy sees after crop and resize."""
        if self.resize is not None:
            return (self.resize[1], self.resize[0], 3)
        if self.crop is not None:
            x0, y0, x1, y1 = self.crop
            return (y1 - y0, x1 - x0, 3)
        return (self.height, self.width, 3)

    def __post_init__(self) -> None:
        if self.crop is not None:
            x0, y0, x1, y1 = self.crop
            if not (x0 < x1 <= self.width and y0 < y1 <= self.height):
                raise ValueError(f"crop {list(self.crop)} does not fit a {self.width}x{self.height} image")


@dataclass
class EnvConfig:
    """RobotEnv and its wrappers."""

    obs_mode: Literal["state", "pixels", "both"] = "state"
    control_hz: float = param(10.0, min=1.0, max=1000.0)
    max_episode_steps: int = param(100, min=1, max=100_000)
    action_scale_pos: float = param(0.02, min=0.0, max=0.2, doc="metres per step at action 1")
    action_scale_rot: float = param(0.1, min=0.0, max=1.0, doc="radians per step at action 1")
    active_dims: list[ActionDim] = field(
        default_factory=lambda: ["x", "y", "z", "rx", "ry", "rz", "gripper"])
    relative_pose: bool = True
    gripper_penalty: float = param(0.0, min=0.0, max=10.0, doc="penalty on steps that toggle the gripper")
    cameras: list[str] = field(default_factory=lambda: ["front", "wrist"])
    # The observation keys the policy sees (null: all of them). ``[state]`` with obs_mode
    # ``both`` lets a reward classifier read the cameras while the agent learns from
    # proprioception only (fast on a CPU).
    policy_keys: Optional[list[str]] = None
    # A registered gymnasium env to learn in instead of the task's robot env (null: the task's env); its
    # observation mapped to robot_rl's keys by gym_obs (null: cameras by name, the rest into 'state'), its
    # actions scaled from [-1, 1] to its bounds (robot_rl.envs.gym_env). gym_kwargs go to gymnasium.make.
    gym_id: Optional[str] = None
    gym_kwargs: dict[str, Any] = field(default_factory=dict)
    gym_obs: Optional[dict[str, list[str]]] = None

    def __post_init__(self) -> None:
        if self.gym_id is not None and not self.gym_id.strip():
            raise ValueError("env.gym_id must name a registered gymnasium env, or be null")
        if self.policy_keys is not None and not self.policy_keys:
            raise ValueError("env.policy_keys must name at least one observation key, or be null")
        if len(set(self.active_dims)) != len(self.active_dims) or not self.active_dims:
            raise ValueError("env.active_dims must name each action dimension at most once, and at least one")


@dataclass
class SimConfig:
    """The MuJoCo world."""

    physics_hz: float = param(500.0, min=500.0, max=10000.0)
    renderer: Literal["egl", "osmesa"] = "egl"
    arm: Literal["panda", "ur5e"] = param(
        "panda", doc="panda: 7 joints, torque-driven, impedance law (robot.controller); ur5e: 6 joints, "
        "position-driven, wrist force-torque sensor, admittance law (robot.admittance)")


@dataclass
class TaskConfig:
    """Which task, and its parameters (checked by the task's own dataclass).

    ``name`` is checked against the task registry (:mod:`robot_rl.tasks`) when the config
    is loaded, and ``params`` typed by the task's dataclass; empty: the registry's first task.
    """

    name: str = ""
    params: dict[str, Any] = field(default_factory=dict)
