"""Scripted experts for the sim tasks, the task-agnostic part: the source of demonstrations.

An expert reads the measured TCP pose and the task's privileged state vector
(``task.task_state()``: say an object's position, or a peg tip and its hole), decides a
base-frame motion and a gripper command, and returns it in the wrapped env's action
space through :func:`robot_rl.envs.outer_action`, so its actions are exactly what a
policy (or a human) would send. It needs nothing but the ``RobotEnv`` API, so the same
expert drives an env over MuJoCo directly or an env over ROS topics fed by the sim
node. ``noise`` adds Gaussian noise to the motion part, for more varied demonstrations;
the expert corrects it on the next step. ``aim_offset`` (metres, base frame; zero by
default) shifts every position target it steers to: an expert that misjudges where the
object is, as :mod:`robot_rl.data.imperfect_demos` uses for its failed episodes.

Each task's expert lives in its folder (``robot_rl/tasks/<task>/expert.py``) and is
handed out by ``SimTask.make_expert``. The insertions share one strategy, held here once
(:class:`InsertionExpert`): line the tip up over the opening, push down while correcting,
and align again when the push drifts off or stops on the rim.
"""

from __future__ import annotations

import abc

import gymnasium as gym
import numpy as np

from robot_rl.envs.wrappers import outer_action


class ScriptedExpert(abc.ABC):
    """Contract: ``reset()`` at the start of each episode, then ``act(obs)`` every step."""

    def __init__(self, env: gym.Env, noise: float = 0.0, seed: int | None = None) -> None:
        self.env = env
        self.base = env.unwrapped
        self.params = self.base.cfg.task.params
        self.noise = float(noise)
        self.rng = np.random.default_rng(seed)
        self.scale = self.base.scale[:3]
        self.aim_offset = np.zeros(3)

    def tcp(self) -> np.ndarray:
        return self.base.robot_state.tcp_pos

    def task_state(self) -> np.ndarray:
        return np.asarray(self.base.task.task_state(), dtype=np.float64)

    def reset(self) -> None:
        """Forget the previous episode's phase."""

    @abc.abstractmethod
    def plan(self) -> tuple[np.ndarray, float]:
        """Base-frame position target for the TCP, and a gripper command (+1 close, -1 open, 0 keep)."""

    @abc.abstractmethod
    def goal_distance(self) -> float:
        """How far the tool is from what it should be working on (metres)."""

    def full_action(self) -> np.ndarray:
        """The next action as a 7-D base-frame RobotEnv action (motion, rotation, gripper)."""
        target, grip = self.plan()
        target = target + self.aim_offset
        # Steer the commanded target (not the measured pose) to the goal: the env
        # accumulates deltas onto its target, so this is a plain set-point.
        current, _ = self.base.target_pose
        move = np.clip((target - current) / self.scale, -1.0, 1.0)
        if self.noise > 0:
            move = np.clip(move + self.rng.normal(0.0, self.noise, 3), -1.0, 1.0)
        return np.concatenate([move, np.zeros(3), [grip]])

    def act(self, obs: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """The next action in the wrapped env's action space."""
        return outer_action(self.env, self.full_action())


class RimDetector:
    """Tells an insertion expert that its push has stopped on the rim of a tight hole.

    The arm's compliance carries the held part a fraction of a millimetre sideways on a
    fast push down, and a tight hole away from the workspace's centre catches that: the
    tip stops level with the board's top, and before this detector an expert pushed there
    until the episode ran out. Once the tip has stayed within ``RIM_BAND`` of the top for
    ``STUCK_STEPS`` steps of a push (a push that goes in passes that band in one or two),
    the expert aligns again and pushes again. That frees most pushes of a noisy
    demonstrator (with noise 0.1 on a fixed 1 mm hole, 17 of 20 episodes succeed instead
    of 8); a noise-free retry repeats the same drift. A push that never stops is
    untouched: a noise-free expert on a fixed board acts exactly as before. A detector made with
    ``enabled=False`` never reports: the reward scenarios hold a push wherever the board
    stops it, on purpose (a part turned off its slot, a tip held at the mouth).

    Tried and dropped: a tighter alignment or a slower push on a retry, and lifting off the
    rim before a slower retry. All free more noise-free pushes (the lift and the slower push
    together: 20 of 20 on both moving-board variants, and on a 0.5 mm peg hole that stalls 13
    of 20 today), and all make a demonstrator with the demos' noise of 0.3 fail far more often
    (on the variants 12 -> 6 and 12 -> 7 of 20), which is what the benches record with.
    """

    RIM_BAND = 0.001  # metres either side of the board's top
    STUCK_STEPS = 3

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.rim_steps = 0

    def start_push(self) -> None:
        self.rim_steps = 0

    def stuck(self, tip_z: float, top_z: float) -> bool:
        """Call once per step of a push: True when the push has stopped on the rim."""
        self.rim_steps = self.rim_steps + 1 if abs(tip_z - top_z) < self.RIM_BAND else 0
        return self.enabled and self.rim_steps >= self.STUCK_STEPS


class InsertionExpert(ScriptedExpert):
    """Line a held part's tip up over an opening, then push it down while correcting.

    The state it reads is the task's, opening first: the part's tip (3), then the tip relative
    to the opening's top centre (3), then whatever a task adds (a yaw). It aligns the tip
    ``ALIGN_HEIGHT`` above the opening until the tip is within ``align_xy`` of its centre and
    :meth:`lined_up` (nothing more by default; a keyed plug adds its yaw), then pushes to
    ``insert_depth`` below the top. A push whose tip drifts more than ``abort_xy`` off, or is
    no longer lined up, while still above the top aligns again; so does one stopped on the
    rim (:class:`RimDetector`, unless ``retry_on_rim`` is off: the reward scenarios hold a
    push where the board stops it, on purpose).
    """

    align_xy = 0.0008  # metres: tip over the opening's centre this close before pushing down
    abort_xy = 0.003  # metres: a push above the top this far off aligns again
    ALIGN_HEIGHT = 0.01  # metres above the opening's top to line up at
    PUSH_BELOW = 0.01  # metres past insert_depth the push aims, so the impedance pushes on
    retry_on_rim = True  # the reward scenarios turn it off: they hold a push where the board stops it

    def reset(self) -> None:
        self.phase = "align"
        self.rim = RimDetector(enabled=self.retry_on_rim)

    def goal_distance(self) -> float:
        return float(np.linalg.norm(self.task_state()[3:6]))  # tip relative to the opening

    def lined_up(self, state: np.ndarray, to_start: bool) -> bool:
        """Is the part lined up beyond xy, by this step's task ``state``: ``to_start`` a push
        (strict), or else to keep pushing (loose)."""
        return True

    def plan(self) -> tuple[np.ndarray, float]:
        state = self.task_state()
        tip, opening = state[0:3], state[0:3] - state[3:6]
        offset = self.tcp() - tip  # TCP relative to the tip
        xy_err = np.linalg.norm((opening - tip)[:2])
        if self.phase == "align":
            target_tip = np.array([opening[0], opening[1], opening[2] + self.ALIGN_HEIGHT])
            if xy_err < self.align_xy and self.lined_up(state, to_start=True) and tip[2] < opening[2] + 0.02:
                self.phase = "insert"
                self.rim.start_push()
        if self.phase == "insert":
            target_tip = np.array([opening[0], opening[1], opening[2] - self.params.insert_depth - self.PUSH_BELOW])
            stuck = self.rim.stuck(tip[2], opening[2])
            drifted = xy_err > self.abort_xy or not self.lined_up(state, to_start=False)
            if stuck or (drifted and tip[2] > opening[2]):
                self.phase = "align"
        return target_tip + offset, 0.0
