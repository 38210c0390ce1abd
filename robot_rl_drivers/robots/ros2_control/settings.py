"""``robot.hardware`` of ``robot.backend: ros2_control``: the topic contracts of the
Cartesian controllers in ros2_control that robot_rl speaks, and the settings that pick one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Optional

from robot_rl.config.loader import param
from robot_rl.config.ros import check_topic_name

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
    def has_posture(self) -> bool:
        """Whether the controller takes a null-space posture (its contract has a posture topic)."""
        return self.posture_topic is not None

    def arm_joints(self, default_prefix: str = "") -> list[str]:
        """The configured joints (``default_prefix`` does not apply: :attr:`joints` says)."""
        return self.joints

    @property
    def joints(self) -> list[str]:
        """The arm's joint names, in the controller's order."""
        if self.joint_names is not None:
            return list(self.joint_names)
        return [f"{self.joint_prefix}{i}" for i in range(1, 8)]
