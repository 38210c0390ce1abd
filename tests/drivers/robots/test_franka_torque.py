"""The pylibfranka torque loop against a synthetic robot (fake_pylibfranka).

The loop process, shared memory, controller and parent-side Robot are the real ones;
only the libfranka binding is the fake. Each torque session the fake served is logged
(states and written torques), and the tests replay those states through robot_rl's own
CartesianImpedanceController: the written torques must be exactly what the shared law
gives for those states, with Coriolis (and never gravity) added.
"""

from __future__ import annotations

import copy
import json
import re
import socket
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from robot_rl.config.loader import build
from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig
from robot_rl.control import CartesianImpedanceController, SafetyBox
from robot_rl.errors import DeviceError
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.franka.loop import POSTURE
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
from robot_rl_drivers.robots.franka.state import arm_state
from robot_rl_drivers.robots.franka.torque import FrankaTorqueRobot

HERE = Path(__file__).resolve().parents[2] / "support"  # fake_pylibfranka.py
import fake_pylibfranka as fakelib  # noqa: E402

FAKE = "fake_pylibfranka"
IP = "172.16.0.2"  # never contacted: the fake has no network


@pytest.fixture
def fake_robot(tmp_path, monkeypatch):
    """Build FrankaTorqueRobot over the fake; returns (make, log_prefix)."""
    monkeypatch.syspath_prepend(str(HERE))  # the spawned loop process imports the fake by name
    log = tmp_path / "session"
    made: list[FrankaTorqueRobot] = []

    def make(scenario: dict | None = None, watchdog_s: float = 5.0, hardware: dict | None = None,
             **robot_kw) -> FrankaTorqueRobot:
        scenario_file = tmp_path / "scenario.json"
        scenario_file.write_text(json.dumps({"log": str(log), **(scenario or {})}))
        monkeypatch.setenv(fakelib.SCENARIO_ENV, str(scenario_file))
        # A generous connect timeout: the spawned loop process starts slowly on a loaded machine.
        hw = {"ip": IP, "connect_timeout_s": 60.0, "loop": {"realtime": "ignore", "rt_priority": 0},
              **(hardware or {})}
        robot = FrankaTorqueRobot(robot_config(watchdog_s, **robot_kw),
                                  build(FrankaHardwareConfig, hw, file="test.yaml", where="robot.hardware"), lib=FAKE)
        made.append(robot)
        return robot

    yield make, log
    for robot in made:
        robot.close()


def robot_config(watchdog_s: float = 5.0, **kw) -> RobotConfig:
    # A box around the fake arm's pose (x ~0.35, y ~0.02, z ~0.45, hand pointing down).
    return RobotConfig(backend="franka", reset_pos=(0.35, 0.0, 0.45), reset_rpy=(np.pi, 0.0, 0.0),
                       workspace=WorkspaceConfig(pos_low=(0.2, -0.2, 0.3), pos_high=(0.6, 0.2, 0.6)),
                       controller=ControllerConfig(watchdog_s=watchdog_s), **kw)


def load_session(log: Path, session: int) -> dict:
    path = Path(f"{log}-{session}.npz")
    deadline = time.time() + 5.0
    while not path.exists() and time.time() < deadline:
        time.sleep(0.02)
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def arm_at(data: dict, k: int):
    pose, jac = fakelib.forward_kinematics(data["q"][k])
    state = SimpleNamespace(q=data["q"][k].tolist(), dq=data["dq"][k].tolist(),
                            O_T_EE=data["O_T_EE"][k].tolist(), _jac=jac.flatten(order="F").tolist())
    return arm_state(state, fakelib.Model())


def posture_goal(ctrl: CartesianImpedanceController, q, k) -> tuple[np.ndarray, float, float]:
    """The null-space terms a posture must lead to, built here from the configured ones (not
    by the controller): posture, stiffness, damping. The law slews toward them."""
    base = ctrl.base_gains
    if q is None:
        return base.rest_posture, base.nullspace_stiffness, base.nullspace_damping
    return np.asarray(q, dtype=np.float64), float(k), 2.0 * float(np.sqrt(k))


def replay(data: dict, cfg: RobotConfig, events: list, closed: bool = True, gaps: list | None = None
           ) -> tuple[list[int], CartesianImpedanceController, object]:
    """Run the logged states through the shared controller; every logged torque must be
    reproduced. ``events`` (applied in order, each at the one cycle where the log shows
    it took effect) are what the parent sent: ``("target", pos, quat)``, ``("hold",)`` or
    ``("posture", q, stiffness)`` (``q`` None: back to the configured gains);
    ``close()`` sends a hold before it stops the session, so ``closed`` adds one.
    Returns the cycles where each event took effect, the controller, and cycle 0's output;
    ``gaps`` gets, per event, how far the written torque was from the law without it.
    """
    events = list(events) + ([("hold",)] if closed else [])
    ctrl = CartesianImpedanceController(cfg.controller, SafetyBox.from_config(cfg))
    taus, times = data["tau"], data["t"]
    applied: list[int] = []
    pending = list(events)
    first = None
    for k in range(len(taus)):
        arm, now = arm_at(data, k), float(times[k])
        if k == 0:
            ctrl.start(arm, now)
            tau = ctrl.compute(arm, now, 1e-3)
            first = copy.deepcopy(ctrl.last_output)
            np.testing.assert_allclose(taus[0], tau, rtol=0, atol=1e-9)
            continue
        trial = copy.deepcopy(ctrl)
        tau = trial.compute(arm, now, 1e-3)
        if not np.allclose(taus[k], tau, rtol=0, atol=1e-9):
            assert pending, f"cycle {k}: written torque {taus[k]} is not the law's {tau}"
            if gaps is not None:
                gaps.append(float(np.abs(taus[k] - tau).max()))
            event = pending.pop(0)
            trial = copy.deepcopy(ctrl)
            if event[0] == "target":
                trial.set_target(event[1], event[2], now)
            elif event[0] == "posture":
                assert trial.set_posture(event[1], event[2])
                ps = trial.posture_slew
                goal_q, goal_k, goal_d = posture_goal(trial, event[1], event[2])
                np.testing.assert_array_equal(ps.goal_q, goal_q)
                assert (ps.goal_stiffness, ps.goal_damping) == (goal_k, goal_d)
            else:
                trial.hold(arm, now)
            tau = trial.compute(arm, now, 1e-3)
            np.testing.assert_allclose(taus[k], tau, rtol=0, atol=1e-9,
                                       err_msg=f"cycle {k}: torque matches neither the old target nor {event[0]}")
            applied.append(k)
        ctrl = trial
    return applied, ctrl, first


def wait_for(predicate, timeout: float = 5.0) -> None:
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)


def test_written_torques_are_the_shared_law_on_the_streamed_states(fake_robot):
    make, log = fake_robot
    robot = make()
    # Counted in loop cycles, not slept: a starved loop process runs fewer cycles in a given time.
    wait_for(lambda: robot.stats().cycles > 60, timeout=60.0)
    state = robot.state()
    assert state.q.shape == (7,) and state.tcp_quat.shape == (4,)
    assert np.allclose(state.tcp_wrench, [1.0, -2.0, 3.0, 0.1, -0.2, 0.3])
    pose, jac = fakelib.forward_kinematics(state.q)
    assert np.allclose(state.tcp_pos, pose[:3, 3], atol=1e-12)  # column-major O_T_EE read right
    assert np.allclose(state.tcp_twist, jac @ state.dq, atol=1e-9)
    target_pos = state.tcp_pos + np.array([0.010, -0.004, -0.006])
    robot.command(target_pos, state.tcp_quat)
    sent_at = robot.stats().cycles
    wait_for(lambda: robot.stats().cycles > sent_at + 60, timeout=60.0)
    robot.close()

    data = load_session(log, 1)
    assert str(data["reason"]) == "finished" and data["finished"][-1] == 1.0
    assert len(data["tau"]) > 100
    applied, ctrl, first = replay(data, robot.cfg, [("target", target_pos, state.tcp_quat)])
    assert len(applied) == 2, "the target, then close()'s hold, each took effect at one cycle"
    assert ctrl.holding and applied[1] >= len(data["tau"]) - 20


def test_nothing_moves_before_the_first_state(fake_robot):
    make, log = fake_robot
    robot = make()
    time.sleep(0.05)
    robot.close()
    data = load_session(log, 1)
    _, _, first = replay(data, robot.cfg, [])
    # The first command: target = the first measured pose, so no pose error and (the arm
    # being still) no Cartesian force; the posture term is rate-limited from zero.
    assert np.abs(first.error).max() < 1e-12 and np.abs(first.force).max() < 1e-9
    assert np.abs(first.tau_cmd).max() <= robot.cfg.controller.max_torque_rate * 1e-3 + 1e-12
    coriolis = np.asarray(fakelib.Model().coriolis(SimpleNamespace(q=data["q"][0], dq=data["dq"][0])))
    np.testing.assert_allclose(data["tau"][0], first.tau_cmd + coriolis, atol=1e-12)


def test_the_loop_reports_its_timing(fake_robot):
    make, log = fake_robot
    robot = make()
    # Waited for in cycles (generous deadline), not slept: a starved loop runs fewer per second.
    wait_for(lambda: robot.stats().cycles > 100, timeout=60.0)
    live = robot.stats()
    assert live.cycles > 100 and live.sessions == 1
    robot.close()
    stats = robot.stats()
    data = load_session(log, 1)
    assert stats.cycles == len(data["tau"])
    durations_ms = np.rint(data["duration"][1:] * 1000.0).astype(int)
    assert stats.missed_robot_cycles == int(np.sum(np.maximum(durations_ms - 1, 0)))
    # The host-clock period the loop reports against the robot clock's ticks between the same
    # reads (the fake's log): a read waits for the next 1 ms tick, so p50 > 0.3 ms, and both medians
    # agree within a tick however slowly a loaded host runs the loop.
    robot_ms = float(np.median(data["duration"][1:] * 1000.0))
    assert 0.3 < stats.period_p50_ms and abs(stats.period_p50_ms - robot_ms) < 1.5, (robot_ms, stats.summary())
    assert stats.period_p50_ms <= stats.period_p99_ms <= stats.period_max_ms + 1e-9
    assert 0 <= stats.late_cycles < stats.cycles
    assert 0.0 < stats.compute_p50_ms <= stats.compute_p99_ms <= stats.compute_max_ms + 1e-9
    assert stats.success_rate == pytest.approx(0.99)
    print("torque loop against the fake (shared CPU, noisy):", stats.summary())


def test_the_watchdog_holds_when_targets_stop(fake_robot):
    make, log = fake_robot
    robot = make(watchdog_s=0.05)
    state = robot.state()
    target = state.tcp_pos + np.array([0.0, 0.005, 0.0])
    robot.command(target, state.tcp_quat)
    # Waited for, not slept: a starved loop process may not reach 0.05 s of robot time in 0.3 s.
    wait_for(lambda: robot.stats().watchdog_holds >= 1, timeout=60.0)
    robot.close()
    data = load_session(log, 1)
    # The replayed controller's own watchdog fires at the same robot times as the loop's.
    applied, ctrl, _ = replay(data, robot.cfg, [("target", target, state.tcp_quat)])
    assert len(applied) == 2  # the target, and close()'s hold
    assert ctrl.stats.watchdog_holds >= 1


def test_hold_makes_the_measured_pose_the_target(fake_robot):
    make, log = fake_robot
    robot = make()
    state = robot.state()
    robot.command(state.tcp_pos + np.array([0.008, 0.0, 0.0]), state.tcp_quat)
    # Counted in loop cycles, not slept: each event must take effect in a cycle of its own, and a
    # starved loop can run a single cycle in 0.1 s.
    sent_at = robot.stats().cycles
    wait_for(lambda: robot.stats().cycles > sent_at + 20, timeout=60.0)
    robot.hold()
    sent_at = robot.stats().cycles
    wait_for(lambda: robot.stats().cycles > sent_at + 20, timeout=60.0)
    robot.close()
    applied, ctrl, _ = replay(load_session(log, 1), robot.cfg,
                              [("target", state.tcp_pos + np.array([0.008, 0.0, 0.0]), state.tcp_quat), ("hold",)])
    assert len(applied) == 3 and ctrl.holding


def test_targets_outside_the_box_are_clipped_and_bad_ones_rejected(fake_robot):
    make, _ = fake_robot
    robot = make()
    state = robot.state()
    robot.command(np.array([5.0, 0.0, 0.4]), state.tcp_quat)
    robot.command(np.array([np.nan, 0.0, 0.4]), state.tcp_quat)
    wait_for(lambda: robot.stats().box_clipped_targets >= 1, timeout=60.0)  # the loop takes it when it runs
    stats = robot.stats()
    assert stats.box_clipped_targets == 1
    assert stats.rejected_targets == 1


def test_hostile_commands_never_fault_the_session_nor_write_a_bad_torque(fake_robot):
    """Huge quaternions (the norm overflows), malformed values and a posture of 1e308 with
    1e6 Nm/rad written straight into the shared memory: no fault, every written torque
    finite and within its limit (the fake arm follows its own trajectory whatever it is
    sent, so the sim tests measure what the posture does to the TCP)."""
    make, log = fake_robot
    robot = make()
    state = robot.state()
    assert robot.command(state.tcp_pos, state.tcp_quat * 1e200) is True
    for pos, quat, gripper in [("xyz", state.tcp_quat, None), (state.tcp_pos, [1.0, 2.0], None),
                               (state.tcp_pos, {"w": 1}, None), ([[0.5, 0.0, 0.3]], state.tcp_quat, None),
                               (state.tcp_pos, state.tcp_quat, "open"), (state.tcp_pos, state.tcp_quat, np.inf)]:
        assert robot.command(pos, quat, gripper) is False
    assert robot.rejected_targets == 6
    robot._ch.posture.write(POSTURE.pack(np.zeros(POSTURE.size), q=np.full(7, 1e308), stiffness=1e6, active=1.0))
    for _ in range(30):
        robot.command(state.tcp_pos, state.tcp_quat)
        time.sleep(0.01)
    assert robot.fault is None and robot.posture_override
    robot.close()
    data = load_session(log, 1)
    limits = np.asarray(robot.cfg.controller.torque_limits)
    assert np.all(np.isfinite(data["tau"])) and np.all(np.abs(data["tau"]) <= limits + 1e-9)


def test_a_reflex_is_a_robot_fault_and_recover_restarts_from_the_measured_pose(fake_robot):
    make, log = fake_robot
    robot = make({"fault_at": 200})
    state = robot.state()
    old_target = state.tcp_pos + np.array([0.0, 0.0, -0.01])
    robot.command(old_target, state.tcp_quat)
    wait_for(lambda: robot.fault is not None)
    assert "reflex" in robot.fault and "\n" not in robot.fault
    with pytest.raises(RobotFault) as err:
        robot.state()
    assert err.value.recoverable and err.value.state is not None
    with pytest.raises(RobotFault):
        robot.command(state.tcp_pos, state.tcp_quat)
    robot.hold()  # never raises

    robot.recover()
    assert robot.fault is None
    after = robot.state()
    assert np.all(np.isfinite(after.tcp_pos))
    time.sleep(0.1)
    robot.close()
    assert robot.stats().sessions == 2
    fault_session = load_session(log, 1)
    assert str(fault_session["reason"]) == "fault"
    replay(fault_session, robot.cfg, [("target", old_target, state.tcp_quat)], closed=False)
    # Session 2 must not resume the old target: replaying it with no events reproduces it.
    _, ctrl, first = replay(load_session(log, 2), robot.cfg, [])
    assert np.abs(first.error).max() < 1e-12
    assert not np.allclose(ctrl.target_pos, old_target)


def test_a_failed_recovery_asks_for_a_person(fake_robot):
    make, _ = fake_robot
    robot = make({"fault_at": 50, "recover": "fail"})
    wait_for(lambda: robot.fault is not None)
    with pytest.raises(RobotFault, match="automatic error recovery failed: CommandException: .*user stop pressed"):
        robot.recover()
    with pytest.raises(RobotFault):
        robot.state()


def test_the_gripper_maps_opening_fractions(fake_robot):
    make, log = fake_robot
    robot = make()
    calls_file = Path(f"{log}-gripper.json")
    state = robot.state()
    robot.command(state.tcp_pos, state.tcp_quat, gripper=0.1)  # binary: below 0.5 grasps
    wait_for(lambda: calls_file.exists() and len(json.loads(calls_file.read_text())) >= 1)
    robot.command(state.tcp_pos, state.tcp_quat, gripper=0.2)  # still "closed": no new command
    robot.command(state.tcp_pos, state.tcp_quat, gripper=0.9)  # open fully
    wait_for(lambda: len(json.loads(calls_file.read_text())) >= 2)
    time.sleep(0.1)
    calls = json.loads(calls_file.read_text())
    g = robot.hw.gripper
    assert calls == [["grasp", 0.0, g.speed, g.force, g.epsilon_inner, g.epsilon_outer], ["move", 0.08, g.speed]]
    wait_for(lambda: robot.state().gripper == pytest.approx(1.0))


RESET_Q = fakelib.Q0 + np.array([0.25, -0.15, 0.2, 0.2, -0.25, 0.15, 0.3])  # a posture away from the rest one


def test_a_posture_moves_the_null_space_by_the_shared_law_until_it_is_cleared(fake_robot):
    make, log = fake_robot
    robot = make()
    assert not robot.posture_override
    time.sleep(0.05)
    robot.set_posture(RESET_Q, 80.0)
    wait_for(lambda: robot.posture_override)
    # > 50 loop cycles with the posture, counted (a starved loop runs fewer than 50 in 0.1 s).
    seen_at = robot.stats().cycles
    wait_for(lambda: robot.stats().cycles > seen_at + 51, timeout=60.0)
    robot.set_posture(None)
    wait_for(lambda: not robot.posture_override)
    time.sleep(0.05)
    robot.close()

    gaps: list[float] = []
    applied, ctrl, _ = replay(load_session(log, 1), robot.cfg,
                              [("posture", RESET_Q, 80.0), ("posture", None, None)], gaps=gaps)
    assert len(applied) == 3, "the posture, its clearing and close()'s hold, each at one cycle"
    assert applied[1] - applied[0] > 50  # the cycles waited for above
    # The configured law would have written other torques (more than rounding) on both switches;
    # the posture's effect grows from there as the law slews toward it (robot_rl.control.slew).
    assert gaps[0] > 1e-6 and gaps[1] > 1e-6, gaps
    assert not ctrl.posture_override and robot.stats().rejected_postures == 0


def test_the_watchdog_hold_clears_the_posture(fake_robot):
    make, log = fake_robot
    robot = make(watchdog_s=0.3)
    robot.set_posture(RESET_Q, 80.0)  # and no target: the watchdog fires 0.3 s into the session
    wait_for(lambda: robot.posture_override)
    wait_for(lambda: not robot.posture_override)
    assert robot.stats().watchdog_holds >= 1
    robot.close()
    # The replayed controller's watchdog fires at the same cycle and clears the posture too.
    applied, ctrl, _ = replay(load_session(log, 1), robot.cfg, [("posture", RESET_Q, 80.0)])
    assert len(applied) == 2 and ctrl.stats.watchdog_holds >= 1 and not ctrl.posture_override


def test_a_malformed_posture_is_refused_and_changes_nothing(fake_robot, caplog):
    make, log = fake_robot
    robot = make()
    robot.set_posture(RESET_Q, 80.0)
    wait_for(lambda: robot.posture_override)
    seq = robot._ch.posture.seq
    for q, k in [(RESET_Q[:6], 80.0), (np.r_[RESET_Q[:6], np.nan], 80.0), ([RESET_Q], 80.0), ("home", 80.0),
                 (RESET_Q, -1.0), (RESET_Q, np.inf), (None, np.nan)]:
        with caplog.at_level("ERROR"):
            assert robot.set_posture(q, k) is False
    assert f"rejected a posture (1 so far): Franka at {IP}: a posture must be 7 numbers" in caplog.text
    assert robot.rejected_postures == 7
    assert robot._ch.posture.seq == seq, "nothing was written"
    # The loop never dies of a bad posture that got past the parent: it refuses and counts it.
    robot._ch.posture.write(POSTURE.pack(np.zeros(POSTURE.size), q=np.full(7, np.nan), stiffness=80.0, active=1.0))
    wait_for(lambda: robot.stats().rejected_postures == 1)
    assert robot.fault is None and robot.posture_override
    time.sleep(0.05)
    robot.close()
    applied, _, _ = replay(load_session(log, 1), robot.cfg, [("posture", RESET_Q, 80.0)])
    assert len(applied) == 2  # the good posture and close()'s hold: the bad ones changed no torque


def test_a_posture_from_before_a_session_does_not_apply_to_it(fake_robot):
    make, log = fake_robot
    robot = make({"fault_at": 300})
    robot.set_posture(RESET_Q, 80.0)
    wait_for(lambda: robot.fault is not None)
    with pytest.raises(RobotFault):
        robot.set_posture(None)
    # A write that raced with the fault (checked, then the session ended) lands in between.
    robot._ch.posture.write(POSTURE.pack(np.zeros(POSTURE.size), q=RESET_Q[::-1], stiffness=80.0, active=1.0))
    robot.recover()
    time.sleep(0.1)
    assert not robot.posture_override
    robot.close()
    applied, _, _ = replay(load_session(log, 1), robot.cfg, [("posture", RESET_Q, 80.0)], closed=False)
    assert len(applied) == 1
    # Session 2 runs the configured law throughout: replaying it with no events reproduces it.
    _, ctrl, first = replay(load_session(log, 2), robot.cfg, [])
    assert not ctrl.posture_override and np.abs(first.error).max() < 1e-12


@pytest.mark.parametrize("scenario, hardware, message", [
    ({"connect": "refuse"}, {}, f"cannot connect to the Franka at {IP}: NetworkException: libfranka: "
                                "Connection to FCI refused"),
    ({"connect": "hang"}, {"connect_timeout_s": 0.5}, f"the Franka at {IP} did not answer within 0.5 s"),
    ({"gripper": "refuse"}, {}, f"Franka gripper at {IP}: NetworkException"),
])
def test_connection_problems_are_one_clear_line(fake_robot, scenario, hardware, message):
    make, _ = fake_robot
    with pytest.raises(DeviceError) as err:
        make(scenario, hardware=hardware)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_real_pylibfranka_refused_on_loopback_is_a_device_error():
    pytest.importorskip("pylibfranka")
    hw = build(FrankaHardwareConfig, {"ip": "127.0.0.1", "loop": {"realtime": "ignore", "rt_priority": 0},
                                      "gripper": {"enabled": False}}, file="t.yaml")
    with pytest.raises(DeviceError) as err:
        FrankaTorqueRobot(robot_config(), hw)
    assert str(err.value).startswith("cannot connect to the Franka at 127.0.0.1: NetworkException")


def test_real_pylibfranka_against_a_silent_robot_times_out():
    pytest.importorskip("pylibfranka")
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", 1337))  # libfranka's command port
    except OSError:
        pytest.skip("port 1337 on loopback is in use")
    server.listen(1)
    accepted = []
    acceptor = threading.Thread(target=lambda: accepted.append((server.accept(), time.monotonic())), daemon=True)
    acceptor.start()
    hw = build(FrankaHardwareConfig, {"ip": "127.0.0.1", "connect_timeout_s": 1.0,
                                      "loop": {"realtime": "ignore", "rt_priority": 0},
                                      "gripper": {"enabled": False}}, file="t.yaml")
    try:
        with pytest.raises(DeviceError, match=r"the Franka at 127.0.0.1 did not answer within 1 s"):
            FrankaTorqueRobot(robot_config(), hw)
        given_up = time.monotonic()
        acceptor.join(timeout=30.0)
        assert accepted, "libfranka should have connected to the silent server"
        # Timed from libfranka's connection, not from the call: spawning the loop process takes
        # seconds on a loaded host, and connect_timeout_s starts only when the process connects.
        assert given_up - accepted[0][1] < 5.0
    finally:
        server.close()


def test_a_tcp_past_the_box_margin_ends_the_session_as_a_fault_and_recovery_refuses_while_out(tmp_path,
                                                                                               monkeypatch):
    """The guard's box fault reaches a real torque backend through the shared law: the fake arm
    stands at z ~0.49, about 11 cm above this box's top (as if a force had pushed it there)."""
    monkeypatch.syspath_prepend(str(HERE))
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps({"log": str(tmp_path / "session")}))
    monkeypatch.setenv(fakelib.SCENARIO_ENV, str(scenario_file))
    cfg = RobotConfig(backend="franka", reset_pos=(0.35, 0.0, 0.35), reset_rpy=(np.pi, 0.0, 0.0),
                      workspace=WorkspaceConfig(pos_low=(0.2, -0.2, 0.1), pos_high=(0.6, 0.2, 0.38)))
    hw = build(FrankaHardwareConfig, {"ip": IP, "connect_timeout_s": 60.0,
                                      "loop": {"realtime": "ignore", "rt_priority": 0}},
               file="test.yaml", where="robot.hardware")
    robot = None
    try:
        try:
            robot = FrankaTorqueRobot(cfg, hw, lib=FAKE)
            wait_for(lambda: robot.fault is not None)
            line = robot.fault
        except RobotFault as err:  # the fault may arrive before the first state is seen
            line = str(err)
        found = re.search(r"TCP is (0\.\d{3}) m outside the box on \+z", line)
        assert "\n" not in line and found and float(found.group(1)) > 0.05, line
        assert "guide the arm back into the box, then recover" in line
        if robot is not None:
            with pytest.raises(RobotFault, match="outside the box"):
                robot.state()
            try:
                robot.recover()  # a new session, which faults in its first cycle: the arm is still out
            except RobotFault as err:
                assert "outside the box" in str(err)
            wait_for(lambda: robot.fault is not None)
            with pytest.raises(RobotFault, match="outside the box"):
                robot.state()
            assert robot.stats().sessions == 2
    finally:
        if robot is not None:
            robot.close()
