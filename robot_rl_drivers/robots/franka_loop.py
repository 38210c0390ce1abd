"""The 1 kHz torque loop: a process of its own that owns the libfranka connection.

:func:`loop_process_main` is the entry point of that process. It connects to the
robot, then serves commands from its parent over a pipe (``start`` a torque session,
``recover`` after a reflex, ``close``). A session (:meth:`TorqueLoop.run_session`) runs
until the parent asks it to stop or the robot raises:

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
ROS or DDS, image handling) holds the GIL for milliseconds at a time.

Times: the controller's clock (watchdog) is the robot's own (``RobotState.time``); the
torque-rate limit uses the robot's 1 ms cycle. Timing statistics use the host's
``perf_counter``: the period between successive ``readOnce`` returns, the compute time
from ``readOnce`` to ``writeOnce``, and the robot cycles the host missed (a
``readOnce`` duration above 1 ms).
"""

from __future__ import annotations

import gc
import importlib
import logging
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_rl.config.hardware import FrankaHardwareConfig, TorqueLoopSettings
from robot_rl.config.sections import RobotConfig
from robot_rl.control import CartesianImpedanceController, SafetyBox
from robot_rl_drivers.robots.franka_state import arm_state
from robot_rl_drivers.robots.shared import Counters, Layout, SeqBlock

log = logging.getLogger("robot_rl_drivers.robots.franka_loop")

CYCLE_S = 1e-3  # the Franka's control cycle

TARGET = Layout(pos=3, quat=4)
# active=0: back to the configured posture and gains; stiffness NaN: keep the configured one.
POSTURE = Layout(q=7, stiffness=1, active=1)
STATE = Layout(stamp=1, robot_time=1, pos=3, quat=4, twist=6, wrench=6, q=7, dq=7, tau=7,
               target_pos=3, target_quat=4, holding=1, posture=1, session=1, cycle=1, success_rate=1)
STATS = Layout(cycles=1, late=1, missed=1, max_period=1, max_compute=1, ring_next=1, watchdog_holds=1,
               box_clipped=1, error_clipped=1, rejected=1, rejected_postures=1, success_rate=1, session=1)
# Counters written by the parent and read by the loop.
CTRL_STOP, CTRL_HOLD, CTRL_SIZE = 0, 1, 2


@dataclass
class LoopChannels:
    """The shared memory of one loop process (created by the parent, inherited by the child)."""

    target: SeqBlock
    posture: SeqBlock
    state: SeqBlock
    stats: SeqBlock
    periods: Counters  # ring buffer of cycle periods (s)
    computes: Counters  # ring buffer of compute times (s)
    control: Counters

    @classmethod
    def create(cls, window: int, ctx: Any) -> "LoopChannels":
        return cls(SeqBlock(TARGET.size, ctx), SeqBlock(POSTURE.size, ctx), SeqBlock(STATE.size, ctx),
                   SeqBlock(STATS.size, ctx), Counters(window, ctx), Counters(window, ctx),
                   Counters(CTRL_SIZE, ctx))


@dataclass
class LoopArgs:
    """Everything the loop process needs; plain data, pickled into the child."""

    lib: str  # import name of the libfranka binding: "pylibfranka" (tests pass a fake)
    hw: FrankaHardwareConfig
    robot: RobotConfig
    channels: LoopChannels
    log_level: int = logging.INFO


class TorqueLoop:
    """Torque sessions on a connected robot (runs inside the loop process)."""

    def __init__(self, lib: Any, robot: Any, model: Any, args: LoopArgs) -> None:
        self.lib, self.robot, self.model = lib, robot, model
        self.cfg = args.robot
        self.settings: TorqueLoopSettings = args.hw.loop
        self.ch = args.channels
        self.box = SafetyBox.from_config(args.robot)
        self.window = len(self.ch.periods.view)
        self.session = 0
        self.cycles = 0
        self.late = 0
        self.missed = 0
        self.max_period = 0.0
        self.max_compute = 0.0
        self.success_rate = 1.0
        self.rejected_postures = 0
        self.last_state: Any = None
        self._target_seen = 0
        self._posture_seen = 0
        self._hold_seen = 0.0
        self._state_buf = np.zeros(STATE.size)
        self._stats_buf = np.zeros(STATS.size)
        self._parent = multiprocessing.parent_process()

    def run_session(self) -> tuple[str, str | None]:
        """One torque-control session: ``("stopped", None)`` or ``("fault", message)``."""
        self.session += 1
        ctrl = CartesianImpedanceController(self.cfg.controller, self.box)
        self._target_seen = self.ch.target.seq  # a target written before this session is stale
        self._posture_seen = self.ch.posture.seq  # so is a posture
        self._hold_seen = self.ch.control.view[CTRL_HOLD]
        self.ch.control.view[CTRL_STOP] = 0.0
        torques = self.lib.Torques
        cycle = 0
        prev_read = 0.0
        gc.collect()
        gc.disable()  # a collection in the middle of a cycle costs milliseconds
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
                stop = self.ch.control.view[CTRL_STOP] != 0.0 or (cycle % 100 == 0 and not self._parent_alive())
                command = torques(tau.tolist())
                command.motion_finished = stop
                active.writeOnce(command)
                t_written = time.perf_counter()
                self._record_timing(cycle, t_read - prev_read, t_written - t_read, duration.to_sec(), state)
                cycle += 1
                prev_read = t_read
                self._publish(state, arm, tau, ctrl, cycle)
                if stop:
                    return "stopped", None
        except Exception as err:  # noqa: BLE001 - every libfranka error ends the session as a fault
            return "fault", describe_fault(err, self.last_state)
        finally:
            gc.enable()

    def _take_parent_commands(self, ctrl: CartesianImpedanceController, arm: Any, now: float) -> None:
        """A new target (clipped to the box by the controller), posture or hold request, if any."""
        seq = self.ch.target.seq
        if seq != self._target_seen and seq % 2 == 0:
            values, self._target_seen = self.ch.target.read()
            ctrl.set_target(values[TARGET["pos"]], values[TARGET["quat"]], now)
        seq = self.ch.posture.seq
        if seq != self._posture_seen and seq % 2 == 0:
            values, self._posture_seen = self.ch.posture.read()
            self._set_posture(ctrl, values)
        hold = self.ch.control.view[CTRL_HOLD]
        if hold != self._hold_seen:
            self._hold_seen = hold
            ctrl.hold(arm, now)

    def _set_posture(self, ctrl: CartesianImpedanceController, values: np.ndarray) -> None:
        """Apply a POSTURE block; the controller clips it into the joint limits and the
        stiffness bound, and counts (never raises) one it refuses."""
        if values[POSTURE["active"]][0] == 0.0:
            ctrl.set_posture(None)
            return
        stiffness = float(values[POSTURE["stiffness"]][0])
        if not ctrl.set_posture(values[POSTURE["q"]], None if np.isnan(stiffness) else stiffness):
            self.rejected_postures += 1

    def _record_timing(self, cycle: int, period: float, compute: float, robot_dt: float, state: Any) -> None:
        slot = self.cycles % self.window
        self.ch.computes.view[slot] = compute
        self.ch.periods.view[slot] = period if cycle > 0 else np.nan  # the first cycle has no period
        if cycle > 0:
            self.late += period > self.settings.late_factor * CYCLE_S
            self.max_period = max(self.max_period, period)
            self.missed += max(0, int(round(robot_dt / CYCLE_S)) - 1)
        self.max_compute = max(self.max_compute, compute)
        self.success_rate = float(getattr(state, "control_command_success_rate", 1.0))
        self.cycles += 1

    def _parent_alive(self) -> bool:
        return self._parent is None or self._parent.is_alive()

    def _publish(self, state: Any, arm: Any, tau: np.ndarray, ctrl: CartesianImpedanceController,
                 cycle: int) -> None:
        STATE.pack(self._state_buf, stamp=time.time(), robot_time=state.time.to_sec(), pos=arm.pos,
                   quat=arm.quat, twist=arm.jac @ arm.dq, wrench=state.O_F_ext_hat_K, q=arm.q, dq=arm.dq,
                   tau=tau, target_pos=ctrl.target_pos, target_quat=ctrl.target_quat,
                   holding=float(ctrl.holding), posture=float(ctrl.posture_override),
                   session=self.session, cycle=cycle,
                   success_rate=self.success_rate)
        self.ch.state.write(self._state_buf)
        s = ctrl.stats
        STATS.pack(self._stats_buf, cycles=self.cycles, late=self.late, missed=self.missed,
                   max_period=self.max_period, max_compute=self.max_compute,
                   ring_next=self.cycles, watchdog_holds=s.watchdog_holds,
                   box_clipped=s.box_clipped_targets, error_clipped=s.error_clipped_cycles,
                   rejected=s.rejected_targets, rejected_postures=self.rejected_postures,
                   success_rate=self.success_rate, session=self.session)
        self.ch.stats.write(self._stats_buf)


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


def configure_realtime(settings: TorqueLoopSettings) -> None:
    """Pin and prioritise this process as configured; a refusal is a warning (libfranka
    itself refuses to run without real-time scheduling when ``realtime: enforce``)."""
    if settings.cpu is not None:
        try:
            os.sched_setaffinity(0, {settings.cpu})
        except (OSError, AttributeError) as err:
            log.warning("cannot pin the torque loop to CPU %d: %s", settings.cpu, err)
    if settings.rt_priority > 0:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(settings.rt_priority))
        except (OSError, AttributeError) as err:
            log.warning("cannot give the torque loop SCHED_FIFO priority %d (%s); see the README's "
                        "real-time notes (limits.conf rtprio)", settings.rt_priority, err)


def connect(lib: Any, hw: FrankaHardwareConfig) -> tuple[Any, Any]:
    """Connect to the arm, set its collision behaviour, load its model."""
    rt = lib.RealtimeConfig.kEnforce if hw.loop.realtime == "enforce" else lib.RealtimeConfig.kIgnore
    robot = lib.Robot(hw.ip, rt)
    c = hw.collision
    robot.set_collision_behavior(list(c.contact_torque), list(c.collision_torque),
                                 list(c.contact_force), list(c.collision_force))
    return robot, robot.load_model()


def loop_process_main(args: LoopArgs, conn: Any) -> None:
    """Entry point of the loop process (see the module docstring for the protocol).

    Messages to the parent are ``(kind, payload)``: ``ready``, ``error`` (one line),
    ``stopped``, ``fault`` (one line), ``recovered``, ``closed``.
    """
    logging.basicConfig(level=args.log_level, format="%(levelname)s franka-loop: %(message)s")
    # Ctrl-C reaches the whole process group; the parent answers it by holding and closing
    # the session cleanly, which a KeyboardInterrupt in the middle of a cycle would not.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        lib = importlib.import_module(args.lib)
    except ImportError as err:
        conn.send(("error", f"the franka torque backend needs {args.lib}: {err} (pip install robot_rl[real])"))
        return
    configure_realtime(args.hw.loop)
    try:
        robot, model = connect(lib, args.hw)
    except Exception as err:  # noqa: BLE001 - any libfranka failure to connect is one line
        conn.send(("error", f"cannot connect to the Franka at {args.hw.ip}: {describe_fault(err, None)}"))
        return
    conn.send(("ready", None))
    loop = TorqueLoop(lib, robot, model, args)
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
            try:
                robot.automatic_error_recovery()
                conn.send(("recovered", None))
            except Exception as err:  # noqa: BLE001
                conn.send(("error", describe_fault(err, None)))
        elif command == "close":
            conn.send(("closed", None))
            return
