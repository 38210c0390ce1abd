"""The ``Robot`` contract (robot_rl.interfaces.Robot), rule by rule, on every backend.

Backends (tests/contracts/conftest.py): ``sim`` (the MuJoCo Panda), ``sim_ur5e`` (the
6-DoF MuJoCo UR5e under the admittance law), ``topic`` (the actor's TopicRobot fed by the
sim node's core), ``franka_torque`` (the 1 kHz loop over fake_pylibfranka),
``franka_ros2`` (the ros2_control backend on a recording node, CRISP's topics),
``ros2_control_fzi`` (the same backend as a 6-joint UR5e behind FZI's compliance
controller, tests/support/ros2_control_rig.py) and ``ur_rtde`` (the UR loop over
fake_rtde, with a fake Robotiq URCap, tests/support/ur_rig.py). A rig says how many
joints its arm has (``dof``) and whether it takes a null-space posture (``has_posture``).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from contract_rigs import ROBOTS, over  # noqa: E402  (tests/support)

from robot_rl.errors import RobotFault
from robot_rl.interfaces import RobotState
from robot_rl.sim.adversary import HOSTILE_SCALARS, HOSTILE_VECTORS

NEAR = np.array([0.0, 0.0, -0.005])  # inside every backend's box and error clip
FAR = np.array([0.0, 0.0, -0.03])  # inside every box; away from the fake Franka's own path
START_TOL = 0.002  # m; the hold tolerance is the rig's (hold_tol)


def quat_close(a: np.ndarray, b: np.ndarray, tol: float = 1e-3) -> bool:
    return abs(float(np.dot(a, b))) > 1.0 - tol


def assert_pose(actual: tuple, expected: tuple, tol: float, what: str) -> None:
    err = float(np.linalg.norm(np.asarray(actual[0]) - np.asarray(expected[0])))
    assert err <= tol, f"{what}: {err * 1000:.2f} mm from {np.round(expected[0], 4)} (tolerance {tol * 1000:.1f} mm)"
    assert quat_close(np.asarray(actual[1]), np.asarray(expected[1])), f"{what}: orientation differs"


def bad_commands(pos: np.ndarray, quat: np.ndarray) -> list[tuple[str, object, object]]:
    """(label, pos, quat) a backend must refuse whole. A bad quaternion goes with a far
    valid position, so a half-applied command would show as a moved goal."""
    far = pos + FAR
    nan_pos, inf_pos = pos.copy(), pos.copy()
    nan_pos[1], inf_pos[2] = np.nan, np.inf
    nan_quat, inf_quat = quat.copy(), quat.copy()
    nan_quat[0], inf_quat[3] = np.nan, -np.inf
    cases = [("NaN position", nan_pos, quat), ("inf position", inf_pos, quat),
             ("2-element position", pos[:2], quat), ("4-element position", np.append(pos, 0.0), quat),
             ("NaN quaternion", far, nan_quat), ("inf quaternion", far, inf_quat),
             ("3-element quaternion", far, quat[:3]), ("zero quaternion", far, np.zeros(4))]
    cases += [(f"position {v!r:.40}", v, quat) for v in HOSTILE_VECTORS]
    cases += [(f"quaternion {v!r:.40}", far, v) for v in HOSTILE_VECTORS]
    return cases


def bad_postures(q: np.ndarray) -> list[tuple[str, object, object]]:
    """(label, q, stiffness) a backend must refuse whole (None is a valid q: the configured posture)."""
    n = len(q)
    nan_q, inf_q = q.copy(), q.copy()
    nan_q[3], inf_q[0] = np.nan, np.inf
    cases = [("NaN joint", nan_q, None), ("inf joint", inf_q, None), (f"{n - 1} joints", q[:-1], None),
             (f"{n + 1} joints", np.append(q, 0.0), None), (f"{n}x1 joints", q.reshape(n, 1), None)]
    cases += [(f"q {v!r:.40}", v, None) for v in HOSTILE_VECTORS if v is not None]
    cases += [(f"stiffness {v!r:.40}", q, v) for v in (*HOSTILE_SCALARS, -1.0)]
    cases += [(f"stiffness {v!r:.40} with q=None", None, v) for v in (float("nan"), -1.0, "stiff")]
    return cases


def call(label: str, fn, *args):
    """``fn(*args)``, failing with the input named if it raises (the contract: never raised)."""
    try:
        return fn(*args)
    except Exception as err:  # noqa: BLE001 - the point of the check
        pytest.fail(f"{label}: raised {type(err).__name__}: {err}")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_state_has_the_documented_shapes_and_finite_values(robot_rig):
    state = robot_rig.robot.state()
    assert isinstance(state, RobotState)
    n = robot_rig.dof
    shapes = {"tcp_pos": (3,), "tcp_quat": (4,), "tcp_twist": (6,), "tcp_wrench": (6,),
              "q": (n,), "dq": (n,), "tau": (n,)}
    for field, shape in shapes.items():
        value = getattr(state, field)
        assert isinstance(value, np.ndarray), f"{field} is a {type(value).__name__}"
        assert value.shape == shape, f"{field} has shape {value.shape}, the contract says {shape}"
        assert value.dtype.kind == "f", f"{field} has dtype {value.dtype}"
        assert np.all(np.isfinite(value)), f"{field} is not finite: {value}"
    assert np.linalg.norm(state.tcp_quat) == pytest.approx(1.0, abs=1e-6), "tcp_quat is not a unit quaternion"
    assert isinstance(state.stamp, float) and np.isfinite(state.stamp)
    assert isinstance(state.gripper, float) and 0.0 <= state.gripper <= 1.0, f"gripper {state.gripper!r}"


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_state_returns_without_blocking(robot_rig):
    worst = 0.0
    for _ in range(20):
        t0 = time.perf_counter()
        robot_rig.robot.state()
        worst = max(worst, time.perf_counter() - t0)
    assert worst < 0.25, f"state() took {worst:.3f} s"


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_the_first_target_is_the_pose_measured_at_start(robot_rig):
    robot_rig.settle(0.05)
    assert_pose(robot_rig.goal(), robot_rig.start, START_TOL, "target before any command")
    if robot_rig.physical:
        assert_pose(robot_rig.measured(), robot_rig.start, START_TOL, "arm before any command")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_valid_command_is_accepted_at_once_and_becomes_the_target(robot_rig):
    pos, quat = robot_rig.start
    target = pos + NEAR
    t0 = time.perf_counter()
    accepted = robot_rig.robot.command(target, quat)
    took = time.perf_counter() - t0
    assert accepted is True
    assert took < 0.25, f"command() took {took:.3f} s to return"
    assert robot_rig.robot.command(target, quat, 0.5) is True  # with a gripper opening too
    robot_rig.settle(0.3)
    assert_pose(robot_rig.goal(), (target, quat), 1e-4, "target after a valid command")
    if robot_rig.physical:  # and the arm goes there (a real-time sim may run slow on a busy machine)
        for _ in range(30):
            left = np.linalg.norm(robot_rig.measured()[0] - target)
            if left < 0.5 * np.linalg.norm(NEAR):
                break
            robot_rig.robot.command(target, quat)  # keeps the wall-clock watchdogs fed
            robot_rig.settle(0.1)
        assert left < 0.5 * np.linalg.norm(NEAR), f"the arm is still {left * 1000:.1f} mm from the target"


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_malformed_pose_is_rejected_counted_and_never_applied(robot_rig):
    robot = robot_rig.robot
    pos, quat = robot_rig.start
    cases = bad_commands(pos, quat)
    before = robot_rig.rejected_targets()
    here = robot_rig.measured()
    for label, bad_pos, bad_quat in cases:
        assert call(label, robot.command, bad_pos, bad_quat) is False, f"{label} was not rejected"
    assert robot_rig.rejected_targets() - before == len(cases), "every rejected command is counted"
    robot_rig.settle(0.2)
    assert_pose(robot_rig.goal(), here, robot_rig.hold_tol, "target after rejected commands")
    if robot_rig.physical:
        assert_pose(robot_rig.measured(), here, START_TOL, "arm after rejected commands")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_bad_gripper_value_rejects_the_whole_command(robot_rig):
    robot = robot_rig.robot
    pos, quat = robot_rig.start
    gripper = robot_rig.gripper_marker()
    before = robot_rig.rejected_targets()
    here = robot_rig.measured()
    for value in HOSTILE_SCALARS:
        label = f"gripper {value!r}"
        assert call(label, robot.command, pos + FAR, quat, value) is False, f"{label} was not rejected"
    assert robot_rig.rejected_targets() - before == len(HOSTILE_SCALARS)
    robot_rig.settle(0.2)
    assert robot_rig.gripper_marker() == gripper, "a rejected command moved the gripper"
    assert_pose(robot_rig.goal(), here, robot_rig.hold_tol, "target after commands with a bad gripper value")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_rejected_command_holds_the_pose_measured_when_it_arrived(robot_rig):
    """A bad command cancels the good one in flight: the arm holds where it is."""
    robot = robot_rig.robot
    pos, quat = robot_rig.start
    assert robot.command(pos + FAR, quat) is True
    robot_rig.settle(0.05)  # under way toward the far target
    here = robot_rig.measured()
    assert robot.command(np.array([np.nan, 0.0, 0.0]), quat) is False
    robot_rig.settle(0.2)
    assert_pose(robot_rig.goal(), here, robot_rig.hold_tol, "target after the rejected command")
    if robot_rig.physical:
        assert_pose(robot_rig.measured(), here, 2 * robot_rig.hold_tol, "arm after the rejected command")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_hold_makes_the_measured_pose_the_target(robot_rig):
    robot = robot_rig.robot
    pos, quat = robot_rig.start
    assert robot.command(pos + FAR, quat) is True
    robot_rig.settle(0.05)
    here = robot_rig.measured()
    assert robot.hold() is None
    robot_rig.settle(0.2)
    assert_pose(robot_rig.goal(), here, robot_rig.hold_tol, "target after hold()")
    if robot_rig.physical:
        assert_pose(robot_rig.measured(), here, 2 * robot_rig.hold_tol, "arm after hold()")


def needs_posture(rig) -> None:
    """Skip a posture rule on a backend without a posture (its own rule is the next one's)."""
    if not rig.has_posture:
        pytest.skip(f"{rig.name}: the arm has no null-space posture")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_valid_posture_is_accepted_and_none_restores_the_configured_one(robot_rig):
    needs_posture(robot_rig)
    robot = robot_rig.robot
    q = robot.state().q + np.array([0.05, 0.0, -0.05, 0.0, 0.0, 0.0, 0.0])
    before = robot_rig.posture_marker()
    assert robot.set_posture(q, 20.0) is True
    robot_rig.settle(0.02)
    assert robot_rig.posture_marker() != before, "an accepted posture reached nothing"
    assert robot.set_posture(None) is True


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_backend_without_a_posture_says_so_and_keeps_holding(robot_rig):
    """``set_posture`` raises NotImplementedError (as the interface allows), for any input, and
    nothing moves: the target stays the start pose and so does the arm."""
    if robot_rig.has_posture:
        pytest.skip(f"{robot_rig.name}: the arm has a null-space posture (the rules above apply)")
    robot = robot_rig.robot
    q = robot.state().q
    assert q.shape == (robot_rig.dof,)
    for _, value, stiffness in [("its joints", q, 20.0), ("None", None, None),
                                    *bad_postures(q)]:
        with pytest.raises(NotImplementedError):
            robot.set_posture(value, stiffness)
    robot_rig.settle(0.2)
    assert_pose(robot_rig.goal(), robot_rig.start, START_TOL, "target after refused postures")
    if robot_rig.physical:
        assert_pose(robot_rig.measured(), robot_rig.start, START_TOL, "arm after refused postures")


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_a_malformed_posture_is_rejected_counted_and_changes_nothing(robot_rig):
    needs_posture(robot_rig)
    robot = robot_rig.robot
    cases = bad_postures(robot.state().q)
    marker = robot_rig.posture_marker()
    before = robot_rig.rejected_postures()
    for label, q, stiffness in cases:
        assert call(label, robot.set_posture, q, stiffness) is False, f"{label} was not rejected"
    assert robot_rig.rejected_postures() - before == len(cases), "every rejected posture is counted"
    robot_rig.settle(0.02)
    assert robot_rig.posture_marker() == marker, "a rejected posture reached the controller"
    assert_pose(robot_rig.goal(), robot_rig.start, START_TOL, "target after rejected postures")


@pytest.mark.parametrize("faulting_robot_rig", over(ROBOTS, skip={"sim": "the MuJoCo Panda cannot stop itself"}),
                         indirect=True)
def test_after_the_arm_stops_itself_state_and_command_raise_until_recover(faulting_robot_rig):
    rig = faulting_robot_rig
    robot = rig.robot
    pos, quat = rig.start
    rig.stop_itself()
    with pytest.raises(RobotFault):
        robot.state()
    with pytest.raises(RobotFault):
        robot.command(pos, quat)
    robot.hold()  # never raises
    rig.allow_recovery()
    robot.recover()
    state = robot.state()
    assert np.all(np.isfinite(state.tcp_pos))
    assert robot.command(state.tcp_pos, state.tcp_quat) is True


@pytest.mark.parametrize("robot_rig", over(ROBOTS), indirect=True)
def test_close_is_idempotent(robot_rig):
    robot_rig.robot.close()
    robot_rig.robot.close()
