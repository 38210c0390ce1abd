"""Acting with a saved policy: a run directory of either kind in, the actor network out.

``robot-rl train`` and ``robot-rl learner`` write the same checkpoint
(:mod:`robot_rl.training.checkpoint`) to ``<run_dir>/checkpoint/``, so one loader serves
``robot-rl eval``, the actor node's ``ros.policy: checkpoint`` and anything else that
only needs to act: :func:`load_policy` finds the checkpoint (given the run directory or
its ``checkpoint/`` folder), checks that it was made for the spaces it will see, builds a
:class:`~robot_rl.agents.policy.Policy` and loads ``agent.policy`` into it. Only the
policy's file is read, never the replay buffers.

Everything read is checked before the policy is handed out: a missing directory, no
checkpoint, a damaged or NaN-filled file, other spaces, or weights of another shape are
each one :class:`~robot_rl.training.checkpoint.CheckpointError` line naming the file, so
no half-loaded policy ever acts.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.policy import Policy
from robot_rl.config import Config, ConfigSource, apply_overrides, to_dict
from robot_rl.config.agent import AgentConfig
from robot_rl.data.spaces import spaces_spec, spec_mismatch
from robot_rl.tasks import config_from_dict
from robot_rl.training.checkpoint import (
    CHECKPOINT_DIR,
    STATE_FILE,
    CheckpointError,
    checkpoint_exists,
    checkpoint_file,
    config_difference,
    load_checkpoint,
)

#: A checkpoint read to act, not to resume: rebuilding from the replay log is no advice here.
NO_HINT = ""


@dataclass
class SavedPolicy:
    """A checkpoint's policy, ready to act deterministically (its mean action)."""

    policy: Policy
    path: Path  # the state file it came from
    kind: str  # "train" or "learner": which command wrote it
    updates: int  # critic updates done when it was saved

    def act(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.policy.act(obs, deterministic=True)


def find_run(run_dir: str | Path) -> Path:
    """The run directory holding a checkpoint: ``run_dir`` itself, or its parent when
    ``run_dir`` is the ``checkpoint/`` folder; a one-line error when there is none."""
    path = Path(run_dir)
    if not path.exists():
        raise CheckpointError(f"run directory {path} does not exist")
    if not path.is_dir():
        raise CheckpointError(f"{path} is not a run directory (give the folder that holds {CHECKPOINT_DIR}/)")
    if path.name == CHECKPOINT_DIR and (path / STATE_FILE).exists():
        path = path.parent
    if not checkpoint_exists(path):
        raise CheckpointError(f"no checkpoint in {path}: a robot-rl train or robot-rl learner run holds "
                              f"{CHECKPOINT_DIR}/{STATE_FILE} once it has saved")
    return path


def read_run(run_dir: str | Path) -> tuple[dict[str, Any], Path]:
    """The checkpoint state of a run (either kind) and the file it came from, checked."""
    run = find_run(run_dir)
    state, _ = load_checkpoint(run, buffer_names=(), hint=NO_HINT)
    path = checkpoint_file(run) or run / CHECKPOINT_DIR / STATE_FILE
    if not isinstance(state.get("config"), dict) or not isinstance(state.get("spaces"), dict):
        raise CheckpointError(f"checkpoint {path} records no config or spaces, so nothing can check what "
                              "it fits")
    return state, path


def run_config(state: dict[str, Any], path: Path, overrides: Iterable[str] = ()) -> Config:
    """The config the checkpoint was made with, with ``key=value`` overrides applied."""
    overrides = list(overrides)
    data = apply_overrides(copy.deepcopy(state["config"]), overrides)
    return config_from_dict(data, file=ConfigSource(f"{path} (its config)", overrides))  # errors name their --set


def build_policy(state: dict[str, Any], path: Path, agent_cfg: AgentConfig, obs_space: gym.spaces.Dict,
                 action_space: gym.spaces.Box) -> SavedPolicy:
    """A Policy for ``agent_cfg`` and the spaces, holding the checkpoint's ``agent.policy``."""
    mismatch = spec_mismatch(state["spaces"], spaces_spec(obs_space, action_space))
    if mismatch:
        raise CheckpointError(f"checkpoint {path} was made for other spaces: {mismatch}")
    agent = state.get("agent")
    weights = agent.get("policy") if isinstance(agent, dict) else None
    if not isinstance(weights, dict):
        raise CheckpointError(f"checkpoint {path} holds no policy (agent.policy)")
    policy = Policy(agent_cfg, obs_space, action_space)
    problem = _weights_problem(policy, weights)
    if problem:
        why = config_difference(state["config"].get("agent"), to_dict(agent_cfg), "agent")
        raise CheckpointError(f"checkpoint {path}: its policy does not fit this config: {problem}"
                              + (f" ({why})" if why else ""))
    policy.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})
    policy.eval()
    updates = agent.get("critic_updates", 0)
    return SavedPolicy(policy, path, str(state.get("kind", "?")), int(updates) if isinstance(updates, int) else 0)


def _weights_problem(policy: Policy, weights: dict[Any, Any]) -> str | None:
    """Why ``weights`` cannot be loaded into ``policy`` whole, in words; None when they can."""
    own = policy.state_dict()
    for key, tensor in own.items():
        if key not in weights:
            return f"it lacks '{key}'"
        value = weights[key]
        if not isinstance(value, (torch.Tensor, np.ndarray)):
            return f"'{key}' is not an array"
        if tuple(value.shape) != tuple(tensor.shape):
            return f"'{key}' has shape {tuple(value.shape)}, this config's policy has {tuple(tensor.shape)}"
    extra = sorted(str(k) for k in weights if k not in own)
    return f"it holds '{extra[0]}', which this config's policy has not" if extra else None


def load_policy(run_dir: str | Path, agent_cfg: AgentConfig, obs_space: gym.spaces.Dict,
                action_space: gym.spaces.Box) -> SavedPolicy:
    """The policy saved in a ``robot-rl train`` or ``robot-rl learner`` run, for these spaces."""
    state, path = read_run(run_dir)
    return build_policy(state, path, agent_cfg, obs_space, action_space)
