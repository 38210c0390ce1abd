"""``Time``, ``Duration``, ``Clock`` and ``ClockType`` with rclpy's interface, for the DDS backend.

A node's clock (``node.get_clock()``) is a ``ROS_TIME`` clock, as in rclpy: the system
clock, until the node's ``use_sim_time`` parameter is true; from then on it reads the
simulated time the node last received on ``/clock`` (``rosgraph_msgs/Clock``), and 0
before the first one, like rclpy's ``TimeSource``. The node subscribes to ``/clock``
(best-effort, keep-last 1, as rclpy does; remaps apply) only while ``use_sim_time`` is
on, whether it was set at construction or later with ``set_parameters``.
``Clock(clock_type=ClockType.STEADY_TIME)`` is the monotonic clock, ``SYSTEM_TIME`` the
system clock. ``Time.to_msg()`` gives a ``builtin_interfaces/Time`` message for a header
stamp.

Unlike rclpy's, the DDS backend's timers always run on the steady clock (a timer's
``clock`` argument is accepted and not used): with ``use_sim_time`` on, rclpy's timers
follow ``/clock`` and stop while it does not move; these keep the wall-clock period.
"""

from __future__ import annotations

import time as _time
from enum import IntEnum

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


class ClockType(IntEnum):
    """rclpy's ``rclpy.clock.ClockType`` (the values of rcl's ``rcl_clock_type_t``)."""

    UNINITIALIZED = 0
    ROS_TIME = 1
    SYSTEM_TIME = 2
    STEADY_TIME = 3


class Clock:
    """A clock of ``clock_type``; a ``ROS_TIME`` one can be switched to simulated time (module docstring)."""

    def __init__(self, *, clock_type: ClockType = ClockType.SYSTEM_TIME) -> None:
        self._type = ClockType(clock_type)
        if self._type == ClockType.UNINITIALIZED:
            raise ValueError("a clock needs a clock type")
        self._sim_active = False
        self._sim_ns = 0  # the simulated time last set: 0 until /clock says otherwise

    @property
    def clock_type(self) -> ClockType:
        return self._type

    @property
    def ros_time_is_active(self) -> bool:
        """True while this ROS_TIME clock reads simulated time."""
        return self._sim_active

    def now(self) -> Time:
        if self._type == ClockType.STEADY_TIME:
            return Time(nanoseconds=_time.monotonic_ns())
        if self._sim_active:
            return Time(nanoseconds=self._sim_ns)
        return Time(nanoseconds=_time.time_ns())

    def _set_ros_time_is_active(self, enabled: bool) -> None:
        if self._type != ClockType.ROS_TIME:
            raise RuntimeError("only a ROS_TIME clock can follow simulated time")
        self._sim_active = bool(enabled)

    def set_ros_time_override(self, time: Time) -> None:
        """The simulated time (from ``/clock``); read by :meth:`now` while simulated time is active."""
        if self._type != ClockType.ROS_TIME:
            raise RuntimeError("only a ROS_TIME clock can follow simulated time")
        self._sim_ns = time.nanoseconds

    def __repr__(self) -> str:
        return f"Clock(clock_type={self._type.name})"
