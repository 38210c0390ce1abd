"""The one import point for message classes: ``from robot_rl.ros import msgs``.

``msgs.Image`` is ``sensor_msgs.msg.Image`` under the rclpy backend and
:class:`robot_rl.ros.messages.Image` under the DDS backend: same field names, same
types, so node code is the same on both. Available: Time; Header, Bool, Float64, String;
Point, Quaternion, Vector3, Pose, PoseStamped, Twist, TwistStamped, Wrench,
WrenchStamped, Transform, TransformStamped; RegionOfInterest, Image, CameraInfo, JointState,
Joy, CompressedImage; TFMessage (tf2_msgs); Clock (rosgraph_msgs); KeyValue, DiagnosticStatus, DiagnosticArray
(diagnostic_msgs).
"""

from __future__ import annotations

from robot_rl.ros.backend import backend

NAMES = ("Time", "Header", "Bool", "Float64", "String", "Point", "Quaternion", "Vector3", "Pose", "PoseStamped",
         "Twist", "TwistStamped", "Wrench", "WrenchStamped", "RegionOfInterest", "Image", "CameraInfo",
         "JointState", "Joy", "Transform", "TransformStamped", "TFMessage", "Clock",
         "KeyValue", "DiagnosticStatus", "DiagnosticArray", "CompressedImage")


def __getattr__(name: str) -> type:
    if name not in NAMES:
        raise AttributeError(f"robot_rl.ros.msgs has no message type {name!r}; available: {', '.join(NAMES)}")
    cls = backend().message_class(name)
    globals()[name] = cls  # resolved once per process, like the backend
    return cls


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(NAMES))
