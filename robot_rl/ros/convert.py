"""Conversions between robot_rl's core values and ROS messages, for the nodes.

Conventions (see :mod:`robot_rl.interfaces`): quaternions are ``(w, x, y, z)`` in
robot_rl and named fields ``x, y, z, w`` in ROS, and this module is the one place where
the order changes; twists and wrenches are ``(linear xyz, angular xyz)``; images are
``uint8 (H, W, 3)`` RGB and travel as ``sensor_msgs/Image`` with encoding ``rgb8``;
times are float seconds and travel as ``builtin_interfaces/Time``.

Message classes come from :mod:`robot_rl.ros.msgs`, so these helpers build rclpy's
messages under the rclpy backend and ours under DDS. Every ``*_from_msg`` function checks
what it receives and raises :class:`robot_rl.ros.errors.MessageError` for a message it
cannot use (wrong type, wrong encoding, sizes that do not add up, NaN or infinity); the
node layer drops such a message with a warning and counts it.

Joint states carry the arm joints and, as a last entry named ``gripper``, the gripper's
opening fraction (0 closed .. 1 open), so ``/joint_states`` holds the whole robot state
that is not a TCP quantity.
"""

from __future__ import annotations

import array
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from robot_rl.control.transforms import quat_normalize
from robot_rl.interfaces import RobotState
from robot_rl.ros import msgs
from robot_rl.ros.errors import MessageError

GRIPPER_JOINT = "gripper"
_RGB_ENCODINGS = {"rgb8": False, "bgr8": True}  # encoding -> channels reversed


# -- time -------------------------------------------------------------------------------


def stamp_to_msg(t: float) -> Any:
    """Float seconds -> ``builtin_interfaces/Time`` (nanosecond resolution, carry handled)."""
    if not math.isfinite(t):
        raise ValueError(f"cannot stamp a message with time {t}")
    sec = math.floor(t)
    nanosec = int(round((t - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return msgs.Time(sec=int(sec), nanosec=nanosec)


def stamp_from_msg(stamp: Any) -> float:
    """``builtin_interfaces/Time`` -> float seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def header(t: float, frame_id: str) -> Any:
    return msgs.Header(stamp=stamp_to_msg(t), frame_id=frame_id)


# -- images -----------------------------------------------------------------------------


def image_to_msg(image: np.ndarray, t: float, frame_id: str) -> Any:
    """``uint8 (H, W, 3)`` RGB -> ``sensor_msgs/Image`` rgb8 (one copy of the pixels)."""
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected a uint8 (H, W, 3) RGB image, got {image.dtype} {image.shape}")
    height, width = image.shape[:2]
    data = array.array("B")  # rclpy's field type: stored as is, no per-byte checks
    data.frombytes(np.ascontiguousarray(image).data)
    return msgs.Image(header=header(t, frame_id), height=height, width=width, encoding="rgb8",
                      is_bigendian=0, step=width * 3, data=data)


def image_from_msg(msg: Any) -> tuple[np.ndarray, float]:
    """``sensor_msgs/Image`` (rgb8 or bgr8) -> (``uint8 (H, W, 3)`` RGB, stamp seconds).

    The array is read-only and shares memory with the message when the rows are packed.
    """
    _expect(msg, "Image")
    if msg.encoding not in _RGB_ENCODINGS:
        raise MessageError(f"image encoding {msg.encoding!r} is not supported (rgb8 or bgr8)")
    height, width, step = msg.height, msg.width, msg.step
    if height == 0 or width == 0:
        raise MessageError(f"empty image {width}x{height}")
    if step < width * 3:
        raise MessageError(f"image step {step} is smaller than width*3 = {width * 3}")
    data = np.frombuffer(msg.data, dtype=np.uint8)
    if data.size != step * height:
        raise MessageError(f"image data has {data.size} bytes, expected step*height = {step * height}")
    rows = data.reshape(height, step)
    image = rows[:, :width * 3].reshape(height, width, 3)
    if _RGB_ENCODINGS[msg.encoding]:
        image = image[:, :, ::-1]
    image.flags.writeable = False
    return image, stamp_from_msg(msg.header.stamp)


def camera_info_msg(width: int, height: int, k: np.ndarray, t: float, frame_id: str,
                    d: Sequence[float] = (0.0, 0.0, 0.0, 0.0, 0.0)) -> Any:
    """``sensor_msgs/CameraInfo`` for an unrectified pinhole camera with intrinsics ``k`` (3x3)."""
    k = np.asarray(k, dtype=np.float64).reshape(3, 3)
    p = np.zeros((3, 4))
    p[:, :3] = k
    return msgs.CameraInfo(header=header(t, frame_id), height=int(height), width=int(width),
                           distortion_model="plumb_bob", d=[float(v) for v in d], k=k.ravel(),
                           r=np.eye(3).ravel(), p=p.ravel())


# -- poses, twists, wrenches ------------------------------------------------------------


def pose_msg(pos: np.ndarray, quat_wxyz: np.ndarray) -> Any:
    """Position and ``(w, x, y, z)`` quaternion -> ``geometry_msgs/Pose``."""
    w, x, y, z = (float(v) for v in quat_wxyz)
    px, py, pz = (float(v) for v in pos)
    return msgs.Pose(position=msgs.Point(x=px, y=py, z=pz), orientation=msgs.Quaternion(x=x, y=y, z=z, w=w))


def pose_stamped_msg(pos: np.ndarray, quat_wxyz: np.ndarray, t: float, frame_id: str) -> Any:
    return msgs.PoseStamped(header=header(t, frame_id), pose=pose_msg(pos, quat_wxyz))


def pose_from_msg(msg: Any) -> tuple[np.ndarray, np.ndarray]:
    """``Pose`` or ``PoseStamped`` -> (position (3,), unit quaternion ``(w, x, y, z)``)."""
    _expect(msg, "Pose", "PoseStamped")
    pose = msg.pose if hasattr(msg, "pose") else msg
    p, o = pose.position, pose.orientation
    pos = _finite(np.array([p.x, p.y, p.z]), "pose position")
    quat = _finite(np.array([o.w, o.x, o.y, o.z]), "pose orientation")
    try:
        return pos, quat_normalize(quat, min_norm=1e-6)  # a finite 1e200 quaternion normalises too
    except ValueError:
        raise MessageError("pose orientation is a zero quaternion") from None


def _vector3(v: np.ndarray) -> Any:
    return msgs.Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def twist_msg(twist: np.ndarray) -> Any:
    """``(vx, vy, vz, wx, wy, wz)`` -> ``geometry_msgs/Twist``."""
    twist = np.asarray(twist, dtype=np.float64).reshape(6)
    return msgs.Twist(linear=_vector3(twist[:3]), angular=_vector3(twist[3:]))


def twist_stamped_msg(twist: np.ndarray, t: float, frame_id: str) -> Any:
    return msgs.TwistStamped(header=header(t, frame_id), twist=twist_msg(twist))


def twist_from_msg(msg: Any) -> np.ndarray:
    """``Twist`` or ``TwistStamped`` -> ``(vx, vy, vz, wx, wy, wz)``."""
    _expect(msg, "Twist", "TwistStamped")
    tw = msg.twist if hasattr(msg, "twist") else msg
    lin, ang = tw.linear, tw.angular
    return _finite(np.array([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]), "twist")


def wrench_msg(wrench: np.ndarray) -> Any:
    """``(fx, fy, fz, tx, ty, tz)`` -> ``geometry_msgs/Wrench``."""
    wrench = np.asarray(wrench, dtype=np.float64).reshape(6)
    return msgs.Wrench(force=_vector3(wrench[:3]), torque=_vector3(wrench[3:]))


def wrench_stamped_msg(wrench: np.ndarray, t: float, frame_id: str) -> Any:
    return msgs.WrenchStamped(header=header(t, frame_id), wrench=wrench_msg(wrench))


def wrench_from_msg(msg: Any) -> np.ndarray:
    """``Wrench`` or ``WrenchStamped`` -> ``(fx, fy, fz, tx, ty, tz)``."""
    _expect(msg, "Wrench", "WrenchStamped")
    wr = msg.wrench if hasattr(msg, "wrench") else msg
    f, tq = wr.force, wr.torque
    return _finite(np.array([f.x, f.y, f.z, tq.x, tq.y, tq.z]), "wrench")


# -- joints, gripper, robot state -------------------------------------------------------


def joint_state_msg(names: Sequence[str], q: np.ndarray, dq: np.ndarray, effort: np.ndarray, t: float) -> Any:
    """``sensor_msgs/JointState`` with one entry per name (all three arrays the same length)."""
    n = len(names)
    arrays = [np.asarray(a, dtype=np.float64).reshape(-1) for a in (q, dq, effort)]
    if any(a.size != n for a in arrays):
        raise ValueError(f"joint_state_msg: {n} names but arrays of sizes {[a.size for a in arrays]}")
    return msgs.JointState(header=header(t, ""), name=list(names), position=_array("d", arrays[0]),
                           velocity=_array("d", arrays[1]), effort=_array("d", arrays[2]))


def joint_state_from_msg(msg: Any) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """-> (names, position, velocity, effort); velocity/effort are zeros when not sent."""
    _expect(msg, "JointState")
    names = list(msg.name)
    n = len(names)
    pos = np.asarray(msg.position, dtype=np.float64)
    if pos.size != n:
        raise MessageError(f"joint state has {n} names but {pos.size} positions")
    out = [pos]
    for label, values in (("velocities", msg.velocity), ("efforts", msg.effort)):
        arr = np.asarray(values, dtype=np.float64)
        if arr.size == 0:
            arr = np.zeros(n)
        elif arr.size != n:
            raise MessageError(f"joint state has {n} names but {arr.size} {label}")
        out.append(arr)
    return names, _finite(out[0], "joint positions"), _finite(out[1], "joint velocities"), \
        _finite(out[2], "joint efforts")


def posture_msg(names: Sequence[str], q: np.ndarray | None, stiffness: float | None, t: float) -> Any:
    """``/robot/posture`` (see :mod:`robot_rl.nodes.topics`): a null-space posture, or the
    configured one back (``q`` None: no names, no positions)."""
    if q is None:
        return msgs.JointState(header=header(t, ""))
    q = np.asarray(q, dtype=np.float64).reshape(-1)
    if q.size != len(names):
        raise ValueError(f"posture_msg: {len(names)} names but {q.size} joint angles")
    effort = np.zeros(0) if stiffness is None else np.full(q.size, float(stiffness))
    return msgs.JointState(header=header(t, ""), name=list(names), position=_array("d", q),
                           effort=_array("d", effort))


def posture_from_msg(msg: Any, joints: int = 7) -> tuple[np.ndarray | None, float | None]:
    """-> (posture or None for "the configured one", stiffness or None for "the configured one")."""
    _expect(msg, "JointState")
    if len(msg.position) == 0:
        return None, None
    if len(msg.position) != joints:
        raise MessageError(f"a posture has {joints} joint angles, got {len(msg.position)}")
    q = _finite(np.asarray(msg.position, dtype=np.float64), "posture joint angles")
    effort = np.asarray(msg.effort, dtype=np.float64)
    if effort.size == 0:
        return q, None
    effort = _finite(effort, "posture stiffness")
    if effort.size != joints or np.ptp(effort) > 0.0 or effort[0] < 0.0:
        raise MessageError(f"a posture's effort is one null-space stiffness >= 0 for all {joints} joints, "
                           f"got {effort.tolist()}")
    return q, float(effort[0])


def gripper_command_msg(opening: float) -> Any:
    """Gripper opening fraction (0 closed .. 1 open) -> ``std_msgs/Float64``."""
    return msgs.Float64(data=float(opening))


def gripper_command_from_msg(msg: Any) -> float:
    """``std_msgs/Float64`` -> opening fraction, clipped to [0, 1]; NaN/inf is an error."""
    _expect(msg, "Float64")
    value = float(msg.data)
    if not math.isfinite(value):
        raise MessageError(f"gripper command {value} is not finite")
    return min(max(value, 0.0), 1.0)


@dataclass
class RobotStateMsgs:
    """The four messages the controller publishes for one :class:`RobotState`."""

    pose: Any  # geometry_msgs/PoseStamped on /robot/tcp_pose
    twist: Any  # geometry_msgs/TwistStamped on /robot/tcp_twist
    wrench: Any  # geometry_msgs/WrenchStamped on /robot/tcp_wrench
    joints: Any  # sensor_msgs/JointState on /joint_states (arm joints + "gripper")


def robot_state_to_msgs(state: RobotState, joint_names: Sequence[str], frame_id: str) -> RobotStateMsgs:
    t = state.stamp
    names = list(joint_names) + [GRIPPER_JOINT]
    q = np.append(state.q, state.gripper)
    dq = np.append(state.dq, 0.0)
    tau = np.append(state.tau, 0.0)
    return RobotStateMsgs(
        pose=pose_stamped_msg(state.tcp_pos, state.tcp_quat, t, frame_id),
        twist=twist_stamped_msg(state.tcp_twist, t, frame_id),
        wrench=wrench_stamped_msg(state.tcp_wrench, t, frame_id),
        joints=joint_state_msg(names, q, dq, tau, t),
    )


def robot_state_from_msgs(pose: Any, twist: Any, wrench: Any, joints: Any) -> RobotState:
    """Rebuild a :class:`RobotState`; the stamp is the pose's, the gripper the ``gripper`` joint."""
    pos, quat = pose_from_msg(pose)
    names, q, dq, tau = joint_state_from_msg(joints)
    if GRIPPER_JOINT not in names:
        raise MessageError(f"joint state has no '{GRIPPER_JOINT}' entry")
    g = names.index(GRIPPER_JOINT)
    arm = [i for i in range(len(names)) if i != g]
    return RobotState(stamp=stamp_from_msg(pose.header.stamp), tcp_pos=pos, tcp_quat=quat,
                      tcp_twist=twist_from_msg(twist), tcp_wrench=wrench_from_msg(wrench),
                      q=q[arm], dq=dq[arm], tau=tau[arm], gripper=float(q[g]))


# -- joystick ----------------------------------------------------------------------------


def joy_msg(axes: Sequence[float], buttons: Sequence[int], t: float) -> Any:
    return msgs.Joy(header=header(t, ""), axes=_array("f", np.asarray(axes, dtype=np.float32)),
                    buttons=_array("i", np.asarray(buttons, dtype=np.int32)))


def joy_from_msg(msg: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    _expect(msg, "Joy")
    return _finite(np.asarray(msg.axes, dtype=np.float64), "joy axes"), tuple(int(b) for b in msg.buttons)


# -- checks ------------------------------------------------------------------------------


def _array(typecode: str, values: np.ndarray) -> array.array:
    """An ``array.array``: what rclpy stores numeric sequences as, accepted without per-item checks."""
    out = array.array(typecode)
    out.frombytes(np.ascontiguousarray(values).tobytes())
    return out


def _expect(msg: Any, *type_names: str) -> None:
    if type(msg).__name__ not in type_names:
        raise MessageError(f"expected {' or '.join(type_names)}, got {type(msg).__name__}")


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        raise MessageError(f"{what} has non-finite values: {values}")
    return values
