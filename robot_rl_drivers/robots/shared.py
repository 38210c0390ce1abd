"""Shared memory between a 1 kHz loop process and the process that drives it.

The loop must never block on its peer, so nothing here takes a lock. Each block has one
writer and is guarded by a *seqlock*: the writer makes the sequence number odd, writes,
and makes it even again; a reader copies the values and retries if the number was odd
or changed meanwhile. On x86-64 (the Franka workstation), aligned 8-byte stores are
atomic and stores are seen in program order, which is all a seqlock needs.

Blocks are float64 arrays described by a :class:`Layout` of named fields.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

import numpy as np


class Layout:
    """Named slices of a flat float64 vector: ``Layout(pos=3, quat=4)``."""

    def __init__(self, **sizes: int) -> None:
        self.slices: dict[str, slice] = {}
        start = 0
        for name, size in sizes.items():
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    def pack(self, out: np.ndarray, **values: Any) -> np.ndarray:
        for name, value in values.items():
            out[self.slices[name]] = value
        return out


class SeqBlock:
    """One seqlock-guarded float64 block; picklable into a ``multiprocessing`` child."""

    def __init__(self, size: int, ctx: Any) -> None:
        self.size = size
        self._raw = ctx.RawArray(ctypes.c_double, size + 1)
        self._view = np.frombuffer(self._raw, dtype=np.float64)

    def __getstate__(self) -> dict[str, Any]:
        return {"size": self.size, "_raw": self._raw}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.size, self._raw = state["size"], state["_raw"]
        self._view = np.frombuffer(self._raw, dtype=np.float64)

    @property
    def seq(self) -> int:
        """The sequence number: even and growing by 2 per completed write (0: never written)."""
        return int(self._view[0])

    def write(self, values: np.ndarray) -> None:
        view = self._view
        s = view[0]
        view[0] = s + 1.0
        view[1:] = values
        view[0] = s + 2.0

    def read(self, timeout: float = 0.5) -> tuple[np.ndarray, int]:
        """A consistent copy of the values and its sequence number.

        A write takes microseconds, but on a loaded machine the writer can be preempted
        mid-write for a whole scheduler slice, so the reader spins briefly, then yields,
        and gives up only after ``timeout`` seconds: RuntimeError, the writer died mid-write.
        """
        view = self._view
        deadline = None
        tries = 0
        while True:
            s1 = view[0]
            if not int(s1) % 2:
                values = view[1:].copy()
                if view[0] == s1:
                    return values, int(s1)
            tries += 1
            if tries > 100:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + timeout
                elif now > deadline:
                    break
                os.sched_yield()
        raise RuntimeError("shared block stayed busy; its writer died mid-write")


class Counters:
    """A few float64 slots with one writer per slot and no seqlock (flags, counters)."""

    def __init__(self, size: int, ctx: Any) -> None:
        self._raw = ctx.RawArray(ctypes.c_double, size)
        self.view = np.frombuffer(self._raw, dtype=np.float64)

    def __getstate__(self) -> dict[str, Any]:
        return {"_raw": self._raw}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._raw = state["_raw"]
        self.view = np.frombuffer(self._raw, dtype=np.float64)


def configure_realtime(settings: Any, what: str, log: Any) -> None:
    """Pin and prioritise the calling loop process as ``settings`` (a
    :class:`~robot_rl_drivers.robots.settings.LoopProcessSettings`) say; a refusal is a warning,
    since the arm's own library decides whether it can run without real-time scheduling."""
    if settings.cpu is not None:
        try:
            os.sched_setaffinity(0, {settings.cpu})
        except (OSError, AttributeError) as err:
            log.warning("cannot pin the %s to CPU %d: %s", what, settings.cpu, err)
    if settings.rt_priority > 0:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(settings.rt_priority))
        except (OSError, AttributeError) as err:
            log.warning("cannot give the %s SCHED_FIFO priority %d (%s); see docs/real-cell.md's real-time "
                        "notes (limits.conf rtprio)", what, settings.rt_priority, err)
