"""The actor process: ``robot-rl actor --config ... --learner HOST:PORT``.

It steps one env with its own copy of the policy (an
:class:`~robot_rl.data.rollout.ActorLoop`, as single-process training does),
hands every Step to the :class:`~robot_rl.training.remote.client.ActorClient`, and between two
steps swaps in the newest weights the client received. Nothing in the loop waits on the
network: while the learner is away the actor keeps acting with the weights it has, and
its steps wait in the client's bounded queue.

The env comes from ``env_fn`` (a sim env by default); the ROS actor node passes its
topic-backed env and uses the same class.

With ``agent.base.mode`` set the base policy runs here, in the actor
(:func:`robot_rl.training.base_acting.actor_base`): in ``residual`` mode the actor steps a
:class:`~robot_rl.agents.residual.ResidualEnv` (the base action joins the observation, the
policy's action is the residual, a person's action is stored as the residual closest to
it), and a base action or residual that cannot be sent holds the arm and is counted
(``base_refused``, ``residual_refused``); in ``warm_start`` mode the actor's policy starts
as the BC policy. Only the SAC actor's weights travel from the learner.

Until the learner has trained at all (weights from 0 updates) the first
``train.random_steps`` steps take uniform random actions, as single-process training does.
Every action passes :class:`~robot_rl.agents.policy_check.ActionGuard`: one that is
non-finite or outside the action space (weights that diverged, say) is not sent, the arm
holds for that step, the step is recorded with the hold action it executed, and
``refused_actions`` counts it.

Sim only, ``learning.sync_steps: N``: the actor takes at most N steps with one weight
version while it is connected, then waits for the next version (the learner publishes
one as soon as it has caught up with the data it received).
A sim env does not mind pausing between steps, and this keeps actors from running ahead
of a slow learner, so how much the policy lags behind the data no longer depends on the
machine's speed (as in single-process training). A robot never waits: leave it 0. While
the learner is away the actor does not wait either.

An actor that has never reached its learner says so once, :data:`NOTICE_AFTER_S` after it
started, naming what to start. ``robot-rl actor`` (``count_only_connected``) does not count
the steps it takes before the learner first answers toward ``--max-steps`` or
``--max-episodes`` (they are random actions no learner has seen yet), and gives up after
``--connect-timeout`` seconds without a learner, with one line saying what to start.
"""

from __future__ import annotations

import logging
import time
import zlib
from typing import Any, Callable

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.policy import Policy
from robot_rl.agents.policy_check import ActionGuard
from robot_rl.config import Config
from robot_rl.data.rollout import ActorLoop
from robot_rl.training.base_acting import actor_base
from robot_rl.training.progress import Progress
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.errors import LearningError
from robot_rl.training.remote.spaces import EnvSpaces

log = logging.getLogger(__name__)

EnvFn = Callable[[Config], gym.Env]
NOTICE_AFTER_S = 2.0  # an actor that has not reached its learner this long after its start says so, once


def _sim_env(cfg: Config) -> gym.Env:
    """A sim env with the configured reward classifier and intervention device."""
    from robot_rl.assemble import make_actor_env

    return make_actor_env(cfg)


def _why(last_error: str | None, reached: bool) -> str:
    """A short reason from the client's last gRPC error (``CODE: details``)."""
    text = (last_error or "").lower()
    if "connection refused" in text:
        return "connection refused"
    if "dns resolution failed" in text or "name or service not known" in text:
        return "unknown host"
    if "deadline" in text or "timed out" in text or "timeout" in text:
        return "timed out"
    if last_error:
        return last_error.splitlines()[0][:200]
    return "flush timed out" if reached else "not connected"


class ActorProcess:
    """One env, one policy copy, one link to the learner."""

    def __init__(self, cfg: Config, token: str, *, target: str | None = None, actor_id: str | None = None,
                 env_fn: EnvFn | None = None, seed: int | None = None, config_path: str | None = None) -> None:
        self.cfg = cfg
        # what the no-learner notice tells to start: the very config, where the caller knows its file
        self.config_path = config_path or "<the same config>"
        env = (env_fn or _sim_env)(cfg)
        try:  # agent.base: the base runs here, in the actor; only the SAC actor's weights come from the learner
            self.base = actor_base(cfg, env)
        except BaseException:
            env.close()
            raise
        self.env = self.base.env
        spaces = EnvSpaces.from_gym(self.env.observation_space, self.env.action_space)
        self.client = ActorClient(cfg.learning, spaces, token, target=target, actor_id=actor_id)
        self.actor_id = self.client.actor_id
        self.seed = seed if seed is not None else cfg.seed + 1 + zlib.crc32(self.actor_id.encode()) % 1_000_000
        torch.manual_seed(self.seed)
        self.policy = Policy(cfg.agent, self.env.observation_space, self.env.action_space)
        self.base.start(self.policy)  # acts as the base (residual 0) or the BC policy before any weights came
        self.policy.eval()
        self.generator = torch.Generator().manual_seed(self.seed)
        self.random = np.random.default_rng(self.seed)
        self.guard = ActionGuard(self.env)  # checks what act() returns; a refused action holds the arm
        self.loop = ActorLoop(self.env, self, seed=self.seed)
        self.trained = False  # weights from a learner that has updated at least once
        self.steps = 0
        self.episodes = 0
        self.successes = 0
        self.weight_swaps = 0
        self.versions: list[int] = []  # every weight version swapped in, in order
        self.steps_on_version = 0
        self.waited_s = 0.0  # time spent waiting for weights (sync_steps)
        self.finished: list[Any] = []  # EpisodeStats of every episode this actor finished
        self._stop = False

    # the ActorLoop's policy
    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        if not self.trained and self.steps < self.cfg.train.random_steps:
            return self.random.uniform(-1.0, 1.0, self.env.action_space.shape).astype(np.float32)
        action = self.policy.act(obs, deterministic=False, generator=self.generator)
        if self.base.residual is not None:  # the residual actor holds the arm on a non-finite residual, counted
            return action
        return self.guard.checked(action)

    def stop(self) -> None:
        """Finish the episode in progress, then stop."""
        self._stop = True

    def run(self, *, max_steps: int | None = None, max_episodes: int | None = None,
            flush_timeout: float = 30.0, count_only_connected: bool = False,
            connect_timeout_s: float | None = None) -> dict[str, Any]:
        """Act until stopped or a limit is reached (always at an episode end).

        ``count_only_connected``: steps and episodes count toward the limits only once the
        learner has answered; ``connect_timeout_s``: stop (at the episode end) when it has not
        answered this long after the start."""
        cfg = self.cfg.learning
        started = time.monotonic()
        counted_steps = counted_episodes = 0
        noticed = gave_up = False
        period = 1.0 / cfg.actor_max_hz if cfg.actor_max_hz > 0 else 0.0
        self.client.start()
        log.info("actor %s: %s, learner %s", self.actor_id, self.cfg.task.name, self.client.target)
        next_tick = last_log = time.monotonic()
        progress = Progress(f"actor {self.actor_id}", total=max_steps, unit="env step",
                            enabled=self.cfg.train.progress, every_s=cfg.log_every_s)
        try:
            while True:
                self.client.check()
                self._swap_weights()
                if cfg.sync_steps and self.steps_on_version >= cfg.sync_steps:
                    if self.client.connected and not self._stop:
                        self.client.outbox.seal()  # the learner needs these steps to move on
                        self.waited_s += 0.002
                        time.sleep(0.002)
                        continue
                step = self.loop.step()
                self.steps_on_version += 1
                self.client.submit(step)
                self.steps += 1
                reached = self.client.connects > 0
                counts = reached or not count_only_connected
                counted_steps += counts
                if self.loop.last_episode is not None:
                    self.finished.append(self.loop.last_episode)
                    self.episodes += 1
                    counted_episodes += counts
                    self.successes += int(self.loop.last_episode.success)
                    if self._stop or (max_steps is not None and counted_steps >= max_steps) or \
                            (max_episodes is not None and counted_episodes >= max_episodes):
                        break
                now = time.monotonic()
                if not reached:
                    if not noticed and now - started >= NOTICE_AFTER_S:
                        noticed = True
                        self._notice_no_learner(count_only_connected)
                    if connect_timeout_s and not gave_up and now - started >= connect_timeout_s:
                        gave_up = True
                        self._stop = True  # ends at this episode's end
                        log.warning("actor %s: no learner answered at %s in %.0f s; stopping", self.actor_id,
                                    self.client.target, connect_timeout_s)
                if now - last_log >= cfg.log_every_s:
                    self._log_progress()
                    last_log = now
                if progress.due():
                    progress.show(self.steps, self.progress_fields())
                if period:
                    next_tick = max(next_tick + period, now - period)
                    time.sleep(max(0.0, next_tick - time.monotonic()))
        finally:
            # stopped (Ctrl-C) before any learner answered: waiting for one would only delay the stop;
            # an actor that ran its limits still gives a learner that is starting up the flush's time
            stopped_unheard = self._stop and not self.client.connects
            flushed = self.client.close(flush_timeout=0.0 if stopped_unheard else flush_timeout)
            self.env.close()
            progress.close(self.steps, self.progress_fields())
        self.client.check()
        summary = self.summary()
        summary["flushed"] = flushed
        return summary

    def _notice_no_learner(self, count_only_connected: bool) -> None:
        """Once: the learner has not answered yet, why, and what to start."""
        why = _why(self.client.last_error, False)
        counting = ("; these steps take random actions and do not count toward --max-steps or --max-episodes"
                    if count_only_connected else "")
        log.warning("actor %s: no learner answers at %s yet (%s): start one with robot-rl learner --config "
                    "%s (same token), or point the actor at it (--learner HOST:PORT)%s",
                    self.actor_id, self.client.target, why, self.config_path, counting)

    def unsent_problem(self, summary: dict[str, Any]) -> str | None:
        """One line saying which steps never reached the learner and why, or None when all did."""
        if summary.get("flushed", True) and not summary["queued_steps"]:
            return None
        left = summary["queued_steps"]
        reached = self.client.connects > 0
        what = "were never acknowledged by" if reached else "never reached"
        todo = "" if reached else ("; start robot-rl learner --config <the same config> first (same token), or "
                                   "point --learner HOST:PORT at a running one")
        return (f"{left} steps {what} the learner at {self.client.target} "
                f"({_why(self.client.last_error, reached)}){todo}")

    def _swap_weights(self) -> None:
        weights = self.client.take_weights()
        if weights is None:
            return
        try:
            self.policy.load_weights(weights.tensors)
        except ValueError as err:
            raise LearningError(f"actor {self.actor_id}: weights v{weights.version} from the learner do not fit "
                                f"this actor's policy ({err}); do both use the same config?") from None
        self.trained = self.trained or weights.learner_updates > 0
        self.weight_swaps += 1
        self.steps_on_version = 0
        self.versions.append(weights.version)

    def _log_progress(self) -> None:
        s = self.client.stats()
        log.info("actor %s: %d steps, %d episodes (%d successes), weights v%d, %s, %d queued, %d dropped",
                 self.actor_id, self.steps, self.episodes, self.successes, s["weight_version"],
                 "connected" if s["connected"] else f"learner away ({s['last_error'] or 'connecting'})",
                 s["queued_steps"], s["dropped_steps"])

    def progress_fields(self) -> dict[str, str]:
        """The figures of the progress display: episodes, success, weight version, unsent steps."""
        s = self.client.stats()
        rate = f" ({self.successes / self.episodes:.0%})" if self.episodes else ""
        return {"episodes": str(self.episodes), "success": f"{self.successes}{rate}",
                "weights": f"v{s['weight_version']}", "unsent": str(s["queued_steps"]),
                "learner": "connected" if s["connected"] else "away"}

    def summary(self) -> dict[str, Any]:
        s = self.client.stats()
        return {"actor_id": self.actor_id, "steps": self.steps, "episodes": self.episodes,
                "successes": self.successes, "weight_version": s["weight_version"],
                "weight_swaps": self.weight_swaps, "acked_steps": s["acked_steps"],
                "queued_steps": s["queued_steps"], "dropped_steps": s["dropped_steps"],
                "dropped_intervention_steps": s["dropped_intervention_steps"],
                "resent_steps": s["resent_steps"], "connects": s["connects"], "waited_s": round(self.waited_s, 1),
                "refused_actions": self.guard.refused,
                **{k: v for k, v in self.base_status().items() if k != "holding"}}

    def base_status(self) -> dict[str, Any]:
        """``agent.base.mode: residual``: the base actions and residuals refused (held and counted),
        and whether the last step held; empty in other modes."""
        return self.base.status()
