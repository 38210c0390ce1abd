"""The 500 Hz UR loop: a process of its own that owns the ur_rtde connection.

:func:`loop_process_main` is the entry point of that process. It connects to the UR
(dashboard server, RTDE receive and control interfaces), then serves commands from its
parent over a pipe (``start`` a control session, ``recover`` after a stop, ``close``),
the protocol every loop backend shares (:mod:`.loop_process`). A session
(:meth:`URLoop.run_session`) runs until the parent asks it to stop or the UR stops:

    initPeriod -> checked RTDE reading (ur_state) -> new target or hold? ->
    CartesianAdmittanceController -> speedL(twist) or servoL(reference) ->
    kickWatchdog -> publish state and timing -> waitPeriod

The law is robot_rl's shared one (:mod:`robot_rl.control.admittance`), so the safety
box, the pose-error clip, the speed and acceleration limits, the watchdog and the F/T
fault are the same as on the 6-DoF sim arm. A session never moves before it has a
sample: the law starts at the first usable reading (its pose is the first target and
reference, its F/T reading the bias), and targets written before the session began are
ignored.

The law's clock is the UR's (``getTimestamp``): each command is computed on one RTDE
sample, with ``dt`` the time between the samples, so the commands sent can be
reproduced offline from the samples and the targets alone (tests/support/ur_rig.py
``replay``). A sample seen a second time is skipped, never computed twice
(``repeated``), and the loop retries a quarter period later, which pulls its phase to
just after the UR's; samples that went by without a command are counted (``missed``).
A reading whose clock is unusable cannot be placed in time and is skipped too. An F/T
reading that repeats the last one bit for bit is no new sample (``ft_stale_check``: a
live sensor's noise never repeats), so a stopped sensor ends in the law's stale fault.

Session start: the UR must be RUNNING in NORMAL or REDUCED safety mode; the control
script is uploaded again if it stopped, the F/T sensor zeroed (``zeroFtSensor``, the arm
is at rest then) and ur_rtde's watchdog set (``setWatchdog``): if the loop stops sending
for ``1 / rtde_watchdog_hz``, the UR stops the control script and with it the arm.

Stops: a safety mode other than NORMAL/REDUCED, a robot mode other than RUNNING, a lost
connection (the interfaces say so, or no new sample for ``state_timeout_s``), a refused
command, readings unusable for ``state_timeout_s``, or the law's F/T fault: the loop
sends ``speedStop``/``servoStop`` and ends the session with one line that names the UR
and what to do (:mod:`.faults`). ``recover`` reconnects, unlocks a protective stop
through the dashboard server ``unlock_delay_s`` after it (the UR refuses within 5 s;
refusals are retried until ``recovery.timeout_s``), closes the safety popup and uploads
the control script again; anything else needs a person and is answered with the line
saying what to do.

Like the Franka loop it talks to its parent only through lock-free shared memory (in:
targets and hold requests; out: state and timing statistics; see :mod:`.shared`), and it
is a process because the parent holds the GIL for milliseconds at a time. Timing
statistics use the host's ``perf_counter``: the period between the readings of
successive commands and the compute time from reading to command sent.
"""

from __future__ import annotations

import importlib
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from robot_rl.control import CartesianAdmittanceController, TcpState
from robot_rl.control.admittance import AdmittanceOutput
from robot_rl.errors import install_extra, one_line
from robot_rl_drivers.robots.loop_process import LoopArgs, LoopSessions, begin_process, gc_paused, serve
from robot_rl_drivers.robots.shared import Layout, configure_realtime
from robot_rl_drivers.robots.ur import faults as ur_faults
from robot_rl_drivers.robots.ur.settings import URHardwareConfig
from robot_rl_drivers.robots.ur.state import UNREADABLE, Reading, code, read, ur_pose

log = logging.getLogger("robot_rl_drivers.robots.ur.loop")

EXTRA = install_extra("ur")

STATE = Layout(stamp=1, robot_time=1, pos=3, quat=4, twist=6, wrench=6, q=6, dq=6, target_pos=3, target_quat=4,
               ref_pos=3, ref_quat=4, holding=1, session=1, cycle=1, safety_mode=1, robot_mode=1)
STATS = Layout(cycles=1, late=1, missed=1, repeated=1, max_period=1, max_compute=1, ring_next=1, watchdog_holds=1,
               box_clipped=1, error_clipped=1, rejected=1, nonfinite_states=1, bad_readings=1, ft_faults=1,
               guarded_commands=1, session=1)

REPEAT_RETRY = 0.25  # of a period: how soon a cycle that found the sample already used reads again
UNLOCK_RETRY_S = 0.25  # between unlock attempts the UR refused
SETTLE_S = 1.0  # how long recovery waits for the UR's modes to follow an unlock or a reconnect
GUARD_TOL = 1e-9  # relative: what the last-line guard lets pass above a limit (rounding)
LAW_COUNTERS = ("watchdog_holds", "box_clipped_targets", "error_clipped_cycles", "rejected_targets",
                "nonfinite_states", "ft_faults")


class Rtde:
    """ur_rtde's three modules, imported when built.

    ``lib_name`` ``"ur_rtde"`` means ur_rtde's own modules ``rtde_control``,
    ``rtde_receive`` and ``dashboard_client``; any other name a module that has those
    three as attributes (tests pass a fake). A missing library is an ImportError whose
    message is the one line to show: what is missing and the extra that installs it.
    """

    def __init__(self, lib_name: str = "ur_rtde") -> None:
        try:
            if lib_name == "ur_rtde":
                control, receive, dashboard = (importlib.import_module(name) for name in
                                               ("rtde_control", "rtde_receive", "dashboard_client"))
            else:
                lib = importlib.import_module(lib_name)
                control, receive, dashboard = lib.rtde_control, lib.rtde_receive, lib.dashboard_client
        except (ImportError, AttributeError) as err:
            raise ImportError(f"the UR backend needs {lib_name}: {err} ({EXTRA})") from None
        self.control = control
        self.receive = receive
        self.dashboard = dashboard


class Refused(Exception):
    """The UR cannot be driven now; ``str(err)`` is the one line for the person."""


@dataclass
class Interfaces:
    """The connected ur_rtde interfaces of one loop process."""

    control: Any  # rtde_control.RTDEControlInterface
    receive: Any  # rtde_receive.RTDEReceiveInterface
    dashboard: Any  # dashboard_client.DashboardClient


def connect(rtde: Rtde, hw: URHardwareConfig) -> Interfaces:
    """Dashboard server, RTDE receive, then control (which uploads ur_rtde's script); and the TCP.

    Refused with one line if the UR cannot be reached, is not in remote control or cannot
    move now (a stop, powered off): those need the person, before anything is uploaded.
    """
    ip = hw.ip
    try:
        dashboard = rtde.dashboard.DashboardClient(ip)
        dashboard.connect(int(min(hw.connect_timeout_s, 10.0) * 1000))
    except Exception as err:  # noqa: BLE001 - whatever the library raises is one line
        raise Refused(ur_faults.unreachable(ip, err)) from None
    try:
        remote = bool(dashboard.isInRemoteControl())
    except Exception as err:  # noqa: BLE001 - PolyScope before 5.6 cannot say; the control interface will
        log.warning("UR at %s: cannot ask whether it is in remote control (%s)", ip, one_line(err))
        remote = True
    if not remote:
        raise Refused(ur_faults.not_in_remote_control(ip))
    try:
        receive = rtde.receive.RTDEReceiveInterface(ip, float(hw.rate_hz))
    except Exception as err:  # noqa: BLE001
        raise Refused(ur_faults.describe_connect_error(ip, err)) from None
    safety, robot = modes(receive)
    if UNREADABLE not in (safety, robot) and not ur_faults.arm_can_move(safety, robot):
        line = ur_faults.describe_stop(ip, safety, robot, auto_unlock=False)
        raise Refused(line.replace("then recover", "then start again"))
    try:
        control = rtde.control.RTDEControlInterface(ip, float(hw.rate_hz))
    except Exception as err:  # noqa: BLE001
        raise Refused(ur_faults.describe_connect_error(ip, err)) from None
    if hw.tcp_offset is not None and not control.setTcp([float(v) for v in hw.tcp_offset]):
        raise Refused(f"UR at {ip} refused setTcp {list(hw.tcp_offset)}: check robot.hardware.tcp_offset and "
                      "the teach pendant, then start again")
    return Interfaces(control, receive, dashboard)


def modes(receive: Any) -> tuple[int, int]:
    """The safety and robot modes (:data:`~.ur_state.UNREADABLE` where a reading is not an integer)."""
    return code(receive.getSafetyMode()), code(receive.getRobotMode())


def bad_fields(r: Reading) -> list[str]:
    """The names of the unusable fields of a reading, for the fault line."""
    names = []
    if not math.isfinite(r.timestamp):
        names.append("timestamp")
    for name, ok in (("TCP pose", r.pose_ok), ("TCP speed", bool(np.all(np.isfinite(r.twist)))),
                     ("F/T", r.wrench_ok), ("joint positions", bool(np.all(np.isfinite(r.q)))),
                     ("joint speeds", bool(np.all(np.isfinite(r.dq))))):
        if not ok:
            names.append(name)
    if UNREADABLE in (r.safety_mode, r.robot_mode):
        names.append("modes")
    return names


class URLoop(LoopSessions):
    """Control sessions and recovery on a connected UR (runs inside the loop process).

    ``cycles`` counts the commands sent (a cycle that found its sample already used sends none).
    """

    hw: URHardwareConfig

    def __init__(self, ur: Interfaces, args: LoopArgs[URHardwareConfig]) -> None:
        super().__init__(args, 1.0 / float(args.hw.rate_hz))
        self.ur = ur
        self.ip = args.hw.ip
        self.period = self.cycle_s
        self.acc = max(float(self.cfg.admittance.max_acc), float(self.cfg.admittance.max_rot_acc))
        self.repeated = 0
        self.bad_readings = 0
        self.guarded = 0
        self.law_totals = dict.fromkeys(LAW_COUNTERS, 0)  # the law counters of the sessions before this one
        self.protective_since: Optional[float] = None  # monotonic time the loop saw a protective stop

    # ------------------------------------------------------------------ session

    def run_session(self) -> tuple[str, Optional[str]]:
        """One control session: ``("stopped", None)`` or ``("fault", one line)``."""
        self._begin_session()
        ctrl = CartesianAdmittanceController(self.cfg.admittance, self.box)
        try:
            self._prepare()
        except Refused as err:
            self._publish_stats(ctrl)
            return "fault", str(err)
        except Exception as err:  # noqa: BLE001 - a library error while starting is a lost connection
            self._publish_stats(ctrl)
            return "fault", ur_faults.lost_connection(self.ip, one_line(err))
        with gc_paused():
            try:
                return self._cycles(ctrl)
            except Exception as err:  # noqa: BLE001 - ur_rtde raises RuntimeError when the connection breaks
                return self._end(ctrl, "fault", ur_faults.lost_connection(self.ip, one_line(err)))
            finally:
                self._fold_law_counters(ctrl)

    def _prepare(self) -> None:
        """The UR can move, its script runs, the F/T sensor is zeroed and the watchdog set."""
        control = self.ur.control
        safety, robot = modes(self.ur.receive)
        if UNREADABLE not in (safety, robot) and not ur_faults.arm_can_move(safety, robot):
            raise Refused(self._stop_line(safety, robot))
        if not control.isProgramRunning() and not control.reuploadScript():
            raise Refused(self._refusal("reuploadScript"))
        if self.hw.zero_ft_on_start and not control.zeroFtSensor():
            raise Refused(self._refusal("zeroFtSensor"))
        if self.hw.rtde_watchdog_hz > 0 and not control.setWatchdog(float(self.hw.rtde_watchdog_hz)):
            raise Refused(self._refusal("setWatchdog"))

    def _cycles(self, ctrl: CartesianAdmittanceController) -> tuple[str, Optional[str]]:
        control, receive, hw = self.ur.control, self.ur.receive, self.hw
        servo = hw.command == "servol"
        period = self.period
        last_ts: Optional[float] = None  # the UR clock of the last sample a command was computed on
        last_force: Optional[np.ndarray] = None  # its F/T reading (usable ones only)
        prev_read = 0.0
        now = time.perf_counter()
        last_new = now  # host time of the last new sample
        last_good = now  # host time of the last reading usable in every field
        loops = 0
        while True:
            t_start = control.initPeriod()
            loops += 1
            if self._stop_requested(loops):
                return self._end(ctrl, "stopped", None)
            r = read(receive)
            t_read = time.perf_counter()
            if r.ok:
                last_good = t_read
            else:
                self.bad_readings += 1
            problem = self._reading_problem(r, t_read - last_good)
            if problem is not None:
                return self._end(ctrl, "fault", problem)
            ts = r.timestamp
            new = math.isfinite(ts) and (last_ts is None or ts > last_ts)
            if new and last_ts is None and not r.pose_ok:
                new = False  # the law starts only at a measured pose
            if not new:
                if math.isfinite(ts) and last_ts is not None and ts <= last_ts:
                    self.repeated += 1
                    if not receive.isConnected():
                        return self._end(ctrl, "fault", ur_faults.lost_connection(
                            self.ip, "ur_rtde reports the RTDE connection closed"))
                if t_read - last_new > hw.state_timeout_s:
                    return self._end(ctrl, "fault", ur_faults.lost_connection(
                        self.ip, self._silence_reason(t_read - last_new)))
                control.kickWatchdog()
                self._publish_stats(ctrl)
                time.sleep(REPEAT_RETRY * period)  # the next sample is due: read again soon, not a period later
                continue
            last_new = t_read
            fresh = r.wrench_ok and not (hw.ft_stale_check and last_force is not None
                                         and np.array_equal(r.wrench, last_force))
            tcp = r.tcp(fresh)
            if last_ts is None:
                ctrl.start(tcp, ts)  # reference and first target: this pose; F/T bias: this reading
                dt = period
            else:
                self._take_parent_commands(ctrl, tcp, ts)
                dt = ts - last_ts
                self.missed += max(0, int(round(dt / period)) - 1)
            out = ctrl.compute(tcp, ts, dt)
            last_ts = ts
            if r.wrench_ok:
                last_force = r.wrench.copy()
            if ctrl.fault is not None:
                return self._end(ctrl, "fault", self._ft_line(ctrl.fault))
            if servo:
                sent = control.servoL(self._guard_pose(out, tcp), float(self.cfg.admittance.max_speed), self.acc,
                                      period, float(hw.servo_lookahead_s), float(hw.servo_gain))
            else:
                sent = control.speedL(self._guard_twist(out.twist), self.acc, period)
            t_sent = time.perf_counter()
            self._record_timing(t_read - prev_read if prev_read else float("nan"), t_sent - t_read)
            prev_read = t_read
            if not sent:
                return self._end(ctrl, "fault", self._refusal("servoL" if servo else "speedL"))
            if r.ok:
                self._publish_state(r, tcp, out, ctrl, ts)
            self._publish_stats(ctrl)
            control.kickWatchdog()
            control.waitPeriod(t_start)

    def _reading_problem(self, r: Reading, unusable_s: float) -> Optional[str]:
        """Why the session must end at this reading (the UR stopped, or its readings have been
        unusable for ``state_timeout_s``), or None. Unreadable modes are a bad reading, not a stop."""
        if UNREADABLE not in (r.safety_mode, r.robot_mode) and not ur_faults.arm_can_move(r.safety_mode,
                                                                                           r.robot_mode):
            return self._stop_line(r.safety_mode, r.robot_mode)
        if unusable_s > self.hw.state_timeout_s:
            return (f"UR at {self.ip} sends unusable readings (non-finite or malformed {', '.join(bad_fields(r))}) "
                    f"for {unusable_s:.2f} s: restart the UR's controller, then recover")
        return None

    # ------------------------------------------------------------------ the last-line guard

    def _guard_twist(self, twist: np.ndarray) -> list[float]:
        """The twist as sent: finite and within the speed limits. The law guarantees both;
        this only counts (``guarded_commands``) and repairs what a bug would let through."""
        adm = self.cfg.admittance
        safe = np.where(np.isfinite(twist), twist, 0.0)
        for sl, limit in ((slice(0, 3), float(adm.max_speed)), (slice(3, 6), float(adm.max_rot_speed))):
            norm = float(np.linalg.norm(safe[sl]))
            if norm > limit * (1.0 + GUARD_TOL):
                safe[sl] = safe[sl] * (limit / norm)
        if not np.array_equal(safe, twist):
            self.guarded += 1
            log.error("the admittance law's twist %s broke its limits; sent %s", twist, safe)
        return safe.tolist()

    def _guard_pose(self, out: AdmittanceOutput, tcp: TcpState) -> list[float]:
        """The reference pose as sent: finite and inside the box (as :meth:`_guard_twist`);
        a non-finite one is replaced by the measured pose, which is where the arm stays."""
        pos, quat = np.asarray(out.pos, dtype=np.float64), np.asarray(out.quat, dtype=np.float64)
        safe_pos, safe_quat = pos, quat
        if not (np.all(np.isfinite(pos)) and np.all(np.isfinite(quat))):
            safe_pos, safe_quat = tcp.pos, tcp.quat
        box, tol = self.box, GUARD_TOL * (1.0 + np.abs(safe_pos))
        outside = (safe_pos < box.pos_low - tol) | (safe_pos > box.pos_high + tol)
        safe_pos = np.where(outside, np.clip(safe_pos, box.pos_low, box.pos_high), safe_pos)
        if safe_quat is not quat or not np.array_equal(safe_pos, pos):
            self.guarded += 1
            log.error("the admittance law's reference %s left the box or was not finite; sent %s", pos, safe_pos)
        return ur_pose(safe_pos, safe_quat)

    # ------------------------------------------------------------------ ending a session

    def _end(self, ctrl: CartesianAdmittanceController, kind: str, message: Optional[str]) -> tuple[str, Optional[str]]:
        """Stop the arm (the UR decelerates at ``stop_acc``) and end the session."""
        if message is not None:
            log.error("%s", message)
        try:
            stop = self.ur.control.servoStop if self.hw.command == "servol" else self.ur.control.speedStop
            stop(float(self.hw.stop_acc))
        except Exception as err:  # noqa: BLE001 - the arm may be gone; the UR's own watchdog stops it then
            log.warning("UR at %s: could not send the stop command (%s)", self.ip, one_line(err))
        self._publish_stats(ctrl)
        return kind, message

    def _stop_line(self, safety: int, robot: int) -> str:
        if safety == ur_faults.PROTECTIVE_STOP and self.protective_since is None:
            self.protective_since = time.monotonic()
        rec = self.hw.recovery
        return ur_faults.describe_stop(self.ip, safety, robot, auto_unlock=rec.auto_unlock,
                                       unlock_delay_s=rec.unlock_delay_s)

    def _refusal(self, what: str) -> str:
        """Why the UR refused ``what``, as one line (connection, then modes, then the script)."""
        ur = self.ur
        try:
            if not (ur.control.isConnected() and ur.receive.isConnected()):
                return ur_faults.lost_connection(self.ip, "ur_rtde reports the RTDE connection closed")
            for _ in range(5):  # a stop's modes may reach RTDE a little after the refusal
                safety, robot = modes(ur.receive)
                if UNREADABLE not in (safety, robot) and not ur_faults.arm_can_move(safety, robot):
                    return self._stop_line(safety, robot)
                if not ur.control.isProgramRunning():
                    break
                time.sleep(0.02)
            if not ur.control.isProgramRunning():
                return (f"UR at {self.ip} refused {what}: the ur_rtde control script is not running (a program "
                        "was started or stopped on the teach pendant, or the RTDE watchdog stopped it): recover "
                        "uploads it again")
        except Exception as err:  # noqa: BLE001
            return ur_faults.lost_connection(self.ip, one_line(err))
        return f"UR at {self.ip} refused {what}: check the log on the teach pendant, then recover"

    def _silence_reason(self, silent_s: float) -> str:
        try:
            if not (self.ur.receive.isConnected() and self.ur.control.isConnected()):
                return "ur_rtde reports the RTDE connection closed"
        except Exception as err:  # noqa: BLE001
            return one_line(err)
        return f"no new RTDE sample for {silent_s:.2f} s"

    def _ft_line(self, fault: str) -> str:
        """The law's F/T or box fault as the UR's line: what happened, and what the person does."""
        what = fault.rsplit("; ", 1)[0]
        if "outside the box" in what:  # the guard's box fault: pushed out by a collision or a person
            todo = "take the force off and bring the arm back into the box (freedrive), then recover"
        elif "saturated" in what:
            todo = ("a collision or a wrong payload (robot.admittance.force_limit): clear it, then recover (it "
                    "zeroes the sensor again)")
        else:
            todo = ("check the F/T readings on the teach pendant (URSim: robot.hardware.ft_stale_check false), "
                    "then recover")
        return f"UR at {self.ip}: {what}; the arm is stopped: {todo}"

    # ------------------------------------------------------------------ recovery

    def recover(self) -> tuple[str, Optional[str]]:
        """Make the UR drivable again: ``("recovered", None)`` or ``("error", what a person must do)``."""
        try:
            self._reconnect()
            self._unlock_if_protective_stop()
            safety, robot = self._settled_modes()
            if not ur_faults.arm_can_move(safety, robot):
                return "error", self._stop_line(safety, robot)
            if not self._dashboard(lambda d: d.isInRemoteControl(), default=True):
                return "error", ur_faults.not_in_remote_control(self.ip).replace("then start again", "then recover")
            self._dashboard(lambda d: d.closeSafetyPopup(), default=None)
            control = self.ur.control
            if not control.isProgramRunning() and not control.reuploadScript():
                return "error", (f"UR at {self.ip}: the ur_rtde control script would not start again: check that "
                                 "the teach pendant is in Remote Control and runs no other program, then recover")
        except Refused as err:
            return "error", str(err)
        except Exception as err:  # noqa: BLE001
            return "error", (f"UR at {self.ip}: recovery failed ({one_line(err)}): check the teach pendant and the "
                             "network cable, then recover")
        self.protective_since = None
        return "recovered", None

    def _reconnect(self) -> None:
        for name, iface in (("receive", self.ur.receive), ("control", self.ur.control)):
            try:
                ok = bool(iface.isConnected()) or bool(iface.reconnect())
            except Exception as err:  # noqa: BLE001
                log.warning("UR at %s: reconnecting the %s interface: %s", self.ip, name, one_line(err))
                ok = False
            if not ok:
                raise Refused(ur_faults.lost_connection(self.ip, "reconnecting failed"))

    def _settled_modes(self) -> tuple[int, int]:
        """The modes, waiting a moment for readable ones (RTDE may lag a reconnect or an unlock)."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            safety, robot = modes(self.ur.receive)
            readable = UNREADABLE not in (safety, robot)
            if (readable and ur_faults.arm_can_move(safety, robot)) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if not readable:
            raise Refused(f"UR at {self.ip} sends unusable readings (its robot and safety modes): restart the UR's "
                          "controller, then recover")
        return safety, robot

    def _unlock_if_protective_stop(self) -> None:
        rec = self.hw.recovery
        safety, robot = modes(self.ur.receive)
        if safety != ur_faults.PROTECTIVE_STOP:
            return
        if not rec.auto_unlock:
            raise Refused(ur_faults.describe_stop(self.ip, safety, robot, auto_unlock=False))
        since = self.protective_since if self.protective_since is not None else time.monotonic()
        wait = since + rec.unlock_delay_s - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        deadline = time.monotonic() + rec.timeout_s
        while True:
            try:
                self.ur.dashboard.unlockProtectiveStop()
                log.info("UR at %s: protective stop unlocked", self.ip)
                return
            except Exception as err:  # noqa: BLE001 - the UR refuses within 5 s of the stop: retry
                why = one_line(err)
                if "unlock" not in why.lower():
                    self._reconnect_dashboard()
            if time.monotonic() + UNLOCK_RETRY_S > deadline:
                raise Refused(f"UR at {self.ip} is in protective stop and refuses to unlock it ({why}) for "
                              f"{rec.timeout_s:g} s: clear the cause, unlock it on the teach pendant, then recover")
            time.sleep(UNLOCK_RETRY_S)

    def _dashboard(self, call: Any, default: Any) -> Any:
        """A dashboard request, once more after reconnecting if it fails; ``default`` if it fails again."""
        for attempt in range(2):
            try:
                return call(self.ur.dashboard)
            except Exception as err:  # noqa: BLE001
                if attempt:
                    log.warning("UR at %s: the dashboard server did not answer (%s)", self.ip, one_line(err))
                else:
                    self._reconnect_dashboard()
        return default

    def _reconnect_dashboard(self) -> None:
        dashboard = self.ur.dashboard
        try:
            dashboard.disconnect()
        except Exception:  # noqa: BLE001 - it may be gone already
            pass
        try:
            dashboard.connect(int(min(self.hw.connect_timeout_s, 10.0) * 1000))
        except Exception as err:  # noqa: BLE001
            raise Refused(ur_faults.lost_connection(self.ip, f"dashboard server: {one_line(err)}")) from None

    def close(self) -> None:
        """Stop ur_rtde's script on the UR and disconnect (best effort: the process ends next)."""
        for call in (self.ur.control.stopScript, self.ur.control.disconnect, self.ur.receive.disconnect,
                     self.ur.dashboard.disconnect):
            try:
                call()
            except Exception as err:  # noqa: BLE001
                log.debug("UR at %s: %s while closing", self.ip, one_line(err))

    # ------------------------------------------------------------------ state and statistics

    def _publish_state(self, r: Reading, tcp: TcpState, out: AdmittanceOutput, ctrl: CartesianAdmittanceController,
                       ts: float) -> None:
        self._write_state(STATE, robot_time=ts, pos=tcp.pos, quat=tcp.quat, twist=r.twist, wrench=r.wrench, q=r.q,
                          dq=r.dq, target_pos=ctrl.target_pos, target_quat=ctrl.target_quat, ref_pos=out.pos,
                          ref_quat=out.quat, holding=float(ctrl.holding), cycle=ctrl.stats.cycles,
                          safety_mode=r.safety_mode, robot_mode=r.robot_mode)

    def _law_count(self, ctrl: CartesianAdmittanceController, name: str) -> int:
        return self.law_totals[name] + int(getattr(ctrl.stats, name))

    def _fold_law_counters(self, ctrl: CartesianAdmittanceController) -> None:
        for name in LAW_COUNTERS:
            self.law_totals[name] += int(getattr(ctrl.stats, name))

    def _publish_stats(self, ctrl: CartesianAdmittanceController) -> None:
        count = self._law_count
        self._write_stats(STATS, repeated=self.repeated, watchdog_holds=count(ctrl, "watchdog_holds"),
                          box_clipped=count(ctrl, "box_clipped_targets"),
                          error_clipped=count(ctrl, "error_clipped_cycles"), rejected=count(ctrl, "rejected_targets"),
                          nonfinite_states=count(ctrl, "nonfinite_states"), bad_readings=self.bad_readings,
                          ft_faults=count(ctrl, "ft_faults"), guarded_commands=self.guarded)


def loop_process_main(args: LoopArgs[URHardwareConfig], conn: Any) -> None:
    """Entry point of the loop process (the protocol: :mod:`.loop_process`)."""
    begin_process(args, "ur-loop")
    try:
        rtde = Rtde(args.lib)
    except ImportError as err:
        conn.send(("error", str(err)))
        return
    configure_realtime(args.hw.loop, "UR loop", log)  # before connecting: ur_rtde's threads inherit it
    conn.send(("connecting", None))  # the parent's connect_timeout_s starts here
    try:
        ur = connect(rtde, args.hw)
    except Refused as err:
        conn.send(("error", str(err)))
        return
    except Exception as err:  # noqa: BLE001 - any other failure to connect is one line too
        conn.send(("error", f"UR at {args.hw.ip}: {one_line(err)}"))
        return
    conn.send(("ready", None))
    serve(conn, URLoop(ur, args))
