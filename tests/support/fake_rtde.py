"""A fake ur_rtde that plays a UR e-series arm: ``rtde_control``, ``rtde_receive``, ``dashboard_client``.

The UR loop process imports its library by name (``robot.hardware`` backend ``ur``, the
``lib`` argument): ``"ur_rtde"`` means ur_rtde's own modules, any other name a module
with those three as attributes. Tests put this file's folder on ``sys.path`` and pass
``lib="fake_rtde"``. The classes have the signatures of the ur_rtde calls the driver
makes (``test_the_fake_has_ur_rtde_s_api`` checks them against the real package when it
is installed), return what ur_rtde returns, and raise ``RuntimeError`` with ur_rtde's
messages where ur_rtde raises.

The arm (:class:`FakeUR`, one per process, shared by the interfaces as the real
controller is): its clock ticks every 2 ms of host time (``getTimestamp``) and
``waitPeriod`` sleeps to the end of the period ``initPeriod`` began, so a slow loop
misses samples and a fast one sees one twice, as on a real UR. Each tick, the TCP pose
integrates the last ``speedL`` twist (or jumps to the last ``servoL`` pose), so the arm
moves as commanded; or, with a ``stream`` in the scenario, it replays recorded states.
The F/T reading is a small offset (removed by ``zeroFtSensor``) plus deterministic noise
plus the scenario's external wrench.

The scenario comes from a JSON file named by ``$ROBOT_RL_FAKE_UR`` (read when the arm is
made, i.e. inside the loop process). Events are keyed by the number of motion commands
(``speedL``/``servoL``) sent so far, so they happen at the same point of a loop however
fast the host runs:

* ``reachable`` false: every connection fails as with a wrong IP; ``connect: "hang"``:
  constructors never return (an address that swallows packets);
* ``remote`` false: the UR is in local control (``RTDEControlInterface`` refuses);
* ``safety_mode`` / ``robot_mode``: the modes at start (1 NORMAL / 7 RUNNING);
* ``protective_stop_at``: a protective stop after that many commands (``unlock_window_s``,
  default 5: the dashboard refuses to unlock it earlier; ``unlock: "refuse"`` always);
* ``disconnect_at``: the cable is pulled after that many commands; ``reconnect_after_s``
  (default never): when it is back;
* ``external``: ``{"from": n, "wrench": [6]}``, a wrench added to the F/T reading;
* ``ft_freeze_at``: from then on the F/T reading repeats its last value exactly;
* ``corrupt``: a list of ``{"from": n, "to": m, "field": f, "value": v}``: reads of ``f``
  (pose, force, speed, q, qd, timestamp, safety_mode, robot_mode) while ``n <= commands < m``
  (or, with ``"reads": k`` instead of ``"to"``, the first ``k`` reads from command ``n`` on)
  return ``v``: a list, or ``"nan"``, ``"inf"``, ``"-inf"``, ``"huge"`` (1e308 in every
  slot), ``"short"`` (5 values), ``"empty"``, ``"text"``;
* ``stream``: a list of ``{"pose": [6], "force": [6]}`` served in turn, one per command;
* ``log``: a path prefix: every call is logged to ``<log>-calls.json`` and every motion
  command, with the state the loop read before it, to ``<log>-cycles.npz`` (written
  whole, then renamed, whenever the arm is stopped and when the connection closes).
"""

from __future__ import annotations

import datetime
import json
import os
import threading
import time
import types
from pathlib import Path
from typing import Any, Optional

import numpy as np

from robot_rl import jsonio
from robot_rl.control.transforms import quat_mul, quat_to_rotvec, rotvec_to_quat

SCENARIO_ENV = "ROBOT_RL_FAKE_UR"
PERIOD = 0.002  # the e-series controller's RTDE period
CLOCK_START = 1000.0  # the UR's clock is not zero when we connect
START_POSE = (0.40, -0.10, 0.30, np.pi, 0.0, 0.0)  # the tool pointing down
START_Q = (0.0, -1.57, 1.57, -1.57, -1.57, 0.0)
FT_OFFSET = np.array([2.0, -1.5, 4.0, 0.05, -0.04, 0.02])  # the sensor's bias before zeroFtSensor
NORMAL, PROTECTIVE_STOP, RUNNING = 1, 3, 7

CYCLE_FIELDS = ("kind", "args", "t_host", "timestamp", "pose", "force", "segment")  # kind 0 speedL, 1 servoL

_lock = threading.RLock()
_arms: dict[str, "FakeUR"] = {}


def scenario() -> dict:
    path = os.environ.get(SCENARIO_ENV)
    return json.loads(Path(path).read_text()) if path else {}


def arm(hostname: str) -> "FakeUR":
    """The simulated UR at ``hostname`` (made on first use, with the scenario of that moment)."""
    with _lock:
        if hostname not in _arms:
            _arms[hostname] = FakeUR(hostname, scenario())
        return _arms[hostname]


def _corrupted(value: Any, size: int) -> Any:
    if isinstance(value, list):
        return [float(v) for v in value]
    return {"nan": [float("nan")] * size, "inf": [float("inf")] * size, "-inf": [float("-inf")] * size,
            "huge": [1e308] * size, "short": [0.1] * (size - 1), "empty": [], "text": "n/a"}[value]


class FakeUR:
    """The controller and arm behind the three interfaces (see the module docstring)."""

    def __init__(self, hostname: str, scenario: dict) -> None:
        self.hostname = hostname
        self.scenario = scenario
        self.t0 = time.perf_counter()
        self.tick = 0  # the last tick integrated
        self.pose = np.array(START_POSE, dtype=np.float64)
        self.twist_cmd = np.zeros(6)
        self.servo_pose: Optional[np.ndarray] = None
        self.speed = np.zeros(6)
        self.ft_zero = np.zeros(6)
        self.frozen_force: Optional[list[float]] = None
        self.safety_mode = int(scenario.get("safety_mode", NORMAL))
        self.robot_mode = int(scenario.get("robot_mode", RUNNING))
        self.program_running = False
        self.connected = True
        self.disconnected_at: Optional[float] = None
        self.stop_time: Optional[float] = None
        self.commands = 0  # speedL / servoL sent
        self.segment = 0  # stop commands so far (a control session ends with one)
        self.watchdog_hz = 0.0
        self.last_input = time.perf_counter()
        self.watchdog_trips = 0
        self.calls: list[list] = []
        self.cycles: list[list] = []
        self.last_read: dict[str, Any] = {"timestamp": np.nan, "pose": [np.nan] * 6, "force": [np.nan] * 6}
        self.stale: Optional[dict[str, Any]] = None  # what a disconnected receive interface keeps serving
        self.corrupted_reads: dict[int, int] = {}  # corrupt entry -> reads served corrupted

    # ------------------------------------------------------------------ clock and physics

    def now_tick(self) -> int:
        return int((time.perf_counter() - self.t0) / PERIOD)

    def advance(self) -> None:
        """Integrate the commanded motion up to the current tick; trip the watchdog, the stops."""
        now = time.perf_counter()
        if (self.watchdog_hz > 0 and self.program_running and now - self.last_input > 1.0 / self.watchdog_hz):
            self.program_running = False  # ur_rtde's watchdog stops the control script
            self.twist_cmd[:] = 0.0
            self.watchdog_trips += 1
            self.record("<watchdog stopped the control script>")
        target = self.now_tick()
        moving = self.safety_mode == NORMAL and self.robot_mode == RUNNING and self.program_running
        while self.tick < target:
            self.tick += 1
            if not moving:
                self.speed = np.zeros(6)
                continue
            if self.servo_pose is not None:
                self.speed = (self.servo_pose - self.pose) / PERIOD
                self.pose = self.servo_pose.copy()
            else:
                self.speed = self.twist_cmd.copy()
                self.pose[:3] += self.twist_cmd[:3] * PERIOD
                q = quat_mul(rotvec_to_quat(self.twist_cmd[3:] * PERIOD), rotvec_to_quat(self.pose[3:]))
                self.pose[3:] = quat_to_rotvec(q)

    def _event(self, key: str) -> bool:
        at = self.scenario.get(key)
        return at is not None and self.commands >= int(at)

    def check_events(self) -> None:
        if self._event("protective_stop_at") and self.stop_time is None and self.safety_mode == NORMAL:
            self.safety_mode = PROTECTIVE_STOP
            self.program_running = False  # a protective stop ends the control script
            self.twist_cmd[:] = 0.0
            self.stop_time = time.perf_counter()
            self.record("<protective stop>")
        if self._event("disconnect_at") and self.connected and self.disconnected_at is None:
            self.stale = self.state()
            self.connected = False
            self.disconnected_at = time.perf_counter()
            self.record("<cable pulled>")

    # ------------------------------------------------------------------ what RTDE reports

    def force(self) -> list[float]:
        if self.frozen_force is not None:
            return list(self.frozen_force)
        k = self.tick
        noise = 0.05 * np.sin(np.array([0.11, 0.23, 0.37, 0.41, 0.53, 0.67]) * k + np.arange(6))
        wrench = FT_OFFSET - self.ft_zero + noise * np.array([1, 1, 1, 0.1, 0.1, 0.1])
        ext = self.scenario.get("external")
        if ext and self.commands >= int(ext.get("from", 0)):
            wrench = wrench + np.asarray(ext["wrench"], dtype=np.float64)
        value = [float(v) for v in wrench]
        if self._event("ft_freeze_at"):
            self.frozen_force = value
        return value

    def state(self) -> dict[str, Any]:
        stream = self.scenario.get("stream")
        pose = [float(v) for v in self.pose]
        force = self.force()
        if stream:
            entry = stream[min(self.commands, len(stream) - 1)]
            pose, force = [float(v) for v in entry["pose"]], [float(v) for v in entry["force"]]
        delta = np.asarray(pose) - np.asarray(START_POSE)
        return {"timestamp": CLOCK_START + self.tick * PERIOD, "pose": pose, "force": force,
                "speed": [float(v) for v in self.speed], "q": [float(q + d) for q, d in zip(START_Q, delta)],
                "qd": [float(v) for v in self.speed], "safety_mode": self.safety_mode, "robot_mode": self.robot_mode}

    def read(self, field: str) -> Any:
        with _lock:
            self.advance()
            self.check_events()
            value = (self.stale if self.stale is not None and not self.connected else self.state())[field]
            for c in self.scenario.get("corrupt", []):
                if c["field"] != field or self.commands < int(c["from"]):
                    continue
                served = self.corrupted_reads.get(id(c), 0)
                if ("reads" in c and served < int(c["reads"])) or ("to" in c and self.commands < int(c["to"])):
                    self.corrupted_reads[id(c)] = served + 1
                    size = 1 if field in ("timestamp", "safety_mode", "robot_mode") else 6
                    bad = _corrupted(c["value"], size)
                    value = bad[0] if size == 1 and isinstance(bad, list) and bad else bad
            if field in self.last_read:
                self.last_read[field] = value
            return value

    # ------------------------------------------------------------------ logging

    def record(self, name: str, *args: Any) -> None:
        self.calls.append([name, list(args), time.perf_counter() - self.t0, self.commands])

    def record_cycle(self, kind: int, args: list[float]) -> None:
        r = self.last_read
        padded = (list(args) + [np.nan] * 10)[:10]
        pose = r["pose"] if isinstance(r["pose"], list) and len(r["pose"]) == 6 else [np.nan] * 6
        force = r["force"] if isinstance(r["force"], list) and len(r["force"]) == 6 else [np.nan] * 6
        try:
            timestamp = float(r["timestamp"])
        except (TypeError, ValueError):
            timestamp = np.nan
        self.cycles.append([kind, padded, time.perf_counter() - self.t0, timestamp, pose, force, self.segment])

    def save(self) -> None:
        path = self.scenario.get("log")
        if not path:
            return
        columns = list(zip(*self.cycles)) if self.cycles else [[] for _ in CYCLE_FIELDS]
        arrays = {name: np.asarray(col, dtype=np.float64) for name, col in zip(CYCLE_FIELDS, columns)}
        with open(f"{path}-cycles.tmp.npz", "wb") as f:
            np.savez(f, **arrays)
        os.replace(f"{path}-cycles.tmp.npz", f"{path}-cycles.npz")
        Path(f"{path}-calls.json.tmp").write_text(jsonio.dumps(self.calls))
        os.replace(f"{path}-calls.json.tmp", f"{path}-calls.json")

    # ------------------------------------------------------------------ connection

    def check_reachable(self, what: str, port: int) -> None:
        if self.scenario.get("connect") == "hang":
            time.sleep(3600)
        if self.scenario.get("reachable", True) is False:
            if what == "dashboard":
                raise RuntimeError("Timeout connecting to UR dashboard server.")
            raise RuntimeError(f"Error: Could not connect to: {self.hostname} at {port}, verify the IP")

    def plugged_in(self) -> bool:
        back = self.scenario.get("reconnect_after_s")
        return self.connected or (back is not None and self.disconnected_at is not None
                                  and time.perf_counter() - self.disconnected_at >= float(back))

    def movable(self) -> bool:
        return self.connected and self.safety_mode == NORMAL and self.robot_mode == RUNNING


def _timepoint() -> datetime.timedelta:
    """What pybind11 makes of a ``std::chrono::steady_clock::time_point``."""
    return datetime.timedelta(seconds=time.perf_counter())


class RTDEControlInterface:
    """ur_rtde's control interface: uploads the control script, sends commands (see the module docstring)."""

    FLAGS_DEFAULT = 0

    def __init__(self, hostname: str, frequency: float = -1.0, flags: int = 0, ur_cap_port: int = 50002,
                 rt_priority: int = 0) -> None:
        self.arm = arm(hostname)
        self.arm.record("RTDEControlInterface", hostname, frequency, rt_priority)
        self.arm.check_reachable("dashboard", 29999)
        if self.arm.scenario.get("remote", True) is False:
            raise RuntimeError("ur_rtde: Please enable remote control on the robot!")
        self.arm.check_reachable("rtde", 30004)
        with _lock:
            self.arm.advance()
            if not self.arm.movable():
                raise RuntimeError("ur_rtde: Failed to start control script, before timeout of 5 seconds")
            self.arm.program_running = True
            self.arm.last_input = time.perf_counter()
        self.period = 1.0 / (500.0 if frequency <= 0 else frequency)

    def _call(self, name: str, *args: Any) -> None:
        with _lock:
            self.arm.advance()
            self.arm.check_events()
            self.arm.record(name, *args)
            self.arm.save()  # calls other than motion commands are rare: the log is current after each

    def _input(self) -> None:
        self.arm.last_input = time.perf_counter()

    def initPeriod(self) -> datetime.timedelta:
        return _timepoint()

    def waitPeriod(self, t_cycle_start: datetime.timedelta) -> None:
        end = t_cycle_start.total_seconds() + self.period
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                return
            time.sleep(left - 3e-4 if left > 5e-4 else 0.0)  # sleep, then spin the last bit (as ur_rtde does)

    def isConnected(self) -> bool:
        with _lock:
            self.arm.check_events()
            return self.arm.connected

    def isProgramRunning(self) -> bool:
        with _lock:
            self.arm.advance()
            self.arm.check_events()
            return self.arm.program_running

    def reconnect(self) -> bool:
        self._call("reconnect")
        with _lock:
            if not self.arm.plugged_in():
                return False
            self.arm.connected, self.arm.stale = True, None
            return True

    def disconnect(self) -> None:
        self._call("disconnect")
        with _lock:
            self.arm.save()

    def reuploadScript(self) -> bool:
        self._call("reuploadScript")
        with _lock:
            if self.arm.program_running or not self.arm.movable():
                return False
            self.arm.program_running = True
            self.arm.twist_cmd[:] = 0.0
            self.arm.servo_pose = None
            self._input()
            return True

    def stopScript(self) -> None:
        self._call("stopScript")
        with _lock:
            self.arm.program_running = False
            self.arm.save()

    def _motion(self, kind: int, args: list[float]) -> bool:
        with _lock:
            self.arm.advance()
            self.arm.check_events()
            ok = self.arm.movable() and self.arm.program_running
            self.arm.record_cycle(kind, args)
            self.arm.commands += 1
            if ok:
                self._input()
            self.arm.check_events()
            return ok

    def speedL(self, xd: list, acceleration: float = 0.25, time: float = 0.0) -> bool:
        ok = self._motion(0, [*xd, acceleration, time])
        if ok:
            with _lock:
                self.arm.twist_cmd = np.array(xd, dtype=np.float64)
                self.arm.servo_pose = None
        return ok

    def servoL(self, pose: list, speed: float, acceleration: float, time: float, lookahead_time: float,
               gain: float) -> bool:
        ok = self._motion(1, [*pose, speed, acceleration, time, lookahead_time])
        if ok:
            with _lock:
                self.arm.servo_pose = np.array(pose, dtype=np.float64)
        return ok

    def _stop(self, name: str, a: float) -> bool:
        self._call(name, a)
        with _lock:
            self.arm.twist_cmd[:] = 0.0
            self.arm.servo_pose = None
            self.arm.segment += 1
            ok = self.arm.connected and self.arm.program_running
            if ok:
                self._input()
            self.arm.save()
            return ok

    def speedStop(self, a: float = 10.0) -> bool:
        return self._stop("speedStop", a)

    def servoStop(self, a: float = 10.0) -> bool:
        return self._stop("servoStop", a)

    def zeroFtSensor(self) -> bool:
        self._call("zeroFtSensor")
        with _lock:
            if not self.arm.connected:
                return False
            self.arm.ft_zero = self.arm.ft_zero + np.asarray(self.arm.force())
            self._input()
            return True

    def setTcp(self, tcp_offset: list) -> bool:
        self._call("setTcp", *tcp_offset)
        return self.arm.connected

    def setWatchdog(self, min_frequency: float = 10.0) -> bool:
        self._call("setWatchdog", min_frequency)
        with _lock:
            self.arm.watchdog_hz = float(min_frequency)
            self._input()
            return self.arm.connected

    def kickWatchdog(self) -> bool:
        with _lock:
            if self.arm.connected:
                self._input()
            return self.arm.connected


class RTDEReceiveInterface:
    """ur_rtde's receive interface: the newest RTDE sample, field by field."""

    def __init__(self, hostname: str, frequency: float = -1.0, variables: Optional[list] = None, verbose: bool = False,
                 use_upper_range_registers: bool = False, rt_priority: int = 0) -> None:
        self.arm = arm(hostname)
        self.arm.record("RTDEReceiveInterface", hostname, frequency, rt_priority)
        self.arm.check_reachable("rtde", 30004)

    def isConnected(self) -> bool:
        with _lock:
            self.arm.check_events()
            return self.arm.connected

    def reconnect(self) -> bool:
        with _lock:
            self.arm.record("receive.reconnect")
            if not self.arm.plugged_in():
                return False
            self.arm.connected, self.arm.stale = True, None
            return True

    def disconnect(self) -> None:
        with _lock:
            self.arm.record("receive.disconnect")

    def getTimestamp(self) -> float:
        return self.arm.read("timestamp")

    def getActualTCPPose(self) -> list:
        return self.arm.read("pose")

    def getActualTCPSpeed(self) -> list:
        return self.arm.read("speed")

    def getActualTCPForce(self) -> list:
        return self.arm.read("force")

    def getActualQ(self) -> list:
        return self.arm.read("q")

    def getActualQd(self) -> list:
        return self.arm.read("qd")

    def getSafetyMode(self) -> int:
        return self.arm.read("safety_mode")

    def getRobotMode(self) -> int:
        return self.arm.read("robot_mode")

    def isProtectiveStopped(self) -> bool:
        return self.arm.read("safety_mode") == PROTECTIVE_STOP


class DashboardClient:
    """ur_rtde's client of the UR's dashboard server (port 29999)."""

    UNLOCK_REFUSED = ("Cannot unlock protective stop until 5s after occurrence. Always inspect cause of protective "
                      "stop before unlocking")

    def __init__(self, hostname: str, port: int = 29999, verbose: bool = False) -> None:
        self.arm = arm(hostname)
        self.connected = False

    def connect(self, timeout_ms: int = 2000) -> None:
        self.arm.record("dashboard.connect", timeout_ms)
        self.arm.check_reachable("dashboard", 29999)
        self.connected = True

    def isConnected(self) -> bool:
        return self.connected

    def disconnect(self) -> None:
        self.connected = False

    def _require(self) -> None:
        if not self.connected or not self.arm.plugged_in():
            raise RuntimeError("Dashboard client receive function failed with error: Broken pipe")

    def isInRemoteControl(self) -> bool:
        self._require()
        return self.arm.scenario.get("remote", True) is not False

    def polyscopeVersion(self) -> str:
        self._require()
        return "URSoftware 5.15.0.1234 (Jan 01 2024)"

    def robotmode(self) -> str:
        self._require()
        return f"Robotmode: {'RUNNING' if self.arm.robot_mode == RUNNING else 'POWER_OFF'}"

    def safetymode(self) -> str:
        self._require()
        return f"Safetymode: {'PROTECTIVE_STOP' if self.arm.safety_mode == PROTECTIVE_STOP else 'NORMAL'}"

    def closeSafetyPopup(self) -> None:
        self._require()
        self.arm.record("dashboard.closeSafetyPopup")

    def unlockProtectiveStop(self) -> None:
        self._require()
        with _lock:
            arm_ = self.arm
            arm_.record("dashboard.unlockProtectiveStop")
            window = float(arm_.scenario.get("unlock_window_s", 5.0))
            waited = time.perf_counter() - (arm_.stop_time or 0.0)
            if arm_.safety_mode != PROTECTIVE_STOP:
                return
            if arm_.scenario.get("unlock") == "refuse" or waited < window:
                arm_.save()
                raise RuntimeError(f"Unlock protective stop failure: {self.UNLOCK_REFUSED}")
            arm_.safety_mode = NORMAL
            arm_.save()


rtde_control = types.SimpleNamespace(RTDEControlInterface=RTDEControlInterface)
rtde_receive = types.SimpleNamespace(RTDEReceiveInterface=RTDEReceiveInterface)
dashboard_client = types.SimpleNamespace(DashboardClient=DashboardClient)


# --------------------------------------------------------------------------- reading the logs back


def load_cycles(log: str | Path, timeout: float = 5.0) -> dict[str, np.ndarray]:
    """The motion commands logged under ``log`` (waits for the file)."""
    path = Path(f"{log}-cycles.npz")
    deadline = time.time() + timeout
    while not path.exists() and time.time() < deadline:
        time.sleep(0.02)
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def load_calls(log: str | Path) -> list[list]:
    path = Path(f"{log}-calls.json")
    return json.loads(path.read_text()) if path.exists() else []
