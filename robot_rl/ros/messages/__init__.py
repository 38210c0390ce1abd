"""Our ROS 2 message classes, plain CDR codec and RIHS01 type hashes (no ROS, no DDS).

Node code should not import these directly: ``from robot_rl.ros import msgs`` gives
rclpy's generated classes under the rclpy backend and these under the DDS backend.
"""

from robot_rl.ros.messages.base import REGISTRY, Message
from robot_rl.ros.messages.cdr import deserialize, serialize
from robot_rl.ros.messages.definitions import (
    ALL,
    Bool,
    CameraInfo,
    Clock,
    CompressedImage,
    DiagnosticArray,
    DiagnosticStatus,
    Float64,
    Header,
    Image,
    JointState,
    Joy,
    KeyValue,
    Point,
    Pose,
    PoseStamped,
    Quaternion,
    RegionOfInterest,
    String,
    TFMessage,
    Time,
    Transform,
    TransformStamped,
    Twist,
    TwistStamped,
    Vector3,
    Wrench,
    WrenchStamped,
)
from robot_rl.ros.messages.typehash import type_hash

__all__ = [
    "ALL", "REGISTRY", "Message", "deserialize", "serialize", "type_hash",
    "Bool", "CameraInfo", "Float64", "Header", "Image", "JointState", "Joy", "Point", "Pose", "PoseStamped",
    "Quaternion", "RegionOfInterest", "String", "Time", "Twist", "TwistStamped", "Vector3", "Wrench",
    "WrenchStamped", "Transform", "TransformStamped", "TFMessage", "Clock",
    "KeyValue", "DiagnosticStatus", "DiagnosticArray", "CompressedImage",
]
