"""Scripted motion and the robot reset over the Robot interface, on a synthetic robot.

No MuJoCo here: a kinematic robot that follows its target with a first-order lag and a
manual clock stand in for hardware, so these tests exercise exactly the code path a
real arm takes (targets streamed through ``Robot.command`` at the clock's rate).
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.control.safety import SafetyBox
from robot_rl.control.transforms import orientation_error, quat_mul, quat_to_rotvec, rotvec_to_quat, rpy_to_quat
from robot_rl.interfaces import Clock, Robot, RobotState
from robot_rl.reset.motion import MotionRunner, Pose, ResetError, cartesian_path, min_jerk, path_duration
from robot_rl.reset.robot_reset import RobotReset
from robot_rl.tasks import load_config

CONFIG = "configs/pick_cube.yaml"


class ManualClock(Clock):
    def __init__(self, robot: "LagRobot | None" = None, dt: float = 0.002) -> None:
        self.t = 0.0
        self.dt = dt
        self.robot = robot

    def now(self) -> float:
        return self.t

    def sleep_until(self, t: float) -> None:
        while self.t < t - 1e-9:
            self.t += self.dt
            if self.robot is not None:
                self.robot.advance(self.dt)


class LagRobot(Robot):
    """Follows its target with time constant ``tau`` (or not at all when ``stuck``)."""

    def __init__(self, pos, quat, gripper: float = 0.0, tau: float = 0.05) -> None:
        self.pos, self.quat = np.array(pos, float), np.array(quat, float)
        self.vel = np.zeros(3)
        self.target = (self.pos.copy(), self.quat.copy())
        self.gripper, self.gripper_target = gripper, gripper
        self.tau = tau
        self.stuck = False
        self.commands: list[tuple[float, np.ndarray, np.ndarray, float | None]] = []
        self.holds = 0
        self.clock: ManualClock | None = None
        self.q = np.zeros(7)

    def advance(self, dt: float) -> None:
        if self.stuck:
            self.vel[:] = 0.0
            return
        new = self.pos + (self.target[0] - self.pos) * min(dt / self.tau, 1.0)
        self.vel = (new - self.pos) / dt
        self.pos = new
        err = orientation_error(self.target[1], self.quat)
        self.quat = quat_mul(rotvec_to_quat(err * min(dt / self.tau, 1.0)), self.quat)
        self.gripper += np.clip(self.gripper_target - self.gripper, -dt * 2.0, dt * 2.0)

    def state(self) -> RobotState:
        return RobotState(stamp=self.clock.now(), tcp_pos=self.pos.copy(), tcp_quat=self.quat.copy(),
                          tcp_twist=np.concatenate([self.vel, np.zeros(3)]), tcp_wrench=np.zeros(6),
                          q=self.q.copy(), dq=np.zeros(7), tau=np.zeros(7), gripper=float(self.gripper))

    def command(self, pos, quat, gripper=None) -> None:
        self.commands.append((self.clock.now(), np.array(pos), np.array(quat), gripper))
        self.target = (np.array(pos, float), np.array(quat, float))
        if gripper is not None:
            self.gripper_target = float(gripper)

    def hold(self) -> None:
        self.holds += 1
        self.target = (self.pos.copy(), self.quat.copy())


def make(pos=(0.45, 0.05, 0.05), gripper=0.0, overrides=()):
    cfg = load_config(CONFIG, list(overrides))
    down = rpy_to_quat(cfg.robot.reset_rpy)
    robot = LagRobot(pos, down, gripper)
    clock = ManualClock(robot)
    robot.clock = clock
    return cfg, robot, clock


def test_min_jerk_starts_and_ends_at_rest():
    assert min_jerk(0.0) == 0.0 and min_jerk(1.0) == 1.0 and min_jerk(0.5) == pytest.approx(0.5)
    u = np.linspace(0, 1, 1001)
    s = np.array([min_jerk(x) for x in u])
    assert np.all(np.diff(s) >= 0)
    v = np.diff(s) / np.diff(u)
    assert v[0] < 1e-4 and v[-1] < 1e-4 and v.max() == pytest.approx(1.875, rel=1e-3)


def test_paths_end_exactly_at_the_goal_and_respect_the_peak_speeds():
    a = Pose.of([0.4, 0.0, 0.2], rpy_to_quat([np.pi, 0, 0]))
    b = Pose.of([0.55, -0.1, 0.1], quat_mul(rpy_to_quat([0, 0, 0.5]), a.quat))
    rate, speed, rot_speed = 10.0, 0.05, 0.5
    duration = path_duration(a, b, speed, rot_speed)
    poses = [a, *cartesian_path(a, b, duration, rate)]
    np.testing.assert_allclose(poses[-1].pos, b.pos)
    assert np.linalg.norm(orientation_error(poses[-1].quat, b.quat)) < 1e-9
    step_speeds = [np.linalg.norm(q.pos - p.pos) * rate for p, q in zip(poses, poses[1:])]
    step_rot = [np.linalg.norm(orientation_error(q.quat, p.quat)) * rate for p, q in zip(poses, poses[1:])]
    assert max(step_speeds) <= speed * 1.01 and max(step_rot) <= rot_speed * 1.01


def test_rotations_are_slerped_not_linearly_interpolated():
    a = Pose.of([0.5, 0, 0.2], [1.0, 0, 0, 0])
    b = Pose.of([0.5, 0, 0.2], rotvec_to_quat([0, 0, 2.5]))  # 143 degrees: nlerp would visibly bend the speed
    poses = list(cartesian_path(a, b, 10.0, 10.0))
    for i, p in enumerate(poses, start=1):
        angle = quat_to_rotvec(quat_mul(p.quat, [1.0, 0, 0, 0]))
        assert np.allclose(angle[:2], 0.0, atol=1e-9)  # stays on the same axis
        assert angle[2] == pytest.approx(2.5 * min_jerk(i / len(poses)), abs=1e-9)  # angle follows s exactly


def test_runner_streams_one_target_per_tick_and_refuses_a_plan_outside_the_box():
    cfg, robot, clock = make()
    box = SafetyBox.from_config(cfg.robot)
    runner = MotionRunner(robot, clock, box, cfg.reset, rate_hz=10.0)
    runner.begin()
    runner.move_to([0.5, 0.0, 0.1])
    stamps = np.array([c[0] for c in robot.commands])
    np.testing.assert_allclose(np.diff(stamps), 0.1, atol=1e-6)
    assert all(box.contains(p, q) for _, p, q, _ in robot.commands)
    sent = len(robot.commands)
    with pytest.raises(ValueError, match="outside the safety box"):
        runner.move_to([0.5, 0.0, 0.6])
    assert len(robot.commands) == sent  # nothing was sent toward it


def test_a_blocked_arm_is_a_clear_reset_error():
    cfg, robot, clock = make(overrides=["reset.move_timeout_s=1.0"])
    runner = MotionRunner(robot, clock, SafetyBox.from_config(cfg.robot), cfg.reset, rate_hz=10.0)
    runner.begin()
    robot.stuck = True
    with pytest.raises(ResetError, match=r"did not reach the lift-clear pose at \[0.45, 0.05, 0.1\] within 1.0 s"):
        runner.move_to([0.45, 0.05, 0.1], what="the lift-clear pose")


class CountingJointMover:
    def __init__(self) -> None:
        self.calls = 0

    def reset_joints(self) -> np.ndarray:
        return np.full(7, 0.1)

    def move_joints(self, q, runner) -> float:
        self.calls += 1
        runner.wait(0.3)
        return 0.0


def test_robot_reset_lifts_first_moves_to_a_perturbed_pose_opens_and_hands_over():
    cfg, robot, clock = make(pos=(0.42, 0.08, 0.04), gripper=0.0, overrides=["reset.perturb_yaw=0.3"])
    mover = CountingJointMover()
    reset = RobotReset(robot, clock, cfg, mover)
    box = reset.box
    rng = np.random.default_rng(3)
    stats = reset.run(rng, gripper=1.0)

    positions = np.array([p for _, p, _, _ in robot.commands])
    # 1. lift clear: z rises before x/y change
    first_xy_move = np.argmax(np.linalg.norm(positions[:, :2] - positions[0, :2], axis=1) > 1e-6)
    assert positions[first_xy_move - 1, 2] >= cfg.robot.reset_pos[2] - 1e-6
    # 2. the end pose is the reset pose plus a perturbation inside the configured ranges
    final = reset.last_pose
    assert np.all(np.abs(final.pos - np.asarray(cfg.robot.reset_pos))
                  <= np.asarray(cfg.task.params.start_pos_range) + 1e-9)
    yaw = box.relative_rotvec(final.quat)
    assert abs(yaw[2]) <= 0.3 + 1e-9 and np.allclose(yaw[:2], 0.0, atol=1e-9)
    assert np.linalg.norm(robot.pos - final.pos) <= cfg.reset.settle_tolerance
    # 3. every target inside the box, the gripper opened, hold() at the start and at the end
    assert all(box.contains(p, q) for _, p, q, _ in robot.commands)
    assert robot.gripper == pytest.approx(1.0) and robot.holds == 2
    # 4. the first reset is also a joint reset (every 20)
    assert mover.calls == 1 and stats.joint_resets == 1
    assert stats.targets_sent == len(robot.commands) and stats.duration_s == pytest.approx(clock.now())


def test_joint_reset_runs_every_n_resets():
    cfg, robot, clock = make(overrides=["reset.joint_reset_every=3"])
    mover = CountingJointMover()
    reset = RobotReset(robot, clock, cfg, mover)
    rng = np.random.default_rng(0)
    done = [reset.run(rng).joint_resets for _ in range(7)]
    assert done == [1, 0, 0, 1, 0, 0, 1]


def test_perturbations_cover_the_range_and_stay_inside_it():
    cfg, robot, clock = make(overrides=["reset.perturb_pos=[0.03, 0.02, 0.01]", "reset.perturb_yaw=0.4"])
    reset = RobotReset(robot, clock, cfg)
    rng = np.random.default_rng(0)
    poses = [reset.sample_pose(rng) for _ in range(500)]
    offsets = np.array([p.pos for p in poses]) - np.asarray(cfg.robot.reset_pos)
    yaws = np.array([reset.box.relative_rotvec(p.quat)[2] for p in poses])
    assert np.all(np.abs(offsets) <= [0.03, 0.02, 0.01]) and np.all(np.abs(yaws) <= 0.4 + 1e-9)
    assert np.all(np.abs(offsets).max(axis=0) > [0.027, 0.018, 0.009]) and np.abs(yaws).max() > 0.36


class PostureRobot(LagRobot):
    """LagRobot whose joints follow the null-space posture it is given (joint ``stuck_joint`` never moves)."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.posture: np.ndarray | None = None
        self.postures: list = []
        self.dq = np.zeros(7)
        self.stuck_joint: int | None = None

    def advance(self, dt: float) -> None:
        super().advance(dt)
        goal = self.q if self.posture is None else self.posture
        new = self.q + (goal - self.q) * min(dt / self.tau, 1.0)
        if self.stuck_joint is not None:
            new[self.stuck_joint] = self.q[self.stuck_joint]
        self.dq = (new - self.q) / dt
        self.q = new

    def state(self) -> RobotState:
        return super().state().replace(dq=self.dq.copy())

    def set_posture(self, q, stiffness=None) -> None:
        self.postures.append((self.clock.now(), None if q is None else np.array(q), stiffness))
        self.posture = None if q is None else np.array(q, float)


def test_a_joint_reset_moves_the_posture_while_the_tcp_holds_the_reset_pose():
    from robot_rl.reset.joint_reset import PostureJointMover

    goal = [0.1, -0.5, 0.0, -2.2, 0.0, 1.8, 0.7]
    cfg, _, _ = make(overrides=["reset.joint_reset_every=1", f"reset.joint_reset_q={goal}"])
    robot = PostureRobot([0.45, 0.05, 0.05], rpy_to_quat(cfg.robot.reset_rpy), 0.0)
    clock = ManualClock(robot)
    robot.clock = clock
    reset = RobotReset(robot, clock, cfg, PostureJointMover(robot, cfg))
    stats = reset.run(np.random.default_rng(0))
    moving = [t for t, q, _ in robot.postures if q is not None]
    during = [c for c in robot.commands if moving[0] <= c[0] <= moving[-1]]
    nominal = np.asarray(cfg.robot.reset_pos)
    assert stats.joint_resets == 1 and stats.extra["joint_error"] <= cfg.reset.joint_tolerance
    assert len(during) > 10 and all(np.allclose(c[1], nominal) for c in during)  # the TCP target held still
    assert {k for _, q, k in robot.postures if q is not None} == {cfg.reset.joint_reset_stiffness}
    assert robot.postures[-1][1] is None and stats.violations == 0  # the configured posture is back


def test_a_joint_reset_that_cannot_arrive_says_which_joint_and_restores_the_posture():
    from robot_rl.reset.joint_reset import PostureJointMover

    goal = [0.1, -0.5, 0.0, -2.2, 0.0, 1.8, 0.7]
    cfg, _, _ = make(overrides=["reset.joint_reset_every=1", f"reset.joint_reset_q={goal}"])
    robot = PostureRobot([0.45, 0.05, 0.05], rpy_to_quat(cfg.robot.reset_rpy), 0.0)
    robot.stuck_joint = 3
    clock = ManualClock(robot)
    robot.clock = clock
    reset = RobotReset(robot, clock, cfg, PostureJointMover(robot, cfg))
    match = r"stopped 2\.200 rad from reset.joint_reset_q \(joint 4\).*franka check"
    with pytest.raises(ResetError, match=match):
        reset.run(np.random.default_rng(0))
    assert robot.postures[-1][1] is None


def test_a_robot_without_a_posture_skips_joint_resets_and_still_resets(caplog):
    from robot_rl.reset.joint_reset import PostureJointMover

    cfg, robot, clock = make(overrides=["reset.joint_reset_every=1"])
    reset = RobotReset(robot, clock, cfg, PostureJointMover(robot, cfg))
    for seed in range(2):
        stats = reset.run(np.random.default_rng(seed))
        assert stats.joint_resets == 0
        assert reset.box.contains(robot.state().tcp_pos)
        assert np.linalg.norm(robot.state().tcp_pos - reset.last_pose.pos) < 0.01  # it reached the reset pose
    assert caplog.text.count("cannot set a null-space posture, so it cannot do joint resets") == 1  # said once
    assert reset.joint_mover is None
