"""RL on top of a base policy in single-process training (``agent.base.mode``).

:class:`BaseRun` is what :class:`~robot_rl.training.trainer.Trainer` asks at a few points;
with ``agent.base.mode: none`` every answer leaves the run as it was.

* :meth:`BaseRun.open`, before anything of the run is written: the base policy
  ``agent.base.source`` is loaded for the env's own spaces and checked
  (:func:`~robot_rl.training.base_loader.load_base_policy`: a missing or damaged checkpoint,
  one for other spaces, or a base that gives non-finite or out-of-space actions is one
  line, and the run directory is left as it was). A resumed warm start with a checkpoint
  does not need its base any more and does not load it.
* ``residual``: :meth:`BaseRun.wrap` puts :class:`~robot_rl.agents.residual.ResidualEnv`
  around the train and eval envs (each with its own copy of the base, since a chunked base
  keeps per-episode state and evaluation interleaves with training); :meth:`BaseRun.demos`
  gives the demos their base actions and stores each demo action as the residual that
  comes closest to it (:func:`~robot_rl.agents.residual.residual_target`).
* ``warm_start``: :meth:`BaseRun.start` copies the BC network into the SAC actor
  (:func:`~robot_rl.agents.warm_start.warm_start_actor`) once the demos are in; the agent
  then keeps the actor still for ``agent.warm_start.critic_steps`` updates.
* The checkpoint records the base (:meth:`BaseRun.checkpoint_entry`: mode, source and, for
  a residual run, the base's actions on a few seeded sampled observations); a resumed
  residual run loads its base again and refuses, in one line, one that acts otherwise
  (:meth:`BaseRun.check_resume`): the residual learned on top of that base only.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

from robot_rl.agents.base_policy import BasePolicy, BasePolicyError
from robot_rl.agents.bc import BCPolicy
from robot_rl.agents.policy_check import sample_observations
from robot_rl.agents.residual import BASE_ACTION_KEY, ResidualActor, ResidualEnv, scale_vector
from robot_rl.agents.warm_start import WarmStartError, warm_start_actor
from robot_rl.config import Config
from robot_rl.data.transition import Step
from robot_rl.errors import ConfigError
from robot_rl.training.base_loader import load_base_policy, recorded_bc_success
from robot_rl.training.checkpoint import CheckpointError, checkpoint_exists

log = logging.getLogger(__name__)

#: Seeded observations the base's fingerprint is taken on, and how close a resumed base must act.
FINGERPRINT_SAMPLES, FINGERPRINT_SEED, FINGERPRINT_ATOL = 4, 24_024, 1e-5
#: The roles whose envs the residual agent acts in (demos are recorded by the expert, unwrapped).
ACTING_ROLES = ("train", "eval")


def base_fingerprint(base: BasePolicy, obs_space: gym.spaces.Dict) -> np.ndarray:
    """The base's actions on :data:`FINGERPRINT_SAMPLES` seeded observations, each from a fresh episode."""
    rows = []
    for obs in sample_observations(obs_space, FINGERPRINT_SAMPLES, FINGERPRINT_SEED):
        base.reset()
        rows.append(np.asarray(base.act(obs), np.float64))
    base.reset()
    return np.stack(rows)


def with_base_actions(episodes: Sequence[Sequence[Step]], actor: ResidualActor) -> list[list[Step]]:
    """Demo episodes as the residual agent stores them: the base action in every observation,
    the demo action as the residual closest to it (clipped to the scale)."""
    out = []
    for steps in episodes:
        actor.reset()
        bases = [actor.base_action(step.obs) for step in steps]
        last_next = actor.base_action(steps[-1].next_obs) if steps else None
        converted = []
        for i, step in enumerate(steps):
            next_base = bases[i + 1] if i + 1 < len(steps) else last_next
            converted.append(dataclasses.replace(
                step, obs={**step.obs, BASE_ACTION_KEY: bases[i]},
                next_obs={**step.next_obs, BASE_ACTION_KEY: next_base},
                action=actor.stored(bases[i], step.action)))
        out.append(converted)
    return out


class BaseRun:
    """The trainer's hooks for ``agent.base`` (see the module docstring)."""

    def __init__(self, cfg: Config, env: gym.Env, base: BasePolicy | None) -> None:
        self.cfg = cfg
        self.mode = cfg.agent.base.mode
        self.env = env  # the inner train env: its spaces are the base's
        self.obs_space: gym.spaces.Dict = env.observation_space
        self.action_space: gym.spaces.Box = env.action_space
        self.base = base
        self.scale = (scale_vector(cfg.agent.residual.scale, int(np.prod(self.action_space.shape)))
                      if self.mode == "residual" else None)
        self.fingerprint: np.ndarray | None = None  # residual: the base's actions on seeded observations
        self.actors: list[ResidualActor] = []

    @classmethod
    def open(cls, cfg: Config, env: gym.Env, *, resume: bool, run_dir: Path | None = None) -> "BaseRun":
        """Load and check the base the config names for ``env``'s spaces (none when it is not needed)."""
        mode = cfg.agent.base.mode
        needed = mode == "residual" or (mode == "warm_start" and not (resume and run_dir is not None
                                                                      and checkpoint_exists(run_dir)))
        run = cls(cfg, env, None)
        if needed:
            run.base = run.load()
            if mode == "warm_start" and not isinstance(run.base, BCPolicy):
                raise ConfigError(f"agent.base.source: a warm start starts the SAC actor from a BC checkpoint "
                                  f"(robot-rl train-bc); {run.base.source} is not one")
            if mode == "residual":
                run.fingerprint = base_fingerprint(run.base, run.obs_space)
            log.info("base policy (%s): %s", mode, run.base.source)
        return run

    def load(self) -> BasePolicy:
        """A fresh copy of the base (its own per-episode state), checked; errors name ``agent.base.source``."""
        cfg = self.cfg.agent.base
        try:
            return load_base_policy(str(cfg.source), self.obs_space, self.action_space,
                                    ensemble_decay=cfg.ensemble_decay, lerobot_python=cfg.lerobot_python)
        except (BasePolicyError, CheckpointError) as err:
            raise type(err)(f"agent.base.source: {err}") from None

    # --- acting ----------------------------------------------------------------------

    def wrap(self, env: gym.Env, role: str) -> gym.Env:
        """``env`` as the agent acts in it: in residual mode (train and eval roles) behind :class:`ResidualEnv`."""
        if self.mode != "residual" or role not in ACTING_ROLES:
            return env
        base = self.base if role == "train" and not self.actors else self.load()
        actor = ResidualActor(base, env, self.scale)
        self.actors.append(actor)
        return ResidualEnv(env, actor)

    def wrapping(self, make_env: Callable[[str], gym.Env]) -> Callable[[str], gym.Env]:
        """``make_env`` whose acting roles come wrapped (:meth:`wrap`)."""
        return lambda role: self.wrap(make_env(role), role)

    def demos(self, episodes: Sequence[Sequence[Step]]) -> list:
        """Demo episodes as this run's buffers store them (unchanged unless residual)."""
        if self.mode != "residual" or self.base is None:
            return list(episodes)
        return with_base_actions(episodes, ResidualActor(self.base, self.env, self.scale))

    def status(self) -> dict[str, Any]:
        """The train actor's base and residual refusals (residual mode; empty otherwise)."""
        return self.actors[0].status() if self.actors else {}

    # --- the agent -------------------------------------------------------------------

    def start(self, agent: Any) -> None:
        """A fresh agent's start: in warm-start mode its actor becomes the BC policy."""
        if self.mode != "warm_start" or self.base is None:
            return
        assert isinstance(self.base, BCPolicy)
        try:
            warm_start_actor(agent.policy, self.base.network, self.cfg.agent.warm_start.init_log_std)
        except WarmStartError as err:
            raise ConfigError(f"agent.base.source: {self.base.source}: {err}") from None
        log.info("warm start: the actor is the BC policy of %s; critic-only for %d updates", self.base.source,
                 self.cfg.agent.warm_start.critic_steps)
        advice = weak_bc_advice(self.base.source)
        if advice:
            log.warning(advice)

    # --- checkpoints -----------------------------------------------------------------

    def checkpoint_entry(self) -> dict[str, Any]:
        """What the checkpoint records of the base: ``{"base": {...}}``, or nothing without one."""
        if self.mode == "none":
            return {}
        entry: dict[str, Any] = {"mode": self.mode, "source": str(self.cfg.agent.base.source)}
        if self.fingerprint is not None:
            entry["fingerprint"] = self.fingerprint
        return {"base": entry}

    def check_resume(self, saved: Any, where: Path) -> None:
        """Refuse (one CheckpointError line) to resume a residual run on a base that acts otherwise."""
        if self.mode != "residual":
            return
        if not isinstance(saved, dict) or "fingerprint" not in saved:
            raise CheckpointError(f"{where} records no base policy, but agent.base.mode is 'residual'")
        fingerprint = np.asarray(saved["fingerprint"], np.float64)
        if fingerprint.shape != self.fingerprint.shape or not np.allclose(fingerprint, self.fingerprint,
                                                                        atol=FINGERPRINT_ATOL, rtol=0.0):
            diff = (float(np.abs(fingerprint - self.fingerprint).max()) if fingerprint.shape == self.fingerprint.shape
                    else float("inf"))
            raise CheckpointError(f"{where} was trained on another base policy than {self.cfg.agent.base.source} "
                                  f"(recorded as {saved.get('source')}; its actions differ by up to {diff:.3g} on "
                                  "the same observations): the residual fits only the base it learned on")


#: Below this eval success of the BC policy itself, a warm start was slower than RLPD from scratch in
#: every measured case (docs/learning.md, "Which to choose").
WEAK_BC_SUCCESS = 0.5


def weak_bc_advice(source: str) -> str | None:
    """One line advising RLPD from scratch when the BC policy's recorded eval success is below
    ``WEAK_BC_SUCCESS``; None otherwise or when nothing is recorded.

    A warm start begins as the BC policy with a small log-std and its critic learns first from
    that policy's own rollouts: from a poor BC policy it explores little and climbs slowly (on a
    harder insertion variant, from BC at 0-25%, it stayed at or below 75% after 10,000 env steps
    with a constant, a fading or a Q-filtered BC term, or none, where RLPD reached 95% in
    4,000-6,000; from BC at 40% with the failed demos left out, likewise). Not always: with 5
    demos on a peg variant, from BC at 15%, it reached 95% where RLPD did not (docs/learning.md)."""
    recorded = recorded_bc_success(source)
    if recorded is None or recorded[0] >= WEAK_BC_SUCCESS:
        return None
    rate, path = recorded
    return (f"warm start from a BC policy at {rate:.0%} eval success ({path}): from BC policies this weak, "
            f"RLPD from scratch (agent.base.mode: none, the same demos) reached 95% sooner in most measured "
            f"cases; a warm start paid off reliably from about {WEAK_BC_SUCCESS:.0%} (docs/learning.md, Start from a "
            "policy)")
