"""Scripted motion through the ``Robot`` interface: Cartesian paths streamed as targets.

A reset must be no more dangerous than the policy, so it moves the arm the way the
policy does: by sending target poses to the controller at a fixed rate, paced by the
robot's :class:`~robot_rl.interfaces.Clock`. The controller then applies its safety box,
pose-error clipping and watchdog to every target exactly as it does for policy actions.
Nothing here teleports or bypasses the controller, so the same code drives MuJoCo and a
real arm.

A path from A to B is a minimum-jerk profile ``s(t) = 10u^3 - 15u^4 + 6u^5`` in time
(zero velocity and acceleration at both ends), positions interpolated linearly and
orientations by slerp along the same ``s``. Its duration makes the peak speed
``1.875 * distance / T`` stay under the configured linear and angular speeds, which are
chosen so that the arm tracks the moving target without the impedance law clipping its
pose error (tests assert that, see :class:`~robot_rl.reset.stats.ResetStats`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from robot_rl.config.reset import BOX_MARGIN, ResetConfig
from robot_rl.control.safety import SafetyBox
from robot_rl.control.transforms import orientation_error, quat_normalize, slerp
from robot_rl.errors import RobotRLError
from robot_rl.interfaces import Clock, Robot, RobotState

log = logging.getLogger("robot_rl.reset")

GRIPPER_MIN_WAIT_S = 0.3  # the fingers have started moving by then
MIN_JERK_PEAK = 1.875  # peak speed of the minimum-jerk profile, in units of distance / duration


class ResetError(RobotRLError):
    """A reset could not bring the scene back (the arm did not arrive, a grasp failed...).

    On hardware this is the moment to ask the human; in sim, a test failure.
    """


def min_jerk(u: float) -> float:
    """Minimum-jerk progress for normalised time ``u`` in [0, 1]."""
    u = min(max(u, 0.0), 1.0)
    return u * u * u * (10.0 + u * (-15.0 + 6.0 * u))


@dataclass(frozen=True)
class Pose:
    pos: np.ndarray  # (3,)
    quat: np.ndarray  # (4,) w x y z

    @classmethod
    def of(cls, pos: np.ndarray, quat: np.ndarray) -> "Pose":
        return cls(np.array(pos, dtype=float), quat_normalize(np.asarray(quat, dtype=float)))


def path_duration(a: Pose, b: Pose, speed: float, rot_speed: float) -> float:
    """Seconds for a minimum-jerk move from ``a`` to ``b`` under the peak speeds."""
    dist = float(np.linalg.norm(b.pos - a.pos))
    angle = float(np.linalg.norm(orientation_error(b.quat, a.quat)))
    return MIN_JERK_PEAK * max(dist / speed, angle / rot_speed)


def interpolate(a: Pose, b: Pose, s: float) -> Pose:
    """The pose a fraction ``s`` of the way: linear in position, slerp in orientation."""
    return Pose(a.pos + s * (b.pos - a.pos), slerp(a.quat, b.quat, s))


def cartesian_path(a: Pose, b: Pose, duration: float, rate_hz: float) -> Iterator[Pose]:
    """Targets at ``rate_hz`` from (just after) ``a`` to exactly ``b``."""
    n = max(1, int(np.ceil(duration * rate_hz - 1e-9)))
    for i in range(1, n + 1):
        yield interpolate(a, b, min_jerk(i / n))


class MotionRunner:
    """Streams target poses to a robot, one per tick of the clock, and waits for arrival.

    Contract: every target it sends is inside ``box`` shrunk by a small margin (a
    planned pose outside it is a programming error and raises ``ValueError`` before
    anything moves), so the controller's own box clipping never has to engage during a
    reset. Between motions it keeps re-sending the last target at the same rate, so the
    watchdog sees a live stream. ``on_tick`` (if set) is called after every tick with the
    measured state; statistics hook in there.
    """

    def __init__(self, robot: Robot, clock: Clock, box: SafetyBox, cfg: ResetConfig, rate_hz: float) -> None:
        self.robot = robot
        self.clock = clock
        self.box = box
        self.cfg = cfg
        self.period = 1.0 / rate_hz
        self.rate_hz = rate_hz
        self.target: Pose | None = None
        self.gripper: float | None = None
        self.on_tick: Callable[[Pose, RobotState], None] | None = None
        self.targets_sent = 0
        self._next_tick = 0.0

    # --- state ------------------------------------------------------------------------

    def state(self) -> RobotState:
        return self.robot.state()

    def begin(self) -> Pose:
        """Start from the measured pose (inside the box: the nearest pose in it).

        The robot holds first, so the controller's target is the measured pose too: the
        law's target reaches a new one at bounded speed (robot_rl.control.slew), and one
        left a clip ahead by the last policy step must not pull on the first waypoints.
        """
        self.robot.hold()
        s = self.robot.state()
        pos, quat = self.inside(s.tcp_pos, s.tcp_quat)
        self.target = Pose.of(pos, quat)
        self.gripper = None  # leave the gripper as it is until told otherwise
        self._next_tick = self.clock.now()
        return self.target

    def inside(self, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The nearest pose inside the box shrunk by the planning margin."""
        shrunk = SafetyBox(self.box.pos_low + BOX_MARGIN, self.box.pos_high - BOX_MARGIN,
                           self.box.rot_low + BOX_MARGIN, self.box.rot_high - BOX_MARGIN, self.box.rot_center)
        p, q, _ = shrunk.clip(pos, quat)
        return p, q

    def check_inside(self, pose: Pose, what: str) -> None:
        if not self.box.contains(pose.pos, pose.quat, tol=1e-9):
            raise ValueError(f"reset planned {what} at {np.round(pose.pos, 4).tolist()} outside the safety box")

    # --- streaming --------------------------------------------------------------------

    def send(self, pose: Pose) -> RobotState:
        """Send one target, wait for the next tick, return the measured state."""
        self.check_inside(pose, "a target")
        self.robot.command(pose.pos, pose.quat, self.gripper)
        self.targets_sent += 1
        self.target = pose
        self._next_tick = max(self._next_tick + self.period, self.clock.now())
        self.clock.sleep_until(self._next_tick)
        state = self.robot.state()
        if self.on_tick is not None:
            self.on_tick(pose, state)
        return state

    def move_to(self, pos: np.ndarray, quat: np.ndarray | None = None, *, speed: float | None = None,
                what: str = "a waypoint", settle: bool = True) -> RobotState:
        """Move along a minimum-jerk path to ``pos``/``quat`` (``None`` keeps the orientation)."""
        if self.target is None:
            self.begin()
        start = self.target
        goal = Pose.of(pos, start.quat if quat is None else quat)
        self.check_inside(goal, what)
        duration = path_duration(start, goal, speed or self.cfg.speed, self.cfg.rot_speed)
        state = None
        for pose in cartesian_path(start, goal, duration, self.rate_hz):
            state = self.send(pose)
        if settle:
            state = self.settle(what)
        return state if state is not None else self.robot.state()

    def settle(self, what: str = "a waypoint", timeout: float | None = None) -> RobotState:
        """Keep sending the last target until the arm is there and at rest."""
        timeout = self.cfg.move_timeout_s if timeout is None else timeout
        deadline = self.clock.now() + timeout
        while True:
            state = self.send(self.target)
            dist = float(np.linalg.norm(state.tcp_pos - self.target.pos))
            speed = float(np.linalg.norm(state.tcp_twist[:3]))
            if dist <= self.cfg.settle_tolerance and speed <= self.cfg.settle_speed:
                return state
            if self.clock.now() >= deadline:
                raise ResetError(f"reset: the arm did not reach {what} at {np.round(self.target.pos, 3).tolist()} "
                                 f"within {timeout:.1f} s ({dist * 1000:.1f} mm away); something blocks it, "
                                 "or raise reset.move_timeout_s")

    def rest(self, timeout: float | None = None) -> RobotState:
        """Keep sending the last target until the arm is at rest (never raises).

        For hand-overs, where the arm may lean on an object and cannot reach the target
        exactly: only motion matters there.
        """
        timeout = self.cfg.move_timeout_s if timeout is None else timeout
        deadline = self.clock.now() + timeout
        still = 0
        while True:
            state = self.send(self.target)
            still = still + 1 if float(np.linalg.norm(state.tcp_twist[:3])) <= self.cfg.settle_speed else 0
            if still >= 2 or self.clock.now() >= deadline:
                return state

    def set_gripper(self, opening: float, wait: bool = True) -> RobotState:
        """Command the gripper (holding the pose) and wait until the fingers stop moving.

        Fingers that stop short of the command (closed on an object, or an opening
        finger pressed against one) count as done; only fingers still moving at the
        timeout are an error.
        """
        if self.target is None:
            self.begin()
        self.gripper = float(np.clip(opening, 0.0, 1.0))
        state = self.send(self.target)
        if not wait:
            return state
        start = self.clock.now()
        deadline = start + self.cfg.gripper_timeout_s
        previous = state.gripper
        still = 0
        while self.clock.now() < deadline:
            state = self.send(self.target)
            still = still + 1 if abs(state.gripper - previous) < 2e-3 else 0
            previous = state.gripper
            if still >= 2 and self.clock.now() - start >= GRIPPER_MIN_WAIT_S:
                return state  # arrived, or stopped short against an object
        if abs(state.gripper - self.gripper) > 0.05:
            raise ResetError(f"reset: the gripper was still moving toward {self.gripper:.2f} after "
                             f"{self.cfg.gripper_timeout_s:.1f} s (at {state.gripper:.2f})")
        return state

    def wait(self, seconds: float) -> RobotState:
        """Hold the last target for ``seconds`` (still streaming)."""
        end = self.clock.now() + seconds
        state = self.robot.state()
        while self.clock.now() < end - 1e-9:
            state = self.send(self.target)
        return state

    def finish(self) -> RobotState:
        """Hand over: the measured pose becomes the target, so the next command cannot jump."""
        self.robot.hold()
        return self.robot.state()
