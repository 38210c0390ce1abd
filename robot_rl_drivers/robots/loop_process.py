"""The loop-process side that every arm backend with a control loop of its own shares.

A backend whose arm wants a command every millisecond or two (the Franka's torque loop,
:mod:`.franka_loop`; the UR's, :mod:`.ur_loop`) runs it in a process of its own, because
the parent (env, policy, ROS or DDS, image handling) holds the GIL for milliseconds at a
time. This module holds what those processes have in common, so that each backend's
module is only what its arm and its law need:

* the shared memory (:class:`LoopChannels`): targets, hold and stop requests (and the
  Franka's postures) in, state and timing out, lock-free (:mod:`.shared`);
* the process protocol (:func:`begin_process`, :func:`serve`): a pipe carrying ``start``
  (one session), ``recover`` and ``close`` from the parent, answered with ``(kind,
  payload)`` messages (``connecting`` once the process has started and is about to
  connect, then ``ready`` or ``error``; ``stopped``, ``fault``, ``recovered``, ``closed``);
* :class:`LoopSessions`, the base of a backend's loop: session start (a target or hold
  written before it is stale), the stop request, reading the parent's commands, the
  timing statistics and publishing both blocks.
"""

from __future__ import annotations

import gc
import logging
import math
import multiprocessing
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Iterator, Optional, TypeVar

import numpy as np

from robot_rl.config.sections import RobotConfig
from robot_rl.control import SafetyBox
from robot_rl_drivers.robots.shared import Counters, Layout, SeqBlock

TARGET = Layout(pos=3, quat=4)
# Counters written by the parent and read by the loop.
CTRL_STOP, CTRL_HOLD, CTRL_SIZE = 0, 1, 2
PARENT_CHECK_EVERY = 100  # cycles between checks that the parent process still lives

H = TypeVar("H")


@dataclass
class LoopChannels:
    """The shared memory of one loop process (created by the parent, inherited by the child)."""

    target: SeqBlock
    state: SeqBlock
    stats: SeqBlock
    periods: Counters  # ring buffer of cycle periods (s)
    computes: Counters  # ring buffer of compute times (s)
    control: Counters
    posture: Optional[SeqBlock] = None  # arms with a null space only

    @classmethod
    def create(cls, window: int, ctx: Any, state: Layout, stats: Layout,
               posture: Optional[Layout] = None) -> "LoopChannels":
        return cls(SeqBlock(TARGET.size, ctx), SeqBlock(state.size, ctx), SeqBlock(stats.size, ctx),
                   Counters(window, ctx), Counters(window, ctx), Counters(CTRL_SIZE, ctx),
                   SeqBlock(posture.size, ctx) if posture is not None else None)


@dataclass
class LoopArgs(Generic[H]):
    """Everything the loop process needs; plain data, pickled into the child."""

    lib: str  # the import name of the arm's library (tests pass a fake with the same API)
    hw: H  # the backend's robot.hardware
    robot: RobotConfig
    channels: LoopChannels
    log_level: int = logging.INFO


def begin_process(args: LoopArgs, name: str) -> None:
    """The first lines of a loop process: its log format, and Ctrl-C ignored (it reaches the
    whole process group; the parent answers it by holding and closing the session cleanly,
    which a KeyboardInterrupt in the middle of a cycle would not)."""
    logging.basicConfig(level=args.log_level, format=f"%(levelname)s {name}: %(message)s")
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection while a session runs: one in the middle of a cycle costs milliseconds."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class LoopSessions:
    """The base of a backend's loop (runs inside the loop process).

    A subclass runs a session in :meth:`run_session` (``("stopped", None)`` or
    ``("fault", one line)``) and makes the arm drivable again in :meth:`recover`
    (``("recovered", None)`` or ``("error", one line)``).
    """

    def __init__(self, args: LoopArgs, cycle_s: float) -> None:
        self.cfg = args.robot
        self.hw = args.hw
        self.ch = args.channels
        self.box = SafetyBox.from_config(args.robot)
        self.cycle_s = cycle_s  # the arm's control period: what a late cycle is measured against
        self.late_factor = float(args.hw.loop.late_factor)
        self.window = len(self.ch.periods.view)
        self.session = 0
        self.cycles = 0
        self.late = 0
        self.missed = 0
        self.max_period = 0.0
        self.max_compute = 0.0
        self._target_seen = 0
        self._hold_seen = 0.0
        self._state_buf = np.zeros(self.ch.state.size)
        self._stats_buf = np.zeros(self.ch.stats.size)
        self._parent = multiprocessing.parent_process()

    # ------------------------------------------------------------------ what a backend provides

    def run_session(self) -> tuple[str, Optional[str]]:
        raise NotImplementedError

    def recover(self) -> tuple[str, Optional[str]]:
        raise NotImplementedError

    def close(self) -> None:
        """Release the arm before the process ends (best effort); nothing by default."""

    def _take_other_commands(self, ctrl: Any) -> None:
        """Commands beyond a target and a hold (the Franka's postures); none by default."""

    # ------------------------------------------------------------------ shared

    def _begin_session(self) -> None:
        """A new session: targets and hold requests written before it are stale, no stop pending."""
        self.session += 1
        self._target_seen = self.ch.target.seq
        self._hold_seen = self.ch.control.view[CTRL_HOLD]
        self.ch.control.view[CTRL_STOP] = 0.0

    def _stop_requested(self, cycle: int) -> bool:
        """The parent asked to stop, or (checked every few cycles) it is gone."""
        return self.ch.control.view[CTRL_STOP] != 0.0 or (cycle % PARENT_CHECK_EVERY == 0
                                                          and not self._parent_alive())

    def _parent_alive(self) -> bool:
        return self._parent is None or self._parent.is_alive()

    def _take_parent_commands(self, ctrl: Any, measured: Any, now: float) -> None:
        """A new target (checked and clipped to the box by the law), other commands, or a hold
        request, if any; ``measured`` is the law's measured state, which a hold holds."""
        seq = self.ch.target.seq
        if seq != self._target_seen and seq % 2 == 0:
            values, self._target_seen = self.ch.target.read()
            ctrl.set_target(values[TARGET["pos"]], values[TARGET["quat"]], now)
        self._take_other_commands(ctrl)
        hold = self.ch.control.view[CTRL_HOLD]
        if hold != self._hold_seen:
            self._hold_seen = hold
            ctrl.hold(measured, now)

    def _record_timing(self, period: float, compute: float) -> None:
        """One command's host timing into the ring buffers; ``period`` is NaN for a session's first."""
        slot = self.cycles % self.window
        self.ch.computes.view[slot] = compute
        self.ch.periods.view[slot] = period
        if math.isfinite(period):
            self.late += period > self.late_factor * self.cycle_s
            self.max_period = max(self.max_period, period)
        self.max_compute = max(self.max_compute, compute)
        self.cycles += 1

    def _write_state(self, layout: Layout, **values: Any) -> None:
        """Publish the state block: ``values`` plus the wall-clock stamp and the session."""
        layout.pack(self._state_buf, stamp=time.time(), session=self.session, **values)
        self.ch.state.write(self._state_buf)

    def _write_stats(self, layout: Layout, **values: Any) -> None:
        """Publish the statistics block: ``values`` plus the timing figures every loop keeps."""
        layout.pack(self._stats_buf, cycles=self.cycles, late=self.late, missed=self.missed,
                    max_period=self.max_period, max_compute=self.max_compute, ring_next=self.cycles,
                    session=self.session, **values)
        self.ch.stats.write(self._stats_buf)


def serve(conn: Any, loop: LoopSessions) -> None:
    """Answer the parent's requests until it says ``close`` or is gone."""
    while True:
        if not conn.poll(0.2):
            if not loop._parent_alive():
                return
            continue
        try:
            command = conn.recv()
        except EOFError:
            return
        if command == "start":
            conn.send(loop.run_session())
        elif command == "recover":
            conn.send(loop.recover())
        elif command == "close":
            loop.close()
            conn.send(("closed", None))
            return
