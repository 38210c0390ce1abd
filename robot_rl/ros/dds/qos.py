"""QoS profiles with rclpy's names and defaults (``rclpy.qos``), for the DDS backend.

Under the rclpy backend ``robot_rl.ros`` hands out rclpy's own classes instead, so node
code written as ``QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)`` or
with ``qos_profile_sensor_data`` means the same thing on both. The DDS backend maps a
profile to DDS QoS exactly as rmw_cyclonedds_cpp does (:mod:`robot_rl.ros.dds.transport`).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class HistoryPolicy(IntEnum):
    SYSTEM_DEFAULT = 0
    KEEP_LAST = 1
    KEEP_ALL = 2
    UNKNOWN = 3


class ReliabilityPolicy(IntEnum):
    SYSTEM_DEFAULT = 0
    RELIABLE = 1
    BEST_EFFORT = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class DurabilityPolicy(IntEnum):
    SYSTEM_DEFAULT = 0
    TRANSIENT_LOCAL = 1
    VOLATILE = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


# rclpy's older spellings
QoSHistoryPolicy = HistoryPolicy
QoSReliabilityPolicy = ReliabilityPolicy
QoSDurabilityPolicy = DurabilityPolicy


class InvalidQoSProfileException(ValueError):
    """Raised, as in rclpy, for a profile without history and depth."""


class QoSProfile:
    """history, depth, reliability and durability; rclpy's defaults (KEEP_LAST 10, RELIABLE, VOLATILE)."""

    __slots__ = ("_history", "_depth", "_reliability", "_durability")

    def __init__(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - {"history", "depth", "reliability", "durability"}
        if unknown:
            raise TypeError(f"QoSProfile: unsupported settings {sorted(unknown)} (this backend has "
                            "history, depth, reliability and durability)")
        if "history" not in kwargs:
            if "depth" not in kwargs:
                raise InvalidQoSProfileException("History and/or depth settings are required.")
            kwargs["history"] = HistoryPolicy.KEEP_LAST
        self.history = kwargs["history"]
        if self.history == HistoryPolicy.KEEP_LAST and "depth" not in kwargs:
            raise InvalidQoSProfileException("History set to KEEP_LAST without a depth setting.")
        self.depth = kwargs.get("depth", 10)
        self.reliability = kwargs.get("reliability", ReliabilityPolicy.RELIABLE)
        self.durability = kwargs.get("durability", DurabilityPolicy.VOLATILE)

    history = property(lambda self: self._history,
                       lambda self, v: setattr(self, "_history", HistoryPolicy(v)))
    reliability = property(lambda self: self._reliability,
                           lambda self, v: setattr(self, "_reliability", ReliabilityPolicy(v)))
    durability = property(lambda self: self._durability,
                          lambda self, v: setattr(self, "_durability", DurabilityPolicy(v)))

    @property
    def depth(self) -> int:
        return self._depth

    @depth.setter
    def depth(self, value: int) -> None:
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"QoS depth must be a non-negative int, got {value!r}")
        self._depth = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QoSProfile) and all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __repr__(self) -> str:
        return (f"QoSProfile(history={self.history.name}, depth={self.depth}, "
                f"reliability={self.reliability.name}, durability={self.durability.name})")


def as_profile(qos_or_depth: QoSProfile | int) -> QoSProfile:
    """rclpy's rule: an int is a KEEP_LAST depth with the default reliability and durability."""
    if isinstance(qos_or_depth, QoSProfile):
        return qos_or_depth
    if isinstance(qos_or_depth, int) and not isinstance(qos_or_depth, bool):
        if qos_or_depth < 0:
            raise ValueError("history depth must be greater than or equal to zero")
        return QoSProfile(depth=qos_or_depth)
    raise TypeError(f"expected a QoSProfile or a history depth, got {type(qos_or_depth).__name__}")


qos_profile_sensor_data = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5,
                                     reliability=ReliabilityPolicy.BEST_EFFORT,
                                     durability=DurabilityPolicy.VOLATILE)
qos_profile_system_default = QoSProfile(history=HistoryPolicy.SYSTEM_DEFAULT, depth=0,
                                        reliability=ReliabilityPolicy.SYSTEM_DEFAULT,
                                        durability=DurabilityPolicy.SYSTEM_DEFAULT)
