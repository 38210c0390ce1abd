"""The DDS backend's public names, as :mod:`robot_rl.ros` hands them out."""

from __future__ import annotations

from robot_rl.ros import messages as _messages
from robot_rl.ros.dds.clock import Clock, ClockType, Duration, Time
from robot_rl.ros.dds.node import Node
from robot_rl.ros.dds.parameters import (
    InvalidParameterTypeException,
    Parameter,
    ParameterDescriptor,
    ParameterNotDeclaredException,
    ParameterUninitializedException,
)
from robot_rl.ros.dds.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
    qos_profile_system_default,
)
from robot_rl.ros.dds.runtime import (
    ExternalShutdownException,
    SingleThreadedExecutor,
    get_global_executor,
    init,
    ok,
    shutdown,
    spin,
    spin_once,
    try_shutdown,
)

NAME = "dds"

# exceptions that mean "the user configured the node wrong", printed as one line
USER_ERRORS: tuple[type[BaseException], ...] = ()


def message_class(name: str) -> type:
    cls = getattr(_messages, name, None)
    if not (isinstance(cls, type) and issubclass(cls, _messages.Message)):
        raise AttributeError(f"robot_rl.ros.msgs has no message type {name!r}")
    return cls


__all__ = [
    "NAME", "USER_ERRORS", "message_class", "Node", "init", "ok", "shutdown", "try_shutdown", "spin", "spin_once",
    "get_global_executor", "ExternalShutdownException", "SingleThreadedExecutor", "Parameter",
    "ParameterDescriptor", "ParameterNotDeclaredException", "ParameterUninitializedException",
    "InvalidParameterTypeException", "QoSProfile", "ReliabilityPolicy", "DurabilityPolicy", "HistoryPolicy",
    "qos_profile_sensor_data", "qos_profile_system_default", "Time", "Duration", "Clock", "ClockType",
]
