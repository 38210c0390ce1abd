"""The scripted robot reset: lift clear, (joint reset), go to a perturbed reset pose, open.

It uses only the ``Robot`` and ``Clock`` interfaces (plus an optional
:class:`JointMover`), so the same routine resets the MuJoCo arm and a real one. Each
reset:

1. lifts straight up by ``reset.lift_height`` (at least to the reset height, at most to
   the box's top), keeping the orientation, so it drags nothing across the table;
2. every ``reset.joint_reset_every`` resets, brings the joints back to the reset
   posture (null-space drift accumulates over episodes on a 7-DoF arm; a robot without
   a null-space posture, a 6-DoF arm, has no drift and skips it);
3. moves at that height to above the reset pose perturbed by a random
   ``(x, y, z, yaw)`` offset inside ``reset.perturb_pos`` / ``reset.perturb_yaw`` (the
   task's start ranges by default), rotating by slerp on the way, then straight down
   (or up) to it;
4. sets the gripper (open, or the task's start opening) and waits for it;
5. waits until the arm is at rest and hands over with ``robot.hold()``, so the
   policy's first target starts from the measured pose.

All motion is a stream of targets through :class:`~robot_rl.reset.motion.MotionRunner`.
"""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np

from robot_rl.config import Config
from robot_rl.config.reset import BOX_MARGIN, perturbation
from robot_rl.control.safety import SafetyBox
from robot_rl.control.transforms import quat_mul, rpy_to_quat
from robot_rl.interfaces import Clock, Robot
from robot_rl.reset.joint_reset import NoPosture
from robot_rl.reset.motion import MotionRunner, Pose
from robot_rl.reset.stats import ResetStats, StatsRecorder

log = logging.getLogger("robot_rl.reset")


class JointMover(Protocol):
    """How a backend brings the arm's joints to given angles.

    Contract: :meth:`reset_joints` is the joint configuration of the unperturbed reset
    pose (from ``reset.joint_reset_q`` or solved by the backend). :meth:`move_joints`
    moves there while ``runner`` keeps streaming Cartesian targets (so the watchdog,
    the box and the error clipping still apply), and returns the largest remaining joint
    error in radians. The TCP must end at the reset pose that joint configuration
    gives, which the caller checks is inside the safety box. Every robot_rl backend does
    it with the impedance law's null-space posture
    (:class:`robot_rl.reset.joint_reset.PostureJointMover`; in sim with MuJoCo's
    kinematics, :class:`robot_rl.reset.sim.SimJointMover`).
    """

    def reset_joints(self) -> np.ndarray: ...

    def move_joints(self, q: np.ndarray, runner: MotionRunner) -> float: ...


def reset_pose(cfg: Config) -> Pose:
    """The unperturbed reset pose from ``robot.reset_pos`` / ``robot.reset_rpy``."""
    return Pose.of(np.asarray(cfg.robot.reset_pos, float), rpy_to_quat(np.asarray(cfg.robot.reset_rpy, float)))


def yawed(quat: np.ndarray, yaw: float) -> np.ndarray:
    """``quat`` turned by ``yaw`` about the base z axis."""
    return quat_mul(rpy_to_quat([0.0, 0.0, yaw]), quat)


class RobotReset:
    """Scripted robot reset through the ``Robot`` interface (see the module docstring)."""

    def __init__(self, robot: Robot, clock: Clock, cfg: Config, joint_mover: JointMover | None = None) -> None:
        self.robot = robot
        self.clock = clock
        self.cfg = cfg
        self.rcfg = cfg.reset
        self.box = SafetyBox.from_config(cfg.robot)
        rate = cfg.reset.rate_hz or cfg.env.control_hz
        self.runner = MotionRunner(robot, clock, self.box, cfg.reset, rate)
        self.recorder = StatsRecorder(robot, clock)
        self.joint_mover = joint_mover
        self.nominal = reset_pose(cfg)
        self.pos_range, self.yaw_range = perturbation(cfg)
        self.count = 0  # resets performed, for the joint reset schedule
        self.last_pose: Pose | None = None

    # --- pieces -----------------------------------------------------------------------

    @property
    def top(self) -> float:
        return float(self.box.pos_high[2] - BOX_MARGIN)

    def sample_pose(self, rng: np.random.Generator) -> Pose:
        """The reset pose with a random (xyz, yaw) perturbation inside the configured ranges."""
        pos = self.nominal.pos + rng.uniform(-1.0, 1.0, 3) * self.pos_range
        yaw = rng.uniform(-1.0, 1.0) * self.yaw_range
        return Pose.of(pos, yawed(self.nominal.quat, yaw))

    def lift_clear(self, height: float | None = None, min_z: float | None = None,
                   speed: float | None = None) -> None:
        """Straight up by ``height`` (default ``reset.lift_height``) and at least to ``min_z``
        (default: the reset height), never above the box."""
        current = self.runner.target
        lift = self.rcfg.lift_height if height is None else height
        floor = self.nominal.pos[2] if min_z is None else min_z
        z = min(max(current.pos[2] + lift, floor), self.top)
        if z > current.pos[2] + 1e-4:
            self.runner.move_to([current.pos[0], current.pos[1], z], speed=speed, what="the lift-clear pose")

    def go_to(self, pose: Pose, speed: float | None = None, what: str = "the reset pose") -> None:
        """Across at the current (or the goal's, if higher) height, then straight down to ``pose``."""
        current = self.runner.target
        z = max(current.pos[2], pose.pos[2])
        if z > current.pos[2] + 1e-4:
            self.runner.move_to([current.pos[0], current.pos[1], z], what="the transit height")
        self.runner.move_to([pose.pos[0], pose.pos[1], z], pose.quat, what=f"above {what}")
        if abs(z - pose.pos[2]) > 1e-4:
            self.runner.move_to(pose.pos, pose.quat, speed=speed, what=what)

    def joint_reset_due(self) -> bool:
        n = self.rcfg.joint_reset_every
        return self.joint_mover is not None and n > 0 and self.count % n == 0

    def joint_reset(self) -> float:
        """Bring the joints to the reset posture (via the joint mover); returns the joint error.

        A robot without a null-space posture says so (:class:`~robot_rl.reset.joint_reset.NoPosture`)
        before anything moves its joints: joint resets are then skipped from here on, said once.
        """
        if self.joint_mover is None:
            raise RuntimeError("this robot has no joint mover: a joint reset is not possible")
        q = self.joint_mover.reset_joints()
        self.go_to(self.nominal, what="the joint-reset pose")
        try:
            error = self.joint_mover.move_joints(q, self.runner)
        except NoPosture as err:
            log.warning("%s; joint resets are skipped", err)
            self.joint_mover = None
            return 0.0
        self.recorder.stats.joint_resets += 1
        self.recorder.stats.extra["joint_error"] = error
        return error

    def perform(self, rng: np.random.Generator, gripper: float = 1.0, lift: bool = True,
                release_first: bool = False) -> Pose:
        """The reset motions, for a runner already begun (task resets call this last).

        ``release_first`` opens the gripper before lifting, so that an object the fingers
        closed on stays where it is instead of being carried off.
        """
        if release_first:
            self.runner.set_gripper(1.0)
        if lift:
            self.lift_clear()
        if self.joint_reset_due():
            self.joint_reset()
        pose = self.sample_pose(rng)
        self.go_to(pose)
        self.runner.set_gripper(gripper)
        self.runner.settle("the reset pose")
        self.count += 1
        self.last_pose = pose
        return pose

    # --- one recorded reset -----------------------------------------------------------

    def begin(self, kind: str) -> None:
        self.recorder.start(kind)
        self.runner.on_tick = self.recorder.on_tick
        self.runner.targets_sent = 0
        self.runner.begin()

    def end(self) -> ResetStats:
        self.runner.finish()
        self.runner.on_tick = None
        return self.recorder.stop(self.runner.targets_sent)

    def run(self, rng: np.random.Generator, gripper: float = 1.0, release_first: bool = False) -> ResetStats:
        """One complete robot reset; returns what it did to the controller."""
        self.begin("robot")
        try:
            self.perform(rng, gripper, release_first=release_first)
        finally:
            stats = self.end()
        return stats
