"""robot_rl's node layer: write a node once, run it on rclpy or on plain Cyclone DDS.

A node file imports everything ROS from here::

    from robot_rl.ros import Node, msgs, qos_profile_sensor_data, run_node

    class Talker(Node):
        def __init__(self):
            super().__init__("talker")
            self.pub = self.create_publisher(msgs.String, "chatter", 10)
            self.create_timer(0.5, self.tick)

        def tick(self):
            self.pub.publish(msgs.String(data="hello"))

    def main(args=None):
        return run_node(Talker, args)

Under the **rclpy backend** (when ``import rclpy`` works) these names are rclpy's own
objects and ``Node`` is an ``rclpy.node.Node``; under the **DDS backend** they are our
rclpy-shaped equivalents over the ``cyclonedds`` package, interoperable on the wire with
ROS 2 nodes using rmw_cyclonedds_cpp. ``ROBOT_RL_ROS_BACKEND=rclpy|dds|auto`` forces the
choice (:mod:`robot_rl.ros.backend`). Either way, ``Node`` adds the bad-input rule and
``status()`` (:mod:`robot_rl.ros.status`).

Names resolved through the backend, on first access: ``Node``, ``init``, ``ok``,
``shutdown``, ``try_shutdown``, ``spin``, ``spin_once``, ``get_global_executor``,
``ExternalShutdownException``, ``SingleThreadedExecutor``, ``Parameter``,
``ParameterDescriptor``, ``ParameterUninitializedException``, ``QoSProfile``,
``ReliabilityPolicy``, ``DurabilityPolicy``, ``HistoryPolicy``,
``qos_profile_sensor_data``, ``qos_profile_system_default``, ``Time``, ``Duration``,
``Clock``, ``ClockType``.
Message classes: ``from robot_rl.ros import msgs`` then ``msgs.Image`` etc.

Importing this package imports neither rclpy nor cyclonedds.
"""

from __future__ import annotations

from typing import Any

from robot_rl.ros.backend import backend as _backend
from robot_rl.ros.backend import backend_name
from robot_rl.ros.errors import BackendError, MessageError, ParameterError
from robot_rl.ros.runner import run_node

_BACKEND_NAMES = frozenset({
    "Node", "init", "ok", "shutdown", "try_shutdown", "spin", "spin_once", "get_global_executor",
    "ExternalShutdownException", "SingleThreadedExecutor", "Parameter", "ParameterDescriptor",
    "ParameterNotDeclaredException", "ParameterUninitializedException", "InvalidParameterTypeException",
    "QoSProfile", "ReliabilityPolicy", "DurabilityPolicy", "HistoryPolicy", "qos_profile_sensor_data",
    "qos_profile_system_default", "Time", "Duration", "Clock", "ClockType",
})


def __getattr__(name: str) -> Any:
    if name in _BACKEND_NAMES:
        return getattr(_backend(), name)
    raise AttributeError(f"module 'robot_rl.ros' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _BACKEND_NAMES | {"msgs"})


__all__ = ["backend_name", "run_node", "BackendError", "MessageError", "ParameterError",
           *sorted(_BACKEND_NAMES)]
