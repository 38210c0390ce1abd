"""Episode tasks for an env over topics: the sim's ground truth, or a real robot's scripted reset.

:class:`SimTopicTask` is the actor's side of the sim-only topics (see
:mod:`robot_rl.nodes.topics`): ``reset`` asks the sim node for a new episode on
``/sim/reset`` and waits for its answer on ``/sim/reset_done``, then for ground truth and
robot state stamped at or after it (all three stamps are the sim's time), so no message
of the previous episode leaks into the new one; ``task_state``/``success`` are the newest
``/sim/task_state``. The scripted experts need nothing else, so they drive the sim
through topics exactly as they drive MuJoCo.

:class:`RobotResetTask` is a real robot's: each reset is robot_rl's scripted robot reset
through the same :class:`~robot_rl.nodes.robot.TopicRobot`, with its joint resets sent as
null-space postures on ``/robot/posture`` (a real-only task's: to its reset poses in turn,
:class:`~robot_rl.reset.pose_list.PoseListReset`); success comes from the reward classifier
(``reward.classifier_path``) or the human's label.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from typing import Any, Callable, Sequence

import numpy as np

from robot_rl.envs.task import EpisodeTask
from robot_rl.errors import DeviceError
from robot_rl.nodes.latest import Latest, Percentiles, StopRequested
from robot_rl.nodes.robot import TopicRobot
from robot_rl.nodes.topics import task_state_names

log = logging.getLogger(__name__)

RESEND_REQUEST_S = 1.0
# Header stamps travel as whole nanoseconds, so a message stamped at the reset's own time
# may read back a hair earlier than the answer's float stamp; the sim's reset moves its
# time on by at least one physics step (>= 0.1 ms), so nothing of the episode before
# comes this close.
STAMP_SLACK_S = 1e-6


def parse_reset_request(text: str) -> dict[str, Any]:
    """``/sim/reset`` JSON -> ``{"id": str, "seed": int}``; ValueError when malformed."""
    try:
        request = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"reset request is not JSON: {err}") from None
    if not isinstance(request, dict) or not isinstance(request.get("id"), str) or not request["id"]:
        raise ValueError(f"reset request needs a non-empty string 'id': {text[:80]!r}")
    seed = request.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"reset request needs an integer 'seed' >= 0: {text[:80]!r}")
    return {"id": request["id"], "seed": seed}


def parse_reset_done(text: str) -> dict[str, Any]:
    """``/sim/reset_done`` JSON -> dict with ``id``, ``seed``, ``stamp``, ``gripper``; ValueError when malformed."""
    try:
        done = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"reset answer is not JSON: {err}") from None
    if not isinstance(done, dict) or not isinstance(done.get("id"), str) \
            or not isinstance(done.get("stamp"), (int, float)):
        raise ValueError(f"reset answer needs 'id' and 'stamp': {text[:80]!r}")
    done.setdefault("gripper", 1.0)
    return done


def split_ground_truth(names: Sequence[str], values: np.ndarray, state_dim: int) -> tuple[np.ndarray, bool]:
    """``/sim/task_state`` -> (task state, success); ValueError when the layout is not the task's."""
    expected = task_state_names(state_dim)
    if list(names) != expected:
        raise ValueError(f"/sim/task_state entries {list(names)[:8]} do not match this task's {expected[:8]} "
                         f"({len(expected)} entries): is the sim node running the same task?")
    return np.asarray(values[:-1], dtype=np.float32), bool(values[-1] > 0.5)


class SimTopicTask(EpisodeTask):
    """The sim's ground truth and resets, over the sim-only topics."""

    def __init__(self, state_dim: int, robot: TopicRobot, send_reset: Callable[[str], None], *,
                 actor_id: str, reset_timeout_s: float, reset_topic: str = "/sim/reset") -> None:
        self.state_dim = int(state_dim)
        self.robot = robot
        self._send_reset = send_reset
        self.actor_id = actor_id
        self.reset_timeout_s = reset_timeout_s
        self.reset_topic = reset_topic
        self._truth: Latest[tuple[np.ndarray, bool, float]] = Latest()
        self._done: Latest[dict[str, Any]] = Latest()
        self._ids = itertools.count(1)
        self._gripper = 1.0
        self.resets = 0
        self.reset_time = Percentiles()

    def on_ground_truth(self, names: Sequence[str], values: np.ndarray, stamp: float) -> None:
        state, success = split_ground_truth(names, values, self.state_dim)
        self._truth.put((state, success, float(stamp)))

    def on_reset_done(self, text: str) -> None:
        self._done.put(parse_reset_done(text))

    def reset(self, rng: np.random.Generator) -> None:
        start = time.monotonic()
        seed = int(rng.integers(0, 2**31 - 1))
        rid = f"{self.actor_id}:{next(self._ids)}"
        request = json.dumps({"id": rid, "seed": seed})
        deadline = start + self.reset_timeout_s
        sent_at = -np.inf
        done = None
        while done is None:
            now = time.monotonic()
            if self.robot.cancel.is_set():
                raise StopRequested()
            if now > deadline:
                raise DeviceError(f"the sim did not answer reset request {rid} on {self.reset_topic} within "
                                  f"{self.reset_timeout_s:.0f} s: is sim_node running?")
            if now - sent_at >= RESEND_REQUEST_S:  # a request sent before the sim subscribed is lost: re-send
                self._send_reset(request)
                sent_at = now
            done = self._done.wait(min(0.1, max(deadline - now, 0.0)), lambda d: d["id"] == rid)
        stamp = float(done["stamp"]) - STAMP_SLACK_S
        self._gripper = float(done["gripper"])
        left = max(deadline - time.monotonic(), 0.1)
        if self._truth.wait(left, lambda t: t[2] >= stamp, self.robot.cancel) is None:
            raise DeviceError(f"no /sim/task_state after reset {rid} within {left:.0f} s")
        self.robot.wait_for_state(max(deadline - time.monotonic(), 0.1), newer_than=stamp)
        self.resets += 1
        self.reset_time.add(time.monotonic() - start)

    def task_state(self) -> np.ndarray:
        truth = self._truth.value
        return np.zeros(self.state_dim, np.float32) if truth is None else truth[0].copy()

    def success(self) -> bool:
        truth = self._truth.value
        return bool(truth is not None and truth[1])

    def start_gripper(self) -> float:
        return self._gripper


class RobotResetTask(EpisodeTask):
    """A real robot's episodes: the scripted robot reset through the robot over topics."""

    state_dim = 0

    def __init__(self, cfg: Any, robot: TopicRobot, clock: Any) -> None:
        from robot_rl.reset.joint_reset import PostureJointMover
        from robot_rl.reset.robot_reset import RobotReset
        from robot_rl.tasks import get_task
        from robot_rl_drivers.robots import arm_has_posture

        # An arm without a null-space posture (a UR) needs no joint reset, and a topic robot
        # cannot tell: the config can.
        mover = PostureJointMover(robot, cfg) if cfg.reset.joint_reset_every and arm_has_posture(cfg) else None
        poses = []
        if get_task(cfg.task.name).real_only:  # a task with no scene starts where its poses say
            from robot_rl.tasks.real import reset_poses

            poses = reset_poses(cfg)
        if poses:
            from robot_rl.reset.pose_list import PoseListReset

            self.routine: RobotReset = PoseListReset(robot, clock, cfg, poses, mover)
        else:
            self.routine = RobotReset(robot, clock, cfg, mover)
        # The task says whether a part is held from the start (a reset must then not
        # open the fingers and drop it); reset.gripper overrides it.
        self._gripper = (cfg.reset.gripper if cfg.reset.gripper is not None
                         else get_task(cfg.task.name).start_gripper)

    def start_gripper(self) -> float:
        return self._gripper

    def reset(self, rng: np.random.Generator) -> None:
        self.routine.run(rng, gripper=self.start_gripper())

    def success(self) -> bool:
        return False  # the reward classifier or the human's label decides on hardware
