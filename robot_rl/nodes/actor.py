"""The actor node's work, without ROS: a ``RobotEnv`` over topics, a policy, episodes.

:func:`make_topic_parts` builds the env's backends from the session config and the
senders the node provides (publish a target, a gripper command, a reset request):
:class:`~robot_rl.nodes.robot.TopicRobot`, one
:class:`~robot_rl.nodes.camera.TopicCamera` per observed camera, the
:class:`~robot_rl.nodes.robot.WallClock`, the episode task (the sim's ground truth over
the sim-only topics, or a real robot's scripted reset) and, when a person intervenes
through a SpaceMouse or keyboard, :class:`~robot_rl.nodes.intervention.TopicInput`.

:class:`ActorSession` then builds the env exactly as everywhere else
(:func:`robot_rl.envs.make_env` over those parts, the reward classifier if configured,
:class:`~robot_rl.envs.intervention.HumanIntervention`) and runs episodes with the
policy ``ros.policy`` names:

* ``expert``: the task's scripted expert (sim), which reads only the RobotEnv API;
* ``checkpoint``: the policy of a ``robot-rl train``, ``robot-rl learner`` or ``robot-rl
  train-bc`` run (``ros.checkpoint``), acting deterministically; a residual run's acts on
  top of the base it learned on, which runs here (:func:`checkpoint_policy`);
* ``learner``: :class:`robot_rl.training.remote.actor_process.ActorProcess`, which streams
  every step to the learner over gRPC and swaps in new weights;
* ``random``: uniform random actions;
* ``human``: :class:`~robot_rl.data.recording.HoldPolicy`, zero motion with the gripper
  kept, so only the person's device (``intervention.device``) moves the arm.

With ``ros.demos_dir``, a local policy's finished episodes go into that demo directory
as they end (:class:`~robot_rl.data.recording.EpisodeSaver`: successful ones, failed
ones too with ``ros.demos_keep_failed``, never one a stop cut short), with the spaces
of the actor's env. The person's stop key ends the session like :meth:`ActorSession.stop`.

With ``ros.reward_frames_dir``, a local policy's steps record reward-classifier frames
into that frame directory (:func:`robot_rl.reward.collect.actor_frames`: the env observes
``reward.cameras``, the classifier is off, frames are labelled by the person's keys). The
person's device then reaches HumanIntervention through a
:class:`~robot_rl.reward.labels.LabelKeyTap`, so its success, failure and pause presses
label frames (read once, by the labels) instead of ending episodes or holding the arm.

Every action a policy gives passes :class:`~robot_rl.agents.policy_check.ActionGuard`
first (in the learner's actor process too): a non-finite action, or one outside the
action space, is not sent; the arm holds (the env steps with zero motion, so the target
is sent again unchanged), the step is counted (``refused_actions`` in the summary, the
status and ``/diagnostics``; ``holding`` while the last action was refused, which makes
the diagnostic WARN) and the episode and the session go on. With a residual policy
(``agent.base.mode: residual`` under ``learner``, or a residual run's checkpoint) the base
policy's own action is guarded the same way: one that is non-finite or outside the action
space holds the arm, no residual is added, and it is counted (``base_refused``,
``residual_refused`` for a residual that is not finite; ``holding``).

Two wrappers go on the outside: :class:`StopOnRequest` ends the episode in flight at the
next step once :meth:`ActorSession.stop` is called (Ctrl-C), without moving the arm
again; :class:`EpisodeBook` logs every episode and keeps the figures that ``summary()``
reports (episodes, successes, the step latency).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.agents.policy_check import ActionGuard
from robot_rl.config import Config
from robot_rl.control.commands import PostureLimits
from robot_rl.data.rollout import Deterministic
from robot_rl.envs.task import EpisodeTask
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.nodes.camera import TopicCamera, topic_camera
from robot_rl.nodes.intervention import TopicInput, topic_devices
from robot_rl.nodes.latest import Percentiles, StopRequested
from robot_rl.nodes.robot import TopicRobot, WallClock
from robot_rl.nodes.task import RobotResetTask, SimTopicTask
from robot_rl.nodes.topics import actor_cameras, configured_cameras

log = logging.getLogger("robot_rl.actor")


@dataclass
class Senders:
    """How the actor's parts publish; the node provides these."""

    target: Callable[[np.ndarray, np.ndarray], None]
    gripper: Callable[[float], None]
    reset: Optional[Callable[[str], None]] = None  # sim only
    posture: Optional[Callable[[Optional[np.ndarray], Optional[float]], None]] = None  # joint resets


@dataclass
class TopicParts:
    robot: TopicRobot
    cameras: dict[str, TopicCamera]
    clock: WallClock
    task: EpisodeTask
    input: Optional[TopicInput]


def make_topic_parts(cfg: Config, topics: dict[str, Any], senders: Senders, *, actor_id: str,
                     stamp_clock: Callable[[], float] = time.time) -> TopicParts:
    """The env's backends over topics (``topics``: the node's ``topics.*`` parameters).

    ``stamp_clock``: the clock the robot state's header stamps are on, for its age (the
    node's clock: the system clock, or the sim's time with ``use_sim_time``).
    """
    ros = cfg.ros
    cancel = threading.Event()
    robot = TopicRobot(senders.target, senders.gripper, state_timeout_s=ros.state_timeout_s,
                       wait_timeout_s=ros.startup_timeout_s, pose_topic=topics["tcp_pose"], cancel=cancel,
                       wall=stamp_clock,
                       send_posture=senders.posture,
                       posture_limits=PostureLimits.from_config(cfg.robot.controller))
    cameras = {name: topic_camera(cfg, name, topics["cameras"][name]["image"], cancel) for name in actor_cameras(cfg)}
    clock = WallClock()
    task: EpisodeTask
    if cfg.robot.backend == "sim":
        from robot_rl.tasks import get_task

        if senders.reset is None:
            raise ConfigError("a sim session's actor needs the sim reset topic")
        task = SimTopicTask(get_task(cfg.task.name).task.state_dim, robot, senders.reset, actor_id=actor_id,
                            reset_timeout_s=ros.reset_timeout_s, reset_topic=topics.get("sim_reset", "/sim/reset"))
    else:
        task = RobotResetTask(cfg, robot, clock)
    device = TopicInput(cfg.intervention, timeout_s=ros.input_timeout_s) if topic_devices(cfg.intervention) else None
    return TopicParts(robot, cameras, clock, task, device)


class StopOnRequest(gym.Wrapper):
    """Once ``stop`` is set, the next step ends the episode (truncated, ``info["stop"]``) without acting.

    A stop that arrives during a step (the robot then refuses the step's target) ends the
    episode the same way; the last observation is repeated as the final one.
    """

    def __init__(self, env: gym.Env, stop: threading.Event) -> None:
        super().__init__(env)
        self.stop = stop
        self._last_obs: Any = None

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        return obs, info

    def step(self, action: np.ndarray):
        if not self.stop.is_set():
            try:
                obs, reward, terminated, truncated, info = self.env.step(action)
                self._last_obs = obs
                return obs, reward, terminated, truncated, info
            except StopRequested:  # the stop came mid-step (the robot refuses new targets once it is set)
                pass
        self.env.unwrapped.robot.hold()
        return self._last_obs, 0.0, False, True, {"stop": True, "success": False, "intervened": False}


class EpisodeBook(gym.Wrapper):
    """Logs each episode and keeps the actor's figures (see :meth:`summary`)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.episodes: list[dict[str, Any]] = []
        self.step_period = Percentiles()
        self.steps = 0
        self._last_step_at: Optional[float] = None
        self._reset_counts()

    def _reset_counts(self) -> None:
        self._length, self._return, self._interventions, self._started = 0, 0.0, 0, time.monotonic()

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._reset_counts()
        self._last_step_at = None
        return obs, info

    def step(self, action: np.ndarray):
        obs, reward, terminated, truncated, info = self.env.step(action)
        now = time.monotonic()
        if self._last_step_at is not None:
            self.step_period.add(now - self._last_step_at)
        self._last_step_at = now
        self.steps += 1
        self._length += 1
        self._return += float(reward)
        self._interventions += int(bool(info.get("intervened", False)))
        if terminated or truncated:
            record = {"episode": len(self.episodes), "success": bool(info.get("success", False)),
                      "length": self._length, "return": round(self._return, 3),
                      "interventions": self._interventions, "seconds": round(now - self._started, 2),
                      "ended": "stop" if info.get("stop") else ("terminated" if terminated else "truncated")}
            if "robot_fault" in info:
                record["robot_fault"] = info["robot_fault"]
            self.episodes.append(record)
            log.info("episode %d: %s in %d steps (%.1f s), return %.2f, %d intervention steps", record["episode"],
                     "success" if record["success"] else "no success", record["length"], record["seconds"],
                     record["return"], record["interventions"])
        return obs, reward, terminated, truncated, info


def failure_reason(record: dict[str, Any]) -> str:
    """Why a booked episode (an :class:`EpisodeBook` record) failed, in a few words: the robot
    fault that ended it (a stale state: the controller or sim stopped answering), actions the
    guard refused, the time limit, or the task ending without success."""
    if record.get("robot_fault"):
        return f"robot fault: {record['robot_fault']}"
    if record.get("refused_actions"):
        return f"{record['refused_actions']} refused action(s): the arm held"
    if record["ended"] == "truncated":
        return f"timeout: no success in {record['length']} steps"
    if record["ended"] == "stop":
        return "stopped"
    return "the task ended without success"


class _Random:
    def __init__(self, space: gym.Space, seed: int) -> None:
        self.space = space
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Any) -> np.ndarray:
        return self.rng.uniform(self.space.low, self.space.high).astype(np.float32)


class CheckpointPolicy(Deterministic):
    """A checkpoint's policy on its mean, with the env it acts in (:attr:`env`: a
    :class:`~robot_rl.agents.residual.ResidualEnv` around the session's env for a residual
    run, whose base runs here; the session's env otherwise) and its base's refusals."""

    def __init__(self, saved: Any, keys: list[str] | None, env: gym.Env) -> None:
        super().__init__(saved.policy, keys)
        self.saved = saved
        self.env = env


def checkpoint_policy(cfg: Config, env: gym.Env, keys: Optional[list[str]] = None) -> CheckpointPolicy:
    """The policy of the run ``ros.checkpoint`` names, acting deterministically.

    The run may be a ``robot-rl train``, ``robot-rl learner`` or ``robot-rl train-bc`` one:
    all write the one checkpoint format (:mod:`robot_rl.training.base_acting` reads it,
    checking spaces and shapes; a residual run's base is loaded and must act as the one
    it learned on). ``keys``: the observation keys it was trained on, when ``env`` observes
    more (the reward cameras while frames are recorded); the others are dropped before it acts.
    """
    from robot_rl.training.base_acting import saved_actor

    checkpoint_run(cfg)
    view = env if keys is None else gym.wrappers.FilterObservation(env, list(keys))
    saved = saved_actor(cfg.ros.checkpoint, cfg.agent, view)
    if saved.residual is not None and (keys is not None or cfg.ros.demos_dir is not None):
        raise ConfigError(f"ros.checkpoint {cfg.ros.checkpoint} is a residual run's: it acts with its base, which "
                          "ros.reward_frames_dir and ros.demos_dir do not take; record with ros.policy: learner")
    log.info("policy from %s (%s run, %s updates)", saved.path, saved.kind,
             "no" if saved.updates is None else saved.updates)
    return CheckpointPolicy(saved, keys, saved.env if saved.residual is not None else env)


def checkpoint_run(cfg: Config) -> str:
    """The run directory ``ros.checkpoint`` names, checked to hold a checkpoint (one line if not)."""
    from robot_rl.training.saved_policy import find_run

    if not cfg.ros.checkpoint:
        raise ConfigError("ros.policy is 'checkpoint' but ros.checkpoint names no run directory")
    try:
        return str(find_run(cfg.ros.checkpoint))
    except ConfigError:
        raise
    except RobotRLError as err:
        raise ConfigError(f"ros.policy is 'checkpoint' but ros.checkpoint: {err}") from None


def check_start(cfg: Config) -> None:
    """What the actor node would refuse at start about files and folders, checked without
    starting anything (``robot-rl launch --dry-run``): the checkpoint of ``ros.policy:
    checkpoint``, the base policy of ``agent.base`` under ``ros.policy: learner`` (that it
    names a folder or an entry point: the node loads and checks it), the reward classifier
    file, and ``ros.demos_dir`` being a folder."""
    from robot_rl.tasks.real import check_real_run

    check_real_run(cfg)  # a task with no scene has no scripted expert
    if cfg.ros.policy == "checkpoint":
        checkpoint_run(cfg)
    source = cfg.agent.base.source
    if cfg.ros.policy == "learner" and cfg.agent.base.mode != "none" and source:
        from robot_rl.agents.base_policy import is_entry_point

        if not is_entry_point(source) and not Path(source).is_dir():  # loaded and checked when the node starts
            raise ConfigError(f"agent.base.source {source} is neither a run directory nor module:factory")
    classifier = cfg.reward.classifier_path
    if classifier is not None and cfg.ros.reward_frames_dir is None and not Path(classifier).is_file():
        why = "is a folder, not a classifier file" if Path(classifier).is_dir() else "does not exist"
        raise ConfigError(f"reward.classifier_path {classifier} {why} (train one with robot-rl train-reward)")
    demos = cfg.ros.demos_dir
    if demos is not None and Path(demos).exists() and not Path(demos).is_dir():
        raise ConfigError(f"ros.demos_dir {demos} is a file, not a demo directory")


class ActorSession:
    """Episodes of one env over topics with one policy (see the module docstring)."""

    def __init__(self, cfg: Config, parts: TopicParts, *, actor_id: str | None = None,
                 config_path: str | Path | None = None) -> None:
        from robot_rl.assemble import make_actor_env
        from robot_rl.config.learning import default_actor_id
        from robot_rl.envs import EnvParts
        from robot_rl.envs.intervention import HumanIntervention
        from robot_rl.envs.wrappers import wrapped_in
        from robot_rl.tasks.real import check_real_run

        check_real_run(cfg)
        self.cfg = cfg
        self.config_path = config_path  # named in the no-learner notice (robot-rl learner --config <it>)
        self.parts = parts
        self.actor_id = actor_id or default_actor_id()
        self.seed = cfg.ros.seed if cfg.ros.seed is not None else cfg.seed
        self._stop = parts.robot.cancel  # one event: ends the episode at the next step and cuts every wait
        self._process: Any = None
        person, self._label_keys = parts.input, None
        env_cfg, self._policy_keys = cfg, None
        if cfg.ros.reward_frames_dir is not None:
            from robot_rl.reward.collect import recording_config
            from robot_rl.reward.labels import LabelKeyTap

            if person is None:
                raise ConfigError(f"ros.reward_frames_dir labels frames with the person's keys but "
                                  f"intervention.device is '{cfg.intervention.device}': name their device "
                                  "(keyboard, spacemouse, gamepad, or spacemouse+keyboard)")
            env_cfg = recording_config(cfg)  # observes reward.cameras; no classifier while recording its data
            # what a checkpoint's policy was trained on, without the cameras added for the frames
            self._policy_keys = list(cfg.env.policy_keys or ["state", *configured_cameras(cfg)])
            person = LabelKeyTap(person)
            self._label_keys = person.labels
        # the person's devices are read by the intervention node and come over a topic
        env = make_actor_env(env_cfg, parts=EnvParts(parts.robot, dict(parts.cameras), parts.clock, parts.task),
                             over_topic=person)
        if self._label_keys is not None:
            from robot_rl.reward.collect import check_frame_cameras

            check_frame_cameras(cfg, env.observation_space)
        if cfg.ros.policy == "human" and not wrapped_in(env, HumanIntervention):  # a live view may wrap it
            raise ConfigError(f"ros.policy is 'human' but intervention.device is '{cfg.intervention.device}': "
                              "name the person's device (spacemouse, keyboard, gamepad, or spacemouse+keyboard)")
        env = StopOnRequest(env, self._stop)
        self.book = EpisodeBook(env)
        self.env: gym.Env = self.book
        self.policy_name = cfg.ros.policy
        self.guard: ActionGuard | None = None  # the guard in front of the policy, once it runs
        self._base_status: Callable[[], dict[str, Any]] = dict  # agent.base: its refusals, once it runs

    def wait_ready(self) -> None:
        """Wait for the first robot state and images (up to ``ros.startup_timeout_s``)."""
        self.parts.robot.wait_for_state()
        for camera in self.parts.cameras.values():
            camera.wait_for_frame()

    def stop(self) -> None:
        """End the episode in flight at the next step, then return from :meth:`run`."""
        self._stop.set()
        if self._process is not None:
            self._process.stop()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> dict[str, Any]:
        """Run ``ros.episodes`` episodes (0: until stopped); returns :meth:`summary`."""
        episodes = self.cfg.ros.episodes or None
        try:
            self.wait_ready()
            log.info("actor %s: %s, policy %s, %s episodes", self.actor_id, self.cfg.task.name, self.policy_name,
                     episodes or "unlimited")
            if self.policy_name == "learner":
                self._run_learner(episodes)
            else:
                self._run_local(episodes)
        except StopRequested:
            log.info("stopped while waiting; the episode in flight is dropped")
        return self.summary()

    def _run_local(self, episodes: Optional[int]) -> None:
        from robot_rl.data.rollout import ActorLoop

        env = self.env
        if self.policy_name == "expert":
            from robot_rl.tasks import get_task

            policy: Any = get_task(self.cfg.task.name).make_expert(self.env, seed=self.seed)
        elif self.policy_name == "checkpoint":
            policy = checkpoint_policy(self.cfg, self.env, keys=self._policy_keys)
            if isinstance(policy, CheckpointPolicy):  # a residual run's acts through its base's wrapper
                env, self._base_status = policy.env, policy.saved.status
        elif self.policy_name == "human":
            from robot_rl.data.recording import HoldPolicy, controls_hint

            policy = HoldPolicy(self.env)  # the env paces itself at the control rate
            log.info("%s", controls_hint(self.cfg))
        else:
            policy = _Random(self.env.action_space, self.seed)
        saver = self._demo_saver()
        frames = self._frame_recorder()
        # a residual run's guard holds the arm through its ResidualActor (base_acting.SavedActor.guard)
        self.guard = guard = policy.saved.guard(policy) if env is not self.env else ActionGuard(env, policy)
        loop = ActorLoop(env, guard, seed=self.seed)
        try:
            while loop.in_episode or not (self._stop.is_set() or
                                          (episodes is not None and len(self.book.episodes) >= episodes)):
                step = loop.step()  # a stop ends the episode in flight at this step (StopOnRequest)
                if step.last and guard.episode_refused:
                    self.book.episodes[-1]["refused_actions"] = guard.episode_refused
                stopped = step.last and self.book.episodes[-1]["ended"] == "stop"
                saved = saver.add(step, stopped=stopped) if saver is not None else None
                if saved is not None:
                    log.info("demo episode saved: %s", saved)
                if frames is not None:
                    frames.add(step, stopped=stopped)
                if stopped:
                    self.stop()  # the person's stop key ends the session, as Ctrl-C does
        finally:
            if frames is not None:
                frames.close()
                log.info("reward frames: %s into %s", frames.stats.summary(), self.cfg.ros.reward_frames_dir)
            self.parts.robot.close()

    def _demo_saver(self) -> Any:
        """An EpisodeSaver into ``ros.demos_dir`` (appending), or None."""
        ros = self.cfg.ros
        if ros.demos_dir is None:
            return None
        from robot_rl.config import to_dict
        from robot_rl.data.demos import DemoWriter
        from robot_rl.data.recording import EpisodeSaver

        source = self.cfg.intervention.device if self.policy_name == "human" else self.policy_name
        writer = DemoWriter(ros.demos_dir, self.env.observation_space, self.env.action_space, task=self.cfg.task.name,
                            source=source, env_config=to_dict(self.cfg.env), append=True)
        return EpisodeSaver(writer, keep_failed=ros.demos_keep_failed)

    def _frame_recorder(self) -> Any:
        """A StepFrames into ``ros.reward_frames_dir`` (appending), or None."""
        if self._label_keys is None:
            return None
        from robot_rl.reward.collect import actor_frames

        log.info("reward frames into %s: the success and failure keys label the frames that follow (every "
                 "episode starts as failure), pause skips frames, stop ends", self.cfg.ros.reward_frames_dir)
        return actor_frames(self.cfg, self.env, self._label_keys)

    def _run_learner(self, episodes: Optional[int]) -> None:
        from robot_rl.training.remote.actor_process import ActorProcess

        token = self.cfg.learning.resolve_token()
        self._process = ActorProcess(self.cfg, token, actor_id=self.actor_id, env_fn=lambda _cfg: self.env,
                                     seed=self.seed,
                                     config_path=str(self.config_path) if self.config_path is not None else None)
        self.guard = self._process.guard
        self._base_status = self._process.base_status
        if self._stop.is_set():
            self._process.stop()
        self.learner_summary = self._process.run(max_episodes=episodes)

    def summary(self) -> dict[str, Any]:
        done = self.book.episodes
        finished = [e for e in done if e["ended"] != "stop"]
        summary = {
            "actor_id": self.actor_id, "task": self.cfg.task.name, "policy": self.policy_name,
            "episodes": len(finished), "successes": sum(e["success"] for e in finished),
            "steps": self.book.steps,
            "step_latency": self.parts.robot.latency.summary(),
            "state_age": self.parts.robot.state_age.summary(),
            "step_period": self.book.step_period.summary(),
            "stopped": self._stop.is_set(),
            **(self.guard.status() if self.guard is not None else {"refused_actions": 0}),
            # why each failed episode failed (the first 50): a stale state, the time limit, the task
            "failures": [{"episode": e["episode"], "length": e["length"], "why": failure_reason(e)}
                         for e in finished if not e["success"]][:50],
        }
        base = self._base_status()  # a residual policy's base: a refused base action held the arm, counted
        if base:
            summary.update(base_refused=base.get("base_refused", 0), residual_refused=base.get("residual_refused", 0),
                           last_refused_base_action=base.get("last_refused_base_action"),
                           holding=bool(summary.get("holding") or base.get("holding")))
            if base.get("base_policy"):  # a base in its own process: calls, failures, round-trip latency
                summary["base_policy"] = base["base_policy"]
        if isinstance(self.parts.task, SimTopicTask):
            summary["reset_time"] = self.parts.task.reset_time.summary()
        if getattr(self, "learner_summary", None):
            summary["learner"] = self.learner_summary
        return summary

    def status(self) -> dict[str, Any]:
        """What the node publishes on its status topic."""
        return {**self.summary(), "recent_episodes": self.book.episodes[-5:],
                "targets_sent": self.parts.robot.targets_sent, "target_resends": self.parts.robot.resends}

    def close(self) -> None:
        self.parts.robot.close()
        for camera in self.parts.cameras.values():
            camera.close()


def summary_line(summary: dict[str, Any]) -> str:
    return jsonio.dumps(summary, default=float)
