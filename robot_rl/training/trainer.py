"""Single-process training: one env, one agent, two buffers, in one loop.

Read :meth:`Trainer.run` top to bottom: an :class:`~robot_rl.data.rollout.ActorLoop`
steps the env with the current policy, a :class:`~robot_rl.training.learner.Learner`
ingests each Step and runs the updates the UTD ratio asks for, and between steps the
trainer logs, evaluates and checkpoints. The learning plane (separate actor and learner
processes) reuses the same two pieces.

Run-length rules that keep resume exact:

* a run ends at the first episode end at or after ``train.total_env_steps`` (or after an
  evaluation reached ``train.stop_at_success``), never mid-episode;
* checkpoints are taken between episodes (the first episode end at or after each
  multiple of ``train.checkpoint_every``) and at the end of the run;
* evaluation uses its own env and seeds and touches no training RNG.

So ``--resume`` with a larger ``train.total_env_steps`` continues exactly as if the run
had never stopped: same buffers, same next batch, same weights.

What a run shows: the first ``train.eval_video_episodes`` episodes of each evaluation
are filmed into ``videos/eval_<env steps>.mp4`` (and go to TensorBoard and W&B as a
GIF); at its end the run draws ``success.png`` from ``evals.jsonl``. The progress bar's
total grows with the episode that runs past ``total_env_steps``, so a finished run's
bar ends exactly at its total.

What survives a crash (``kill -9``, a power cut) at any moment: every finished online
episode, logged durably to ``<run_dir>/replay/`` before any update uses it
(:mod:`robot_rl.training.episode_log`); the last whole checkpoint
(:mod:`robot_rl.training.checkpoint`); ``config.yaml`` and the demos. ``--resume`` loads
the checkpoint (or, before the first one, starts from the config, the demos and a fresh
agent) and re-ingests the episodes logged after it, so only the episode in flight is
lost. That promise covers data: the agent's updates since the checkpoint are redone
from the restored buffers (the update-to-data count catches up on the first step), not
replayed bit for bit. Ctrl-C or SIGTERM finishes the episode in flight, saves a
checkpoint and stops (:mod:`robot_rl.training.stopping`); nothing is lost then.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.execution import no_cuda
from robot_rl.config import Config, to_dict
from robot_rl.config.agent import check_agent_env
from robot_rl.data.demos import DemoWriter, episode_files, load_demos
from robot_rl.data.recording import make_source, record
from robot_rl.data.rollout import ActorLoop
from robot_rl.data.spaces import spaces_spec, spec_mismatch
from robot_rl.errors import RobotRLError, one_line
from robot_rl.training.base_rl import BaseRun
from robot_rl.training.checkpoint import (
    CHECKPOINT_NAMES,
    CONFIG_FILE,
    REBUILD_HINT,
    STATE_FILE,
    CheckpointError,
    check_run_dir,
    checkpoint_config,
    checkpoint_exists,
    claim_run_dir,
    config_difference,
    global_rng_state,
    load_checkpoint,
    read_run_config,
    recover_checkpoint,
    save_checkpoint,
    set_global_rng_state,
    write_run_config,
)
from robot_rl.training.curves import plot_success, read_evals
from robot_rl.training.episode_log import REPLAY_DIR, TrainingLog
from robot_rl.training.evaluation import EpisodeVideo, evaluate
from robot_rl.training.learner import Learner
from robot_rl.training.metrics import EVALS_FILE, MetricsLog
from robot_rl.training.progress import Progress
from robot_rl.training.replay_log import prune_to_config
from robot_rl.training.saved_policy import check_loaded, recorded_observations
from robot_rl.training.stopping import StopRequest, TrainingStopped, signal_name

log = logging.getLogger(__name__)

EnvFn = Callable[[Config], gym.Env]
SourceFn = Callable[[gym.Env, Config], Any]
VIDEO_DIR = "videos"  # eval_<env steps>.mp4: the first train.eval_video_episodes episodes of each evaluation
SUCCESS_PNG = "success.png"  # eval success against env steps, drawn at the end of the run
_RUN_FILES = (*CHECKPOINT_NAMES, REPLAY_DIR, "tb", "demos", CONFIG_FILE, EVALS_FILE, VIDEO_DIR, SUCCESS_PNG, "wandb")


def default_env_fn(cfg: Config, role: str = "train") -> gym.Env:
    """A sim env for ``role`` (see :func:`robot_rl.envs.make_actor_env`): practice with the
    configured reward and intervention device, demos with the reward only, eval by ground
    truth (rendering every camera when ``train.eval_video_episodes`` asks for videos)."""
    from robot_rl.assemble import make_actor_env  # sim: imported only when a sim env is built

    render = role == "eval" and cfg.train.eval_video_episodes > 0
    return make_actor_env(cfg, role, render_mode="rgb_array" if render else None)  # type: ignore[arg-type]


@dataclass
class TrainResult:
    run_dir: Path
    env_steps: int
    updates: int
    episodes: int
    wall_s: float
    evals: list[dict[str, Any]] = field(default_factory=list)
    success_png: Path | None = None  # the success curve, when the run evaluated at all
    practice: dict[str, int] = field(default_factory=dict)  # PracticeTotals.as_dict()
    finished_before: bool = False  # a resumed run that had already reached train.total_env_steps

    def first_step_reaching(self, success_rate: float, unit: str = "env_steps") -> int | None:
        """Env steps (or ``unit="episodes"``) at the first evaluation with at least ``success_rate``."""
        return next((e[unit] for e in self.evals if e["success_rate"] >= success_rate), None)


@dataclass
class PracticeTotals:
    """Counts over a run's practice episodes: how much the person did, and how often a
    learned reward called a success that the task's ground truth did not confirm.

    The classifier counts need ground truth (sim); on hardware they stay 0. Episodes
    re-ingested from the replay log on resume add their intervened steps only.
    """

    intervened_steps: int = 0
    takeovers: int = 0
    judged_episodes: int = 0  # episodes with both the reward's verdict and ground truth
    false_successes: int = 0  # the reward said success, ground truth said no
    missed_successes: int = 0  # ground truth said success, the reward did not

    def add(self, stats: Any) -> None:
        self.intervened_steps += int(stats.interventions)
        self.takeovers += int(stats.takeovers)
        if stats.gt_success is not None:
            self.judged_episodes += 1
            self.false_successes += int(bool(stats.success) and not stats.gt_success)
            self.missed_successes += int(bool(stats.gt_success) and not stats.success)

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


class _TrainingPolicy:
    """The policy as the actor loop sees it while training: sampled actions, own RNG."""

    def __init__(self, trainer: "Trainer") -> None:
        self.trainer = trainer

    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        t = self.trainer
        if t.learner.env_steps < t.cfg.train.random_steps:
            return t.random_rng.uniform(-1.0, 1.0, t.env.action_space.shape).astype(np.float32)
        return t.learner.agent.policy.act(obs, deterministic=False, generator=t.act_generator)


def prepare_run_dir(run_dir: Path, resume: bool, force: bool) -> None:
    """Refuse to mix runs: an existing run needs ``--run-dir`` (another folder), ``--resume``
    (continue) or ``--force`` (replace). Only checks: nothing is written or removed until
    the start has passed every check (:meth:`Trainer.__init__` then claims the folder), so a
    refused start leaves nothing that blocks the corrected one.

    A run stopped before its first checkpoint can be resumed too (its ``config.yaml`` is
    written before anything else), from its demos and replay log.
    """
    if resume:
        if not checkpoint_exists(run_dir) and not (run_dir / CONFIG_FILE).is_file():
            raise CheckpointError(f"--resume: no checkpoint and no run in {run_dir}; start it without --resume")
        return
    check_run_dir(run_dir, _RUN_FILES, force)


class Trainer:
    def __init__(self, cfg: Config, *, resume: bool = False, force: bool = False, env_fn: EnvFn | None = None,
                 source_fn: SourceFn | None = None, tensorboard: bool = True) -> None:
        self.cfg = cfg
        tc = cfg.train
        self.run_dir = Path(tc.run_dir)
        prepare_run_dir(self.run_dir, resume, force)
        if tc.torch_threads:
            torch.set_num_threads(tc.torch_threads)
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        # a custom env_fn (tests) serves every role; the default builds each role's own env
        self.make_env: Callable[[str], gym.Env] = ((lambda role: env_fn(cfg)) if env_fn is not None
                                                   else (lambda role: default_env_fn(cfg, role)))
        self.source_fn = source_fn or (lambda env, c: make_source("scripted", env, c))
        self.env = self.make_env("train")
        # agent.base: the base policy is loaded and checked before anything is written; residual RL acts
        # through its wrapper in the train and eval envs (robot_rl.training.base_rl)
        self.base_run = BaseRun.open(cfg, self.env, resume=resume, run_dir=self.run_dir)
        self.env = self.base_run.wrap(self.env, "train")
        self.make_env = self.base_run.wrapping(self.make_env)
        self.eval_env: gym.Env | None = None
        self.spec = spaces_spec(self.env.observation_space, self.env.action_space)
        self.learner = Learner(cfg.agent, tc, self.env.observation_space, self.env.action_space, seed=cfg.seed)
        self.actor = ActorLoop(self.env, _TrainingPolicy(self), seed=cfg.seed)
        self.act_generator = torch.Generator(device=self.learner.agent.device)
        self.act_generator.manual_seed(cfg.seed + 3)
        self.random_rng = np.random.default_rng(cfg.seed + 4)
        self.recent_success: deque[float] = deque(maxlen=20)
        self.practice = PracticeTotals()
        self.episodes = 0
        self.next_checkpoint = tc.checkpoint_every if tc.checkpoint_every else None
        self._saved_at: int | None = None  # env steps of the last checkpoint this process wrote
        self._warned_no_render = False
        self._rate_mark = (time.perf_counter(), 0)  # (time, env steps) of the last perf/env_steps_per_s
        demos = None if resume else self._given_demos()  # checked against the spaces before any write
        if not resume:  # first, so that from here on the run can always be resumed
            claim_run_dir(self.run_dir, _RUN_FILES, force)
            write_run_config(self.run_dir, cfg)
        self.replay = TrainingLog(self.run_dir, self.env.observation_space, self.env.action_space,
                                  task=cfg.task.name, env_config=to_dict(cfg.env))
        self.metrics = MetricsLog(self.run_dir, tensorboard=tensorboard, config=cfg)
        if resume:
            self._restore()
        else:
            self._load_demos(given=demos)
            self.base_run.start(self.learner.agent)

    # --- setup -----------------------------------------------------------------------

    def _given_demos(self) -> list | None:
        """``train.demos`` read and checked against this run's spaces (None when not set)."""
        if not self.cfg.train.demos:
            return None
        return load_demos(self.cfg.train.demos, self.base_run.obs_space, self.base_run.action_space)

    def _load_demos(self, resume: bool = False, given: list | None = None) -> None:
        """Fill the demo buffer; a resumed run reuses the scripted demos it recorded whole."""
        tc = self.cfg.train
        recorded = self.run_dir / "demos"
        if tc.demos:
            episodes = given if given is not None else load_demos(tc.demos, self.base_run.obs_space,
                                                                  self.base_run.action_space)
            source = tc.demos
        elif resume and recorded.is_dir() and len(episode_files(recorded)) >= tc.scripted_demos > 0:
            episodes = load_demos(recorded, self.base_run.obs_space, self.base_run.action_space)
            source = str(recorded)
        elif tc.scripted_demos > 0:
            episodes = self._record_scripted(tc.scripted_demos)
            source = f"{len(episodes)} scripted episodes"
        else:
            log.info("training without demos")
            return
        n = self.learner.add_demos(self.base_run.demos(episodes))  # residual: with the base's actions
        log.info("demo buffer: %d transitions from %s", n, source)

    def _record_scripted(self, count: int) -> list:
        """Record scripted demos into ``<run_dir>/demos`` (kept for inspection) and return them."""
        env = self.make_env("demos")
        writer = DemoWriter(self.run_dir / "demos", env.observation_space, env.action_space,
                            task=self.cfg.task.name, source="scripted", env_config=to_dict(self.cfg.env), force=True)
        log.info("recording %d scripted demos into %s (a few seconds each) before training starts", count,
                 writer.directory)
        every = max(1, count // 4)  # a line every quarter: the wait is seen to move, the log stays short

        def saved_so_far(saved: int, success: bool, length: int) -> None:
            if success and (saved % every == 0 or saved == count):
                log.info("recording %d scripted demos: %d/%d", count, saved, count)

        summary = record(env, self.source_fn(env, self.cfg), writer, count, seed=self.cfg.seed + 1_000_000,
                         on_episode=saved_so_far)
        env.close()
        if summary.saved < count:
            raise RobotRLError(f"the scripted expert succeeded in only {summary.saved} of {summary.attempted} "
                               f"episodes; cannot record {count} demos")
        log.info("recorded %d scripted demos (%d attempts) in %s", summary.saved, summary.attempted, writer.directory)
        return load_demos(writer.directory, self.base_run.obs_space, self.base_run.action_space)

    # --- checkpoints -----------------------------------------------------------------

    def save(self) -> Path:
        learner_state = self.learner.state_dict()
        buffers = {"online": learner_state.pop("online"), "demo": learner_state.pop("demo")}
        state = {
            "kind": "train", "config": checkpoint_config(self.cfg), "spaces": self.spec,
            **self.base_run.checkpoint_entry(),  # agent.base: its source, and what a resume checks it by
            "agent": learner_state.pop("agent"), "learner": learner_state,
            "actor": self.actor.state_dict(), "global_rng": global_rng_state(),
            "act_generator": self.act_generator.get_state(), "random_rng": self.random_rng.bit_generator.state,
            "trainer": {"episodes": self.episodes, "recent_success": list(self.recent_success),
                        "next_checkpoint": self.next_checkpoint, "replay_episodes": self.replay.logged,
                        "practice": self.practice.as_dict()},
        }
        path = save_checkpoint(self.run_dir, state, buffers)
        self._saved_at = self.learner.env_steps
        # The checkpoint holds the buffers: a resume needs only the episodes logged after it.
        prune_to_config(self.replay.episodes, self.cfg.train, below=state["trainer"]["replay_episodes"])
        log.debug("checkpoint at %d env steps: %s", self.learner.env_steps, path)
        return path

    def _restore(self) -> None:
        """Continue the run: its last whole checkpoint (or a fresh start from its config and
        demos when it stopped before the first), then the episodes logged after it."""
        if recover_checkpoint(self.run_dir) is not None:
            logged = self._restore_checkpoint()
        else:
            self._check_config(self.run_dir / CONFIG_FILE, read_run_config(self.run_dir))
            log.warning("%s has no checkpoint: rebuilding the run from its config, demos and replay log",
                        self.run_dir)
            self._load_demos(resume=True)
            self.base_run.start(self.learner.agent)
            logged = 0
        held = self._replay_tail(logged)
        log.info("resumed %s at %d env steps (%d from the replay log), %d updates", self.run_dir,
                 self.learner.env_steps, held, self.learner.updates_done)

    def _check_config(self, where: Path, saved: Any) -> None:
        diff = config_difference(saved, to_dict(self.cfg), defaults=to_dict(Config()))
        if diff:
            raise CheckpointError(f"{where} was made with another config: {diff}")

    def _restore_checkpoint(self) -> int:
        """Load the checkpoint; returns how many logged episodes it already holds."""
        state, buffers = load_checkpoint(self.run_dir)
        where = self.run_dir / "checkpoint"
        self._check_config(where, state.get("config"))
        mismatch = spec_mismatch(state.get("spaces", {}), self.spec)
        if mismatch:
            raise CheckpointError(f"{where} was made for other spaces: {mismatch}")
        self.base_run.check_resume(state.get("base"), where)
        try:
            logged = self._apply_state(state, buffers)
        except (KeyError, IndexError, TypeError, ValueError, RuntimeError, AttributeError) as err:
            raise CheckpointError(f"checkpoint {where} is damaged: {one_line(err)}") from None
        check_loaded(self.learner.agent.policy, where / STATE_FILE, self.env.observation_space,
                     self.env.action_space,
                     recorded_observations(self.run_dir, state.get("config"), self.env.observation_space,
                                           self.env.action_space), hint=REBUILD_HINT)
        return logged

    def _apply_state(self, state: dict[str, Any], buffers: dict[str, Any]) -> int:
        """Put the checkpoint's state in place; returns how many logged episodes it holds
        (all of them for a checkpoint from before the replay log)."""
        self.learner.load_state_dict({**state["learner"], "agent": state["agent"], **buffers})
        self.actor.load_state_dict(state["actor"])
        set_global_rng_state(state["global_rng"])
        self.act_generator.set_state(state["act_generator"])
        self.random_rng.bit_generator.state = state["random_rng"]
        self.episodes = int(state["trainer"]["episodes"])
        self.recent_success.extend(state["trainer"]["recent_success"])
        self.next_checkpoint = state["trainer"]["next_checkpoint"]
        self.practice = PracticeTotals(**state["trainer"].get("practice", {}))  # absent before it was counted
        if self.cfg.train.checkpoint_every and self.next_checkpoint is None:
            self.next_checkpoint = self.learner.env_steps + self.cfg.train.checkpoint_every
        return int(state["trainer"].get("replay_episodes", self.replay.logged))

    def _replay_tail(self, first: int) -> int:
        """Re-ingest the logged episodes numbered ``first`` and up; returns their env steps."""
        held = 0
        for logged in self.replay.tail(first):
            for step in logged.steps:
                self.learner.ingest(step)  # the restored state statistics do not count these yet
            self.episodes += 1
            self.recent_success.append(float(logged.steps[-1].success))
            self.practice.intervened_steps += sum(bool(step.intervened) for step in logged.steps)
            self._restore_actor(logged.meta.get("actor"), logged.index)
            held += len(logged.steps)
        return held

    def _restore_actor(self, state: Any, index: int) -> None:
        """The actor's state after a logged episode, so the run goes on from fresh initial states."""
        if state is None:
            return
        try:
            self.actor.load_state_dict(state)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            log.warning("replay episode %d: its actor state is unreadable (%s); the env RNG continues from the "
                        "checkpoint's", index, one_line(err))

    # --- evaluation ------------------------------------------------------------------

    def evaluate(self) -> dict[str, Any]:
        """Evaluate the policy; the first ``train.eval_video_episodes`` of these very episodes go
        into ``videos/eval_<env steps>.mp4`` and, as a GIF, to TensorBoard (and W&B)."""
        tc = self.cfg.train
        if self.eval_env is None:
            self.eval_env = self.make_env("eval")
        n = self.learner.env_steps
        video = self._eval_video(n)
        try:
            result = evaluate(video or self.eval_env, self.learner.agent.policy, tc.eval_episodes, tc.eval_seed)
        finally:
            written = video.finish() if video is not None else None
        record = {"env_steps": n, "updates": self.learner.updates_done, "episodes": self.episodes,
                  **result.as_dict(), "lengths": result.lengths, "successes": result.successes}
        if written is not None:
            record["video"] = str(written.relative_to(self.run_dir))
            record["video_episodes"] = video.episodes
            self.metrics.video(video.kept, n, video.fps, caption=f"eval at {n} env steps: first {video.episodes} "
                               f"episodes, success {result.success_rate:.0%} over {result.episodes}")
        self.metrics.eval(record)
        return record

    def _eval_video(self, n: int) -> EpisodeVideo | None:
        """The recorder of this evaluation's first episodes, or None (videos off, or an env that
        does not render, such as a test's own)."""
        episodes = min(self.cfg.train.eval_video_episodes, self.cfg.train.eval_episodes)
        if episodes <= 0:
            return None
        if getattr(self.eval_env, "render_mode", None) != "rgb_array":
            if not self._warned_no_render:
                log.warning("train.eval_video_episodes is %d but the eval env does not render: no eval videos",
                            episodes)
                self._warned_no_render = True
            return None
        return EpisodeVideo(self.eval_env, self.run_dir / VIDEO_DIR / f"eval_{n}.mp4", episodes=episodes,
                            keep_frames=True)

    def draw_success_curve(self) -> Path | None:
        """Draw ``success.png`` from every evaluation of the run (``evals.jsonl``, so a resumed
        run's curve starts at its beginning); None when there is no evaluation to draw."""
        evals = self.run_dir / EVALS_FILE
        points = read_evals(evals) if evals.is_file() else []
        if not points:
            return None
        try:
            return plot_success(self.run_dir / SUCCESS_PNG, {self.cfg.task.name: [points]},
                                title=f"{self.cfg.task.name}: eval success ({self.cfg.train.eval_episodes} episodes)",
                                target=self.cfg.train.stop_at_success)
        except RobotRLError as err:  # a curve is not worth failing a finished run for
            log.warning("no %s: %s", SUCCESS_PNG, err)
            return None

    # --- the loop --------------------------------------------------------------------

    def run(self) -> TrainResult:
        """Train to ``train.total_env_steps`` (or ``stop_at_success``); a SIGINT or SIGTERM ends
        the episode in flight, saves a checkpoint and raises :class:`TrainingStopped`."""
        tc = self.cfg.train
        learner, actor, metrics = self.learner, self.actor, self.metrics
        start = time.perf_counter()
        self._rate_mark = (start, learner.env_steps)
        stop = False
        curve: Path | None = None
        finished_before = not actor.in_episode and learner.env_steps >= tc.total_env_steps
        progress = _progress(tc.total_env_steps, learner.env_steps, enabled=tc.progress,
                             every_s=self.cfg.learning.log_every_s)
        last_eval: dict[str, Any] | None = None
        try:
            with StopRequest() as request:
                while actor.in_episode or not (stop or request.requested or learner.env_steps >= tc.total_env_steps):
                    step = actor.step()
                    learner.ingest(step)
                    self.replay.add(step, self._log_meta() if step.last else None)  # on disk before updates use it
                    learner.train()
                    n = learner.env_steps  # past total_env_steps (the run finishes its episode) the
                    # progress total grows with it (Progress.show), so it never reads 8003/8000

                    if actor.last_episode is not None:
                        self._episode_done(actor.last_episode, n)
                    if progress.due():
                        progress.show(n, self._postfix(last_eval))
                    if n % tc.log_every == 0:
                        self._log_scalars(n)
                    if tc.eval_every and tc.eval_episodes and n % tc.eval_every == 0 and not request.requested:
                        last_eval = self.evaluate()
                        progress.show(n, self._postfix(last_eval), force=True)
                        log.debug("eval at %d steps: %s", n, last_eval)
                        if tc.stop_at_success is not None and last_eval["success_rate"] >= tc.stop_at_success:
                            stop = True
                    if (self.next_checkpoint is not None and n >= self.next_checkpoint and not actor.in_episode):
                        self.save()
                        while self.next_checkpoint <= n:
                            self.next_checkpoint += tc.checkpoint_every
                if self._saved_at != learner.env_steps:
                    self.save()
                if not request.requested:
                    progress.total = learner.env_steps  # done (stop_at_success too): it ends full, at the run's end
            curve = self.draw_success_curve()
        finally:
            progress.close(learner.env_steps, self._postfix(last_eval))
            metrics.close()
        if request.signum is not None:
            raise TrainingStopped(f"stopped by {signal_name(request.signum)} at {learner.env_steps} env steps; "
                                  f"checkpoint saved in {self.run_dir / 'checkpoint'}: continue the run with the "
                                  "same command and --resume", request.signum)
        return TrainResult(run_dir=self.run_dir, env_steps=learner.env_steps, updates=learner.updates_done,
                           episodes=self.episodes, wall_s=time.perf_counter() - start, evals=list(metrics.evals),
                           success_png=curve, practice=self.practice.as_dict(), finished_before=finished_before)

    def _log_meta(self) -> dict[str, Any]:
        """What a resumed run needs of a logged episode besides its steps: the actor's state after it."""
        return {"source": "train", "episode_id": self.actor.episode_id, "env_steps": self.learner.env_steps,
                "actor": self.actor.state_dict()}

    def _log_scalars(self, n: int) -> None:
        learner, metrics = self.learner, self.metrics
        now = time.perf_counter()
        last_time, last_steps = self._rate_mark
        metrics.agent_metrics(learner.window_metrics(), n)
        metrics.scalar("perf/updates_per_s", learner.updates_per_second(), n)
        metrics.scalar("perf/env_steps_per_s", (n - last_steps) / max(now - last_time, 1e-9), n)
        metrics.scalar("buffer/online", len(learner.online), n)
        metrics.scalar("buffer/demo", len(learner.demo), n)
        self._rate_mark = (now, n)

    def _episode_done(self, stats: Any, n: int) -> None:
        self.episodes += 1
        self.recent_success.append(float(stats.success))
        self.practice.add(stats)
        m = self.metrics
        m.scalar("episode/success", float(stats.success), n)
        m.scalar("episode/return", stats.ret, n)
        m.scalar("episode/length", stats.length, n)
        m.scalar("episode/intervention_rate", stats.intervention_rate, n)
        m.scalar("episode/interventions", stats.takeovers, n)
        if stats.gt_success is not None:
            m.scalar("episode/gt_success", float(stats.gt_success), n)
        m.scalar("episode/success_rate_20", float(np.mean(self.recent_success)), n)

    def _postfix(self, last_eval: dict[str, Any] | None) -> dict[str, str]:
        post = {"ep": str(self.episodes),
                "success": f"{np.mean(self.recent_success):.0%}" if self.recent_success else "-"}
        if last_eval is not None:
            post["eval"] = f"{last_eval['success_rate']:.0%}"
        post["alpha"] = f"{self.learner.agent.alpha:.3g}"
        return post

    def close(self) -> None:
        self.learner.close()
        for env in (self.env, self.eval_env):
            if env is not None:
                env.close()


def _progress(total: int, initial: int, enabled: bool, file: Any = None, every_s: float = 10.0) -> Progress:
    """The ``train`` progress (on stderr unless ``file``): a bar on a terminal, status lines elsewhere, as
    the learner, actor and launch show theirs; a resumed run already past ``total`` starts full."""
    return Progress("train", total=max(total, initial), initial=initial, unit="env step", enabled=enabled,
                    every_s=every_s, stream=file)


def train(cfg: Config, *, resume: bool = False, force: bool = False, env_fn: EnvFn | None = None,
          source_fn: SourceFn | None = None, tensorboard: bool = True) -> TrainResult:
    """Build a :class:`Trainer`, run it, close its envs."""
    if cfg.train.demo_fraction > 0 and not cfg.train.demos and cfg.train.scripted_demos == 0:
        log.info("train.demo_fraction is %.2f but there are no demos: batches come from online data only",
                 cfg.train.demo_fraction)
    check_agent_env(cfg.agent, list(cfg.env.active_dims))
    if cfg.train.wandb.enabled:  # before the run directory is touched
        from robot_rl.training.wandb_log import require_wandb

        require_wandb()
    if cfg.train.device == "cuda" and not torch.cuda.is_available():
        raise no_cuda("cuda")
    trainer = Trainer(cfg, resume=resume, force=force, env_fn=env_fn, source_fn=source_fn, tensorboard=tensorboard)
    try:
        return trainer.run()
    finally:
        trainer.close()
