"""The Cartesian admittance law driving the 6-DoF MuJoCo UR5e (``sim.arm: ur5e``), with the
impedance law's figures (tests/sim/test_impedance_on_arm.py): step response, compliance
under a constant force, a 1 m target clipped, the watchdog hold and no jump on start,
the adversarial command fuzz; plus the wrist force-torque sensor, its saturation fault,
scripted resets without joint resets, and the arm's own description (joints, limits)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import sim_arm
from sim_arm import CONFIG, assert_no_jump_on_start_and_watchdog_holds, held_under_force, push, run, step_response, tcp

from robot_rl.errors import RobotFault
from robot_rl.nodes.controller import ControllerCore
from robot_rl.reset.soak import reset_soak
from robot_rl.sim.adversary import run_attacks
from robot_rl.sim.ur5e import JOINT_NAMES, UR5E_DH
from robot_rl.tasks import load_config, make_task

UR = "sim.arm=ur5e"
BOX_TOLERANCE_MM = 3.0  # as for the impedance law (tests/control/test_command_attacks.py)


def make_world(*overrides: str):
    return sim_arm.make_world(UR, *overrides)


def test_the_arm_is_the_ur5e_chain_with_six_joints_and_no_posture():
    world = make_world()
    assert world.arm.name == "ur5e" and world.arm.dof == 6
    assert [world.model.joint(int(j)).name for j in world.arm_joint_ids] == list(JOINT_NAMES)
    state = world.robot.state()
    assert state.q.shape == state.dq.shape == state.tau.shape == (6,)
    # At zero joint angles the flange is where the DH parameters put it (UR's own figures).
    d = world.data
    d.qpos[world.arm_qpos] = 0.0
    world.forward()
    a2, a3 = UR5E_DH[1][0], UR5E_DH[2][0]
    d1, d4, d5, d6 = UR5E_DH[0][1], UR5E_DH[3][1], UR5E_DH[4][1], UR5E_DH[5][1]
    np.testing.assert_allclose(d.xpos[world.model.body("hand").id], [a2 + a3, -(d4 + d6), d1 - d5], atol=1e-9)
    with pytest.raises(NotImplementedError, match="no null-space posture"):
        world.robot.set_posture(np.zeros(6), 10.0)


@pytest.mark.parametrize("axis,sign", [(0, 1), (1, -1), (2, -1)])
def test_step_response_reaches_5cm_target_within_2mm_in_1_5s_with_little_overshoot(axis, sign):
    settle_time, overshoot, err = step_response(make_world(), axis, sign, 2.0)
    assert settle_time <= 1.5, f"stayed within 2 mm only after {settle_time:.3f} s"
    assert overshoot <= 0.005, f"overshoot {overshoot * 1000:.2f} mm"
    assert err[-1] < 0.001  # and it stays there


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_constant_10N_force_gives_displacement_F_over_K(axis):
    world = make_world()
    moved = held_under_force(world, axis, 10.0)
    displacement = moved[axis]
    expected = 10.0 / world.cfg.robot.admittance.stiffness[axis]
    assert displacement == pytest.approx(expected, rel=0.2), (displacement, expected)
    others = np.delete(moved, axis)
    assert np.all(np.abs(others) < 0.2 * expected)  # it gives way along the force only
    # The wrist sensor reads the push (payload removed), and the law used it.
    reading = world.drive.ft_reading()
    assert reading[axis] == pytest.approx(10.0, abs=0.3)
    assert np.all(np.abs(np.delete(reading[:3], axis)) < 0.3)
    wrench = world.robot.state().tcp_wrench
    assert wrench[axis] == pytest.approx(10.0 - world.cfg.robot.admittance.force_deadband, abs=0.5)


def test_the_sensor_reads_nothing_at_rest_and_the_weight_of_what_the_tool_holds():
    world = make_world()
    state = world.robot.state()
    run(world, 0.5, state.tcp_pos, state.tcp_quat)
    at_rest = world.drive.ft_reading()
    assert np.all(np.abs(at_rest[:3]) < 0.05) and np.all(np.abs(at_rest[3:]) < 0.01), at_rest
    # A 1 kg mass hanging at the TCP reads as -9.81 N in z and no moment about the TCP.
    hand = world.model.body("hand").id
    d = world.data
    for _ in range(int(0.5 / world.dt)):
        push(world, np.array([0.0, 0.0, -9.81]))
        world.robot.controller.set_target(state.tcp_pos, state.tcp_quat, world.now())
        world.physics_step()
    reading = world.drive.ft_reading()
    assert reading[2] == pytest.approx(-9.81, abs=0.1) and np.all(np.abs(reading[3:]) < 0.02), reading
    assert d.xfrc_applied[hand, 2] == -9.81


def test_a_1m_target_is_clipped_and_the_tcp_stays_in_the_box():
    world = make_world()
    box = world.robot.controller.box
    state = world.robot.state()
    target = state.tcp_pos + np.array([1.0, 0.0, 0.0])
    world.robot.command(target, state.tcp_quat)
    assert world.robot.controller.stats.box_clipped_targets == 1
    traj = run(world, 3.0, target, state.tcp_quat, record=True)
    pos = np.array([p for _, p, _ in traj])
    outside = np.maximum(box.pos_low - pos, pos - box.pos_high).max()
    assert outside * 1000 <= BOX_TOLERANCE_MM, f"TCP {outside * 1000:.2f} mm outside the box"
    assert pos[-1, 0] == pytest.approx(box.pos_high[0], abs=0.002)  # it went as far as the box allows
    speeds = np.array([np.linalg.norm(out.twist[:3]) for _, _, out in traj])
    assert speeds.max() <= world.cfg.robot.admittance.max_speed + 1e-9


def test_a_1m_target_in_a_wide_box_is_error_clipped_and_speed_limited():
    world = make_world("robot.workspace.pos_low=[-2,-2,-2]", "robot.workspace.pos_high=[2,2,2]")
    cfg = world.cfg.robot.admittance
    state = world.robot.state()
    target = state.tcp_pos + np.array([0.0, 0.0, 1.0])  # 1 m up: out of reach after ~0.4 m
    traj = run(world, 0.5, target, state.tcp_quat, record=True)
    outs = [out for _, _, out in traj]
    slew_cycles = int(np.ceil(cfg.error_clip_mm[2] / 1000.0 / (cfg.max_target_speed * world.dt))) + 1
    assert all(out.error_clipped for out in outs[slew_cycles:])
    spring = np.abs(np.clip(outs[-1].error[:3], -0.001 * np.array(cfg.error_clip_mm), 0.001 * np.array(
        cfg.error_clip_mm)) * np.array(cfg.stiffness[:3]))
    assert np.all(spring <= np.array(cfg.stiffness[:3]) * np.array(cfg.error_clip_mm) / 1000.0 + 1e-9)
    twists = np.array([out.twist for out in outs])
    assert np.linalg.norm(twists[:, :3], axis=1).max() <= cfg.max_speed + 1e-9
    steps = np.linalg.norm(np.diff(twists[:, :3], axis=0), axis=1)
    assert steps.max() <= cfg.max_acc * world.dt + 1e-9
    # It did pull toward the target: at the speed where K * clip meets the damper, or the speed limit.
    gains = world.robot.controller.gains
    terminal = min(gains.stiffness[2] * gains.error_clip[2] / gains.damping[2], cfg.max_speed)
    assert np.linalg.norm(twists[-1, :3]) > 0.8 * terminal


def test_no_jump_on_start_and_watchdog_holds():
    assert_no_jump_on_start_and_watchdog_holds(make_world())


@pytest.mark.parametrize("bad", [
    (np.array([np.nan, 0.0, 0.2]), np.array([0.0, 1.0, 0.0, 0.0])),
    (np.array([0.5, 0.0, 0.2]), np.array([0.0, 0.0, 0.0, 0.0])),
    ("xyz", np.array([0.0, 1.0, 0.0, 0.0])),
])
def test_a_bad_target_is_rejected_and_the_arm_holds(bad):
    world = make_world()
    state = world.robot.state()
    world.robot.command(state.tcp_pos + [0.0, 0.0, -0.03], state.tcp_quat)
    run(world, 0.1)
    pos_before = tcp(world)
    assert world.robot.command(*bad) is False
    assert world.robot.controller.stats.rejected_targets == 1
    for _ in range(int(0.5 / world.dt)):
        world.physics_step()
        assert np.all(np.isfinite(world.data.ctrl))
    assert np.linalg.norm(tcp(world) - pos_before) < 0.01  # it was moving: a few mm to stop


def test_a_saturated_force_torque_sensor_holds_the_arm_with_a_one_line_fault(caplog):
    world = make_world()
    robot = world.robot
    state = robot.state()
    run(world, 0.3, state.tcp_pos, state.tcp_quat)
    before = tcp(world)
    limit = world.cfg.robot.admittance.force_limit
    for _ in range(5):  # a 10 ms blow, far beyond the sensor's range
        push(world, np.array([0.0, 0.0, -3.0 * limit]))
        robot.controller.set_target(state.tcp_pos, state.tcp_quat, world.now())
        world.physics_step()
    world.data.xfrc_applied[:] = 0.0
    fault = robot.controller.fault
    assert fault is not None and "\n" not in fault and "saturated" in fault, fault
    assert robot.controller.stats.ft_faults == 1
    with pytest.raises(RobotFault) as raised:
        robot.state()
    assert "\n" not in str(raised.value) and "force-torque sensor saturated" in str(raised.value)
    with pytest.raises(RobotFault):
        robot.command(state.tcp_pos + [0.0, 0.0, 0.03], state.tcp_quat)
    run(world, 1.0)  # nothing commands it: the arm comes to rest where the blow left it, and holds
    held = tcp(world)
    assert np.linalg.norm(held - before) < 0.02
    run(world, 1.0)
    assert np.linalg.norm(tcp(world) - held) < 0.001
    assert robot.controller.stats.ft_faults == 1  # one fault, not one per cycle
    robot.recover()
    after = robot.state()
    assert robot.controller.fault is None
    target = after.tcp_pos + np.array([0.0, 0.0, 0.03])
    assert robot.command(target, after.tcp_quat) is True
    run(world, 1.5, target, after.tcp_quat)
    assert np.linalg.norm(tcp(world) - target) < 0.002


def test_recovery_fails_while_the_sensor_stays_saturated():
    world = make_world()
    robot = world.robot
    state = robot.state()
    limit = world.cfg.robot.admittance.force_limit
    for _ in range(5):
        push(world, np.array([0.0, 0.0, -2.0 * limit]))
        robot.controller.set_target(state.tcp_pos, state.tcp_quat, world.now())
        world.physics_step()
    with pytest.raises(RobotFault, match="recovery failed: the force-torque reading is still"):
        robot.recover()
    assert robot.controller.fault is not None


def test_the_adversarial_command_fuzz_keeps_the_safety_figures(caplog):
    """The safety issue's attacks (robot_rl.sim.adversary) on every channel, CI-sized."""
    caplog.set_level(logging.CRITICAL)
    cfg = load_config(CONFIG, [UR])
    for channel in ("robot", "controller", "core"):
        results = run_attacks(cfg, channel, targets=800, alternation_periods=(1, 2, 5, 12), alternation_s=1.0,
                              postures=200, grippers=200, seed=3, make_task=make_task,
                              make_core=lambda robot, watchdog_s, clock: ControllerCore(robot, watchdog_s,
                                                                                         clock=clock))
        assert ("postures" in results) == (channel == "core")  # no posture: only the node's rules take one
        for name, f in results.items():
            where = f"{channel}/{name}"
            assert f.nonfinite_steps == 0 and f.escapes == 0 and f.half_applied == 0, (where, f)
            assert f.max_box_excursion_mm <= BOX_TOLERANCE_MM, (where, f)
            assert f.max_spring_ratio <= 1.0 + 1e-9 and f.max_torque_ratio <= 1.0 + 1e-9, (where, f)
            assert f.max_speed_ratio <= 1.0 + 1e-9 and f.max_acc_ratio <= 1.0 + 1e-6, (where, f)
            assert f.max_joint_limit_excess_rad <= 0.1, (where, f)
            if not name.startswith("alternation"):
                assert f.rejects > 0, (where, f)
        if channel == "core":
            assert results["postures"].rejects == 200 + 1  # every posture (and the final None) refused, counted


@pytest.mark.parametrize("config", ["configs/pick_cube.yaml", "configs/peg_insert.yaml"])
def test_scripted_resets_work_and_skip_the_joint_reset(config):
    from robot_rl.assemble import make_env

    cfg = load_config(config, [UR, "reset.mode=scripted", "reset.joint_reset_every=2"])
    result = reset_soak(cfg, make_env(cfg), 3, seed=1)
    summary = result.as_dict()
    assert result.failures == [], summary
    assert result.in_range == 3 and result.in_box == 3 and result.teleports == 0, summary
    assert result.totals.violations == 0, summary
    assert result.totals.joint_resets == 0
    assert result.totals.max_pos_error < 0.008, summary
