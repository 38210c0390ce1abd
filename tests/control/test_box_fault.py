"""The guard's box fault at the law's boundary, with synthetic measured states: how far
outside the box a pose is (in position and in orientation), when the law faults and what
it holds, refused targets, the hysteresis of clearing, and hostile measured poses (NaN,
inf, alternating in and out)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.config.sections import ControllerConfig, RobotConfig
from robot_rl.control import ArmState, CartesianImpedanceController, SafetyBox
from robot_rl.control.guard import BOX_CLEAR_SHARE
from robot_rl.control.transforms import quat_mul, rotvec_to_quat

ROBOT = RobotConfig()
BOX = SafetyBox.from_config(ROBOT)  # x 0.30..0.70, y -0.25..0.25, z 0.02..0.45; margin 0.05
DOWN = np.array([0.0, 1.0, 0.0, 0.0])
JAC = np.hstack([np.eye(6), np.zeros((6, 1))])


def arm_at(pos, quat=DOWN) -> ArmState:
    return ArmState(q=np.zeros(7), dq=np.zeros(7), pos=np.asarray(pos, dtype=np.float64),
                    quat=np.asarray(quat, dtype=np.float64), jac=JAC, bias=np.zeros(7))


def turned(rotvec) -> np.ndarray:
    """DOWN turned by ``rotvec`` (base frame): the box's rotation vector of the result is ``rotvec``."""
    return quat_mul(rotvec_to_quat(np.asarray(rotvec, dtype=np.float64)), DOWN)


def started(pos=(0.5, 0.0, 0.25)) -> CartesianImpedanceController:
    ctrl = CartesianImpedanceController(ControllerConfig(), BOX, watchdog=False)
    ctrl.start(arm_at(pos), 0.0)
    return ctrl


@pytest.mark.parametrize("pos,dist,axis", [
    ((0.5, 0.0, 0.25), 0.0, ""), ((0.70, 0.25, 0.45), 0.0, ""), ((0.841, 0.0, 0.25), 0.141, "+x"),
    ((0.2, 0.0, 0.25), 0.1, "-x"), ((0.5, 0.3, 0.25), 0.05, "+y"), ((0.5, -0.33, 0.25), 0.08, "-y"),
    ((0.5, 0.0, 0.79), 0.34, "+z"), ((0.5, 0.0, -0.01), 0.03, "-z"), ((0.9, 0.0, 1.0), 0.55, "+z"),
    ((np.nan, 0.0, 0.25), 0.0, ""),
])
def test_excursion_names_the_worst_axis_and_its_distance(pos, dist, axis):
    d, a = BOX.excursion(np.array(pos))
    assert d == pytest.approx(dist, abs=1e-12) and a == axis


def test_past_the_margin_the_law_faults_once_holds_the_nearest_box_pose_and_refuses_targets():
    ctrl = started()
    ctrl.compute(arm_at((0.5, 0.0, 0.49)), 0.001, 0.001)  # 4 cm out: within the margin
    assert ctrl.fault is None and ctrl.outside_m == pytest.approx(0.04)
    ctrl.compute(arm_at((0.5, 0.02, 0.51)), 0.002, 0.001)  # 6 cm out
    assert ctrl.fault.startswith("TCP is 0.060 m outside the box on +z") and "\n" not in ctrl.fault
    np.testing.assert_allclose(ctrl.target_pos, [0.5, 0.02, 0.45])  # the nearest pose in the box
    assert ctrl.holding and ctrl.stats.box_faults == 1
    for i in range(50):  # pushed further, targets keep coming: one fault, the same hold, none accepted
        assert ctrl.set_target([0.5, 0.0, 0.25], DOWN, 0.003 + i * 0.001) is False
        ctrl.compute(arm_at((0.5, 0.02, 0.51 + 0.005 * i)), 0.003 + i * 0.001, 0.001)
    np.testing.assert_allclose(ctrl.target_pos, [0.5, 0.02, 0.45])
    assert ctrl.stats.box_faults == 1 and ctrl.stats.refused_in_fault == 50
    assert ctrl.stats.max_outside_m == pytest.approx(0.06 + 0.005 * 49)
    ctrl.hold(arm_at((0.5, 0.0, 0.7)), 1.0)  # a hold request does not adopt the pose outside
    np.testing.assert_allclose(ctrl.target_pos, [0.5, 0.02, 0.45])
    # the spring pulls back no harder than any target may: K * clip
    limit = np.asarray(ControllerConfig().stiffness[:3]) * np.asarray(ControllerConfig().error_clip_mm) / 1000
    assert np.all(np.abs(ctrl.last_output.force[:3]) <= limit + 1e-9)


def test_clearing_has_hysteresis_and_refuses_hostile_poses_in_one_line():
    ctrl = started()
    ctrl.compute(arm_at((0.5, 0.0, 0.52)), 0.001, 0.001)
    assert ctrl.box_fault is not None
    margin = BOX.outside_margin
    for bad in ([np.nan, 0.0, 0.3], [np.inf, 0.0, 0.3], [0.5, 0.0], "0.5, 0, 0.3"):
        with pytest.raises(ValueError) as err:
            ctrl.clear_box_fault(bad, DOWN, 0.01)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"still 0\.030 m outside the box on \+z \(it must be back within 0\.025 m\)"):
        ctrl.clear_box_fault([0.5, 0.0, 0.45 + 0.6 * margin], DOWN, 0.01)  # inside the margin, not yet back
    assert ctrl.box_fault is not None
    ctrl.clear_box_fault([0.5, 0.0, 0.45 + 0.9 * BOX_CLEAR_SHARE * margin], DOWN, 0.02)
    assert ctrl.fault is None and ctrl.holding
    assert ctrl.set_target([0.5, 0.0, 0.3], DOWN, 0.03) is True


def test_hostile_measured_poses_never_fault_or_clear_by_themselves():
    ctrl = started()
    for i in range(200):  # NaN and inf states: the law's own non-finite handling, no box fault
        bad = [np.nan, np.inf, -np.inf][i % 3]
        ctrl.compute(arm_at((bad, 0.0, 0.25)), 0.001 * (i + 1), 0.001)
    assert ctrl.fault is None and ctrl.stats.box_faults == 0
    ctrl = started()
    for i in range(1000):  # in and far out on alternate cycles: faults once, stays latched
        pos = (0.5, 0.0, 0.25) if i % 2 else (0.5, 0.0, 1.0e3)
        ctrl.compute(arm_at(pos), 0.001 * (i + 1), 0.001)
    assert ctrl.stats.box_faults == 1 and ctrl.box_fault is not None
    assert np.all(np.isfinite(ctrl.prev_tau_cmd))
    np.testing.assert_allclose(ctrl.target_pos, [0.5, 0.0, 0.45])


def test_a_restart_starts_over_and_faults_again_at_once_if_still_outside():
    ctrl = started()
    ctrl.compute(arm_at((0.5, 0.0, 0.6)), 0.001, 0.001)
    assert ctrl.box_fault is not None
    ctrl.start(arm_at((0.5, 0.0, 0.6)), 0.002)
    assert ctrl.box_fault is None
    ctrl.compute(arm_at((0.5, 0.0, 0.6)), 0.003, 0.001)
    assert ctrl.box_fault is not None and ctrl.stats.box_faults == 2


@pytest.mark.parametrize("rotvec,dist,axis", [
    ((0.0, 0.0, 0.0), 0.0, ""), ((0.49, -0.49, 0.99), 0.0, ""), ((0.0, 0.0, 1.4), 0.4, "+rz"),
    ((-0.8, 0.0, 0.0), 0.3, "-rx"), ((0.0, 0.6, 0.0), 0.1, "+ry"), ((0.0, 0.0, -1.25), 0.25, "-rz"),
])
def test_rot_excursion_names_the_worst_axis_and_its_angle(rotvec, dist, axis):
    d, a = BOX.rot_excursion(turned(rotvec))
    assert d == pytest.approx(dist, abs=1e-9) and a == axis


@pytest.mark.parametrize("quat", [[np.nan, 0, 0, 1], [np.inf, 0, 0, 0], [0, 0, 0, 0], [1e-300, 0, 0, 0],
                                  [0, 1, 0], "0 1 0 0"])
def test_rot_excursion_of_a_non_pose_is_zero(quat):
    assert BOX.rot_excursion(quat) == (0.0, "")


def test_a_hand_turned_past_the_rotation_margin_faults_holds_the_nearest_box_pose_and_clears_with_hysteresis():
    ctrl = started()
    margin = BOX.outside_margin_rad  # 0.35 rad past rot_high[2] = 1.0
    ctrl.compute(arm_at((0.5, 0.0, 0.25), turned([0, 0, 1.0 + 0.3])), 0.001, 0.001)  # within the margin
    assert ctrl.fault is None and ctrl.outside_rad == pytest.approx(0.3)
    ctrl.compute(arm_at((0.5, 0.0, 0.25), turned([0, 0, 1.0 + 0.4])), 0.002, 0.001)
    assert ctrl.fault.startswith("TCP is turned 0.400 rad outside the box on +rz") and "\n" not in ctrl.fault
    assert ctrl.holding and ctrl.stats.box_faults == 1 and ctrl.stats.max_outside_rad == pytest.approx(0.4)
    np.testing.assert_allclose(BOX.relative_rotvec(ctrl.target_quat), [0, 0, 1.0], atol=1e-9)  # nearest in the box
    np.testing.assert_allclose(ctrl.target_pos, [0.5, 0.0, 0.25])
    for i in range(20):  # twisted further, targets keep coming: one fault, the same hold, none accepted
        assert ctrl.set_target([0.5, 0.0, 0.3], DOWN, 0.003 + i * 0.001) is False
        ctrl.compute(arm_at((0.5, 0.0, 0.25), turned([0, 0, 1.4 + 0.05 * i])), 0.003 + i * 0.001, 0.001)
    assert ctrl.stats.box_faults == 1 and ctrl.stats.refused_in_fault == 20
    np.testing.assert_allclose(BOX.relative_rotvec(ctrl.target_quat), [0, 0, 1.0], atol=1e-9)
    # the spring turns back no harder than any target may: K * clip
    cfg = ControllerConfig()
    limit = np.asarray(cfg.stiffness[3:]) * np.asarray(cfg.error_clip_rad)
    assert np.all(np.abs(ctrl.last_output.force[3:]) <= limit + 1e-9)
    for bad in ([np.nan, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0], "0 1 0 0"):
        with pytest.raises(ValueError, match="orientation is not a finite quaternion"):
            ctrl.clear_box_fault([0.5, 0.0, 0.25], bad, 0.05)
    with pytest.raises(ValueError, match=r"still turned 0\.300 rad outside the box on \+rz \(it must be back within "
                                         r"0\.175 rad\)"):
        ctrl.clear_box_fault([0.5, 0.0, 0.25], turned([0, 0, 1.3]), 0.05)
    assert ctrl.box_fault is not None
    ctrl.clear_box_fault([0.5, 0.0, 0.25], turned([0, 0, 1.0 + 0.9 * BOX_CLEAR_SHARE * margin]), 0.06)
    assert ctrl.fault is None
    assert ctrl.set_target([0.5, 0.0, 0.3], DOWN, 0.07) is True


def test_a_hand_turning_in_and_far_out_on_alternate_cycles_faults_once_and_stays_latched():
    ctrl = started()
    for i in range(1000):
        quat = DOWN if i % 2 else turned([0.0, -(0.5 + 2.0), 0.0])
        ctrl.compute(arm_at((0.5, 0.0, 0.25), quat), 0.001 * (i + 1), 0.001)
    assert ctrl.stats.box_faults == 1 and "on -ry" in ctrl.box_fault
    assert np.all(np.isfinite(ctrl.prev_tau_cmd))
    np.testing.assert_allclose(BOX.relative_rotvec(ctrl.target_quat), [0, -0.5, 0], atol=1e-9)
