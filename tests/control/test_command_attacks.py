"""Attacks on every channel that can move the arm, and the safety figures they must keep.

The promise (robot_rl.control): whatever arrives on the target, gripper or posture
channel, at any rate, the TCP stays inside the workspace box (within BOX_TOLERANCE_MM for
contact and dynamics), the spring force stays at most K * clip, torques stay within their
limits and their rate limit, no NaN reaches the physics, nothing raises out of a command
entry point, and every command that cannot be used is rejected and counted.

The same attacks run at full size in ``bench/safety_attacks.py``.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from robot_rl.control.commands import BadCommand, PostureLimits, gripper_command, pose_command, posture_command
from robot_rl.nodes.controller import ControllerCore
from robot_rl.sim.adversary import HOSTILE_SCALARS, HOSTILE_VECTORS, Adversary, run_attacks
from robot_rl.tasks import load_config, make_task

BOX_TOLERANCE_MM = 3.0  # the stated tolerance for contact and dynamics (measured: 0.0 mm)
CONFIG = "configs/pick_cube.yaml"


def make_core(robot, watchdog_s: float, clock) -> ControllerCore:
    """The controller node's rules over the attacked arm, on the sim clock."""
    return ControllerCore(robot, watchdog_s, clock=clock)


@pytest.fixture(scope="module")
def cfg():
    return load_config(CONFIG)


@pytest.fixture(autouse=True)
def quiet_rejections(caplog):
    caplog.set_level(logging.CRITICAL)  # thousands of rejections are expected here


def assert_safe(name, f, *, hostile: bool) -> None:
    assert f.nonfinite_steps == 0, f"{name}: NaN or inf reached the physics on {f.nonfinite_steps} steps"
    assert f.escapes == 0, f"{name}: {f.escapes} exceptions escaped a command entry point"
    assert f.half_applied == 0, f"{name}: {f.half_applied} commands were applied in part"
    assert f.max_box_excursion_mm <= BOX_TOLERANCE_MM, f"{name}: TCP {f.max_box_excursion_mm:.1f} mm outside the box"
    assert f.max_spring_ratio <= 1.0 + 1e-9, f"{name}: spring force {f.max_spring_ratio:.3f} x K*clip"
    assert f.max_torque_ratio <= 1.0 + 1e-9, f"{name}: torque {f.max_torque_ratio:.3f} x its limit"
    assert f.max_torque_rate_ratio <= 1.0 + 1e-6, f"{name}: torque rate {f.max_torque_rate_ratio:.3f} x its limit"
    assert f.max_joint_limit_excess_rad <= 0.1, f"{name}: a joint {f.max_joint_limit_excess_rad:.3f} rad past its limit"
    if hostile:
        assert f.rejects > 0, f"{name}: nothing was rejected, so the attack did not attack"


@pytest.mark.parametrize("channel", ["robot", "controller", "core"])
def test_every_attack_on_every_channel_keeps_the_safety_figures(cfg, channel):
    """Hostile targets, alternation at 1-12 physics steps, posture and gripper floods."""
    results = run_attacks(cfg, channel, targets=1500, alternation_periods=(1, 2, 3, 5, 8, 12), alternation_s=1.5,
                          postures=600, grippers=300, seed=7, make_core=make_core,
                          make_task=make_task)
    for name, figures in results.items():
        assert_safe(f"{channel}/{name}", figures, hostile=not name.startswith("alternation"))


def test_far_targets_alternating_every_few_physics_steps_stay_in_the_box(cfg):
    """The hole: the torque-rate limit turned alternation into a steady push (44 mm out in 6 s)."""
    for period in (1, 2, 3):
        adv = Adversary(cfg, "robot", seed=period, make_task=make_task)
        adv.alternate(period, seconds=6.0)
        assert adv.figures.max_box_excursion_mm <= BOX_TOLERANCE_MM, (period, adv.figures)


@pytest.mark.parametrize("q_offset, stiffness", [(3.0, 1e6), (1e200, 1e6), (1e308, 200.0), (-3.0, 2.0 ** 31)])
def test_an_absurd_posture_is_clipped_and_cannot_move_the_tcp(cfg, q_offset, stiffness):
    """The hole: one posture 3 rad past home (or 1e200) at 1e6 Nm/rad took the TCP 1 m out."""
    adv = Adversary(cfg, "robot", make_task=make_task)
    controller = adv.controller
    assert adv.robot.set_posture(adv.home.q + q_offset, stiffness) is True
    assert controller.stats.clipped_postures == 1
    goal = controller.posture_slew
    assert (np.all(goal.goal_q >= controller.posture_limits.low)
            and np.all(goal.goal_q <= controller.posture_limits.high))
    assert goal.goal_stiffness == cfg.robot.controller.max_posture_stiffness
    for _ in range(20):  # valid targets keep arriving at 10 Hz for 2 s
        adv.target(adv.home.tcp_pos, adv.home.tcp_quat)
        adv.step(50)
    assert_safe("posture", adv.figures, hostile=False)
    assert adv.figures.max_torque_ratio < 0.9, "the posture held a joint at its torque limit"


@pytest.mark.parametrize("scale", [1e154, 1e200, 1e300])
def test_a_huge_but_finite_quaternion_is_normalised_not_raised(cfg, scale):
    adv = Adversary(cfg, "robot", make_task=make_task)
    assert adv.robot.command(adv.home.tcp_pos, adv.home.tcp_quat * scale) is True
    np.testing.assert_allclose(adv.controller.goal_quat, adv.home.tcp_quat / np.linalg.norm(adv.home.tcp_quat),
                               atol=1e-9)
    adv.step(100)
    assert_safe("quaternion", adv.figures, hostile=False)


@pytest.mark.parametrize("channel", ["robot", "controller", "core"])
@pytest.mark.parametrize("bad", HOSTILE_VECTORS, ids=lambda v: type(v).__name__)
def test_a_malformed_target_is_rejected_and_counted_on_every_entry_point(cfg, channel, bad):
    adv = Adversary(cfg, channel, make_core=make_core, make_task=make_task)
    adv.target(bad, adv.home.tcp_quat)
    adv.target(adv.home.tcp_pos, bad)
    assert adv.figures.escapes == 0 and adv.figures.rejects == 2
    counted = adv.core.counts["rejected_targets"] if channel == "core" else adv.controller.stats.rejected_targets
    assert counted == 2


@pytest.mark.parametrize("bad", HOSTILE_SCALARS, ids=repr)
def test_a_bad_gripper_value_rejects_the_whole_command(cfg, bad):
    adv = Adversary(cfg, "robot", make_task=make_task)
    goal, opening = adv.controller.goal_pos.copy(), adv.robot.gripper_target
    assert adv.robot.command(adv.home.tcp_pos + np.array([0.0, 0.03, 0.0]), adv.home.tcp_quat, bad) is False
    np.testing.assert_array_equal(adv.controller.goal_pos, goal)  # the pose was not applied either
    assert adv.robot.gripper_target == opening and adv.controller.stats.rejected_targets == 1


@pytest.mark.parametrize("bad", HOSTILE_SCALARS, ids=repr)
def test_the_node_core_counts_a_bad_gripper_and_keeps_serving(cfg, bad):
    adv = Adversary(cfg, "core", make_core=make_core, make_task=make_task)
    assert adv.core.on_gripper(bad) is False
    assert adv.core.counts["rejected_grippers"] == 1 and adv.core.gripper is None
    assert adv.core.on_gripper(0.25) is True and adv.core.gripper == 0.25


def test_a_rejected_target_holds_the_pose_measured_then(cfg):
    """What the README promises: a rejected target holds the pose measured at the rejection."""
    adv = Adversary(cfg, "robot", make_task=make_task)
    away = adv.home.tcp_pos + np.array([0.0, 0.04, 0.0])
    adv.robot.command(away, adv.home.tcp_quat)
    adv.step(60)  # moving toward it
    assert adv.robot.command([math.nan, 0.0, 0.2], adv.home.tcp_quat) is False
    adv.step(1)
    held = adv.world.robot.state().tcp_pos
    np.testing.assert_allclose(adv.controller.goal_pos, adv.controller.target_pos)
    assert np.linalg.norm(adv.controller.goal_pos - held) < 0.002  # the pose of the rejecting cycle
    assert np.linalg.norm(adv.controller.goal_pos - away) > 0.01  # not the previous target


def test_command_checks_name_what_is_wrong():
    limits = PostureLimits(np.full(7, -1.0), np.full(7, 1.0), 100.0)
    for call, message in [
        (lambda: pose_command("xyz", [1, 0, 0, 0]), "target position must be 3 numbers"),
        (lambda: pose_command([0, 0, 0], [0, 0, 0, 0]), "quaternion must not be zero"),
        (lambda: pose_command([0, 0, math.inf], [1, 0, 0, 0]), "must be finite"),
        (lambda: gripper_command("0.5"), "gripper opening must be a number"),
        (lambda: posture_command([0.0] * 6, None, limits), "posture must be 7 numbers"),
        (lambda: posture_command([0.0] * 7, -1.0, limits), "stiffness must be >= 0"),
    ]:
        with pytest.raises(BadCommand, match=message):
            call()
    clipped = posture_command([5.0] * 7, 1e9, limits)
    assert clipped.clipped and clipped.stiffness == 100.0 and np.all(clipped.q == 1.0)
