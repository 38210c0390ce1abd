"""The newest value of a message stream, shared between a subscription and a control loop.

A node's subscription callbacks run on its executor thread; the actor's env steps on
another. :class:`Latest` is the hand-over: the callback :meth:`~Latest.put`\\ s, the
loop reads the newest value with its arrival time, or waits for one that satisfies a
condition (e.g. "stamped after the reset finished"). Nothing queues: a control loop
wants the present, never a backlog.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable, Generic, Optional, TypeVar

import numpy as np

T = TypeVar("T")


class StopRequested(Exception):
    """A wait was cut short because the actor is shutting down (Ctrl-C); not an error."""


class Latest(Generic[T]):
    """Thread-safe newest value + its arrival time on ``clock`` (monotonic seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._value: Optional[T] = None
        self._arrived: Optional[float] = None
        self.count = 0

    def put(self, value: T) -> None:
        with self._cond:
            self._value, self._arrived = value, self._clock()
            self.count += 1
            self._cond.notify_all()

    def get(self) -> tuple[Optional[T], Optional[float]]:
        """(value, arrival time), both None before the first value."""
        with self._cond:
            return self._value, self._arrived

    @property
    def value(self) -> Optional[T]:
        with self._cond:
            return self._value

    def age(self) -> float:
        """Seconds since the newest value arrived (infinity before the first)."""
        with self._cond:
            return float("inf") if self._arrived is None else self._clock() - self._arrived

    def clear(self) -> None:
        with self._cond:
            self._value, self._arrived = None, None

    def wait(self, timeout: float, predicate: Callable[[T], bool] | None = None,
             cancel: threading.Event | None = None) -> Optional[T]:
        """The newest value once it exists (and satisfies ``predicate``), or None after ``timeout`` s.

        Raises :class:`StopRequested` as soon as ``cancel`` is set.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._value is None or (predicate is not None and not predicate(self._value)):
                if cancel is not None and cancel.is_set():
                    raise StopRequested()
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(min(left, 0.1))
            return self._value


class Percentiles:
    """A bounded window of samples (seconds) summarised in milliseconds for status and logs."""

    def __init__(self, window: int = 20000) -> None:
        self._samples: deque[float] = deque(maxlen=window)
        self.total = 0

    def add(self, seconds: float) -> None:
        self._samples.append(float(seconds))
        self.total += 1

    def summary(self) -> dict[str, float]:
        """``{"n", "p50_ms", "p99_ms", "max_ms", "mean_ms"}`` over the window (n = samples ever)."""
        if not self._samples:
            return {"n": 0}
        a = np.asarray(self._samples) * 1000.0
        return {"n": self.total, "p50_ms": round(float(np.percentile(a, 50)), 3),
                "p99_ms": round(float(np.percentile(a, 99)), 3), "max_ms": round(float(a.max()), 3),
                "mean_ms": round(float(a.mean()), 3)}
