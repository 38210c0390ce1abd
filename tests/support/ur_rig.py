"""The UR backend over the fake ur_rtde (tests/support/fake_rtde.py): how tests build it, and its contract rig.

:func:`make_ur` builds :class:`~robot_rl_drivers.robots.ur.robot.URRobot` with
``lib="fake_rtde"`` and a scenario file (the spawned loop process reads it), with
settings a shared, loaded test machine can live with (a lenient RTDE watchdog and state
timeout, no real-time priority). :func:`replay` runs the logged RTDE samples of one
control session through robot_rl's own :class:`CartesianAdmittanceController` and checks
that every command the loop sent is exactly the law's. :class:`URRig` is the ``ur_rtde``
Robot contract rig (registered in tests/support/contract_rigs.py), with a fake Robotiq
URCap (tests/support/fake_robotiq.py) as its gripper.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Optional

import fake_rtde
import numpy as np
import pytest
from contract_rigs import RobotRig, wait_until
from fake_robotiq import FakeRobotiq

from robot_rl.config.loader import build
from robot_rl.config.sections import AdmittanceConfig, RobotConfig, WorkspaceConfig
from robot_rl.control.admittance import CartesianAdmittanceController, TcpState
from robot_rl.control.safety import SafetyBox
from robot_rl_drivers.robots.ur.settings import URHardwareConfig
from robot_rl_drivers.robots.ur.state import pose_from_ur, vector

SUPPORT = Path(__file__).resolve().parent
IP = "10.0.0.2"  # never contacted: the fake has no network
START_POS = np.array(fake_rtde.START_POSE[:3])
START_QUAT = pose_from_ur(fake_rtde.START_POSE)[1]
# Lenient on a shared machine: a loop process that waits for a CPU for a while must not look unplugged.
TEST_HARDWARE = {"ip": IP, "connect_timeout_s": 60.0, "state_timeout_s": 1.0, "rtde_watchdog_hz": 2.0,
                 "loop": {"rt_priority": 0, "first_state_timeout_s": 30.0},
                 "recovery": {"unlock_delay_s": 0.2, "timeout_s": 10.0}}


def ur_robot_config(watchdog_s: float = 5.0, **admittance: Any) -> RobotConfig:
    """A box around the fake arm's start pose (x 0.4, y -0.1, z 0.3, the tool pointing down)."""
    return RobotConfig(backend="ur", reset_pos=(0.4, -0.1, 0.3), reset_rpy=(np.pi, 0.0, 0.0),
                       workspace=WorkspaceConfig(pos_low=(0.25, -0.25, 0.15), pos_high=(0.55, 0.05, 0.45)),
                       admittance=AdmittanceConfig(watchdog_s=watchdog_s, **admittance))


def ur_hardware(**changes: Any) -> URHardwareConfig:
    data = json.loads(json.dumps(TEST_HARDWARE))
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return build(URHardwareConfig, data, file="test.yaml", where="robot.hardware")


def write_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: Optional[dict] = None) -> Path:
    """The fake's scenario file (with a log under ``tmp_path``); returns the log prefix."""
    monkeypatch.syspath_prepend(str(SUPPORT))  # the spawned loop process imports the fake by name
    log = tmp_path / "ur"
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"log": str(log), **(scenario or {})}))
    monkeypatch.setenv(fake_rtde.SCENARIO_ENV, str(path))
    return log


def make_ur(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: Optional[dict] = None, *,
            robot: Optional[RobotConfig] = None, hardware: Optional[dict] = None, **kw: Any):
    """``URRobot`` over the fake; returns (robot, log prefix). The caller closes the robot."""
    from robot_rl_drivers.robots.ur.robot import URRobot

    log = write_scenario(tmp_path, monkeypatch, scenario)
    return URRobot(robot or ur_robot_config(), ur_hardware(**(hardware or {})), lib="fake_rtde", **kw), log


def session_rows(cycles: dict[str, np.ndarray], session: int) -> dict[str, np.ndarray]:
    """The logged commands of control session ``session`` (1-based: each session ends with one stop)."""
    keep = cycles["segment"] == session - 1
    return {k: v[keep] for k, v in cycles.items()}


def replay(rows: dict[str, np.ndarray], cfg: RobotConfig, hw: URHardwareConfig, events: list,
           closed: bool = True) -> tuple[list[int], CartesianAdmittanceController, Any]:
    """Run a session's logged samples through the shared law; every logged command must be
    reproduced exactly. ``events`` (applied in order, each at the one cycle where the log
    shows it took effect) are what the parent sent: ``("target", pos, quat)`` or
    ``("hold",)``; ``close()`` sends a hold before it stops the session, so ``closed`` adds
    one (a hold that changes no command is not seen, and need not be). Returns the cycles
    where events took effect, the controller and cycle 0's output.
    """
    pending = list(events) + ([("hold",)] if closed else [])
    ctrl = CartesianAdmittanceController(cfg.admittance, SafetyBox.from_config(cfg))
    period = 1.0 / hw.rate_hz
    acc = max(cfg.admittance.max_acc, cfg.admittance.max_rot_acc)
    applied: list[int] = []
    first = None
    last_ts: Optional[float] = None
    last_force: Optional[np.ndarray] = None

    def sent(out: Any, k: int) -> bool:
        args = rows["args"][k]
        if rows["kind"][k] == 0:
            return bool(np.array_equal(args[:6], out.twist) and args[6] == acc and args[7] == period)
        from robot_rl_drivers.robots.ur.state import ur_pose

        return bool(np.array_equal(args[:6], ur_pose(out.pos, out.quat)) and args[8] == period)

    for k in range(len(rows["kind"])):
        ts, pose, force = float(rows["timestamp"][k]), rows["pose"][k], rows["force"][k]
        pose, ok_pose = vector(pose, 6)
        force, ok_force = vector(force, 6)
        pos, quat = pose_from_ur(pose) if ok_pose else (np.full(3, np.nan), np.full(4, np.nan))
        fresh = ok_force and not (hw.ft_stale_check and last_force is not None and np.array_equal(force, last_force))
        tcp = TcpState(pos, quat, force.copy() if fresh else None)
        dt = period if last_ts is None else ts - last_ts
        if k == 0:
            ctrl.start(tcp, ts)
            out = ctrl.compute(tcp, ts, dt)
            first = copy.deepcopy(out)
            assert sent(out, 0), f"cycle 0: sent {rows['args'][0]} is not the law's {out.twist}"
        else:
            trial = copy.deepcopy(ctrl)
            out = trial.compute(tcp, ts, dt)
            if not sent(out, k):
                assert pending, f"cycle {k}: sent {rows['args'][k][:6]} is not the law's {out.twist}"
                event = pending.pop(0)
                trial = copy.deepcopy(ctrl)
                if event[0] == "target":
                    trial.set_target(event[1], event[2], ts)
                else:
                    trial.hold(tcp, ts)
                out = trial.compute(tcp, ts, dt)
                assert sent(out, k), f"cycle {k}: the command matches neither the law before nor after {event[0]}"
                applied.append(k)
            ctrl = trial
        last_ts = ts
        if ok_force:
            last_force = force.copy()
    return applied, ctrl, first


class URRig(RobotRig):
    """``URRobot`` over ``fake_rtde`` (as tests/drivers/robots/test_ur_*.py build it), with a Robotiq.

    The fake arm integrates the twists it is sent, so the measured pose follows the law
    (``physical``). It stops itself with a protective stop some commands into the first
    session; the dashboard lets it be unlocked a moment later.
    """

    name = "ur_rtde"
    physical = True
    dof = 6
    has_posture = False
    hold_tol = 0.004

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faulting: bool = False) -> None:
        self.gripper_server = FakeRobotiq()
        scenario = {"unlock_window_s": 0.1}
        if faulting:
            scenario["protective_stop_at"] = 150
        hardware = {"gripper": {"enabled": True, "port": self.gripper_server.port}, "ip": "127.0.0.1"}
        try:
            self.robot, self.log = make_ur(tmp_path, monkeypatch, scenario, robot=ur_robot_config(watchdog_s=2.0),
                                           hardware=hardware)
        except BaseException:
            self.gripper_server.close()
            raise
        self.start = (START_POS.copy(), START_QUAT.copy())

    def settle(self, seconds: float) -> None:
        import time

        time.sleep(seconds)

    def goal(self):
        from robot_rl_drivers.robots.ur.loop import STATE

        values, _ = self.robot._ch.state.read()
        return values[STATE["target_pos"]].copy(), values[STATE["target_quat"]].copy()

    def rejected_targets(self) -> int:
        return self.robot.stats().rejected_targets

    def rejected_postures(self) -> int:
        return 0  # no posture channel: set_posture raises NotImplementedError

    def posture_marker(self):
        return None

    def gripper_marker(self):
        return sum(1 for r in self.gripper_server.requests if r.startswith("SET POS"))

    def stop_itself(self) -> None:
        wait_until(lambda: self.robot.fault is not None, 10.0, "the fake UR's protective stop")

    def teardown(self) -> None:
        try:
            self.robot.close()
        finally:
            self.gripper_server.close()
