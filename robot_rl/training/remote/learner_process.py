"""The learner process: ``robot-rl learner --config ...``.

It serves any number of actors (:class:`~robot_rl.training.remote.server.LearnerServer`), joins
their batches into episodes (:class:`~robot_rl.training.remote.assembler.EpisodeAssembler`),
and trains the same :class:`~robot_rl.training.learner.Learner` single-process training
uses. Read :meth:`LearnerProcess.run` top to bottom: take finished episodes into replay,
run the updates the update-to-data ratio allows, push weights, evaluate, checkpoint.

Update-to-data ratio: ``train.utd_ratio`` critic updates per env step *received* (from
all actors together, counted when a batch arrives), after ``train.learning_starts``
steps; with ``learning.updates: max`` it updates as fast as it can instead.

Weights go to every actor every ``learning.weights_every_updates`` updates or
``learning.weights_every_s`` seconds, whichever comes first, and whenever the learner
has caught up with newly received data when ``learning.sync_steps`` is set (sim actors
that wait for a new version then go on as soon as the learner is ready for more).

What survives ``kill -9`` (run directory = ``train.run_dir``):

* ``replay/``: every finished online episode, written and fsync'd before the batch that
  ended it is acknowledged (:mod:`robot_rl.training.replay_log`); interventions are in
  there with their flag and go to the demo buffer as well when read back;
* ``demos/`` (scripted demos recorded at the first start) or ``train.demos``;
* ``checkpoint/`` (every ``learning.checkpoint_every_s``): the agent with its optimizers,
  temperature and RNGs, the sampling RNG and counters, in the one checkpoint format
  (:mod:`robot_rl.training.checkpoint`, no pickle; ``robot-rl eval`` and the actor node's
  ``ros.policy: checkpoint`` run it);
* ``learner/state.json``: the last weight version published, so versions keep growing.

With ``agent.base.mode`` set, the base policy runs in the actors
(:mod:`robot_rl.training.remote.actor_process`) and only the SAC actor's weights go to
them. The learner trains on the steps as the actors store them (``residual``: the base
action in the observation, the residual as the action) and needs ``agent.residual.scale``
for that; it loads the base too (:class:`~robot_rl.training.base_rl.BaseRun`), to give the
demos their base actions, to evaluate in sim, and to record the base in its checkpoint
(a resumed residual run refuses another base); ``warm_start`` copies the BC policy into
the actor at the first start, and the first weights the actors get are that policy's.

``--resume`` loads the checkpoint, reads the replay log back into the buffers (newest
first, only what the buffers can hold: :meth:`EpisodeLog.read_window`), and tells the
server which batches it already holds; actors resend the unfinished part of the episode
they were in (see :mod:`robot_rl.training.remote.outbox`). So a restarted learner holds
every transition its buffers held, and counts every step an actor sent.

The state statistics the policy normalises its input with are part of the agent, so the
checkpoint holds them; it also records ``stats_below``: every replay log episode numbered
below it is counted in them. A resume adds only the steps of the episodes from there on
(read back even when older than the online window, and never pruned before the next
checkpoint), so its statistics equal those of a learner that never stopped. A checkpoint
from before that record re-counts the window, as before, and says so in one warning.

The replay log is bounded (``train.replay_log``): after each episode is written, the oldest
ones that are neither in the online buffer's window nor hold interventions are deleted,
whole files, and counted (a log line, ``replay_log`` in ``learner/stats.json``).

A learner that cannot keep ``train.utd_ratio`` says so (:mod:`robot_rl.training.utd_monitor`):
the effective ratio over ``learning.utd_window_s`` and the update backlog go to
``learner/stats.json`` (``utd``), a note joins the progress line while it is behind, and a
warning naming ``learning.sync_steps`` is logged once per window. Evaluations stay on
their grid: grid point N is evaluated once N steps arrived *and* the updates N steps call
for are done, so each evaluation sees the training of its grid point, and none is skipped.
"""

from __future__ import annotations

import json
import logging
import math
import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np
import torch

from robot_rl import jsonio
from robot_rl.config import Config, to_dict
from robot_rl.data.demos import DemoWriter, episode_files, load_demos
from robot_rl.data.durable import durable_write_text, remove_stale
from robot_rl.data.spaces import spaces_spec, spec_mismatch
from robot_rl.errors import RobotRLError, one_line
from robot_rl.training.base_rl import BaseRun
from robot_rl.training.checkpoint import (
    CHECKPOINT_NAMES,
    CONFIG_FILE,
    REBUILD_HINT,
    CheckpointError,
    check_run_dir,
    checkpoint_config,
    checkpoint_file,
    claim_run_dir,
    config_difference,
    load_checkpoint,
    read_run_config,
    recover_checkpoint,
    save_checkpoint,
    write_run_config,
)
from robot_rl.training.episode_log import REPLAY_DIR
from robot_rl.training.learner import Learner
from robot_rl.training.metrics import EVALS_FILE, MetricsLog
from robot_rl.training.progress import Progress
from robot_rl.training.remote.assembler import Episode, EpisodeAssembler
from robot_rl.training.remote.holders import HOLDERS_FILE
from robot_rl.training.remote.server import LearnerServer
from robot_rl.training.remote.spaces import EnvSpaces
from robot_rl.training.replay_log import EpisodeLog, prune_to_config
from robot_rl.training.saved_policy import check_loaded, recorded_observations
from robot_rl.training.utd_monitor import UtdMonitor

log = logging.getLogger(__name__)

EnvFn = Callable[[Config], gym.Env]
MAX_ACTORS_SHOWN = 4  # per-actor figures in the progress display; the rest are counted
RUN_FILES = ("learner", *CHECKPOINT_NAMES, REPLAY_DIR, "demos", CONFIG_FILE, "tb", EVALS_FILE)


#: Seconds past ``--max-seconds`` the last evaluation may take; one expected to take longer is skipped.
FINAL_EVAL_GRACE_S = 5.0


def learner_run_dir(cfg: Config) -> Path:
    """Where ``robot-rl learner`` keeps its run: ``learning.run_dir``, else ``<train.run_dir>_learner``,
    so that a learner run never collides with the ``robot-rl train`` run of the same config."""
    return Path(cfg.learning.run_dir) if cfg.learning.run_dir else Path(f"{cfg.train.run_dir.rstrip('/')}_learner")


def sim_env(cfg: Config) -> gym.Env:
    from robot_rl.assemble import make_env  # sim: imported only when a sim env is built

    return make_env(cfg)


def spaces_env(cfg: Config) -> gym.Env:
    """The learner's env: a sim env on ``robot.backend: sim`` (it evaluates in it), else the spaces alone.

    The learner needs the observation and action spaces, not a robot: on a robot they
    follow from the config alone (:func:`robot_rl.assemble.config_spaces_env`), and no sim
    is built, which a task that lives only on a real cell could not have anyway.
    """
    from robot_rl.assemble import config_spaces_env
    from robot_rl.tasks import get_task

    if cfg.robot.backend == "sim" and not get_task(cfg.task.name).real_only:
        return sim_env(cfg)
    return config_spaces_env(cfg)


def sim_twin(cfg: Config) -> gym.Env:
    """A sim env of a robot config's task, for ``--eval`` of a robot session (a ConfigError for a real-only task)."""
    from dataclasses import replace

    cams = {k: replace(c, backend="sim") for k, c in cfg.cameras.items()}
    return sim_env(replace(cfg, robot=replace(cfg.robot, backend="sim"), cameras=cams))


class LearnerProcess:
    """One learner serving many actors; see the module docstring."""

    def __init__(self, cfg: Config, token: str, *, resume: bool = False, force: bool = False,
                 env_fn: EnvFn | None = None, evaluate: bool | None = None, tensorboard: bool = True) -> None:
        self.cfg = cfg
        tc, lc = cfg.train, cfg.learning
        self.run_dir = Path(tc.run_dir)
        self.state_dir = self.run_dir / "learner"
        _prepare_run_dir(self.run_dir, resume, force)
        if tc.torch_threads:
            torch.set_num_threads(tc.torch_threads)
        torch.manual_seed(cfg.seed)
        self.env_fn = env_fn or (sim_twin if evaluate and cfg.robot.backend != "sim" else spaces_env)
        env = self.env_fn(cfg)
        try:  # agent.base: loaded and checked before anything is written (robot_rl.training.base_rl)
            self.base_run = BaseRun.open(cfg, env, resume=resume, run_dir=self.run_dir)
        except BaseException:
            env.close()
            raise
        acting = self.base_run.wrap(env, "train")  # residual: the actors' steps carry the base action
        self.obs_space, self.action_space = acting.observation_space, acting.action_space
        self.eval_env: gym.Env | None = acting if (evaluate if evaluate is not None
                                                   else cfg.robot.backend == "sim") else None
        if self.eval_env is None:
            env.close()
        self.spec = spaces_spec(self.obs_space, self.action_space)
        self.learner = Learner(cfg.agent, tc, self.obs_space, self.action_space, seed=cfg.seed)
        given = None
        if not resume:  # every check passed (spaces, demos): only now is the folder claimed and written
            given = self._given_demos()
            claim_run_dir(self.run_dir, RUN_FILES, force)
        self.replay = EpisodeLog(self.run_dir / REPLAY_DIR, self.obs_space, self.action_space,
                                 task=cfg.task.name, env_config=to_dict(cfg.env))
        self.replay.auto_bound = tc  # each episode written is followed by a prune to train.replay_log
        # Memory per actor is bounded: an unfinished episode longer than this is refused.
        self.assembler = EpisodeAssembler(self.replay, max_open_steps=lc.episode_cap(cfg.env.max_episode_steps))
        self.weight_version = 0
        self.episodes = 0
        self.recent_success: list[float] = []
        self.evals: list[dict[str, Any]] = []
        self.utd = UtdMonitor(tc.utd_ratio, window_s=lc.utd_window_s, fraction=lc.utd_warn_fraction)
        self._stop = threading.Event()
        self._received_at_push = 0
        self._next_eval = tc.eval_every if tc.eval_every else None
        self._deadline: float | None = None  # monotonic time --max-seconds ends the run (run())
        self._eval_s = 0.0  # how long the last whole evaluation took
        self.stats_below = 0  # replay log episodes numbered below it are counted in the state statistics
        if resume:
            self._check_resume()
            if self.state_dir.is_dir():
                remove_stale(self.state_dir)  # a checkpoint or state file a crash left half-written
        else:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            write_run_config(self.run_dir, cfg)
        self._load_demos(resume, given=given)
        if resume:
            self._restore()
        else:
            self.base_run.start(self.learner.agent)  # warm start: the actor becomes the BC policy
        holders_file = self.state_dir / HOLDERS_FILE  # who held which actor id, for a resumed learner
        if not resume:
            holders_file.unlink(missing_ok=True)  # a fresh run: no holders from another
        self.state_dir.mkdir(parents=True, exist_ok=True)
        # Before the metrics log: a damaged holders file stops a resume before TensorBoard writes anything.
        self.server = LearnerServer(lc, EnvSpaces.from_gym(self.obs_space, self.action_space), self.assembler,
                                    token, acked=self.assembler.acked(), weight_version=self.weight_version,
                                    holders_file=holders_file)
        self.metrics = MetricsLog(self.run_dir, tensorboard=tensorboard, config=cfg)

    # --- setup -----------------------------------------------------------------------

    def _check_resume(self) -> None:
        if (self.run_dir / CONFIG_FILE).is_file():
            saved = read_run_config(self.run_dir)
            current = to_dict(self.cfg)
            saved.pop("learning", None)
            current.pop("learning", None)  # address, token, limits may change between starts
            for config in (saved, current):  # so may the replay log's bound
                if isinstance(config.get("train"), dict):
                    config["train"].pop("replay_log", None)
            diff = config_difference(saved, current, defaults=to_dict(Config()))
            if diff:
                raise RobotRLError(f"--resume: {self.run_dir} was started with another config: {diff}")

    def _given_demos(self) -> list | None:
        """``train.demos`` read and checked against the spaces (None when not set)."""
        if not self.cfg.train.demos:
            return None
        return load_demos(self.cfg.train.demos, self.base_run.obs_space, self.base_run.action_space)

    def _load_demos(self, resume: bool, given: list | None = None) -> None:
        tc = self.cfg.train
        if tc.demos:
            episodes = given if given is not None else load_demos(tc.demos, self.base_run.obs_space,
                                                                  self.base_run.action_space)
            source = tc.demos
        elif tc.scripted_demos > 0:
            directory = self.run_dir / "demos"
            if not (resume and directory.is_dir() and len(episode_files(directory)) >= tc.scripted_demos):
                self._record_scripted(directory, tc.scripted_demos)
            episodes = load_demos(directory, self.base_run.obs_space, self.base_run.action_space)
            source = str(directory)
        else:
            log.info("no demos: the demo buffer holds interventions only")
            return
        n = self.learner.add_demos(self.base_run.demos(episodes))  # residual: with the base's actions
        log.info("demo buffer: %d transitions from %s", n, source)

    def _record_scripted(self, directory: Path, count: int) -> None:
        from robot_rl.data.recording import make_source, record

        env = sim_env(self.cfg)
        try:
            writer = DemoWriter(directory, env.observation_space, env.action_space, task=self.cfg.task.name,
                                source="scripted", env_config=to_dict(self.cfg.env), force=True)
            summary = record(env, make_source("scripted", env, self.cfg), writer, count,
                             seed=self.cfg.seed + 1_000_000)
        finally:
            env.close()
        if summary.saved < count:
            raise RobotRLError(f"the scripted expert succeeded in only {summary.saved} of {summary.attempted} "
                               f"episodes; cannot record {count} demos")
        log.info("recorded %d scripted demos in %s", summary.saved, directory)

    def _restore(self) -> None:
        state_file = self.state_dir / "state.json"
        if state_file.is_file():
            self.weight_version = int(json.loads(state_file.read_text()).get("weight_version", 0))
        counted: int | None = None  # the checkpoint's stats_below; None: a fresh agent or an older checkpoint
        if recover_checkpoint(self.run_dir) is not None:  # a save a crash cut short: finish or undo it
            counted = self._restore_checkpoint()
        else:
            log.warning("no checkpoint in %s: the agent starts fresh, on the saved replay", self.run_dir)
            self.base_run.start(self.learner.agent)
        self.replay.keep_from = counted  # a crash before the next checkpoint needs them again
        self.prune_replay()  # a log grown past its bound (a changed bound, an older version) shrinks first
        pruned = self.replay.pruned
        self.assembler.restore_pruned(pruned.episodes, pruned.steps, pruned.producers)
        for meta, length in self.replay.kept():
            self.assembler.restore(meta, length)
        tc = self.cfg.train
        started, read = time.monotonic(), 0
        interventions = 0
        for logged, whole in self.replay.read_window(tc.replay_capacity, tc.demo_capacity, since=counted):
            # The state statistics take the steps the restored ones do not count yet; a fresh agent,
            # or a checkpoint that does not say which those are, takes the online window's.
            uncounted = whole if counted is None else logged.index >= counted
            if whole:
                self._ingest_steps(logged.steps, update_stats=uncounted)
            else:  # older than the online buffer's window: only its interventions are still held
                for step in logged.steps:
                    self.learner.ingest_demo_part(step, update_stats=uncounted)
            read += len(logged.steps)
            interventions += sum(1 for s in logged.steps if s.intervened)
        self.learner.env_steps = self.received_steps
        self.stats_below = self.replay.next_index
        log.info("resumed %s: %d updates, %d env steps received in %d episodes (%d pruned); read back %d steps "
                 "(%d interventions) in %.1f s; weights v%d", self.run_dir, self.learner.updates_done,
                 self.received_steps, self.assembler.episodes, pruned.episodes, read, interventions,
                 time.monotonic() - started, self.weight_version)

    def prune_replay(self) -> None:
        """Hold the replay log to ``train.replay_log`` (see :meth:`EpisodeLog.prune`), keeping the
        episodes the last checkpoint's state statistics do not count yet."""
        prune_to_config(self.replay, self.cfg.train, below=self.replay.keep_from)

    def _restore_checkpoint(self) -> int | None:
        """The agent, sampling RNG and counters of the last checkpoint; a damaged one is one line.

        Returns its ``stats_below`` (None, with a warning, for a checkpoint from before it)."""
        state, _ = load_checkpoint(self.run_dir, buffer_names=())
        where = checkpoint_file(self.run_dir)
        mismatch = spec_mismatch(state.get("spaces", {}), self.spec)
        if mismatch:
            raise CheckpointError(f"{where} was made for other spaces: {mismatch}")
        self.base_run.check_resume(state.get("base"), where)  # a residual fits only the base it learned on
        try:
            self.learner.agent.load_state_dict(state["agent"])
            self.learner.rng.bit_generator.state = state["rng"]
            self.episodes = int(state["episodes"])
            self.evals = list(state["evals"])
            self._next_eval = state["next_eval"]
        except (KeyError, IndexError, TypeError, ValueError, RuntimeError, AttributeError) as err:
            raise CheckpointError(f"checkpoint {where} is damaged: {one_line(err)}") from None
        check_loaded(self.learner.agent.policy, where, self.obs_space, self.action_space,
                     recorded_observations(self.run_dir, state.get("config"), self.obs_space, self.action_space),
                     hint=REBUILD_HINT)
        if "stats_below" not in state:
            log.warning("%s does not record which replay episodes its state statistics count (an older "
                        "version): the replay window read back is counted in them again", where)
            return None
        counted = state["stats_below"]
        if type(counted) is not int or not 0 <= counted <= self.replay.next_index:
            raise CheckpointError(f"checkpoint {where} is damaged: stats_below={counted!r} is not an episode "
                                  f"number of the replay log (0..{self.replay.next_index})")
        return counted

    def _ingest_steps(self, steps: list, update_stats: bool = True) -> None:
        """One whole episode into replay (interventions into the demo buffer too: Learner.ingest)."""
        for step in steps:
            self.learner.ingest(step, update_stats=update_stats)

    def save(self) -> Path:
        state = {"kind": "learner", "config": checkpoint_config(self.cfg), "spaces": self.spec,
                 **self.base_run.checkpoint_entry(),  # agent.base: its source, and what a resume checks it by
                 "agent": self.learner.agent.state_dict(), "rng": self.learner.rng.bit_generator.state,
                 "episodes": self.episodes, "evals": self.evals, "next_eval": self._next_eval,
                 "received_steps": self.assembler.received_steps, "stats_below": self.stats_below}
        path = save_checkpoint(self.run_dir, state)
        self.replay.keep_from = self.stats_below  # a resume from this checkpoint reads them back
        return path

    # --- the loop --------------------------------------------------------------------

    @property
    def received_steps(self) -> int:
        return self.assembler.received_steps

    def updates_due(self) -> int:
        learner = self.learner
        if len(learner.online) + len(learner.demo) == 0:
            return 0
        if self.cfg.learning.updates == "max":
            return 1 << 30
        steps = self.received_steps - self.cfg.train.learning_starts
        if steps <= 0:
            return 0
        return max(0, math.floor(self.cfg.train.utd_ratio * steps + 1e-9) - learner.updates_done)

    def _budget_done(self) -> bool:
        """The updates that ``train.total_env_steps`` steps call for are done (more data may keep coming)."""
        tc = self.cfg.train
        if self.cfg.learning.updates == "max":
            return True
        target = math.floor(tc.utd_ratio * max(0, tc.total_env_steps - tc.learning_starts) + 1e-9)
        return self.learner.updates_done >= target or self.updates_due() == 0

    def stop(self) -> None:
        self._stop.set()

    def run(self, *, max_updates: int | None = None, max_seconds: float | None = None,
            host: str | None = None, port: int | None = None, started: float | None = None) -> dict[str, Any]:
        """Serve and train until stopped, ``train.total_env_steps`` received, or a limit.

        ``max_seconds`` counts from ``started`` (a ``time.monotonic()`` reading: the CLI gives
        the command's start, so recording demos counts) or from now. The run then ends within
        a few seconds of it: update bursts stop at the deadline, an evaluation the deadline
        overtakes is cut short and not recorded, and the last one is skipped when the one
        before it took longer than :data:`FINAL_EVAL_GRACE_S`."""
        tc, lc = self.cfg.train, self.cfg.learning
        learner = self.learner
        bound = self.server.start(host=host, port=port)
        durable_write_text(self.state_dir / "port", f"{bound}\n")
        start = time.monotonic()
        if max_seconds is not None:
            self._deadline = (start if started is None else started) + max_seconds
        self._publish()
        progress = Progress("learner", total=tc.total_env_steps, unit="env step", enabled=tc.progress,
                            every_s=lc.log_every_s, initial=self.received_steps)
        if self.eval_env is not None and not self.evals and tc.eval_episodes:
            self.evaluate()  # the starting point that later evaluations are compared with
        last_push, pushed_at = learner.updates_done, time.monotonic()
        last_save = last_log = time.monotonic()
        try:
            while not self._stop.is_set():
                due = self.updates_due()
                for episode in self.assembler.take(timeout=0.0 if due else 0.05):
                    self._ingest(episode)
                due = self.updates_due()
                if max_updates is not None:
                    due = min(due, max_updates - learner.updates_done)
                for _ in range(min(due, 10)):  # small chunks: stay responsive to pushes and new data
                    if self._past_deadline():
                        break
                    learner.update()
                now = time.monotonic()
                new_updates = learner.updates_done - last_push
                # Caught up with new data: a version for actors that wait for one (learning.sync_steps).
                caught_up = bool(lc.sync_steps) and self.received_steps > self._received_at_push and \
                    self.updates_due() == 0
                if new_updates >= lc.weights_every_updates or caught_up or \
                        (new_updates and now - pushed_at >= lc.weights_every_s):
                    self._publish()
                    last_push, pushed_at = learner.updates_done, now
                if self._eval_due() and self.eval_env is not None:
                    self.evaluate(grid=self._next_eval)
                    self._next_eval += tc.eval_every
                    if lc.updates == "max":  # no ratio to wait for: grid points passed meanwhile are skipped
                        while self._next_eval <= self.received_steps:
                            self._next_eval += tc.eval_every
                if lc.updates == "ratio":
                    warning = self.utd.observe(self.received_steps - tc.learning_starts, learner.updates_done,
                                               min(self.updates_due(), 1 << 30))
                    if warning is not None:
                        log.warning(warning)
                if now - last_save >= lc.checkpoint_every_s:
                    self.save()
                    last_save = now
                if now - last_log >= lc.log_every_s:
                    self._log_progress()
                    last_log = now
                if progress.due():
                    progress.show(self.received_steps, self.progress_fields())
                if max_updates is not None and learner.updates_done >= max_updates:
                    break
                if self._past_deadline():
                    break
                if self.received_steps >= tc.total_env_steps and self._budget_done():
                    log.info("received train.total_env_steps=%d steps and trained on them; stopping",
                             tc.total_env_steps)
                    break
                if tc.stop_at_success is not None and self.evals and \
                        self.evals[-1]["success_rate"] >= tc.stop_at_success:
                    break
            if self.eval_env is not None and tc.eval_episodes and \
                    (not self.evals or self.evals[-1]["updates"] != learner.updates_done):
                if self._deadline is not None and time.monotonic() + self._eval_s > \
                        self._deadline + FINAL_EVAL_GRACE_S:
                    log.info("no evaluation where the run ended: the last one took %.0f s, past --max-seconds",
                             self._eval_s)
                else:
                    self.evaluate(grace_s=FINAL_EVAL_GRACE_S)  # where the run ended
        finally:
            if learner.updates_done != last_push:
                self._publish()
            self.save()
            self._log_progress()
            progress.close(self.received_steps, self.progress_fields())
            self.server.stop(grace=2.0)
            self.metrics.close()
            learner.close()
        return self.summary()

    def _eval_due(self) -> bool:
        """Grid point ``_next_eval`` has arrived and, at a ratio, its updates are done.

        A learner behind its ratio would otherwise evaluate a policy trained on fewer updates
        than the grid point's, later and later, and skip the points passed meanwhile."""
        if self._next_eval is None or self.received_steps < self._next_eval:
            return False
        if self.cfg.learning.updates == "max":
            return True
        tc = self.cfg.train
        return self.learner.updates_done >= math.floor(tc.utd_ratio * max(0, self._next_eval - tc.learning_starts)
                                                       + 1e-9)

    def _ingest(self, episode: Episode) -> None:
        self._ingest_steps(episode.steps)
        self.stats_below = episode.index + 1  # episodes are taken in log order (EpisodeAssembler.take)
        self.episodes += 1
        self.recent_success = (self.recent_success + [float(episode.success)])[-20:]
        n, m = self.received_steps, self.metrics
        m.scalar("episode/success", float(episode.success), n)
        m.scalar("episode/return", episode.ret, n)
        m.scalar("episode/length", len(episode.steps), n)
        m.scalar("episode/intervention_rate", episode.interventions / max(1, len(episode.steps)), n)

    def _publish(self) -> None:
        # Read first: steps that arrive from here on were taken with this version or an older one.
        self._received_at_push = self.received_steps
        updates, weights = self.learner.weights()
        self.weight_version = self.server.publish_weights(weights, learner_updates=updates)
        _write_json(self.state_dir / "state.json", {"weight_version": self.weight_version, "updates": updates})

    def _past_deadline(self, grace_s: float = 0.0) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline + grace_s

    def evaluate(self, grid: int | None = None, grace_s: float = 0.0) -> dict[str, Any] | None:
        """Evaluate the current policy; ``grid``: the grid point (env steps) this evaluation stands for.

        One that ``--max-seconds`` (plus ``grace_s``) overtakes ends early and is not recorded
        (a rate over fewer episodes would not compare with the others): None."""
        from robot_rl.training.evaluation import evaluate

        tc = self.cfg.train
        steps = self.received_steps  # data keeps arriving while the evaluation runs
        began = time.monotonic()
        result = evaluate(self.eval_env, self.learner.agent.policy, tc.eval_episodes, tc.eval_seed,
                          stop=lambda: self._past_deadline(grace_s))
        if result.episodes < tc.eval_episodes:
            log.info("evaluation at %d env steps cut short by --max-seconds after %d of %d episodes; not recorded",
                     steps, result.episodes, tc.eval_episodes)
            return None
        self._eval_s = time.monotonic() - began
        record = {"env_steps": steps, "grid_steps": grid, "updates": self.learner.updates_done,
                  "weight_version": self.weight_version, **result.as_dict()}
        self.evals.append(record)
        self.metrics.eval(record)
        log.info("eval at %d env steps, %d updates: success %.0f%%", record["env_steps"], record["updates"],
                 100 * record["success_rate"])
        return record

    def _log_progress(self) -> None:
        n, learner = self.received_steps, self.learner
        self.metrics.agent_metrics(learner.window_metrics(), n)
        self.metrics.scalar("perf/updates_per_s", learner.updates_per_second(), n)
        self.metrics.scalar("buffer/online", len(learner.online), n)
        self.metrics.scalar("buffer/demo", len(learner.demo), n)
        self.metrics.flush()
        actors = {k: v.as_dict() for k, v in self.server.actor_stats().items()}
        success = f"{np.mean(self.recent_success):.0%}" if self.recent_success else "-"
        log.info("learner: %d env steps received, %d updates, %d episodes (recent success %s), weights v%d, "
                 "%d actors", n, learner.updates_done, self.episodes, success, self.weight_version, len(actors))
        for name, a in actors.items():
            log.info("  actor %s: %d steps, %d episodes, %d successes, %d intervention steps, %d dropped, "
                     "%d batches refused, weights v%d sent", name, a["steps"], a["episodes"], a["successes"],
                     a["intervention_steps"], a["report"]["dropped_steps"], a["rejected"] + a["out_of_order"],
                     a["weight_version_sent"])
        refused = self.server.refusals()
        if refused:
            log.info("  refused calls and batches by cause: %s", refused)
        _write_json(self.state_dir / "stats.json", self.summary())

    def progress_fields(self) -> dict[str, str]:
        """The figures of the progress display: env steps received per actor, updates, UTD, weights."""
        tc, learner = self.cfg.train, self.learner
        beyond = self.received_steps - tc.learning_starts
        actors = sorted((k, v.steps) for k, v in self.server.actor_stats().items())
        shown = " / ".join(f"{k} {steps}" for k, steps in actors[:MAX_ACTORS_SHOWN])
        if len(actors) > MAX_ACTORS_SHOWN:
            shown += f" / {len(actors) - MAX_ACTORS_SHOWN} more"
        success = f"{np.mean(self.recent_success):.0%}" if self.recent_success else "-"
        fields = {"updates": str(learner.updates_done),
                  "UTD": f"{learner.updates_done / beyond:.2f}" if beyond > 0 else "-",
                  "weights": f"v{self.weight_version}", "episodes": str(self.assembler.episodes),
                  "success": success, "actors": shown or "none yet"}
        behind = self.utd.field()
        if behind is not None:
            fields["behind"] = f"{behind} (set learning.sync_steps)"
        return fields

    def summary(self) -> dict[str, Any]:
        return {"received_steps": self.received_steps, "episodes": self.assembler.episodes,
                "updates": self.learner.updates_done, "updates_due": min(self.updates_due(), 1 << 30),
                "weight_version": self.weight_version,
                "online_transitions": len(self.learner.online), "demo_transitions": len(self.learner.demo),
                "duplicate_steps": self.assembler.duplicate_steps, "lost_steps": self.assembler.lost_steps,
                "refused": self.server.refusals(), "utd": self.utd.status(),
                "replay_log": {"bytes": self.replay.size_bytes, "episodes": self.replay.kept_episodes,
                               "steps": self.replay.kept_steps,
                               "pruned_episodes": self.replay.pruned.episodes,
                               "pruned_steps": self.replay.pruned.steps, "pruned_bytes": self.replay.pruned.bytes,
                               "prunes": self.replay.prunes, "prune_failures": self.replay.prune_failures},
                "evals": self.evals, "actors": {k: v.as_dict() for k, v in self.server.actor_stats().items()}}

    def close(self) -> None:
        if self.eval_env is not None:
            self.eval_env.close()


#: Refusals that heal themselves: the actor renumbers its batches, registers again or retries
#: later, and its data arrives (id_held: an actor restarted after a crash waits for its old
#: process's lease; the others: calls beyond a connection's share, or whose body never came,
#: retried by a real actor). Every other cause turned a peer or its data away for good.
RETRIED_REFUSALS = frozenset({"out_of_order", "not_registered", "busy", "actors_full", "connection_limit",
                              "body_timeout", "waiting_full", "id_held"})


def refused_for_good(summary: dict[str, Any]) -> dict[str, int]:
    """The refusals by cause that turned a peer or its batches away for good (not healed by retrying)."""
    refused = summary.get("refused", {})
    return {c: n for c, n in sorted(refused.items()) if c not in RETRIED_REFUSALS and c != "store_failed" and n}


def refusals_line(summary: dict[str, Any]) -> str | None:
    """``refused 3 call(s) or batch(es) from peers (3 unauthenticated)``, or None when there were none."""
    turned_away = refused_for_good(summary)
    if not turned_away:
        return None
    causes = ", ".join(f"{n} {cause}" for cause, n in turned_away.items())
    return f"refused {sum(turned_away.values())} call(s) or batch(es) from peers ({causes})"


def ending_problem(summary: dict[str, Any], run_dir: Path, refusals_fatal: bool = False) -> str | None:
    """One line saying how the learner's own run failed (steps it could not store), or None
    for a healthy run; the CLI exits non-zero on it. Peers it turned away (a wrong token,
    other spaces, malformed batches) are a stranger's failure, not the run's: they are
    counted and reported (:func:`refusals_line`) and fail the run only with ``refusals_fatal``
    (``learning.refusals_fatal``, ``robot-rl learner --strict``)."""
    problems = []
    failed = summary.get("refused", {}).get("store_failed", 0)
    if failed:
        problems.append(f"could not write {failed} batch(es) of actor steps to {run_dir / REPLAY_DIR} "
                        "(the actors were told to resend them)")
    refusals = refusals_line(summary)
    if refusals and refusals_fatal:
        problems.append(refusals)
    return "; ".join(problems) + "; see the log for peers and reasons" if problems else None


def _prepare_run_dir(run_dir: Path, resume: bool, force: bool) -> None:
    """Checks only: the folder is claimed once the start has passed every check."""
    if resume:
        if not (run_dir / REPLAY_DIR).is_dir() and not (run_dir / "learner").is_dir():
            raise RobotRLError(f"--resume: {run_dir} holds no learner run")
        return
    check_run_dir(run_dir, RUN_FILES, force)


def _write_json(path: Path, data: Any) -> None:
    durable_write_text(path, jsonio.dumps(data, default=float))


def install_stop_signals(stop: Callable[[], None]) -> None:
    """SIGTERM (and SIGINT) end the loop cleanly: checkpoint, last weights, goodbye."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop())
