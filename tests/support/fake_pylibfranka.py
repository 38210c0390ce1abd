"""A fake pylibfranka that plays a synthetic robot, plus tests that keep it honest.

The torque loop process imports its libfranka binding by name; tests put this file's
folder on ``sys.path`` and pass ``lib="fake_pylibfranka"``. The fake has the same API
as the pylibfranka calls the driver makes (``Robot(ip, RealtimeConfig)``,
``set_collision_behavior``, ``load_model``, ``start_torque_control``,
``ActiveControl.readOnce/writeOnce``, ``Torques``, ``Duration.to_sec``,
``Model.zero_jacobian/coriolis``, ``automatic_error_recovery``, ``Gripper``), which
``test_the_fake_has_pylibfranka_s_api`` checks against the real package.

The synthetic arm: a Panda whose joints follow ``q(t) = q0 + A (1 - cos(w t))``, ``t``
from the start of the torque session (so ``dq = 0`` at the first state), with ``O_T_EE`` and
the zero Jacobian from the Panda's published
kinematics (column-major, as libfranka). The robot clock ticks every millisecond of
host time; ``readOnce`` waits for the next tick and reports how many ticks passed, so a
slow loop misses robot cycles exactly as on the real arm. ``Model.gravity`` is large, so
a driver that added it would be caught.

The scenario comes from a JSON file named by ``$ROBOT_RL_FAKE_FRANKA`` (read when a
Robot is made, i.e. inside the loop process). Every torque session is logged to
``<log>-<session>.npz``: the states served and the torques written, cycle by cycle.
"""

from __future__ import annotations

import enum
import json
import os
import time
from pathlib import Path

import numpy as np

SCENARIO_ENV = "ROBOT_RL_FAKE_FRANKA"

Q0 = np.array([0.05, -0.70, 0.02, -2.30, 0.03, 1.60, 0.80])
AMPLITUDE = np.array([0.02, 0.03, -0.02, 0.04, 0.05, -0.03, 0.06])
OMEGA = 2.0 * np.pi * 0.8  # rad/s

# Panda kinematics, modified DH (a_{i-1}, d_i, alpha_{i-1}), then flange and hand TCP.
_DH = [(0.0, 0.333, 0.0), (0.0, 0.0, -np.pi / 2), (0.0, 0.316, np.pi / 2), (0.0825, 0.0, np.pi / 2),
       (-0.0825, 0.384, -np.pi / 2), (0.0, 0.0, np.pi / 2), (0.088, 0.0, np.pi / 2)]


def scenario() -> dict:
    path = os.environ.get(SCENARIO_ENV)
    return json.loads(Path(path).read_text()) if path else {}


def _dh(a: float, d: float, alpha: float, theta: float) -> np.ndarray:
    ca, sa, ct, st = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
    return np.array([[ct, -st, 0.0, a], [st * ca, ct * ca, -sa, -d * sa],
                     [st * sa, ct * sa, ca, d * ca], [0.0, 0.0, 0.0, 1.0]])


def forward_kinematics(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The TCP pose (4x4) and the zero Jacobian (6x7, linear rows first)."""
    t = np.eye(4)
    axes, origins = [], []
    for (a, d, alpha), qi in zip(_DH, q):
        t = t @ _dh(a, d, alpha, qi)
        axes.append(t[:3, 2].copy())
        origins.append(t[:3, 3].copy())
    t = t @ _dh(0.0, 0.107, 0.0, 0.0)  # flange
    hand = np.eye(4)
    c, s = np.cos(-np.pi / 4), np.sin(-np.pi / 4)
    hand[:2, :2] = [[c, -s], [s, c]]
    hand[2, 3] = 0.1034
    t = t @ hand
    jac = np.zeros((6, 7))
    for i, (z, p) in enumerate(zip(axes, origins)):
        jac[:3, i] = np.cross(z, t[:3, 3] - p)
        jac[3:, i] = z
    return t, jac


class RealtimeConfig(enum.Enum):
    kEnforce = 0
    kIgnore = 1


class RobotMode(enum.Enum):
    Idle = 1
    Move = 2
    Reflex = 4


class NetworkException(RuntimeError):
    pass


class ControlException(RuntimeError):
    pass


class CommandException(RuntimeError):
    pass


class Errors:
    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names

    def __bool__(self) -> bool:
        return bool(self.names)

    def __str__(self) -> str:
        return "[" + ", ".join(f'"{n}"' for n in self.names) + "]"


class Duration:
    def __init__(self, seconds: float) -> None:
        self._s = seconds

    def to_sec(self) -> float:
        return self._s


class Torques:
    def __init__(self, tau_J) -> None:
        assert len(tau_J) == 7
        self.tau_J = [float(x) for x in tau_J]
        self.motion_finished = False


class RobotState:
    """The fields the driver reads, with libfranka's layouts (lists, column-major)."""

    def __init__(self, t: float, t_motion: float = 0.0) -> None:
        q = Q0 + AMPLITUDE * (1.0 - np.cos(OMEGA * t_motion))
        dq = AMPLITUDE * OMEGA * np.sin(OMEGA * t_motion)
        pose, jac = forward_kinematics(q)
        self.q, self.dq = q.tolist(), dq.tolist()
        self.O_T_EE = pose.flatten(order="F").tolist()
        self._jac = jac.flatten(order="F").tolist()
        self.O_F_ext_hat_K = [1.0, -2.0, 3.0, 0.1, -0.2, 0.3]
        self.tau_J = [0.0] * 7
        self.time = Duration(t)
        self.robot_mode = RobotMode.Move
        self.control_command_success_rate = 0.99
        self.current_errors = Errors()
        self.last_motion_errors = Errors()


class Model:
    def zero_jacobian(self, state: RobotState) -> list:
        return list(state._jac)

    def coriolis(self, state: RobotState) -> list:
        q, dq = np.asarray(state.q), np.asarray(state.dq)
        return (0.3 * dq + 0.02 * np.sin(q)).tolist()

    def gravity(self, state: RobotState) -> list:
        return (10.0 + np.asarray(state.q)).tolist()


class ActiveControl:
    def __init__(self, robot: "Robot") -> None:
        self.robot = robot
        self.t0 = time.perf_counter()
        self.tick = -1  # robot ticks (ms) of the last state served
        self.finished = False
        self.log: dict[str, list] = {"t": [], "duration": [], "q": [], "dq": [], "O_T_EE": [], "tau": [],
                                     "finished": []}
        self.pending_read = False
        self.reads = 0

    def readOnce(self):
        if self.finished:
            raise ControlException("fake libfranka: readOnce after the motion finished")
        fault_at = self.robot.scenario.get("fault_at")
        if fault_at is not None and self.robot.cycles_total >= fault_at and not self.robot.faulted:
            self.robot.faulted = True
            self.robot.mode = RobotMode.Reflex
            self.save(reason="fault")
            raise ControlException('libfranka: Move command aborted: motion aborted by reflex! ["cartesian_reflex"]')
        while True:  # wait for the next robot tick (1 ms of host time)
            tick = int((time.perf_counter() - self.t0) * 1000.0)
            if tick > self.tick:
                break
            time.sleep(max(0.0, (self.tick + 1) / 1000.0 - (time.perf_counter() - self.t0)))
        duration = 0.0 if self.tick < 0 else (tick - self.tick) / 1000.0
        self.tick = tick
        state = RobotState(self.robot.time_offset + tick / 1000.0, tick / 1000.0)
        self.pending_read = True
        self.reads += 1
        self.log["t"].append(state.time.to_sec())
        self.log["duration"].append(duration)
        self.log["q"].append(state.q)
        self.log["dq"].append(state.dq)
        self.log["O_T_EE"].append(state.O_T_EE)
        return state, Duration(duration)

    def writeOnce(self, command: Torques) -> None:
        if not self.pending_read:
            self.robot.writes_before_read += 1
            raise ControlException("fake libfranka: writeOnce without a readOnce before it")
        self.pending_read = False
        self.log["tau"].append(command.tau_J)
        self.log["finished"].append(command.motion_finished)
        self.robot.cycles_total += 1
        if command.motion_finished:
            self.finished = True
            self.save(reason="finished")

    def save(self, reason: str) -> None:
        path = self.robot.scenario.get("log")
        if not path:
            return
        n = len(self.log["tau"])
        arrays = {k: np.asarray(v[:n], dtype=np.float64) for k, v in self.log.items()}
        np.savez(f"{path}-{self.robot.session}.npz", reason=reason, **arrays)


class Robot:
    def __init__(self, ip: str, realtime_config: RealtimeConfig = RealtimeConfig.kEnforce) -> None:
        self.scenario = scenario()
        connect = self.scenario.get("connect", "ok")
        if connect == "refuse":
            raise NetworkException("libfranka: Connection to FCI refused. Please install FCI feature or enable "
                                   "FCI mode in Desk.")
        if connect == "hang":
            time.sleep(3600)
        self.ip = ip
        self.realtime_config = realtime_config
        self.collision = None
        self.session = 0
        self.cycles_total = 0
        self.faulted = False
        self.mode = RobotMode.Idle
        self.writes_before_read = 0
        self.created = time.perf_counter()
        self.time_offset = 12.5  # robot time is not zero at connection

    def set_collision_behavior(self, lower_torque, upper_torque, lower_force, upper_force) -> None:
        assert len(lower_torque) == len(upper_torque) == 7 and len(lower_force) == len(upper_force) == 6
        self.collision = (list(lower_torque), list(upper_torque), list(lower_force), list(upper_force))

    def load_model(self) -> Model:
        return Model()

    def read_once(self) -> RobotState:
        return RobotState(self.time_offset)

    def start_torque_control(self) -> ActiveControl:
        if self.mode == RobotMode.Reflex:
            raise CommandException("libfranka: cannot start torque control: robot is in Reflex mode")
        self.session += 1
        self.mode = RobotMode.Move
        self.time_offset = 12.5 + (time.perf_counter() - self.created)  # the robot clock runs on
        return ActiveControl(self)

    def automatic_error_recovery(self) -> None:
        if self.scenario.get("recover", "ok") != "ok":
            raise CommandException("libfranka: Automatic error recovery command rejected: user stop pressed")
        self.mode = RobotMode.Idle

    def stop(self) -> None:
        self.mode = RobotMode.Idle


class GripperState:
    def __init__(self, width: float, max_width: float) -> None:
        self.width, self.max_width = width, max_width
        self.is_grasped, self.temperature, self.time = False, 30, Duration(0.0)


class Gripper:
    """Moves instantly; records its commands into ``<log>-gripper.json``."""

    def __init__(self, ip: str) -> None:
        self.scenario = scenario()
        if self.scenario.get("gripper", "ok") == "refuse":
            raise NetworkException("libfranka gripper: Connection refused")
        self.width, self.max_width = 0.05, 0.08
        self.calls: list = []

    def _record(self, *call) -> None:
        self.calls.append(list(call))
        path = self.scenario.get("log")
        if path:  # written whole, then renamed: a test polling the file never reads half of it
            Path(f"{path}-gripper.json.tmp").write_text(json.dumps(self.calls))
            os.replace(f"{path}-gripper.json.tmp", f"{path}-gripper.json")

    def homing(self) -> bool:
        self._record("homing")
        self.width = self.max_width
        return True

    def move(self, width: float, speed: float) -> bool:
        self._record("move", width, speed)
        self.width = width
        return True

    def grasp(self, width: float, speed: float, force: float, epsilon_inner: float = 0.005,
              epsilon_outer: float = 0.005) -> bool:
        self._record("grasp", width, speed, force, epsilon_inner, epsilon_outer)
        self.width = 0.021  # an object 21 mm wide
        return abs(self.width - width) <= epsilon_outer

    def read_once(self) -> GripperState:
        return GripperState(self.width, self.max_width)

    def stop(self) -> bool:
        return True


# --------------------------------------------------------------------------- the fake's own tests
