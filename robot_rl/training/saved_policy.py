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
no half-loaded policy ever acts. Then the loaded policy is run
(:func:`robot_rl.agents.policy_check.network_problem`): on observations sampled from the
task's observation space and on recorded ones (:func:`recorded_observations`: the newest
episode of the run's replay and of its demos); a policy whose normalizer statistics
cannot be used, or that gives non-finite actions, or means far outside the action space
before the squash, is one CheckpointError line naming the file and what is wrong.
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
from robot_rl.agents.policy_check import RECORDED, network_problem
from robot_rl.config import Config, ConfigSource, apply_overrides, to_dict
from robot_rl.config.agent import AgentConfig
from robot_rl.data.demos import DemoFormatError, episode_files, read_episode
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


def saved_weights(state: dict[str, Any], path: Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
                  section: str = "agent", what: str = "policy") -> dict[Any, Any]:
    """The policy weights a checkpoint holds under ``<section>.policy``, once it is known to be made for
    these spaces: one CheckpointError line naming the file when it is not, or holds no such weights.
    Every kind of checkpoint (``agent`` of train and learner, ``bc`` of train-bc) is read this way."""
    mismatch = spec_mismatch(state["spaces"], spaces_spec(obs_space, action_space))
    if mismatch:
        raise CheckpointError(f"checkpoint {path} was made for other spaces: {mismatch}")
    holder = state.get(section)
    weights = holder.get("policy") if isinstance(holder, dict) else None
    if not isinstance(weights, dict):
        raise CheckpointError(f"checkpoint {path} holds no {what} ({section}.policy)")
    return weights


def build_policy(state: dict[str, Any], path: Path, agent_cfg: AgentConfig, obs_space: gym.spaces.Dict,
                 action_space: gym.spaces.Box, recorded: Iterable[Mapping[str, np.ndarray]] = ()) -> SavedPolicy:
    """A Policy for ``agent_cfg`` and the spaces, holding the checkpoint's ``agent.policy``, checked by
    running it (``recorded``: observations the caller has seen on the task, besides the run's own)."""
    weights = saved_weights(state, path, obs_space, action_space)
    policy = Policy(agent_cfg, obs_space, action_space)
    problem = _weights_problem(policy, weights)
    if problem:
        why = config_difference(state["config"].get("agent"), to_dict(agent_cfg), "agent")
        raise CheckpointError(f"checkpoint {path}: its policy does not fit this config: {problem}"
                              + (f" ({why})" if why else ""))
    policy.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})
    policy.eval()
    check_loaded(policy, path, obs_space, action_space,
                 [*recorded, *recorded_observations(path.parent.parent, state["config"], obs_space, action_space)])
    updates = state["agent"].get("critic_updates", 0)
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


def check_loaded(policy: Policy, path: Path | str, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
                 recorded: Iterable[Mapping[str, np.ndarray]] = (), hint: str = NO_HINT) -> None:
    """Run a policy loaded from ``path`` on the task (see the module docstring); one CheckpointError line,
    ending in ``hint``, if it fails. The trainer and the learner call it on resume too."""
    problem = network_problem(policy, obs_space, action_space, recorded=recorded)
    if problem:
        raise CheckpointError(f"{path}: {problem}{hint}")


def recorded_observations(run_dir: Path, config: Any, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
                          limit: int = RECORDED) -> list[dict[str, np.ndarray]]:
    """Up to ``limit`` observations of the newest episode in the run's replay, in its own demos folder and
    in the demos its config names, evenly spread.

    These only add to the sampled observations of the check: a folder that is absent,
    unreadable or made for other spaces gives none (the tools that read it say why).
    """
    train = config.get("train") if isinstance(config, dict) else None
    demos = train.get("demos") if isinstance(train, dict) else None
    folders = [run_dir / "replay", run_dir / "demos", *([Path(demos)] if isinstance(demos, str) else [])]
    out: list[dict[str, np.ndarray]] = []
    for folder in folders:
        try:
            files = episode_files(folder) if folder.is_dir() else []
            if not files or not files[-1].is_file():  # a FIFO or device under an episode's name is never opened
                continue
            steps = read_episode(files[-1], obs_space, action_space)
        except (DemoFormatError, OSError, ValueError):
            continue
        observations = [step.obs for step in steps] + [steps[-1].next_obs]
        every = max(1, len(observations) // max(1, limit // len(folders)))
        out.extend(observations[::every])
    return out[:limit]
