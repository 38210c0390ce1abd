"""The rclpy backend: rclpy itself, plus the bad-input rule and ``status()`` on ``Node``.

Everything but ``Node`` is rclpy's own object (``init``, ``spin``, QoS, ``Parameter``,
message classes from ``std_msgs.msg`` and friends), so a node written against
:mod:`robot_rl.ros` is a plain rclpy node here. ``Node`` subclasses ``rclpy.node.Node``
and only wraps subscription callbacks (:mod:`robot_rl.ros.status`).

Imported only when rclpy imports (a sourced ROS 2 workspace).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

import rclpy
import rclpy.node
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration
from rclpy.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    NameValidationException,
    ParameterAlreadyDeclaredException,
    ParameterNotDeclaredException,
    ParameterUninitializedException,
)
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
    qos_profile_system_default,
)
from rclpy.time import Time

from robot_rl.ros.status import NodeStatusMixin

NAME = "rclpy"

init = rclpy.init
ok = rclpy.ok
shutdown = rclpy.shutdown
try_shutdown = rclpy.try_shutdown
spin = rclpy.spin
spin_once = rclpy.spin_once
get_global_executor = rclpy.get_global_executor

# rclpy's exceptions for a misconfigured node; the node runner prints them as one line
USER_ERRORS: tuple[type[BaseException], ...] = (
    ParameterUninitializedException, InvalidParameterTypeException, InvalidParameterValueException,
    ParameterNotDeclaredException, ParameterAlreadyDeclaredException, NameValidationException,
)


class Node(NodeStatusMixin, rclpy.node.Node):
    """``rclpy.node.Node`` whose subscriptions drop and count messages that raise MessageError."""

    _backend_name = NAME

    def __init__(self, node_name: str, **kwargs: Any) -> None:
        self._init_status()  # before rclpy's __init__, which may already create subscriptions
        super().__init__(node_name, **kwargs)

    def create_subscription(self, msg_type: Any, topic: str, callback: Callable[[Any], None],
                            qos_profile: Any, **kwargs: Any):
        if kwargs.get("raw"):
            return super().create_subscription(msg_type, topic, callback, qos_profile, **kwargs)
        try:
            label = self.resolve_topic_name(topic)
        except Exception:  # let rclpy report a bad name its own way
            label = topic
        return super().create_subscription(msg_type, topic, self._guard_callback(label, callback),
                                           qos_profile, **kwargs)


_PACKAGES = {
    "Time": "builtin_interfaces",
    "Header": "std_msgs", "Bool": "std_msgs", "Float64": "std_msgs", "String": "std_msgs",
    "Point": "geometry_msgs", "Quaternion": "geometry_msgs", "Vector3": "geometry_msgs", "Pose": "geometry_msgs",
    "PoseStamped": "geometry_msgs", "Twist": "geometry_msgs", "TwistStamped": "geometry_msgs",
    "Wrench": "geometry_msgs", "WrenchStamped": "geometry_msgs",
    "Transform": "geometry_msgs", "TransformStamped": "geometry_msgs",
    "TFMessage": "tf2_msgs", "Clock": "rosgraph_msgs",
    "RegionOfInterest": "sensor_msgs", "Image": "sensor_msgs", "CameraInfo": "sensor_msgs",
    "JointState": "sensor_msgs", "Joy": "sensor_msgs", "CompressedImage": "sensor_msgs",
    "KeyValue": "diagnostic_msgs", "DiagnosticStatus": "diagnostic_msgs", "DiagnosticArray": "diagnostic_msgs",
}


def message_class(name: str) -> type:
    """The rclpy-generated class for one of robot_rl's message types, e.g. ``sensor_msgs.msg.Image``."""
    package = _PACKAGES.get(name)
    if package is None:
        raise AttributeError(f"robot_rl.ros.msgs has no message type {name!r}")
    return getattr(importlib.import_module(f"{package}.msg"), name)


__all__ = [
    "NAME", "USER_ERRORS", "message_class", "Node", "init", "ok", "shutdown", "try_shutdown", "spin", "spin_once",
    "get_global_executor", "ExternalShutdownException", "SingleThreadedExecutor", "Parameter",
    "ParameterDescriptor", "ParameterNotDeclaredException", "ParameterUninitializedException",
    "InvalidParameterTypeException", "QoSProfile", "ReliabilityPolicy", "DurabilityPolicy", "HistoryPolicy",
    "qos_profile_sensor_data", "qos_profile_system_default", "Time", "Duration", "Clock", "ClockType",
]
