"""The Cartesian impedance law driving the MuJoCo arm: step response, compliance,
error clipping, torque-rate limiting, bad targets, watchdog and no jump on start."""

from __future__ import annotations

import numpy as np
import pytest
from sim_arm import assert_no_jump_on_start_and_watchdog_holds, held_under_force, make_world, run, step_response, tcp


@pytest.mark.parametrize("axis,sign", [(0, 1), (1, -1), (2, -1)])
def test_step_response_reaches_5cm_target_within_2mm_in_1s_without_overshoot(axis, sign):
    settle_time, overshoot, _ = step_response(make_world(), axis, sign, 1.5)
    assert settle_time <= 1.0, f"stayed within 2 mm only after {settle_time:.3f} s"
    assert overshoot <= 0.005, f"overshoot {overshoot * 1000:.2f} mm"


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_constant_10N_force_gives_displacement_F_over_K(axis):
    world = make_world()
    displacement = held_under_force(world, axis, 10.0)[axis]
    expected = 10.0 / world.cfg.robot.controller.stiffness[axis]
    assert displacement == pytest.approx(expected, rel=0.2), (displacement, expected)
    # The sim's external-wrench estimate sees the applied force.
    wrench = world.robot.state().tcp_wrench
    assert wrench[axis] == pytest.approx(10.0, abs=0.5)


def test_far_target_never_commands_more_than_stiffness_times_clip():
    world = make_world("robot.workspace.pos_low=[-2,-2,-2]", "robot.workspace.pos_high=[2,2,2]")
    state = world.robot.state()
    target = state.tcp_pos + np.array([1.0, 0.0, 0.0])  # 1 m away
    cfg = world.cfg.robot.controller
    limit = np.array(cfg.stiffness[:3]) * np.array(cfg.error_clip_mm) / 1000.0
    traj = run(world, 1.0, target, state.tcp_quat, record=True)
    forces = np.array([out.force[:3] for _, _, out in traj])
    assert np.all(np.abs(forces) <= limit + 0.5), np.abs(forces).max(axis=0)
    # The law's target slews toward the far one (max_target_speed): a clip's length ahead within a few cycles.
    slew_cycles = int(np.ceil(0.010 / (cfg.max_target_speed * world.dt))) + 1
    assert all(out.error_clipped for _, _, out in traj[slew_cycles:])
    assert abs(forces[:, 0]).max() > 0.5 * limit[0]  # it did pull toward the target


def test_torque_rate_is_limited():
    world = make_world()
    state = world.robot.state()
    target = state.tcp_pos + np.array([0.0, 0.0, -0.05])
    traj = run(world, 0.3, target, state.tcp_quat, record=True)
    tau = np.array([out.tau_cmd for _, _, out in traj])
    max_step = world.cfg.robot.controller.max_torque_rate * world.dt
    assert np.abs(np.diff(tau, axis=0)).max() <= max_step + 1e-9


@pytest.mark.parametrize("bad", [
    (np.array([np.nan, 0.0, 0.2]), np.array([0.0, 1.0, 0.0, 0.0])),
    (np.array([0.5, np.inf, 0.2]), np.array([0.0, 1.0, 0.0, 0.0])),
    (np.array([0.5, 0.0, 0.2]), np.array([np.nan, 1.0, 0.0, 0.0])),
    (np.array([0.5, 0.0, 0.2]), np.array([0.0, 0.0, 0.0, 0.0])),
])
def test_non_finite_targets_never_reach_the_physics(bad, caplog):
    world = make_world()
    state = world.robot.state()
    # Moving toward a valid target first, so that "hold" is a real change of plan.
    world.robot.command(state.tcp_pos + [0.0, 0.0, -0.03], state.tcp_quat)
    run(world, 0.1)
    pos_before = tcp(world)
    world.robot.command(*bad)
    assert world.robot.controller.stats.rejected_targets == 1
    assert "rejected" in caplog.text
    for _ in range(int(0.5 / world.dt)):
        world.physics_step()
        assert np.all(np.isfinite(world.data.ctrl))
        assert np.all(np.isfinite(world.robot.controller.target_pos))
    assert np.all(np.isfinite(world.data.qpos))
    # The arm holds where it was when the bad target came (it was moving: a few mm).
    assert np.linalg.norm(tcp(world) - pos_before) < 0.01


def test_box_clips_targets_before_the_law_sees_them():
    world = make_world()
    state = world.robot.state()
    world.robot.command(np.array([2.0, 2.0, -1.0]), state.tcp_quat)
    box = world.robot.controller.box
    assert box.contains(world.robot.controller.target_pos)
    assert world.robot.controller.stats.box_clipped_targets == 1


def test_no_jump_on_start_and_watchdog_holds():
    assert_no_jump_on_start_and_watchdog_holds(make_world())
