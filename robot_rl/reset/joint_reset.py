"""The joint-space reset, for any arm whose controller has a null-space posture.

A 7-DoF arm under Cartesian impedance control drifts in its null space (the elbow
wanders) over many episodes. :class:`PostureJointMover` brings the joints back without a
second controller: the Cartesian target stays where the reset put it (the runner keeps
streaming it, so the watchdog, the safety box and the pose-error clip still apply), and
the controller's null-space rest posture is ramped (minimum jerk) from the measured
joints to the reset joints with a raised null-space stiffness, through
:meth:`robot_rl.interfaces.Robot.set_posture`. The redundant motion then moves the elbow
while the TCP keeps its pose. Afterwards the configured posture and gains come back.

The same class resets the MuJoCo arm, a Franka in torque mode (the posture crosses into
the 1 kHz loop) and a Franka under a ros2_control controller (published on its null-space
target topic), and the actor over topics (``/robot/posture``).

Which joints: ``reset.joint_reset_q`` when configured; else a backend's solver (in sim,
IK for the reset pose); else, on a real arm, the controller's ``rest_posture``. A
posture that is exactly a posture of the reset pose (configured or solved) must be
reached within ``reset.joint_tolerance``; the rest posture need not be one, so then the
reset ends when the arm has come to rest, as close to it as the held TCP allows.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

import numpy as np

from robot_rl.config import Config
from robot_rl.errors import RobotFault
from robot_rl.interfaces import Robot
from robot_rl.reset.motion import MotionRunner, Pose, ResetError, min_jerk

log = logging.getLogger("robot_rl.reset")

JOINT_SPEED = 0.3  # rad/s, peak, of the posture ramp
REST_SPEED = 0.05  # rad/s: every joint slower than this counts as at rest
REST_TICKS = 5  # ticks in a row at rest before an inexact posture counts as reached


class NoPosture(ResetError):
    """The robot has no null-space posture (a 6-DoF arm): it cannot do joint resets, and needs none."""


class PostureJointMover:
    """A :class:`~robot_rl.reset.robot_reset.JointMover` through ``robot.set_posture``.

    ``solve`` returns the joints of the unperturbed reset pose when the backend can
    compute them (sim IK); ``pose_of`` is the TCP pose of joint angles (forward
    kinematics) when the backend knows it: the posture is then checked against the safety
    box before anything moves, and the Cartesian target is aimed at that pose.
    """

    def __init__(self, robot: Robot, cfg: Config, *, solve: Optional[Callable[[], np.ndarray]] = None,
                 pose_of: Optional[Callable[[np.ndarray], Pose]] = None) -> None:
        self.robot = robot
        self.cfg = cfg
        self.solve = solve
        self.pose_of = pose_of
        self._q: Optional[np.ndarray] = None
        self.exact = True  # whether the posture is one of the reset pose (see the module docstring)

    def reset_joints(self) -> np.ndarray:
        if self._q is None:
            if self.cfg.reset.joint_reset_q is not None:
                self._q = np.asarray(self.cfg.reset.joint_reset_q, dtype=float)
            elif self.solve is not None:
                self._q = np.asarray(self.solve(), dtype=float)
            else:
                self._q = np.asarray(self.cfg.robot.controller.rest_posture, dtype=float)
                self.exact = False
        return self._q

    def move_joints(self, q: np.ndarray, runner: MotionRunner) -> float:
        """Ramp the posture to ``q`` while the TCP holds; returns the remaining joint error (rad)."""
        q = np.asarray(q, dtype=float)
        rcfg = self.cfg.reset
        if self.pose_of is not None:
            pose = self.pose_of(q)
            if not runner.box.contains(pose.pos, pose.quat):
                raise ResetError(f"reset.joint_reset_q puts the TCP at {np.round(pose.pos, 3).tolist()}, outside "
                                 "the safety box; choose joint angles whose pose is inside robot.workspace")
            runner.move_to(pose.pos, pose.quat, what="the joint-reset pose")
        q0 = runner.state().q
        error = float(np.max(np.abs(q - q0)))
        steps = max(1, int(np.ceil(1.875 * error / JOINT_SPEED * runner.rate_hz)))
        try:
            self.robot.set_posture(q0, rcfg.joint_reset_stiffness)
        except NotImplementedError as err:
            raise NoPosture(f"reset: {err}, so it cannot do joint resets (a 6-DoF arm needs none: its joints "
                            "follow from the TCP pose)") from None
        try:
            for i in range(1, steps + 1):
                self.robot.set_posture(q0 + min_jerk(i / steps) * (q - q0), rcfg.joint_reset_stiffness)
                runner.send(runner.target)
            error = self._arrive(q, runner)
        finally:
            self._restore()
        runner.settle("the joint-reset pose")
        return error

    def _restore(self) -> None:
        """The configured posture back; a robot that faulted meanwhile restarts with it anyway,
        so its fault must not hide the error that ended the reset."""
        try:
            self.robot.set_posture(None)
        except RobotFault as fault:
            log.warning("joint reset: could not restore the configured posture: %s", fault)

    def _arrive(self, q: np.ndarray, runner: MotionRunner) -> float:
        rcfg = self.cfg.reset
        deadline = runner.clock.now() + rcfg.move_timeout_s
        at_rest = 0
        while True:
            state = runner.send(runner.target)
            error = float(np.max(np.abs(q - state.q)))
            still = float(np.max(np.abs(state.dq))) < REST_SPEED
            at_rest = at_rest + 1 if still else 0
            if still and error <= rcfg.joint_tolerance:
                return error
            if not self.exact and at_rest >= REST_TICKS:
                log.info("joint reset: at rest %.3f rad from the controller's rest posture", error)
                return error
            if runner.clock.now() >= deadline:
                what = "reset.joint_reset_q" if self.cfg.reset.joint_reset_q is not None else "the reset posture"
                hint = ("; do those angles put the TCP at robot.reset_pos? (robot-rl franka check prints the "
                        "joints of the pose the arm is in)" if self.pose_of is None and self.exact else "")
                raise ResetError(f"reset: the joint reset stopped {error:.3f} rad from {what} "
                                 f"(joint {int(np.argmax(np.abs(q - state.q))) + 1}){hint}")
