"""The UR loop against a fake UR e-series (tests/support/fake_rtde.py).

The loop process, shared memory, admittance law and parent-side Robot are the real ones;
only ur_rtde is the fake. The fake logs every motion command with the RTDE sample the
loop read before it, and the tests replay those samples through robot_rl's own
CartesianAdmittanceController (tests/support/ur_rig.py: ``replay``): every twist sent
must be exactly what the shared law gives for those samples.
"""

from __future__ import annotations

import time

import fake_rtde
import numpy as np
import pytest
from polling import wait_for
from ur_rig import IP, replay, session_rows, ur_robot_config

from robot_rl_drivers.robots.loop_process import TARGET
from robot_rl_drivers.robots.ur.loop import STATE


def after_cycles(robot, n: int) -> None:
    """Wait until the loop has run ``n`` more cycles: on a loaded machine a sleep alone may see none."""
    start = robot.stats().cycles
    wait_for(lambda: robot.stats().cycles >= start + n)


def speeds(rows) -> tuple[np.ndarray, np.ndarray]:
    twist = rows["args"][:, :6]
    return np.linalg.norm(twist[:, :3], axis=1), np.linalg.norm(twist[:, 3:], axis=1)


def test_sent_twists_are_the_shared_law_on_the_logged_samples(ur):
    robot, log = ur()
    time.sleep(0.1)
    state = robot.state()
    assert state.q.shape == (6,) and state.dq.shape == (6,) and state.tau.shape == (6,)
    np.testing.assert_allclose(state.tcp_pos, fake_rtde.START_POSE[:3], atol=1e-6)
    assert np.allclose(np.abs(state.tcp_quat), [0.0, 1.0, 0.0, 0.0], atol=1e-9)  # rotvec (pi, 0, 0): tool down
    targets = [state.tcp_pos + d for d in ([0.010, 0.0, 0.0], [0.010, -0.006, 0.0], [0.004, -0.006, -0.008])]
    for target in targets:  # a recorded target sequence, ~60 ms apart (and a few loop cycles, however loaded)
        assert robot.command(target, state.tcp_quat) is True
        time.sleep(0.06)
        after_cycles(robot, 3)
    time.sleep(0.4)
    after_cycles(robot, 101)
    moved = robot.state().tcp_pos
    robot.close()

    rows = session_rows(fake_rtde.load_cycles(log), 1)
    assert len(rows["kind"]) > 100 and np.all(rows["kind"] == 0)  # speedL every cycle
    applied, ctrl, first = replay(rows, robot.cfg, robot.hw, [("target", t, state.tcp_quat) for t in targets])
    assert len(applied) >= 3, "each target took effect at one cycle"
    # The fake arm integrates the twists it is sent: it followed the law toward the last target.
    assert np.linalg.norm(moved - targets[-1]) < np.linalg.norm(state.tcp_pos - targets[-1]) / 2
    calls = [c[0] for c in fake_rtde.load_calls(log)]
    assert calls.index("zeroFtSensor") < calls.index("setWatchdog") < calls.index("speedStop")


def test_a_recorded_state_stream_gets_exactly_the_law_s_twists(ur):
    """The fake replays recorded states (a TCP swaying in x, a push in +y building up to 8 N
    on a noisy F/T reading) instead of integrating the commands: what the loop sends for
    them is the law's output on them, and the law yields to the push."""
    n = 400
    k = np.arange(n)
    rng = np.random.default_rng(3)
    pose = np.tile(np.array(fake_rtde.START_POSE), (n, 1))
    pose[:, 0] += 0.002 * np.sin(k / 40.0)
    force = rng.normal(0.0, 0.2, (n, 6)) * [1, 1, 1, 0.05, 0.05, 0.05]
    force[:, 1] += np.clip((k - 100) / 100.0, 0.0, 1.0) * 8.0
    stream = [{"pose": p.tolist(), "force": f.tolist()} for p, f in zip(pose, force)]
    robot, log = ur({"stream": stream})
    wait_for(lambda: robot.stats().cycles > n)
    robot.close()
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    assert len(rows["kind"]) > n
    np.testing.assert_array_equal(rows["force"][:n], force[:n])  # the loop read the recording, in order
    _, ctrl, _ = replay(rows, robot.cfg, robot.hw, [])
    assert ctrl.last_output.wrench[1] > 1.0 and np.all(rows["args"][250:n, 1] > 0.0)  # it yields along +y


def test_nothing_moves_before_the_first_sample(ur):
    robot, log = ur()
    time.sleep(0.05)
    robot.close()
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    # The first target and reference are the measured pose and the F/T bias its reading: no twist at all.
    assert np.array_equal(rows["args"][0, :6], np.zeros(6))
    _, _, first = replay(rows, robot.cfg, robot.hw, [])
    assert np.abs(first.error).max() < 1e-12 and np.array_equal(first.wrench, np.zeros(6))


def test_the_loop_runs_at_the_ur_s_rate_and_reports_its_timing(ur):
    robot, log = ur()
    time.sleep(0.6)
    after_cycles(robot, 51)
    live = robot.stats()
    assert live.cycles > 50 and live.sessions == 1
    robot.close()
    stats = robot.stats()
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    print("UR loop against the fake at 500 Hz (shared CPU, noisy):", stats.summary())
    assert stats.cycles == len(rows["kind"])
    ts = rows["timestamp"]
    assert np.all(np.diff(ts) > 0), "a sample was computed on twice"
    steps = np.rint(np.diff(ts) / fake_rtde.PERIOD).astype(int)
    assert stats.missed_samples == int(np.sum(steps - 1))
    assert stats.period_p50_ms <= stats.period_p99_ms <= stats.period_max_ms + 1e-9
    assert 0.0 < stats.compute_p50_ms <= stats.compute_p99_ms <= stats.compute_max_ms + 1e-9
    assert 0 <= stats.late_cycles < stats.cycles and stats.guarded_commands == 0


def test_servol_sends_the_law_s_reference_pose(ur):
    robot, log = ur(hardware={"command": "servol"})
    state = robot.state()
    target = state.tcp_pos + np.array([0.0, 0.008, 0.0])
    beyond = np.array([0.9, -0.1, 0.3])  # past the box's x wall (0.55): the reference stops at it
    robot.command(target, state.tcp_quat)
    time.sleep(0.2)
    after_cycles(robot, 3)
    robot.command(beyond, state.tcp_quat)
    time.sleep(1.0)
    robot.close()
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    assert np.all(rows["kind"] == 1)
    np.testing.assert_array_equal(rows["args"][:, 9], robot.hw.servo_lookahead_s)
    applied, _, _ = replay(rows, robot.cfg, robot.hw, [("target", target, state.tcp_quat),
                                                       ("target", beyond, state.tcp_quat)])
    assert len(applied) >= 2
    x = rows["args"][:, 0]
    assert 0.45 < x.max() <= robot.cfg.workspace.pos_high[0] + 1e-9  # on its way to the wall, never past it
    assert robot.stats().guarded_commands == 0  # the law kept its reference in the box by itself
    calls = [c[0] for c in fake_rtde.load_calls(log)]
    assert "servoStop" in calls and "speedStop" not in calls


def test_hold_and_the_watchdog_stop_the_reference_where_the_arm_is(ur):
    robot, log = ur(robot=ur_robot_config(watchdog_s=0.1))
    state = robot.state()
    target = state.tcp_pos + np.array([0.0, 0.0, -0.01])
    robot.command(target, state.tcp_quat)
    time.sleep(0.4)  # the watchdog fires 0.1 s after the target
    assert robot.stats().watchdog_holds >= 1
    values, _ = robot._ch.state.read()
    assert values[STATE["holding"]][0] == 1.0
    robot.close()
    applied, ctrl, _ = replay(session_rows(fake_rtde.load_cycles(log), 1), robot.cfg, robot.hw,
                              [("target", target, state.tcp_quat)])
    assert applied and ctrl.stats.watchdog_holds >= 1  # the replayed law's watchdog fires at the same cycles


def test_targets_outside_the_box_are_clipped_and_bad_ones_rejected(ur):
    robot, _ = ur()
    state = robot.state()
    assert robot.command(np.array([5.0, 0.0, 0.3]), state.tcp_quat) is True
    assert robot.command(np.array([np.nan, 0.0, 0.3]), state.tcp_quat) is False
    wait_for(lambda: robot.stats().box_clipped_targets == 1)
    assert robot.stats().rejected_targets == 1
    values, _ = robot._ch.state.read()
    assert np.all(values[STATE["target_pos"]] <= np.asarray(robot.cfg.workspace.pos_high) + 1e-9)


def test_hostile_commands_never_fault_the_loop_nor_send_a_bad_twist(ur):
    """Huge quaternions, malformed values, and NaN / 1e308 written straight into the
    shared memory (past the parent's checks): counted, no fault, every twist finite and
    within the law's limits."""
    robot, log = ur()
    state = robot.state()
    assert robot.command(state.tcp_pos, state.tcp_quat * 1e200) is True
    for pos, quat, gripper in [("xyz", state.tcp_quat, None), (state.tcp_pos, [1.0, 2.0], None),
                               (state.tcp_pos, {"w": 1}, None), ([[0.4, 0.0, 0.3]], state.tcp_quat, None),
                               (state.tcp_pos, state.tcp_quat, "open"), (state.tcp_pos, state.tcp_quat, np.inf)]:
        assert robot.command(pos, quat, gripper) is False
    assert robot.rejected_targets == 6
    for bad in (np.full(TARGET.size, np.nan), np.full(TARGET.size, 1e308), np.r_[state.tcp_pos, 0, 0, 0, 0]):
        robot._ch.target.write(bad)
        time.sleep(0.02)
    wait_for(lambda: robot.stats().rejected_targets >= 6 + 2)
    for k in range(20):
        robot.command(state.tcp_pos + [0.5 * (-1) ** k, 0.0, 0.0], state.tcp_quat)  # far, both ways
        time.sleep(0.01)
    assert robot.fault is None
    robot.close()
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    adm = robot.cfg.admittance
    lin, ang = speeds(rows)
    assert np.all(np.isfinite(rows["args"])[:, :8])
    assert lin.max() <= adm.max_speed * (1 + 1e-9) and ang.max() <= adm.max_rot_speed * (1 + 1e-9)
    step = np.diff(rows["args"][:, :3], axis=0)
    dts = np.diff(rows["timestamp"])
    assert np.all(np.linalg.norm(step, axis=1) <= adm.max_acc * dts * (1 + 1e-9) + 1e-12)  # acceleration limit


@pytest.mark.parametrize("field, value", [
    ("pose", "nan"), ("pose", "inf"), ("pose", "huge"), ("pose", "short"), ("pose", "text"), ("force", "nan"),
    ("force", "-inf"), ("force", "empty"), ("q", "short"), ("speed", "huge"), ("timestamp", "nan"),
    ("timestamp", "huge"), ("safety_mode", "text"), ("robot_mode", "nan"),
])
def test_unusable_readings_are_counted_and_never_reach_the_arm(ur, field, value):
    robot, log = ur({"corrupt": [{"from": 60, "reads": 15, "field": field, "value": value}]})
    wait_for(lambda: robot.stats().cycles > 120)
    stats = robot.stats()
    assert robot.fault is None, robot.fault
    assert stats.bad_readings >= 1
    state = robot.state()  # the parent only ever sees usable readings
    assert all(np.all(np.isfinite(getattr(state, f))) for f in ("tcp_pos", "tcp_quat", "tcp_wrench", "q", "dq"))
    robot.close()
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    adm = robot.cfg.admittance
    lin, ang = speeds(rows)
    assert np.all(np.isfinite(rows["args"][:, :8])), "a non-finite twist was sent"
    assert lin.max() <= adm.max_speed * (1 + 1e-9) and ang.max() <= adm.max_rot_speed * (1 + 1e-9)
    if field == "pose":
        assert stats.nonfinite_states >= 1  # the law got NaN, counted it and ramped the twist to zero
    replay(rows, robot.cfg, robot.hw, [])  # and every command sent is still exactly the law's


def test_readings_unusable_for_longer_than_the_state_timeout_stop_the_arm(ur):
    robot, log = ur({"corrupt": [{"from": 40, "to": 10**9, "field": "pose", "value": "nan"}]},
                   hardware={"state_timeout_s": 0.1})
    wait_for(lambda: robot.fault is not None)
    assert robot.fault.startswith(f"UR at {IP} sends unusable readings") and "\n" not in robot.fault
    calls = [c[0] for c in fake_rtde.load_calls(log)]
    assert calls[-1] == "speedStop"
