"""The parent side of an arm backend whose control loop runs in a process of its own.

:class:`LoopRobot` is what the Franka torque backend (:mod:`.franka_torque`) and the UR
backend (:mod:`.ur_robot`) share as :class:`~robot_rl.interfaces.Robot`: it starts the
loop process (:mod:`.loop_process` has its side), waits for the first state, reads the
state and writes targets and hold requests through lock-free shared memory, sends
``start``, ``recover`` and ``close`` over a pipe and routes the answers, keeps the fault
(contract in :mod:`.faults`), and reads the loop's timing statistics. A backend adds its
arm's words for the one-line messages, its gripper, and what its arm has beyond that.

Start-up: start the loop process (up to ``LOOP_START_S``: spawning it and importing its
library takes seconds on a loaded host), let it connect (``connect_timeout_s``, counted from
when the process says it is connecting, so a slow start is never blamed on the arm), start
a session, and return only once the loop has published its first state. The loop's first target is that state's pose, so
constructing the robot never moves it.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional

import numpy as np

from robot_rl.config.sections import RobotConfig
from robot_rl.control.commands import BadCommand, log_rejection, robot_command
from robot_rl.errors import DeviceError
from robot_rl.interfaces import Robot, RobotState
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.gripper import Gripper
from robot_rl_drivers.robots.loop_process import CTRL_HOLD, CTRL_STOP, LoopArgs, LoopChannels
from robot_rl_drivers.robots.shared import Layout

STALE_STATE_S = 0.25  # a running loop that has not published for this long is stuck
LOOP_START_S = 120.0  # spawn and imports of the loop process, before it tries to connect


@dataclass(frozen=True)
class LoopTiming:
    """The loop's host-clock timing, which every loop backend reports."""

    cycles: int
    late_cycles: int  # host period above late_factor * the arm's control period
    period_p50_ms: float
    period_p99_ms: float
    period_max_ms: float
    compute_p50_ms: float
    compute_p99_ms: float
    compute_max_ms: float

    def _timing_summary(self) -> str:
        return (f"{self.cycles} cycles, period p50 {self.period_p50_ms:.3f} / p99 {self.period_p99_ms:.3f} / "
                f"max {self.period_max_ms:.3f} ms, {self.late_cycles} late")


class LoopRobot(Robot):
    """A :class:`~robot_rl.interfaces.Robot` whose loop runs in a process of its own (module docstring).

    A subclass gives its loop's blocks and entry point and names its arm and its loop in
    the class attributes below (they make the one-line messages), calls :meth:`_open` at
    the end of its ``__init__``, and builds its statistics from :meth:`_read_stats`.
    ``mp_context`` is ``spawn`` so that the loop process starts clean (no threads, no
    GIL-holding libraries from the parent); as always with spawn, a script that builds the
    robot at module level must do so under ``if __name__ == "__main__":``.
    """

    log: ClassVar[logging.Logger]
    state_layout: ClassVar[Layout]  # the loop's STATE, STATS and (arms with a null space) POSTURE blocks
    stats_layout: ClassVar[Layout]
    posture_layout: ClassVar[Optional[Layout]] = None
    loop_main: ClassVar[Callable[[LoopArgs, Any], None]]  # the loop process's entry point (a staticmethod)
    arm: ClassVar[str]  # how the messages name the arm: "<arm> at <ip>"
    loop_name: ClassVar[str]  # how they name the loop: "the <loop_name> process exited"
    session_name: ClassVar[str]  # "the <session_name> did not end"
    starting: ClassVar[str]  # "no robot state within N s of <starting>"
    connect_hint: ClassVar[str]  # what to check when the arm does not answer at all
    process_name: ClassVar[str]  # of the loop process (its message thread adds "-messages")
    stats_label: ClassVar[str]  # the statistics' line in the log on close

    def __init__(self, robot_cfg: RobotConfig, hw: Any, *, lib: str, mp_context: str,
                 gripper: Optional[Gripper] = None) -> None:
        self.cfg = robot_cfg
        self.hw = hw
        self.ip: str = hw.ip
        self.where = f"{self.arm} at {self.ip}"
        self._lib_name = lib
        self._ctx = multiprocessing.get_context(mp_context)
        self._ch = LoopChannels.create(hw.loop.stats_window, self._ctx, self.state_layout, self.stats_layout,
                                       self.posture_layout)
        self._replies: queue.Queue = queue.Queue()
        self._session_ended = threading.Event()
        self._fault: Optional[str] = None
        self._last_state: Optional[RobotState] = None
        self._session_running = False
        self._closing = False
        self._process: Any = None
        self._conn: Any = None
        self._lock = threading.Lock()  # one request to the loop at a time
        self.rejected_targets = 0
        self.gripper: Optional[Gripper] = gripper

    def _open(self) -> None:
        """Start the loop process, the gripper (:meth:`_make_gripper`, unless one was given) and
        the first session; whatever fails closes what was started."""
        atexit.register(self.close)  # end the session cleanly even if the caller forgets
        try:
            self._spawn_and_connect()
            if self.gripper is None:
                self.gripper = self._make_gripper()
            self._start_session()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ what a backend may change

    def _make_gripper(self) -> Optional[Gripper]:
        """The configured gripper, or None; started after the loop process connected."""
        return None

    def _loop_message(self, text: str) -> str:
        """A message about the loop process, as a one-line reason."""
        return f"{self.where}: {text}"

    def _fault_line(self, fault: str) -> str:
        """The line ``state()`` and ``command()`` raise while the arm is stopped."""
        return fault

    def _died_fault(self) -> str:
        return self._loop_message(f"the {self.loop_name} process died; recover starts it again")

    def _start_failure(self, fault: str) -> RobotFault:
        """What a session that faults before its first state raises."""
        return RobotFault(fault, self._last_state)

    def _running_line(self) -> str:
        return f"{self.where}: {self.loop_name} running"

    def _stale_line(self, silent_s: float) -> str:
        return self._loop_message(f"the {self.loop_name} has published no state for {silent_s:.2f} s")

    def _tau(self, values: np.ndarray) -> np.ndarray:
        """The joint torques of a published state (an arm without torque commands reports zeros)."""
        return values[self.state_layout["tau"]].copy()

    def _restart_loop(self) -> None:
        """``recover`` found the loop process gone: start it again (a failure needs a person)."""
        self.log.info("%s: starting the %s again", self.where, self.loop_name)
        try:
            self._spawn_and_connect()
        except DeviceError as err:
            raise RobotFault(str(err), self._last_state) from None

    def _recover_timeout(self) -> float:
        return max(10.0, float(self.hw.connect_timeout_s))

    def _recover_failure(self, payload: str) -> str:
        """The line raised when the loop could not make the arm drivable again."""
        return payload

    # ------------------------------------------------------------------ process

    def _spawn_and_connect(self) -> None:
        parent_conn, child_conn = self._ctx.Pipe()
        args = LoopArgs(self._lib_name, self.hw, self.cfg, self._ch, logging.getLogger().getEffectiveLevel())
        self._process = self._ctx.Process(target=self.loop_main, args=(args, child_conn), name=self.process_name,
                                          daemon=True)
        self._process.start()
        child_conn.close()
        self._conn = parent_conn
        self._replies = queue.Queue()
        self._session_ended = threading.Event()
        threading.Thread(target=self._read_messages, args=(parent_conn, self._replies, self._session_ended),
                         name=f"{self.process_name}-messages", daemon=True).start()
        kind, payload = self._reply(LOOP_START_S, waiting_for="process start")
        if kind == "connecting":  # the arm's own timeout starts now, not at the spawn
            kind, payload = self._reply(self.hw.connect_timeout_s, waiting_for="connect")
        if kind != "ready":
            self._kill()
            raise DeviceError(payload)

    def _read_messages(self, conn: Any, replies: queue.Queue, ended: threading.Event) -> None:
        """Route the loop's messages: the end of a session (``stopped``, ``fault``) sets
        ``ended`` (and the fault), everything else answers a request."""
        while True:
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                replies.put(("died", None))
                if not self._closing and self._session_running:
                    self._set_fault(self._died_fault())
                ended.set()
                return
            if kind in ("stopped", "fault"):
                if kind == "fault":
                    self._set_fault(payload)
                self._session_running = False
                ended.set()
            else:
                replies.put((kind, payload))

    def _set_fault(self, message: str) -> None:
        self._session_running = False
        if self._fault is None:
            self._fault = message
            self.log.error("%s", self._fault_line(message))

    def _reply(self, timeout: float, waiting_for: str) -> tuple[str, Any]:
        try:
            kind, payload = self._replies.get(timeout=timeout)
        except queue.Empty:
            if waiting_for == "process start":
                return "error", self._loop_message(f"the {self.loop_name} process did not start within {timeout:g} s")
            if waiting_for == "connect":
                return "error", f"the {self.where} did not answer within {timeout:g} s ({self.connect_hint})"
            return "error", self._loop_message(f"the {self.loop_name} did not answer a '{waiting_for}' request "
                                               f"within {timeout:g} s")
        if kind == "died":
            code = self._process.exitcode if self._process is not None else None
            return "error", self._loop_message(f"the {self.loop_name} process exited (code {code}) while waiting "
                                               f"for '{waiting_for}'")
        return kind, payload

    def _request(self, command: str, timeout: float) -> tuple[str, Any]:
        with self._lock:
            try:
                self._conn.send(command)
            except (BrokenPipeError, EOFError, OSError):  # the process died between our look and the send
                code = self._process.exitcode if self._process is not None else None
                return "gone", self._loop_message(f"the {self.loop_name} process is gone (code {code}); "
                                                  f"'{command}' was not sent")
            return self._reply(timeout, waiting_for=command)

    def _start_session(self) -> None:
        """Start a session and wait until it has published its first state."""
        first = self._ch.state.seq
        self._fault = None
        self._session_ended.clear()
        self._session_running = True
        with self._lock:
            self._conn.send("start")
        deadline = time.monotonic() + self.hw.loop.first_state_timeout_s
        while self._ch.state.seq == first:
            if self._fault is not None:
                raise self._start_failure(self._fault)
            if not self._process.is_alive():
                raise DeviceError(f"{self.where}: the {self.loop_name} process exited (code "
                                  f"{self._process.exitcode})")
            if time.monotonic() > deadline:
                raise DeviceError(f"{self.where}: no robot state within {self.hw.loop.first_state_timeout_s:g} s "
                                  f"of {self.starting}")
            time.sleep(0.001)
        self.log.info("%s", self._running_line())

    def _kill(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=2.0)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(timeout=2.0)

    # ------------------------------------------------------------------ Robot

    @property
    def fault(self) -> Optional[str]:
        """The one-line reason the arm stopped, or None while it runs."""
        return self._fault

    def _check_fault(self) -> None:
        if self._fault is not None:
            raise RobotFault(self._fault_line(self._fault), self._last_state)

    def state(self) -> RobotState:
        self._check_fault()
        v, _ = self._ch.state.read()
        layout = self.state_layout
        stamp = float(v[layout["stamp"]][0])
        if self._session_running and time.time() - stamp > STALE_STATE_S:
            self._check_fault()  # the fault message may have just arrived
            raise RobotFault(self._stale_line(time.time() - stamp), self._last_state)
        state = RobotState(
            stamp=stamp,
            tcp_pos=v[layout["pos"]].copy(),
            tcp_quat=v[layout["quat"]].copy(),
            tcp_twist=v[layout["twist"]].copy(),
            tcp_wrench=v[layout["wrench"]].copy(),
            q=v[layout["q"]].copy(),
            dq=v[layout["dq"]].copy(),
            tau=self._tau(v),
            gripper=self._gripper_fraction(),
        )
        self._last_state = state
        return state

    def _gripper_fraction(self) -> float:
        if self.gripper is None:
            return 1.0
        fraction = float(self.gripper.fraction)
        return min(1.0, max(0.0, fraction)) if np.isfinite(fraction) else 1.0

    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        """See :meth:`Robot.command`. A command that cannot be used (pose or gripper) is counted,
        nothing of it is written, and the loop holds the pose it measures next."""
        self._check_fault()
        try:
            pos, quat, opening = robot_command(pos, quat, gripper)
        except BadCommand as err:
            self.rejected_targets += 1
            log_rejection(self.log, "command", self.rejected_targets, f"{self.where}: {err}",
                          "the arm holds where it is")
            self.hold()
            return False
        self._ch.target.write(np.concatenate([pos, quat]))  # the loop's law checks it and clips it to the box
        if opening is not None and self.gripper is not None:
            self.gripper.command(opening)
        return True

    def hold(self) -> None:
        """The loop makes the pose it measures next its target. Never raises a fault."""
        self._ch.control.view[CTRL_HOLD] += 1.0

    def recover(self) -> None:
        """One command after a stop: start the loop process again if it is gone, let the loop
        make the arm drivable again (``recover``), then a new session that starts from the
        measured pose. Raises RobotFault saying what a person must do when the arm cannot be
        recovered from here."""
        if self._fault is None and self._session_running:
            return
        if self._process is None or not self._process.is_alive():
            self._restart_loop()
        kind, payload = self._request("recover", timeout=self._recover_timeout())
        if kind == "gone":  # killed but not yet reaped when we looked (a loaded machine): reap it, start anew
            if self._process is not None:
                self._process.join(timeout=5.0)
            self._restart_loop()
            kind, payload = self._request("recover", timeout=self._recover_timeout())
        if kind != "recovered":
            raise RobotFault(self._recover_failure(payload), self._last_state)
        self.log.info("%s: recovered after: %s", self.where, self._fault)
        self._start_session()

    def _read_stats(self) -> tuple[dict[str, float], dict[str, Any]]:
        """The loop's statistics block by field name, and its :class:`LoopTiming` figures (as
        keyword arguments): the percentiles come from the ring buffers of the last cycles."""
        v, _ = self._ch.stats.read()
        s = {name: float(v[sl][0]) for name, sl in self.stats_layout.slices.items()}
        cycles = int(s["cycles"])
        ring = len(self._ch.periods.view)
        n = min(cycles, ring)
        end = int(s["ring_next"])
        idx = (np.arange(end - n, end) % ring) if n else np.zeros(0, dtype=int)
        periods = self._ch.periods.view[idx] * 1000.0
        computes = self._ch.computes.view[idx] * 1000.0
        periods = periods[np.isfinite(periods)]

        def pct(x: np.ndarray, q: float) -> float:
            return float(np.percentile(x, q)) if x.size else float("nan")

        return s, dict(cycles=cycles, late_cycles=int(s["late"]), period_p50_ms=pct(periods, 50),
                       period_p99_ms=pct(periods, 99), period_max_ms=s["max_period"] * 1000.0,
                       compute_p50_ms=pct(computes, 50), compute_p99_ms=pct(computes, 99),
                       compute_max_ms=s["max_compute"] * 1000.0)

    def stats(self) -> LoopTiming:
        raise NotImplementedError

    def close(self) -> None:
        """Hold, end the session cleanly, stop the loop process and the gripper."""
        if self._closing:
            return
        self._closing = True
        atexit.unregister(self.close)
        if self._process is not None and self._process.is_alive():
            if self._session_running:
                self.hold()
                time.sleep(0.005)
                self._ch.control.view[CTRL_STOP] = 1.0
                if not self._session_ended.wait(2.0):
                    self.log.warning("%s: the %s did not end within 2 s", self.where, self.session_name)
                self._session_running = False
            try:
                self._conn.send("close")
                self._process.join(timeout=3.0)
            except (OSError, ValueError):
                pass
            self._kill()
        if self.gripper is not None:
            self.gripper.close()
        if self._ch.stats.seq:
            self.log.info("%s: %s", self.stats_label, self.stats().summary())
