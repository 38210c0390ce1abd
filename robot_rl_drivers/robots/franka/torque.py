"""A Franka arm driven by robot_rl's own impedance law at 1 kHz (``robot.hardware.mode: torque``).

:class:`FrankaTorqueRobot` is the :class:`~robot_rl.interfaces.Robot` the env sees. It
starts the torque loop process (:mod:`robot_rl_drivers.robots.franka.loop`), which owns
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

import importlib
import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_rl.config.sections import RobotConfig
from robot_rl.control.commands import BadCommand, PostureLimits, log_rejection, posture_command
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.franka.gripper import FrankaGripper
from robot_rl_drivers.robots.franka.loop import POSTURE, STATE, STATS, loop_process_main
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
from robot_rl_drivers.robots.loop_robot import LoopRobot, LoopTiming

log = logging.getLogger("robot_rl_drivers.robots.franka.torque")


@dataclass(frozen=True)
class LoopStats(LoopTiming):
    """Timing of the torque loop (host clock; :class:`LoopTiming`) and what its controller did."""

    missed_robot_cycles: int  # robot cycles that passed without a command from us
    success_rate: float  # the robot's control_command_success_rate, last reading
    watchdog_holds: int
    box_clipped_targets: int
    error_clipped_cycles: int
    rejected_targets: int
    rejected_postures: int  # postures the loop's controller refused (the parent validates first)
    sessions: int

    def summary(self) -> str:
        return (f"{self._timing_summary()}, {self.missed_robot_cycles} missed, compute p99 "
                f"{self.compute_p99_ms:.3f} ms, success rate {self.success_rate:.3f}")


class FrankaTorqueRobot(LoopRobot):
    """A Franka over pylibfranka with robot_rl's 1 kHz impedance loop (module docstring).

    ``lib`` is the import name of the libfranka binding; tests pass a fake with the same
    API. The loop process, the shared memory and the pipe are :class:`LoopRobot`'s.
    """

    log = log
    state_layout = STATE
    stats_layout = STATS
    posture_layout = POSTURE
    loop_main = staticmethod(loop_process_main)
    arm = "Franka"
    loop_name = "torque loop"
    session_name = "torque session"
    starting = "starting torque control"
    connect_hint = "is it on, is FCI enabled in Desk, is the cable in the control box's LAN port?"
    process_name = "franka-torque-loop"
    stats_label = "Franka torque loop"

    def __init__(self, robot_cfg: RobotConfig, hw: FrankaHardwareConfig, *, lib: str = "pylibfranka",
                 mp_context: str = "spawn") -> None:
        super().__init__(robot_cfg, hw, lib=lib, mp_context=mp_context)
        self.rejected_postures = 0  # refused here, before the loop (the loop counts its own)
        self._posture_limits = PostureLimits.from_config(robot_cfg.controller)
        self._open()

    def _make_gripper(self) -> Optional[FrankaGripper]:
        if not self.hw.gripper.enabled:
            return None
        lib_module = importlib.import_module(self._lib_name)
        return FrankaGripper(lib_module, self.hw.ip, self.hw.gripper, self.cfg.gripper_max_width)

    # ------------------------------------------------------------------ the Franka's words

    def _loop_message(self, text: str) -> str:
        return text  # the callers name the arm

    def _fault_line(self, fault: str) -> str:
        return f"{self.where} stopped: {fault}"

    def _died_fault(self) -> str:
        return f"the {self.loop_name} process died"

    def _start_failure(self, fault: str) -> RobotFault:
        return RobotFault(f"{self.where}: the torque session failed to start: {fault}")

    def _running_line(self) -> str:
        return f"{self.where}: torque control running"

    def _stale_line(self, silent_s: float) -> str:
        return f"{self.where}: the torque loop has published no state for {silent_s:.2f} s"

    def _restart_loop(self) -> None:
        log.info("Franka at %s: reconnecting", self.ip)
        self._spawn_and_connect()

    def _recover_failure(self, payload: str) -> str:
        return (f"{self.where}: automatic error recovery failed: {payload} (release the user stop, move the arm "
                "out of a limit in Desk, then recover again)")

    # ------------------------------------------------------------------ posture

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
            log_rejection(log, "posture", self.rejected_postures, f"{self.where}: {err}", "nothing written")
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

    def stats(self) -> LoopStats:
        """Timing and controller statistics of the loop since this robot was created."""
        s, timing = self._read_stats()
        return LoopStats(
            **timing, missed_robot_cycles=int(s["missed"]), success_rate=s["success_rate"],
            watchdog_holds=int(s["watchdog_holds"]), box_clipped_targets=int(s["box_clipped"]),
            error_clipped_cycles=int(s["error_clipped"]),
            rejected_targets=int(s["rejected"]) + self.rejected_targets,
            rejected_postures=int(s["rejected_postures"]), sessions=int(s["session"]),
        )
