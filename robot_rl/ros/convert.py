"""Conversions between robot_rl's core values and ROS messages, for the nodes.

Conventions (see :mod:`robot_rl.interfaces`): quaternions are ``(w, x, y, z)`` in
robot_rl and named fields ``x, y, z, w`` in ROS, and this module is the one place where
the order changes; twists and wrenches are ``(linear xyz, angular xyz)``; images are
``uint8 (H, W, 3)`` RGB and travel as ``sensor_msgs/Image`` with encoding ``rgb8``
(other drivers' images are read as ``rgb8``, ``bgr8``, ``rgba8``, ``bgra8``, or as
``sensor_msgs/CompressedImage`` in image_transport's ``compressed`` format, a colour JPEG
or PNG decoded with OpenCV); times are float seconds and travel as ``builtin_interfaces/Time``.

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
import struct
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from robot_rl.control.transforms import quat_normalize
from robot_rl.interfaces import RobotState
from robot_rl.ros import msgs
from robot_rl.ros.errors import MessageError

GRIPPER_JOINT = "gripper"
# the raw encodings a camera image may have: encoding -> (channels, colour order reversed)
COLOUR_ENCODINGS = {"rgb8": (3, False), "bgr8": (3, True), "rgba8": (4, False), "bgra8": (4, True)}
RAW_ACCEPTED = "rgb8, bgr8, rgba8 or bgra8"
COMPRESSED_ACCEPTED = "colour JPEG or PNG (8 bit)"
MAX_IMAGE_SIDE = 4096  # pixels; the largest camera side a config allows, so no bigger image is decoded


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
    """``sensor_msgs/Image`` (rgb8, bgr8, rgba8 or bgra8) -> (``uint8 (H, W, 3)`` RGB, stamp seconds).

    The array is read-only and shares memory with the message when the rows are packed
    (alpha is dropped). Any other encoding (mono8, 16UC1, yuv422, bayer...) is refused:
    the policy sees colour images.
    """
    _expect(msg, "Image")
    if msg.encoding not in COLOUR_ENCODINGS:
        raise MessageError(f"image encoding {_shown(msg.encoding)} is not supported ({RAW_ACCEPTED})")
    channels, reversed_order = COLOUR_ENCODINGS[msg.encoding]
    height, width, step = msg.height, msg.width, msg.step
    if height == 0 or width == 0:
        raise MessageError(f"empty image {width}x{height}")
    if step < width * channels:
        raise MessageError(f"image step {step} is smaller than width*{channels} = {width * channels}")
    data = np.frombuffer(msg.data, dtype=np.uint8)
    if data.size != step * height:
        raise MessageError(f"image data has {data.size} bytes, expected step*height = {step * height}")
    rows = data.reshape(height, step)
    image = rows[:, :width * channels].reshape(height, width, channels)[:, :, :3]
    if reversed_order:
        image = image[:, :, ::-1]
    image.flags.writeable = False
    return image, stamp_from_msg(msg.header.stamp)


def compressed_image_to_msg(image: np.ndarray, t: float, frame_id: str, kind: str = "jpeg",
                            quality: int = 95) -> Any:
    """``uint8 (H, W, 3)`` RGB -> ``sensor_msgs/CompressedImage`` as image_transport's
    ``compressed`` plugin writes it (format ``rgb8; jpeg compressed bgr8`` or ``rgb8; png
    compressed bgr8``). For tests and tools; the nodes publish raw images."""
    import cv2

    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected a uint8 (H, W, 3) RGB image, got {image.dtype} {image.shape}")
    if kind not in ("jpeg", "png"):
        raise ValueError(f"kind must be jpeg or png, got {kind!r}")
    params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)] if kind == "jpeg" else []
    ok, encoded = cv2.imencode(".jpg" if kind == "jpeg" else ".png", image[:, :, ::-1], params)
    if not ok:
        raise ValueError(f"OpenCV could not encode a {image.shape} image as {kind}")
    data = array.array("B")
    data.frombytes(encoded.tobytes())
    return msgs.CompressedImage(header=header(t, frame_id), format=f"rgb8; {kind} compressed bgr8", data=data)


@dataclass(frozen=True)
class CompressedHeader:
    """What the header of a JPEG or PNG payload says, read without decoding it."""

    kind: str  # "jpeg" or "png"
    width: int
    height: int
    colour: bool  # three or four 8-bit channels (PNG: RGB, RGBA or palette; JPEG: three components)
    what: str  # e.g. "1 component" or "16-bit grey", for messages


def compressed_header(data: bytes) -> CompressedHeader:
    """Kind, size and colour of a JPEG or PNG payload; MessageError for anything else or a cut header."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        if len(data) < 33 or data[12:16] != b"IHDR":
            raise MessageError(f"PNG payload of {len(data)} bytes has no complete IHDR header")
        width, height = struct.unpack(">II", data[16:24])
        depth, colour_type = data[24], data[25]
        names = {0: "grey", 2: "RGB", 3: "palette", 4: "grey+alpha", 6: "RGBA"}
        colour = colour_type in (2, 3, 6) and depth == 8
        return CompressedHeader("png", width, height, colour,
                                f"{depth}-bit {names.get(colour_type, f'colour type {colour_type}')}")
    if data[:2] == b"\xff\xd8":
        return _jpeg_header(data)
    raise MessageError(f"compressed image payload of {len(data)} bytes is neither JPEG nor PNG "
                       f"(starts {data[:4].hex() or 'empty'})")


def _jpeg_header(data: bytes) -> CompressedHeader:
    """Walk the JPEG markers up to the frame header (SOFn), which holds the size."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            raise MessageError(f"JPEG payload is malformed at byte {i} (no marker)")
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        if marker in (0xD9, 0xDA):
            break  # end of image or start of scan before any frame header
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 10 > len(data):
                break
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            components = data[i + 9]
            return CompressedHeader("jpeg", width, height, components == 3,
                                    f"{components} component{'s' if components != 1 else ''}")
        i += 2 + length
    raise MessageError(f"JPEG payload of {len(data)} bytes has no complete frame header (cut short?)")


def compressed_image_from_msg(msg: Any) -> tuple[np.ndarray, float]:
    """``sensor_msgs/CompressedImage`` (colour JPEG or PNG) -> (``uint8 (H, W, 3)`` RGB, stamp seconds).

    image_transport's ``compressed`` format is ``<raw encoding>; <jpeg|png> compressed
    <encoding>``; a raw encoding other than a colour one (``mono8; jpeg compressed mono8``,
    ``16UC1; compressedDepth png``) is refused, as is a grey or 16-bit payload. The header
    is read before decoding, so an image larger than :data:`MAX_IMAGE_SIDE` is refused
    without allocating it; a payload that is cut short, or does not decode, is a
    MessageError (dropped, counted and warned about by the node).
    """
    _expect(msg, "CompressedImage")
    raw = msg.format.split(";", 1)[0].strip() if ";" in msg.format else ""
    if raw and raw not in COLOUR_ENCODINGS:
        raise MessageError(f"compressed image format {_shown(msg.format)} is not a colour image "
                           f"({COMPRESSED_ACCEPTED})")
    data = bytes(msg.data)
    head = compressed_header(data)
    if not head.colour:
        raise MessageError(f"compressed image is a {head.kind} of {head.what}, not colour ({COMPRESSED_ACCEPTED})")
    if not (0 < head.width <= MAX_IMAGE_SIDE and 0 < head.height <= MAX_IMAGE_SIDE):
        raise MessageError(f"compressed image says it is {head.width}x{head.height}: robot_rl decodes at most "
                           f"{MAX_IMAGE_SIDE} pixels a side")
    if head.kind == "jpeg" and b"\xff\xd9" not in data[-64:]:
        raise MessageError(f"JPEG payload of {len(data)} bytes has no end-of-image marker (cut short?)")
    import cv2

    try:
        decoded = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error:
        decoded = None
    if decoded is None or decoded.dtype != np.uint8 or decoded.ndim != 3 or decoded.shape[2] not in (3, 4) \
            or decoded.shape[:2] != (head.height, head.width):
        raise MessageError(f"{head.kind} payload of {len(data)} bytes does not decode to the "
                           f"{head.width}x{head.height} colour image its header promises")
    image = np.ascontiguousarray(decoded[:, :, 2::-1])  # BGR(A) -> RGB
    image.flags.writeable = False
    return image, stamp_from_msg(msg.header.stamp)


def describe_image(msg: Any) -> str:
    """What an image message holds, for a person: ``640x480 mono8``, ``640x480 jpeg of 1 component``.

    Never raises: a message this cannot read is described as what it is.
    """
    try:
        if type(msg).__name__ == "CompressedImage":
            try:
                head = compressed_header(bytes(msg.data))
            except MessageError:
                return f"{len(msg.data)} bytes of undecodable {_shown(msg.format)} data"
            kind = head.kind if head.colour else f"{head.kind} of {head.what}"
            return f"{head.width}x{head.height} {kind} ({_shown(msg.format)})"
        return f"{msg.width}x{msg.height} {_shown(msg.encoding)}"
    except Exception:  # noqa: BLE001 - a description must not fail on the message it describes
        return f"a {type(msg).__name__} message"


def _shown(text: str, limit: int = 40) -> str:
    """``text`` as is when it is short and printable, else quoted and cut."""
    if text and len(text) <= limit and text.isprintable():
        return text
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


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


# -- tf and the clock -------------------------------------------------------------------


def transform_stamped_msg(parent: str, child: str, translation: np.ndarray, quat_wxyz: np.ndarray,
                          t: float) -> Any:
    """``child``'s pose in ``parent`` at time ``t`` -> ``geometry_msgs/TransformStamped``."""
    w, x, y, z = (float(v) for v in quat_wxyz)
    tx, ty, tz = (float(v) for v in translation)
    return msgs.TransformStamped(header=header(t, parent), child_frame_id=child, transform=msgs.Transform(
        translation=msgs.Vector3(x=tx, y=ty, z=tz), rotation=msgs.Quaternion(x=x, y=y, z=z, w=w)))


def tf_message(transforms: Sequence[tuple[str, str, np.ndarray, np.ndarray]], t: float) -> Any:
    """``(parent, child, translation, (w, x, y, z))`` items, all stamped ``t`` -> ``tf2_msgs/TFMessage``."""
    return msgs.TFMessage(transforms=[transform_stamped_msg(*item, t) for item in transforms])


def transform_from_msg(msg: Any) -> tuple[str, str, np.ndarray, np.ndarray, float]:
    """``TransformStamped`` -> (parent, child, translation, unit quaternion ``(w, x, y, z)``, stamp)."""
    _expect(msg, "TransformStamped")
    if not msg.header.frame_id or not msg.child_frame_id:
        raise MessageError(f"a transform needs both frame ids, got {msg.header.frame_id!r} -> "
                           f"{msg.child_frame_id!r}")
    tr, rot = msg.transform.translation, msg.transform.rotation
    pos = _finite(np.array([tr.x, tr.y, tr.z]), "transform translation")
    quat = _finite(np.array([rot.w, rot.x, rot.y, rot.z]), "transform rotation")
    try:
        quat = quat_normalize(quat, min_norm=1e-6)
    except ValueError:
        raise MessageError("transform rotation is a zero quaternion") from None
    return msg.header.frame_id, msg.child_frame_id, pos, quat, stamp_from_msg(msg.header.stamp)


def clock_msg(t: float) -> Any:
    """Simulated time ``t`` (s) -> ``rosgraph_msgs/Clock`` for ``/clock``."""
    return msgs.Clock(clock=stamp_to_msg(t))


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
