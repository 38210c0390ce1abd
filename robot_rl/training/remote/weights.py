"""Handing weight versions between threads without ever exposing a half-written one.

Learner side, :class:`WeightBoard`: the training loop publishes a new version (a number
that only grows, and the message already encoded once), and every actor's stream
thread waits for something newer than what it sent last. A slow actor skips
intermediate versions instead of queueing them: it always gets the newest.

Actor side, :class:`WeightSlot`: the receiving thread puts each complete, decoded
version; the control loop calls :meth:`WeightSlot.take` between steps and gets the
newest version it has not taken yet, or None. Both are a reference swap under a lock,
so the control loop never waits on the network.
"""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar

from robot_rl.training.remote.codec import WeightVersion

T = TypeVar("T")


class WeightBoard(Generic[T]):
    """The newest published version and its payload; waiters wake on each publish."""

    def __init__(self, start_version: int = 0) -> None:
        self._cond = threading.Condition()
        self._version = start_version  # a restarted learner goes on from its last published version
        self._payload: T | None = None
        self._closed = False

    def publish(self, version: int, payload: T) -> None:
        with self._cond:
            if version <= self._version:
                raise ValueError(f"weight version {version} is not newer than {self._version}")
            self._version, self._payload = version, payload
            self._cond.notify_all()

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def wait_newer(self, than: int, timeout: float) -> tuple[int, T] | None:
        """(version, payload) once a version newer than ``than`` exists, else None on timeout/close."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > than or self._closed, timeout)
            if self._version > than and self._payload is not None:
                return self._version, self._payload
            return None

    def close(self) -> None:
        """Wake every waiter for good (server shutdown)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class WeightSlot:
    """The newest complete weight version an actor received, taken at most once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: WeightVersion | None = None
        self._taken = 0
        self.received = 0

    def put(self, weights: WeightVersion) -> None:
        with self._lock:
            if self._latest is None or weights.version > self._latest.version:
                self._latest = weights
                self.received += 1

    def take(self) -> WeightVersion | None:
        """The newest version not taken before, or None. Never blocks for long."""
        with self._lock:
            if self._latest is None or self._latest.version <= self._taken:
                return None
            self._taken = self._latest.version
            return self._latest

    def rebase(self) -> None:
        """Accept any version from now on: the actor is talking to another learner process.

        (A resumed learner continues its version numbers; a learner started afresh
        counts from 1 again, and its weights must not be ignored as "older".)
        """
        with self._lock:
            self._latest = None
            self._taken = 0

    @property
    def version(self) -> int:
        """Newest version received (taken or not); 0 before the first."""
        with self._lock:
            return 0 if self._latest is None else self._latest.version

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"received_version": 0 if self._latest is None else self._latest.version,
                    "taken_version": self._taken, "received": self.received}
