"""``Time``, ``Duration`` and ``Clock`` with rclpy's interface, for the DDS backend.

``node.get_clock().now()`` is the system clock (ROS_TIME without simulated time), as in
rclpy; ``Time.to_msg()`` gives a ``builtin_interfaces/Time`` message for a header stamp.
"""

from __future__ import annotations

import time as _time

S_TO_NS = 1_000_000_000


class Duration:
    __slots__ = ("_nanoseconds",)

    def __init__(self, *, seconds: float = 0, nanoseconds: int = 0) -> None:
        self._nanoseconds = int(seconds * S_TO_NS) + int(nanoseconds)

    @property
    def nanoseconds(self) -> int:
        return self._nanoseconds

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other._nanoseconds == self._nanoseconds

    def __lt__(self, other: "Duration") -> bool:
        return self._nanoseconds < other._nanoseconds

    def __le__(self, other: "Duration") -> bool:
        return self._nanoseconds <= other._nanoseconds

    def __hash__(self) -> int:
        return hash(self._nanoseconds)

    def __repr__(self) -> str:
        return f"Duration(nanoseconds={self._nanoseconds})"


class Time:
    __slots__ = ("_nanoseconds",)

    def __init__(self, *, seconds: float = 0, nanoseconds: int = 0) -> None:
        total = int(seconds * S_TO_NS) + int(nanoseconds)
        if total < 0:
            raise ValueError("Time cannot be negative")
        self._nanoseconds = total

    @property
    def nanoseconds(self) -> int:
        return self._nanoseconds

    def seconds_nanoseconds(self) -> tuple[int, int]:
        return divmod(self._nanoseconds, S_TO_NS)

    def to_msg(self):
        from robot_rl.ros.messages import Time as TimeMsg

        sec, nanosec = self.seconds_nanoseconds()
        return TimeMsg(sec=sec, nanosec=nanosec)

    @classmethod
    def from_msg(cls, msg) -> "Time":
        return cls(seconds=msg.sec, nanoseconds=msg.nanosec)

    def __add__(self, other: Duration) -> "Time":
        if not isinstance(other, Duration):
            return NotImplemented
        return Time(nanoseconds=self._nanoseconds + other.nanoseconds)

    __radd__ = __add__

    def __sub__(self, other: "Time | Duration"):
        if isinstance(other, Time):
            return Duration(nanoseconds=self._nanoseconds - other._nanoseconds)
        if isinstance(other, Duration):
            return Time(nanoseconds=self._nanoseconds - other.nanoseconds)
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and other._nanoseconds == self._nanoseconds

    def __lt__(self, other: "Time") -> bool:
        return self._nanoseconds < other._nanoseconds

    def __le__(self, other: "Time") -> bool:
        return self._nanoseconds <= other._nanoseconds

    def __gt__(self, other: "Time") -> bool:
        return self._nanoseconds > other._nanoseconds

    def __ge__(self, other: "Time") -> bool:
        return self._nanoseconds >= other._nanoseconds

    def __hash__(self) -> int:
        return hash(self._nanoseconds)

    def __repr__(self) -> str:
        return f"Time(nanoseconds={self._nanoseconds})"


class Clock:
    """The system clock (what rclpy's node clock is without ``use_sim_time``)."""

    def now(self) -> Time:
        return Time(nanoseconds=_time.time_ns())
