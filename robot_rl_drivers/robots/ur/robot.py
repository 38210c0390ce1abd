"""A UR e-series arm driven by robot_rl's admittance law at 500 Hz (``robot.backend: ur``).

:class:`URRobot` is the :class:`~robot_rl.interfaces.Robot` the env sees. It starts the
UR loop process (:mod:`robot_rl_drivers.robots.ur.loop`), which owns the ur_rtde
connection and runs the shared Cartesian admittance law, and talks to it through shared
memory (targets and hold requests in; state and timing out) and a pipe (start, recover,
close), as the Franka torque backend does: that parent side is :mod:`.loop_robot`'s.
The gripper (a Robotiq on the tool connector, :mod:`.robotiq`) runs in this process:
its calls wait for socket answers and have no business in a 500 Hz loop.

Start-up: connect (``connect_timeout_s``), start a control session, and return only once
the loop has published its first state. The loop's first target and reference are that
state's pose, so constructing the robot never moves it.

Faults: a protective stop, any other safety stop, a lost connection, the control script
stopping, or the law's force-torque fault (sensor saturated or silent) ends the session;
from then on ``state()`` and ``command()`` raise
:class:`~robot_rl_drivers.robots.faults.RobotFault` with one line naming the UR and what
to do, until :meth:`URRobot.recover` succeeds (contract in that module). A UR has six
joints and no null space: :meth:`set_posture` is not supported.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from robot_rl.config.sections import RobotConfig
from robot_rl.errors import ConfigError
from robot_rl_drivers.robots.gripper import Gripper
from robot_rl_drivers.robots.loop_robot import LoopRobot, LoopTiming
from robot_rl_drivers.robots.ur.loop import STATE, STATS, loop_process_main
from robot_rl_drivers.robots.ur.settings import URHardwareConfig

log = logging.getLogger("robot_rl_drivers.robots.ur.robot")

TOOL_ALLOWANCE_M = 0.3  # how far a tool may reach beyond the flange, for the workspace check


@dataclass(frozen=True)
class URLoopStats(LoopTiming):
    """Timing of the UR loop (host clock; :class:`LoopTiming`, ``cycles`` = commands sent) and what its law did."""

    missed_samples: int  # RTDE samples that went by without a command computed on them
    repeated_samples: int  # cycles that found the sample already used (nothing sent)
    watchdog_holds: int
    box_clipped_targets: int
    error_clipped_cycles: int
    rejected_targets: int
    nonfinite_states: int  # cycles the law got a non-finite or malformed measured state
    bad_readings: int  # cycles with an unusable RTDE reading (any field)
    ft_faults: int
    guarded_commands: int  # commands the last-line guard had to change (the law never needs it)
    sessions: int

    def summary(self) -> str:
        return (f"{self._timing_summary()}, {self.missed_samples} missed and {self.repeated_samples} repeated "
                f"samples, compute p99 {self.compute_p99_ms:.3f} ms")


def check_reach(cfg: RobotConfig, hw: URHardwareConfig, file: str = "<config>") -> None:
    """ConfigError if a corner of the safety box lies beyond the arm's reach (plus a tool)."""
    low, high = np.asarray(cfg.workspace.pos_low), np.asarray(cfg.workspace.pos_high)
    corners = np.array([[(low, high)[(i >> k) & 1][k] for k in range(3)] for i in range(8)])
    far = float(np.max(np.linalg.norm(corners, axis=1)))
    if far > hw.reach_m + TOOL_ALLOWANCE_M:
        raise ConfigError(f"{file}: robot.workspace reaches {far:.2f} m from the base, but a {hw.model} reaches "
                          f"{hw.reach_m:.2f} m (+{TOOL_ALLOWANCE_M:g} m for a tool): shrink the box or check "
                          "robot.hardware.model")


class URRobot(LoopRobot):
    """A UR e-series over ur_rtde with robot_rl's 500 Hz admittance loop (module docstring).

    ``lib`` names the ur_rtde library: ``"ur_rtde"`` (its modules ``rtde_control``,
    ``rtde_receive``, ``dashboard_client``) or a module with those as attributes (tests
    pass a fake). The loop process, the shared memory and the pipe are :class:`LoopRobot`'s.
    ``gripper`` replaces the configured one (any :class:`~robot_rl_drivers.robots.gripper.Gripper`).
    """

    log = log
    state_layout = STATE
    stats_layout = STATS
    loop_main = staticmethod(loop_process_main)
    arm = "UR"
    loop_name = "UR loop"
    session_name = "control session"
    starting = "starting the control session"
    connect_hint = "is it on, is robot.hardware.ip right, is the network cable in?"
    process_name = "ur-loop"
    stats_label = "UR loop"

    def __init__(self, robot_cfg: RobotConfig, hw: URHardwareConfig, *, lib: str = "ur_rtde",
                 mp_context: str = "spawn", gripper: Optional[Gripper] = None) -> None:
        check_reach(robot_cfg, hw)
        super().__init__(robot_cfg, hw, lib=lib, mp_context=mp_context, gripper=gripper)
        self._open()

    def _make_gripper(self) -> Optional[Gripper]:
        if not self.hw.gripper.enabled:
            return None
        from robot_rl_drivers.robots.ur.robotiq import RobotiqGripper

        return RobotiqGripper(self.hw.ip, self.hw.gripper)

    # ------------------------------------------------------------------ the UR's words

    def _running_line(self) -> str:
        return f"{self.where}: admittance control running ({self.hw.command})"

    def _stale_line(self, silent_s: float) -> str:
        return (f"{super()._stale_line(silent_s)} (the loop is stuck, or a call to the UR hangs on a dead "
                "connection): check the network cable, then recover")

    def _tau(self, values: np.ndarray) -> np.ndarray:
        return np.zeros(6)  # a UR takes no joint torque commands

    def _recover_timeout(self) -> float:
        """Long enough for the loop to wait out the unlock delay and retry (``robot.hardware.recovery``)."""
        return self.hw.recovery.timeout_s + self.hw.recovery.unlock_delay_s + 5.0

    def stats(self) -> URLoopStats:
        """Timing and law statistics of the loop since this robot was created."""
        s, timing = self._read_stats()
        return URLoopStats(
            **timing, missed_samples=int(s["missed"]), repeated_samples=int(s["repeated"]),
            watchdog_holds=int(s["watchdog_holds"]), box_clipped_targets=int(s["box_clipped"]),
            error_clipped_cycles=int(s["error_clipped"]), rejected_targets=int(s["rejected"]) + self.rejected_targets,
            nonfinite_states=int(s["nonfinite_states"]), bad_readings=int(s["bad_readings"]),
            ft_faults=int(s["ft_faults"]), guarded_commands=int(s["guarded_commands"]), sessions=int(s["session"]),
        )


def make(cfg: RobotConfig, hw: URHardwareConfig, *, file: str = "<config>", node: Any = None,
         lib: Optional[str] = None) -> URRobot:
    """The SPEC's factory: the box checked against the model's reach, then the loop started."""
    check_reach(cfg, hw, file)
    return URRobot(cfg, hw, lib=lib or "ur_rtde")
