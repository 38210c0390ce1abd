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


# --- odd types: what a cast would turn into numbers is refused, not coerced -----------------------


def odd_vectors(valid) -> dict[str, object]:
    """``valid`` (a usable vector) in every form that only becomes numbers by conversion."""
    valid = np.asarray(valid, dtype=np.float64)
    n = valid.shape[0]
    return {
        "numeric strings": [repr(float(v)) for v in valid],
        "a numeric string tuple": tuple(str(float(v)) for v in valid),
        "a string array": np.array([str(float(v)) for v in valid]),
        "a bytes array": np.array([str(float(v)).encode() for v in valid]),
        "one numeric string in a list": [*valid[:-1].tolist(), str(float(valid[-1]))],
        "a complex array": valid + 0.3j,
        "a complex array with zero imaginary part": valid.astype(np.complex128),
        "a list with one complex": [*valid[:-1].tolist(), complex(float(valid[-1]), 1.0)],
        "a masked array": np.ma.array(valid, mask=[True] + [False] * (n - 1)),
        "a masked array with nothing masked": np.ma.array(valid),
        "a bool array": np.ones(n, dtype=bool),
        "a list of bools": [True] * n,
        "a list with a numpy bool": [*valid[:-1].tolist(), np.bool_(True)],
        "an object array": valid.astype(object),
        "a structured array": np.zeros(n, dtype=[("v", "f8")]),
        "a datetime array": np.zeros(n, dtype="datetime64[s]"),
        "a generator": (float(v) for v in valid),
        "a set": set(valid.tolist()),
    }


ODD_SCALARS = {
    "a numeric string": "0.5", "a numpy string": np.str_("0.5"), "bytes": b"0.5", "a numpy bool": np.bool_(True),
    "False": False, "a complex": complex(0.5, 0.0), "a numpy complex": np.complex128(0.5 + 0.25j),
    "numpy's masked constant": np.ma.masked, "a masked 0-d array": np.ma.array(0.5, mask=True),
    "a 0-d complex array": np.array(0.5 + 0j), "a 0-d bool array": np.array(True),
    "a 0-d string array": np.array("0.5"), "a one-item array": np.array([0.5]), "an object": object(),
}


def goal_of(adv) -> tuple[np.ndarray, np.ndarray]:
    return adv.controller.goal_pos.copy(), adv.controller.goal_quat.copy()


def rejected_targets(adv) -> int:
    return adv.core.counts["rejected_targets"] if adv.channel == "core" else adv.controller.stats.rejected_targets


@pytest.mark.parametrize("arm", ["panda", "ur5e"])
@pytest.mark.parametrize("channel", ["robot", "controller", "core"])
def test_odd_typed_targets_are_rejected_counted_and_change_nothing(cfg, arm, channel):
    adv = Adversary(load_config(CONFIG, [f"sim.arm={arm}"]), channel, make_core=make_core, make_task=make_task)
    away = adv.home.tcp_pos + np.array([0.0, 0.03, -0.02])
    turned = np.array([0.0, 1.0, 0.0, 0.0])  # half a turn away from the start orientation
    before, count = goal_of(adv), 0
    for part, valid in (("position", away), ("quaternion", turned)):
        for kind, odd in odd_vectors(valid).items():
            pos, quat = (odd, adv.home.tcp_quat) if part == "position" else (adv.home.tcp_pos, odd)
            adv.target(pos, quat)
            count += 1
            assert (adv.figures.escapes, adv.figures.rejects, rejected_targets(adv)) == (0, count, count), \
                f"{channel}: a target {part} as {kind} was not rejected and counted"
            adv.step(2)
            # a rejection holds the pose measured then (within a settling arm's drift), never the odd value
            (pos_now, quat_now), what = goal_of(adv), f"{channel}: a {part} as {kind} moved the target"
            assert np.linalg.norm(pos_now - before[0]) < 2e-3 and np.linalg.norm(pos_now - away) > 0.03, what
            assert abs(abs(float(quat_now @ before[1])) - 1.0) < 1e-4, what
    adv.target(away.tolist(), adv.home.tcp_quat.tolist())  # the channel still serves: a list of floats is taken
    assert adv.figures.rejects == count and np.linalg.norm(adv.controller.goal_pos - before[0]) > 0.01


@pytest.mark.parametrize("channel", ["robot", "core"])
def test_odd_typed_gripper_values_are_rejected_whole_and_counted(cfg, channel):
    adv = Adversary(cfg, channel, make_core=make_core, make_task=make_task)
    away = adv.home.tcp_pos + np.array([0.0, 0.03, 0.0])
    goal, opening = goal_of(adv), adv.robot.gripper_target
    for i, (kind, odd) in enumerate(ODD_SCALARS.items(), 1):
        if channel == "robot":
            assert adv.robot.command(away, adv.home.tcp_quat, odd) is False, kind
            assert adv.controller.stats.rejected_targets == i, kind
            moved = np.linalg.norm(adv.controller.goal_pos - goal[0])
            assert moved < 1e-3, f"{kind}: the pose sent with it was applied ({moved * 1000:.1f} mm)"
        else:
            assert adv.core.on_gripper(odd) is False, kind
            assert adv.core.counts["rejected_grippers"] == i and adv.core.gripper is None, kind
        adv.step(2)
        assert adv.robot.gripper_target == opening, f"{kind} moved the gripper"
    assert adv.robot.command(away, adv.home.tcp_quat, np.float32(0.25)) is True  # a numpy float is a number
    assert adv.robot.gripper_target == 0.25


@pytest.mark.parametrize("channel", ["robot", "controller", "core"])
def test_odd_typed_postures_and_stiffnesses_are_rejected_counted_and_change_nothing(cfg, channel):
    adv = Adversary(cfg, channel, make_core=make_core, make_task=make_task)
    slew = adv.controller.posture_slew
    before = (slew.goal_q.copy(), slew.goal_stiffness)
    odd = [(q, None, f"a posture as {kind}") for kind, q in odd_vectors(adv.home.q + 0.1).items()]
    odd += [(adv.home.q + 0.1, k, f"a stiffness as {kind}") for kind, k in ODD_SCALARS.items()]
    for count, (q, k, what) in enumerate(odd, 1):
        adv.posture(q, k)
        rejected = adv.core.counts["rejected_postures"] if channel == "core" else adv.controller.stats.rejected_postures
        assert (adv.figures.escapes, adv.figures.rejects, rejected) == (0, count, count), f"{channel}: {what}"
        assert adv.controller.stats.clipped_postures == 0
        np.testing.assert_array_equal(slew.goal_q, before[0], err_msg=f"{channel}: {what} moved the posture")
        assert slew.goal_stiffness == before[1], f"{channel}: {what} changed the stiffness"
    adv.posture((adv.home.q + 0.1).tolist(), 20)  # a list of floats and an int stiffness are taken
    assert adv.figures.rejects == len(odd) and slew.goal_stiffness == 20.0


def test_numbers_in_every_accepted_form_are_taken():
    limits = PostureLimits(np.full(3, -1.0), np.full(3, 1.0), 100.0)
    for pos in ([0, 1, 2], (0.0, 1.0, 2.0), np.arange(3), np.arange(3, dtype=np.float32), np.arange(3, dtype=np.uint8),
                [np.float32(0), np.int64(1), 2.0]):
        np.testing.assert_array_equal(pose_command(pos, [1, 0, 0, 0])[0], [0.0, 1.0, 2.0])
    for value in (1, 0.5, np.float16(0.5), np.int32(1), np.array(0.5)):
        assert gripper_command(value) == float(value)
    assert posture_command(np.zeros(3), np.array(7), limits).stiffness == 7.0
    with pytest.raises(BadCommand, match=r"a target position must be 3 numbers"):
        pose_command([10 ** 400, 0, 0], [1, 0, 0, 0])
    with pytest.raises(BadCommand, match=r"must be 3 numbers, got 10000000 items"):
        pose_command([0.0] * 10_000_000, [1, 0, 0, 0])
    with pytest.raises(BadCommand, match=r"must be 3 real numbers, got an array of dtype complex128"):
        pose_command(np.zeros(3, complex), [1, 0, 0, 0])
    with pytest.raises(BadCommand, match=r"masked array \(its mask would be ignored\)"):
        pose_command(np.ma.zeros(3), [1, 0, 0, 0])
