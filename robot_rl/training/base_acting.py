"""Acting with a base policy outside ``robot-rl train``: actor processes, the actor node, ``robot-rl eval``.

Two questions, one answer each, so that every place a policy runs does the same thing:

* :func:`actor_base`: an actor of a live run (``robot-rl actor``, the actor node's
  ``ros.policy: learner``) with ``agent.base.mode`` set. The base runs here, in the actor
  (:class:`~robot_rl.agents.residual.ResidualActor`, behind
  :class:`~robot_rl.agents.residual.ResidualEnv`); only the SAC actor's weights come from
  the learner. ``residual``: the env the actor steps gives the base action in the
  observation and takes ``u``; the actor's policy starts at zero residual, so until the
  learner's first weights arrive the arm does what the base does. ``warm_start``: the
  actor's policy starts as the BC network, so its first steps are the BC policy's even
  before the learner answers.
* :func:`saved_actor`: the policy of a checkpoint, to act on its mean (``robot-rl eval``,
  the actor node's ``ros.policy: checkpoint``). A ``robot-rl train-bc`` checkpoint acts as
  its BC policy (temporally ensembled chunks); a residual run's checkpoint acts through a
  ResidualEnv around the caller's env, on the base its checkpoint records
  (``base.source``, or ``agent.base.source`` of the caller's config when that names one),
  which must act as the recorded one did (:func:`fingerprint_problem`): the residual
  fits only the base it learned on.

Whatever is wrong is one line naming the file or the key (a BasePolicyError,
CheckpointError or ConfigError), before anything moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import gymnasium as gym
import numpy as np

from robot_rl.agents.base_policy import BasePolicy, BasePolicyError
from robot_rl.agents.policy_check import ActionGuard
from robot_rl.agents.residual import BASE_ACTION_KEY, ResidualActor, ResidualEnv, scale_vector, zero_residual
from robot_rl.config import Config
from robot_rl.config.agent import AgentConfig
from robot_rl.training.base_loader import BC_KIND, bc_policy, load_base_policy
from robot_rl.training.base_rl import FINGERPRINT_ATOL, BaseRun, base_fingerprint
from robot_rl.training.checkpoint import CheckpointError
from robot_rl.training.saved_policy import build_policy, read_run

Obs = Mapping[str, np.ndarray]


@dataclass
class ActorBase:
    """What an actor of a live run does with ``agent.base`` (see :func:`actor_base`)."""

    env: gym.Env  # the env the actor steps (ResidualEnv around the given one in residual mode)
    run: BaseRun
    residual: ResidualActor | None

    def start(self, policy: Any) -> None:
        """The actor's fresh policy, before any weights came: zero residual, or the BC policy (warm start)."""
        if self.residual is not None:
            zero_residual(policy)
        elif self.run.mode == "warm_start":
            self.run.start(_Holder(policy))

    def status(self) -> dict[str, Any]:
        """The base's and the residual's refusals (residual mode; empty otherwise)."""
        return self.residual.status() if self.residual is not None else {}


class _Holder:
    """What :meth:`BaseRun.start` reads of an agent: its ``policy``."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy


def actor_base(cfg: Config, env: gym.Env) -> ActorBase:
    """Load and check ``agent.base`` for an actor stepping ``env`` (its own, unwrapped spaces).

    With ``agent.base.mode: none`` the env is returned as it is and nothing is loaded.
    """
    run = BaseRun.open(cfg, env, resume=False)
    acting = run.wrap(env, "train")
    residual = acting.actor if isinstance(acting, ResidualEnv) else None
    return ActorBase(acting, run, residual)


@dataclass
class SavedActor:
    """A checkpoint's policy ready to act on its mean in :attr:`env`."""

    env: gym.Env  # the caller's env, or a ResidualEnv around it for a residual run
    policy: Any  # has act(obs, deterministic=True) (and reset() for a chunked BC policy)
    path: Path  # the checkpoint's state file
    kind: str  # "train", "learner" or "bc"
    updates: int | None  # critic updates of an RL checkpoint (None for BC)
    residual: ResidualActor | None

    def status(self) -> dict[str, Any]:
        return self.residual.status() if self.residual is not None else {}

    def guard(self, policy: Any = None) -> ActionGuard:
        """The action guard in front of ``policy`` (default: :attr:`policy`) in :attr:`env`.

        For a residual run, a refused residual becomes NaN, which the ResidualActor refuses in
        turn: the arm holds (zero motion, gripper kept), with no base motion added, and
        ``residual_refused`` counts it. (Any finite stand-in would still move the arm by the base.)
        """
        policy = self.policy if policy is None else policy
        if self.residual is None:
            return ActionGuard(self.env, policy)
        shape = self.env.action_space.shape
        return ActionGuard(self.env, policy, hold=lambda: np.full(shape, np.nan, np.float32))


def saved_actor(run_dir: str | Path, agent_cfg: AgentConfig, env: gym.Env, *,
                recorded: Iterable[Obs] = (), state: tuple[dict[str, Any], Path] | None = None) -> SavedActor:
    """The policy of the run ``run_dir`` names, for ``env``'s spaces (see the module docstring).

    ``agent_cfg``: the caller's agent config (the network is built from it, as
    :func:`~robot_rl.training.saved_policy.build_policy` does; a BC network from the
    checkpoint's own). ``state``: the checkpoint already read (:func:`read_run`), if it was.
    """
    saved, path = state if state is not None else read_run(run_dir)
    obs_space, action_space = env.observation_space, env.action_space
    kind = str(saved.get("kind", "?"))
    if kind == BC_KIND:
        base = bc_policy(saved, path, obs_space, action_space, recorded=recorded)
        return SavedActor(env, base, path, kind, None, None)
    record = saved.get("base")
    residual = None
    if isinstance(record, dict) and record.get("mode") == "residual":
        residual = _residual(saved, path, record, agent_cfg, env)
        env = ResidualEnv(env, residual)
        recorded = [{**obs, BASE_ACTION_KEY: residual.base_action(obs)} for obs in recorded]
        residual.reset()
        obs_space = env.observation_space
    policy = build_policy(saved, path, agent_cfg, obs_space, action_space, recorded=recorded)
    return SavedActor(env, policy.policy, path, kind, policy.updates, residual)


def _residual(saved: dict[str, Any], path: Path, record: dict[str, Any], agent_cfg: AgentConfig,
              env: gym.Env) -> ResidualActor:
    """The residual run's base, loaded for ``env`` and checked against the checkpoint's record."""
    own = agent_cfg.base.source if agent_cfg.base.mode == "residual" else None
    source = own or record.get("source")
    if not isinstance(source, str) or not source:
        raise CheckpointError(f"checkpoint {path} is a residual run's but records no base policy source")
    config = saved["config"].get("agent") if isinstance(saved.get("config"), dict) else None
    trained = config.get("residual", {}).get("scale") if isinstance(config, dict) else None
    base_cfg = config.get("base", {}) if isinstance(config, dict) else {}
    decay = base_cfg.get("ensemble_decay") if isinstance(base_cfg, dict) else None
    try:
        python = agent_cfg.base.lerobot_python or (base_cfg.get("lerobot_python") if isinstance(base_cfg, dict)
                                                   else None)  # else the run's own LeRobot python
        base = load_base_policy(source, env.observation_space, env.action_space, ensemble_decay=decay,
                                lerobot_python=python)
    except (BasePolicyError, CheckpointError) as err:
        where = "agent.base.source" if own else f"the base policy {path} records"
        raise type(err)(f"{where}: {err}") from None
    problem = fingerprint_problem(record, base, env.observation_space)
    if problem:
        raise CheckpointError(f"{path} was trained on another base policy than {source} ({problem}): the "
                              "residual fits only the base it learned on")
    try:
        scale = scale_vector(trained if trained is not None else agent_cfg.residual.scale,
                             int(np.prod(env.action_space.shape)))
    except ValueError as err:
        raise CheckpointError(f"checkpoint {path}: agent.residual.scale in its config: {err}") from None
    return ResidualActor(base, env, scale)


def fingerprint_problem(record: Mapping[str, Any], base: BasePolicy, obs_space: gym.spaces.Dict) -> str | None:
    """Why ``base`` is not the base a checkpoint recorded (``record["fingerprint"]``), or None."""
    if "fingerprint" not in record:
        return "it records no fingerprint of its base"
    recorded = np.asarray(record["fingerprint"], np.float64)
    now = base_fingerprint(base, obs_space)
    if recorded.shape != now.shape:
        return f"its base gave actions of shape {recorded.shape[1:]}, this one {now.shape[1:]}"
    if not np.allclose(recorded, now, atol=FINGERPRINT_ATOL, rtol=0.0):
        return f"recorded as {record.get('source')}; their actions differ by up to " \
               f"{float(np.abs(recorded - now).max()):.3g} on the same observations"
    return None

