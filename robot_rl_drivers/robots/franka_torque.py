"""A Franka arm driven by robot_rl's own impedance law at 1 kHz (``robot.hardware.mode: torque``).

:class:`FrankaTorqueRobot` is the :class:`~robot_rl.interfaces.Robot` the env sees. It
starts the torque loop process (:mod:`robot_rl_drivers.robots.franka_loop`), which owns
the libfranka connection and runs the shared Cartesian impedance law, and talks to it
through shared memory (targets, hold requests and null-space postures in; state and
timing out) and a pipe (start, recover, close). The Franka Hand runs in this process
(:mod:`.franka_gripper`): its calls block for whole motions and have no business in a
1 kHz loop.

Start-up: connect (``connect_timeout_s``), start a torque session, and return only once
the loop has published its first state. The loop's first target is that state's pose,
so constructing the robot never moves it.

Posture (:meth:`FrankaTorqueRobot.set_posture`, the joint-space reset): the posture and
null-space stiffness cross into the loop and replace the controller's configured ones
while the Cartesian target keeps holding the TCP; ``posture_override`` says whether the
loop runs with one. Every torque session, the first and each one :meth:`recover`
starts, begins with the configured posture: a posture written before it is ignored.

Faults: a reflex or error ends the torque session; from then on ``state()`` and
``command()`` raise :class:`~robot_rl_drivers.robots.faults.RobotFault` (contract in
that module) until :meth:`FrankaTorqueRobot.recover` succeeds.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from robot_rl.config.hardware import FrankaHardwareConfig
from robot_rl.config.sections import RobotConfig
from robot_rl.control.commands import (
    BadCommand,
    PostureLimits,
    log_rejection,
    posture_command,
    robot_command,
)
from robot_rl.errors import DeviceError
from robot_rl.interfaces import Robot, RobotState
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.franka_gripper import FrankaGripper
from robot_rl_drivers.robots.franka_loop import (
    CTRL_HOLD,
    CTRL_STOP,
    POSTURE,
    STATE,
    STATS,
    LoopArgs,
    LoopChannels,
    loop_process_main,
)

log = logging.getLogger("robot_rl_drivers.robots.franka_torque")

STALE_STATE_S = 0.25  # a running loop that has not published for this long is stuck


@dataclass(frozen=True)
class LoopStats:
    """Timing of the torque loop (host clock) and what its controller did."""

    cycles: int
    late_cycles: int  # host period above late_factor * 1 ms
    missed_robot_cycles: int  # robot cycles that passed without a command from us
    period_p50_ms: float
    period_p99_ms: float
    period_max_ms: float
    compute_p50_ms: float
    compute_p99_ms: float
    compute_max_ms: float
    success_rate: float  # the robot's control_command_success_rate, last reading
    watchdog_holds: int
    box_clipped_targets: int
    error_clipped_cycles: int
    rejected_targets: int
    rejected_postures: int  # postures the loop's controller refused (the parent validates first)
    sessions: int

    def summary(self) -> str:
        return (f"{self.cycles} cycles, period p50 {self.period_p50_ms:.3f} / p99 {self.period_p99_ms:.3f} / "
                f"max {self.period_max_ms:.3f} ms, {self.late_cycles} late, {self.missed_robot_cycles} missed, "
                f"compute p99 {self.compute_p99_ms:.3f} ms, success rate {self.success_rate:.3f}")


class FrankaTorqueRobot(Robot):
    """A Franka over pylibfranka with robot_rl's 1 kHz impedance loop (module docstring).

    ``lib`` is the import name of the libfranka binding; tests pass a fake with the same
    API. ``mp_context`` is ``spawn`` so that the loop process starts clean (no threads,
    no GIL-holding libraries from the parent); as always with spawn, a script that builds
    the robot at module level must do so under ``if __name__ == "__main__":``.
    """

    def __init__(self, robot_cfg: RobotConfig, hw: FrankaHardwareConfig, *, lib: str = "pylibfranka",
                 mp_context: str = "spawn") -> None:
        self.cfg = robot_cfg
        self.hw = hw
        self._lib_name = lib
        self._ctx = multiprocessing.get_context(mp_context)
        self._ch = LoopChannels.create(hw.loop.stats_window, self._ctx)
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
        self.rejected_postures = 0  # refused here, before the loop (the loop counts its own)
        self._posture_limits = PostureLimits.from_config(robot_cfg.controller)
        self.gripper: Optional[FrankaGripper] = None
        atexit.register(self.close)  # end the torque session cleanly even if the caller forgets
        try:
            self._spawn_and_connect()
            if hw.gripper.enabled:
                lib_module = importlib.import_module(lib)
                self.gripper = FrankaGripper(lib_module, hw.ip, hw.gripper, robot_cfg.gripper_max_width)
            self._start_session()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ process

    def _spawn_and_connect(self) -> None:
        parent_conn, child_conn = self._ctx.Pipe()
        args = LoopArgs(self._lib_name, self.hw, self.cfg, self._ch, logging.getLogger().getEffectiveLevel())
        self._process = self._ctx.Process(target=loop_process_main, args=(args, child_conn),
                                          name="franka-torque-loop", daemon=True)
        self._process.start()
        child_conn.close()
        self._conn = parent_conn
        self._replies = queue.Queue()
        self._session_ended = threading.Event()
        threading.Thread(target=self._read_messages, args=(parent_conn, self._replies, self._session_ended),
                         name="franka-loop-messages", daemon=True).start()
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
                    self._set_fault("the torque loop process died")
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
            log.error("Franka stopped: %s", message)

    def _reply(self, timeout: float, waiting_for: str) -> tuple[str, Any]:
        try:
            kind, payload = self._replies.get(timeout=timeout)
        except queue.Empty:
            if waiting_for == "connect":
                return "error", (f"the Franka at {self.hw.ip} did not answer within {timeout:g} s (is it on, "
                                 "is FCI enabled in Desk, is the cable in the control box's LAN port?)")
            return "error", f"the torque loop did not answer a '{waiting_for}' request within {timeout:g} s"
        if kind == "died":
            code = self._process.exitcode if self._process is not None else None
            return "error", f"the torque loop process exited (code {code}) while waiting for '{waiting_for}'"
        return kind, payload

    def _request(self, command: str, timeout: float) -> tuple[str, Any]:
        with self._lock:
            self._conn.send(command)
            return self._reply(timeout, waiting_for=command)

    def _start_session(self) -> None:
        """Start a torque session and wait until it has published its first state."""
        first = self._ch.state.seq
        self._fault = None
        self._session_ended.clear()
        self._session_running = True
        with self._lock:
            self._conn.send("start")
        deadline = time.monotonic() + self.hw.loop.first_state_timeout_s
        while self._ch.state.seq == first:
            if self._fault is not None:
                raise RobotFault(f"Franka at {self.hw.ip}: the torque session failed to start: {self._fault}")
            if not self._process.is_alive():
                raise DeviceError(f"Franka at {self.hw.ip}: the torque loop process exited (code "
                                  f"{self._process.exitcode})")
            if time.monotonic() > deadline:
                raise DeviceError(f"Franka at {self.hw.ip}: no robot state within "
                                  f"{self.hw.loop.first_state_timeout_s:g} s of starting torque control")
            time.sleep(0.001)
        log.info("Franka at %s: torque control running", self.hw.ip)

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
            raise RobotFault(f"Franka at {self.hw.ip} stopped: {self._fault}", self._last_state)

    def _read_state_values(self) -> np.ndarray:
        values, _ = self._ch.state.read()
        return values

    def state(self) -> RobotState:
        self._check_fault()
        v = self._read_state_values()
        stamp = float(v[STATE["stamp"]][0])
        if self._session_running and time.time() - stamp > STALE_STATE_S:
            self._check_fault()  # the fault message may have just arrived
            raise RobotFault(f"Franka at {self.hw.ip}: the torque loop has published no state for "
                             f"{time.time() - stamp:.2f} s", self._last_state)
        state = RobotState(
            stamp=stamp,
            tcp_pos=v[STATE["pos"]].copy(),
            tcp_quat=v[STATE["quat"]].copy(),
            tcp_twist=v[STATE["twist"]].copy(),
            tcp_wrench=v[STATE["wrench"]].copy(),
            q=v[STATE["q"]].copy(),
            dq=v[STATE["dq"]].copy(),
            tau=v[STATE["tau"]].copy(),
            gripper=self.gripper.fraction if self.gripper is not None else 1.0,
        )
        self._last_state = state
        return state

    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        """See :meth:`Robot.command`. A command that cannot be used (pose or gripper) is counted,
        nothing of it is written, and the loop holds the pose it measures next."""
        self._check_fault()
        try:
            pos, quat, opening = robot_command(pos, quat, gripper)
        except BadCommand as err:
            self.rejected_targets += 1
            log_rejection(log, "command", self.rejected_targets, f"Franka at {self.hw.ip}: {err}",
                          "the arm holds where it is")
            self.hold()
            return False
        self._ch.target.write(np.concatenate([pos, quat]))  # the loop clips it to the safety box
        if opening is not None and self.gripper is not None:
            self.gripper.command(opening)
        return True

    def set_posture(self, q: np.ndarray | None, stiffness: float | None = None) -> bool:
        """Pull the null space toward ``q`` (7 joint angles, rad) with ``stiffness`` (Nm/rad).

        The contract is :meth:`robot_rl.interfaces.Robot.set_posture`. The loop applies it
        within a cycle or two; ``q=None`` restores the configured posture and gains, and
        so do the loop's watchdog hold and the start of every torque session (a posture
        written before a session began does not apply to it). A fault raises RobotFault
        as in :meth:`command`; a ``q`` that is not 7 finite values, or a ``stiffness`` that
        is not finite and >= 0, is counted and nothing is written (False). ``q`` is clipped
        into the joint limits and ``stiffness`` to its bound here, and again in the loop.
        """
        self._check_fault()
        try:
            posture = posture_command(q, stiffness, self._posture_limits)
        except BadCommand as err:
            self.rejected_postures += 1
            log_rejection(log, "posture", self.rejected_postures, f"Franka at {self.hw.ip}: {err}", "nothing written")
            return False
        values = np.zeros(POSTURE.size)
        if posture.q is not None:
            k = np.nan if posture.stiffness is None else posture.stiffness
            POSTURE.pack(values, q=posture.q, stiffness=k, active=1.0)
        self._ch.posture.write(values)
        return True

    @property
    def posture_override(self) -> bool:
        """Whether the loop's controller runs with a posture from :meth:`set_posture` (as last published)."""
        values, _ = self._ch.state.read()
        return bool(values[STATE["posture"]][0])

    def hold(self) -> None:
        """The loop makes the pose it measures next its target. Never raises a fault."""
        self._ch.control.view[CTRL_HOLD] += 1.0

    def recover(self) -> None:
        """One command after a reflex or error: automatic error recovery, then a new torque
        session that starts from the measured pose. Raises RobotFault when the arm cannot
        be recovered (a person must look), DeviceError when it cannot be reached."""
        if self._fault is None and self._session_running:
            return
        if self._process is None or not self._process.is_alive():
            log.info("Franka at %s: reconnecting", self.hw.ip)
            self._spawn_and_connect()
        kind, payload = self._request("recover", timeout=max(10.0, self.hw.connect_timeout_s))
        if kind != "recovered":
            raise RobotFault(f"Franka at {self.hw.ip}: automatic error recovery failed: {payload} "
                             "(release the user stop, move the arm out of a limit in Desk, then recover again)",
                             self._last_state)
        log.info("Franka at %s: recovered after: %s", self.hw.ip, self._fault)
        self._start_session()

    def stats(self) -> LoopStats:
        """Timing and controller statistics of the loop since this robot was created."""
        v, _ = self._ch.stats.read()
        cycles = int(v[STATS["cycles"]][0])
        n = min(cycles, len(self._ch.periods.view))
        end = int(v[STATS["ring_next"]][0])
        idx = (np.arange(end - n, end) % len(self._ch.periods.view)) if n else np.zeros(0, dtype=int)
        periods = self._ch.periods.view[idx] * 1000.0
        computes = self._ch.computes.view[idx] * 1000.0
        periods = periods[np.isfinite(periods)]

        def pct(x: np.ndarray, q: float) -> float:
            return float(np.percentile(x, q)) if x.size else float("nan")

        return LoopStats(
            cycles=cycles, late_cycles=int(v[STATS["late"]][0]), missed_robot_cycles=int(v[STATS["missed"]][0]),
            period_p50_ms=pct(periods, 50), period_p99_ms=pct(periods, 99),
            period_max_ms=float(v[STATS["max_period"]][0]) * 1000.0,
            compute_p50_ms=pct(computes, 50), compute_p99_ms=pct(computes, 99),
            compute_max_ms=float(v[STATS["max_compute"]][0]) * 1000.0,
            success_rate=float(v[STATS["success_rate"]][0]),
            watchdog_holds=int(v[STATS["watchdog_holds"]][0]),
            box_clipped_targets=int(v[STATS["box_clipped"]][0]),
            error_clipped_cycles=int(v[STATS["error_clipped"]][0]),
            rejected_targets=int(v[STATS["rejected"]][0]) + self.rejected_targets,
            rejected_postures=int(v[STATS["rejected_postures"]][0]),
            sessions=int(v[STATS["session"]][0]),
        )

    def close(self) -> None:
        """Hold, end the torque session cleanly, stop the loop process and the gripper threads."""
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
                    log.warning("Franka at %s: the torque session did not end within 2 s", self.hw.ip)
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
            log.info("Franka torque loop: %s", self.stats().summary())
