"""The 1 kHz torque loop: a process of its own that owns the libfranka connection.

:func:`loop_process_main` is the entry point of that process. It connects to the
robot, then serves commands from its parent over a pipe (``start`` a torque session,
``recover`` after a reflex, ``close``). A session (:meth:`TorqueLoop.run_session`) runs
until the parent asks it to stop, the robot raises, or the law faults (the TCP pushed more
than ``robot.workspace.outside_margin_m`` outside the box, or turned more than
``outside_margin_rad`` past its orientation bounds: the session ends as a fault
with the law's line, and a session started by ``recover`` while the arm is still out
faults again in its first cycle):

    readOnce -> ArmState (Coriolis as bias) -> new target, hold or posture? ->
    CartesianImpedanceController -> writeOnce(Torques) -> publish state and timing

The controller is robot_rl's shared one (:mod:`robot_rl.control`), so the law, the
safety box, the pose-error clip, the torque-rate limit and the watchdog are the same as
in sim. A session never moves before it has a state: its first target is the pose of
the first state it reads, and targets written before the session began are ignored.

Posture (the joint-space reset): the parent may replace the null-space rest posture and
its stiffness (:meth:`CartesianImpedanceController.set_posture`) while the Cartesian
target keeps holding the TCP. Like a target, a posture written before a session began is
ignored: every session starts with the configured posture and gains. The controller's
watchdog hold restores them too. A posture the controller refuses is logged and counted
(``rejected_postures``), never raised: the parent validates before writing, and the loop
must not die of a bad value.

The loop talks to its parent only through lock-free shared memory (in: targets, hold
requests, postures; out: state, including whether a posture override is active, and
timing statistics; see :mod:`robot_rl_drivers.robots.shared`), so a slow parent can never
delay a cycle. Why a process and not a thread: the parent (env, policy,
ROS or DDS, image handling) holds the GIL for milliseconds at a time. The process
protocol, the channels and the timing statistics are the ones every loop backend shares
(:mod:`robot_rl_drivers.robots.loop_process`).

Times: the controller's clock (watchdog) is the robot's own (``RobotState.time``); the
torque-rate limit uses the robot's 1 ms cycle. Timing statistics use the host's
``perf_counter``: the period between successive ``readOnce`` returns, the compute time
from ``readOnce`` to ``writeOnce``, and the robot cycles the host missed (a
``readOnce`` duration above 1 ms).
"""

from __future__ import annotations

import importlib
import logging
import time
from typing import Any

import numpy as np

from robot_rl.control import CartesianImpedanceController
from robot_rl.errors import install_extra
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
from robot_rl_drivers.robots.franka.state import arm_state
from robot_rl_drivers.robots.loop_process import LoopArgs, LoopSessions, begin_process, gc_paused, serve
from robot_rl_drivers.robots.shared import Layout, configure_realtime

log = logging.getLogger("robot_rl_drivers.robots.franka.loop")

CYCLE_S = 1e-3  # the Franka's control cycle

# active=0: back to the configured posture and gains; stiffness NaN: keep the configured one.
POSTURE = Layout(q=7, stiffness=1, active=1)
STATE = Layout(stamp=1, robot_time=1, pos=3, quat=4, twist=6, wrench=6, q=7, dq=7, tau=7,
               target_pos=3, target_quat=4, holding=1, posture=1, session=1, cycle=1, success_rate=1)
STATS = Layout(cycles=1, late=1, missed=1, max_period=1, max_compute=1, ring_next=1, watchdog_holds=1,
               box_clipped=1, error_clipped=1, rejected=1, rejected_postures=1, success_rate=1, session=1)


class TorqueLoop(LoopSessions):
    """Torque sessions on a connected robot (runs inside the loop process)."""

    def __init__(self, lib: Any, robot: Any, model: Any, args: LoopArgs[FrankaHardwareConfig]) -> None:
        super().__init__(args, CYCLE_S)
        self.lib, self.robot, self.model = lib, robot, model
        self.success_rate = 1.0
        self.rejected_postures = 0
        self.last_state: Any = None
        self._posture_seen = 0

    def run_session(self) -> tuple[str, str | None]:
        """One torque-control session: ``("stopped", None)`` or ``("fault", message)``."""
        self._begin_session()
        ctrl = CartesianImpedanceController(self.cfg.controller, self.box)
        self._posture_seen = self.ch.posture.seq  # a posture written before this session is stale too
        torques = self.lib.Torques
        cycle = 0
        prev_read = 0.0
        with gc_paused():
            try:
                active = self.robot.start_torque_control()
                while True:
                    state, duration = active.readOnce()
                    t_read = time.perf_counter()
                    self.last_state = state
                    arm = arm_state(state, self.model)
                    now = state.time.to_sec()
                    if cycle == 0:
                        ctrl.start(arm, now)  # the first target is the measured pose
                    else:
                        self._take_parent_commands(ctrl, arm, now)
                    tau = ctrl.compute(arm, now, CYCLE_S)
                    stop = self._stop_requested(cycle) or ctrl.fault is not None  # a fault ends the session
                    command = torques(tau.tolist())
                    command.motion_finished = stop
                    active.writeOnce(command)
                    t_written = time.perf_counter()
                    if cycle > 0:
                        self.missed += max(0, int(round(duration.to_sec() / CYCLE_S)) - 1)
                    self.success_rate = float(getattr(state, "control_command_success_rate", 1.0))
                    # the first cycle has no period
                    self._record_timing(t_read - prev_read if cycle > 0 else np.nan, t_written - t_read)
                    cycle += 1
                    prev_read = t_read
                    self._publish(state, arm, tau, ctrl, cycle)
                    if stop:
                        return ("stopped", None) if ctrl.fault is None else ("fault", box_fault_line(ctrl.fault))
            except Exception as err:  # noqa: BLE001 - every libfranka error ends the session as a fault
                return "fault", describe_fault(err, self.last_state)

    def recover(self) -> tuple[str, str | None]:
        """libfranka's automatic error recovery: ``("recovered", None)`` or ``("error", one line)``."""
        try:
            self.robot.automatic_error_recovery()
        except Exception as err:  # noqa: BLE001
            return "error", describe_fault(err, None)
        return "recovered", None

    def _take_other_commands(self, ctrl: CartesianImpedanceController) -> None:
        """A new posture, if any (between a new target and a hold request)."""
        seq = self.ch.posture.seq
        if seq != self._posture_seen and seq % 2 == 0:
            values, self._posture_seen = self.ch.posture.read()
            self._set_posture(ctrl, values)

    def _set_posture(self, ctrl: CartesianImpedanceController, values: np.ndarray) -> None:
        """Apply a POSTURE block; the controller clips it into the joint limits and the
        stiffness bound, and counts (never raises) one it refuses."""
        if values[POSTURE["active"]][0] == 0.0:
            ctrl.set_posture(None)
            return
        stiffness = float(values[POSTURE["stiffness"]][0])
        if not ctrl.set_posture(values[POSTURE["q"]], None if np.isnan(stiffness) else stiffness):
            self.rejected_postures += 1

    def _publish(self, state: Any, arm: Any, tau: np.ndarray, ctrl: CartesianImpedanceController,
                 cycle: int) -> None:
        self._write_state(STATE, robot_time=state.time.to_sec(), pos=arm.pos, quat=arm.quat, twist=arm.jac @ arm.dq,
                          wrench=state.O_F_ext_hat_K, q=arm.q, dq=arm.dq, tau=tau, target_pos=ctrl.target_pos,
                          target_quat=ctrl.target_quat, holding=float(ctrl.holding),
                          posture=float(ctrl.posture_override), cycle=cycle, success_rate=self.success_rate)
        s = ctrl.stats
        self._write_stats(STATS, watchdog_holds=s.watchdog_holds, box_clipped=s.box_clipped_targets,
                          error_clipped=s.error_clipped_cycles, rejected=s.rejected_targets,
                          rejected_postures=self.rejected_postures, success_rate=self.success_rate)


def box_fault_line(fault: str) -> str:
    """The law's box fault (the TCP pushed or turned past a ``robot.workspace`` margin) as the arm's line."""
    return (f"Franka: {fault.rsplit('; ', 1)[0]}; the torque session ended: take the force off and guide the "
            "arm back into the box, then recover")


def describe_fault(err: BaseException, state: Any) -> str:
    """One line: the exception, and the robot's error flags when it reported any."""
    msg = f"{type(err).__name__}: {str(err).strip() or 'no message'}"
    for attr in ("last_motion_errors", "current_errors"):
        errors = getattr(state, attr, None) if state is not None else None
        if errors:
            text = str(errors).strip()
            if text and text not in msg:
                msg += f" ({attr}: {text})"
            break
    return " ".join(msg.split())


def connect(lib: Any, hw: FrankaHardwareConfig) -> tuple[Any, Any]:
    """Connect to the arm, set its collision behaviour, load its model."""
    rt = lib.RealtimeConfig.kEnforce if hw.loop.realtime == "enforce" else lib.RealtimeConfig.kIgnore
    robot = lib.Robot(hw.ip, rt)
    c = hw.collision
    robot.set_collision_behavior(list(c.contact_torque), list(c.collision_torque),
                                 list(c.contact_force), list(c.collision_force))
    return robot, robot.load_model()


def loop_process_main(args: LoopArgs[FrankaHardwareConfig], conn: Any) -> None:
    """Entry point of the loop process (the protocol: :mod:`.loop_process`)."""
    begin_process(args, "franka-loop")
    try:
        lib = importlib.import_module(args.lib)
    except ImportError as err:
        conn.send(("error", f"the franka torque backend needs {args.lib}: {err} ({install_extra('real')})"))
        return
    configure_realtime(args.hw.loop, "torque loop", log)
    conn.send(("connecting", None))  # the parent's connect_timeout_s starts here
    try:
        robot, model = connect(lib, args.hw)
    except Exception as err:  # noqa: BLE001 - any libfranka failure to connect is one line
        conn.send(("error", f"cannot connect to the Franka at {args.hw.ip}: {describe_fault(err, None)}"))
        return
    conn.send(("ready", None))
    serve(conn, TorqueLoop(lib, robot, model, args))
