"""Loading a base policy (:mod:`robot_rl.agents.base_policy`) from a checkpoint or an entry point.

:func:`load_base_policy` takes what a person writes: a run directory (or its
``checkpoint/`` folder) of ``robot-rl train-bc``, ``robot-rl train`` or ``robot-rl
learner``, or a ``module:factory`` entry point. From the one checkpoint format
(:mod:`robot_rl.training.checkpoint`):

* a ``bc`` checkpoint holds ``bc.policy``, the weights of a
  :class:`~robot_rl.agents.bc.BCNetwork` built from the checkpoint's own config (its
  ``agent`` encoder and widths, its ``bc.chunk``); it acts through
  :class:`~robot_rl.agents.base_policy.ChunkedPolicy` with the checkpoint's
  ``bc.ensemble_decay`` unless the caller gives one;
* a ``train`` or ``learner`` checkpoint's actor acts on its mean
  (:func:`robot_rl.training.saved_policy.build_policy`, with the checkpoint's own agent config).

Either way the checkpoint must be whole, hold no NaN, be made for the task's spaces and
pass the policy check (its state normalizer, and a run on sampled and recorded
observations); anything else is one line naming the file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, TypeVar

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.base_policy import (
    BasePolicy,
    BasePolicyError,
    CallablePolicy,
    check_base,
    is_entry_point,
    load_entry_point,
)
from robot_rl.agents.bc import BCNetwork, BCPolicy
from robot_rl.agents.policy_check import normalizer_problem
from robot_rl.config import build
from robot_rl.config.agent import AgentConfig
from robot_rl.config.bc import BCConfig
from robot_rl.errors import ConfigError, one_line
from robot_rl.training.checkpoint import CheckpointError
from robot_rl.training.lerobot_policy import is_lerobot_policy_dir, load_lerobot_policy
from robot_rl.training.saved_policy import build_policy, read_run, recorded_observations, saved_weights

#: The checkpoint ``kind`` ``robot-rl train-bc`` writes.
BC_KIND = "bc"
#: ``robot-rl train-bc``'s own sim evaluation, in its run directory beside ``checkpoint/``
EVAL_FILE = "eval.json"
#: The largest eval record read back (train-bc's holds one length per episode: a few kB).
MAX_EVAL_FILE_BYTES = 1 << 20

Obs = Mapping[str, np.ndarray]
T = TypeVar("T")


def load_base_policy(source: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                     ensemble_decay: float | None = None, recorded: Iterable[Obs] = (),
                     lerobot_python: str | None = None) -> BasePolicy:
    """The base policy ``source`` names, for these spaces, checked (see the module docstring).

    ``ensemble_decay``: temporal ensembling of chunked policies (None: a BC checkpoint's
    own, 0.01 for an entry point); ``recorded``: observations seen on the task, run by the check;
    ``lerobot_python``: the python that runs a LeRobot policy folder (``agent.base.lerobot_python``).
    """
    text = str(source)
    if is_lerobot_policy_dir(text):
        return load_lerobot_policy(text, obs_space, action_space, python=lerobot_python, recorded=recorded)
    if is_entry_point(text):
        return load_entry_point(text, obs_space, action_space,
                                ensemble_decay=0.01 if ensemble_decay is None else ensemble_decay, recorded=recorded)
    state, path = read_run(text)
    if state.get("kind") == BC_KIND:
        return bc_policy(state, path, obs_space, action_space, ensemble_decay=ensemble_decay, recorded=recorded)
    agent_cfg = _section(state, path, "agent", AgentConfig)
    saved = build_policy(state, path, agent_cfg, obs_space, action_space, recorded=recorded)
    return CallablePolicy(lambda obs: saved.act(obs), str(path), obs_space, action_space)


def bc_policy(state: dict[str, Any], path: Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
              ensemble_decay: float | None = None, recorded: Iterable[Obs] = ()) -> BasePolicy:
    """The BC network a ``bc`` checkpoint holds, as a checked base policy."""
    weights = saved_weights(state, path, obs_space, action_space, section="bc", what="BC policy")
    agent_cfg, bc_cfg = _section(state, path, "agent", AgentConfig), _section(state, path, "bc", BCConfig)
    network = BCNetwork(agent_cfg, obs_space, action_space, chunk=bc_cfg.chunk)
    try:
        network.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})
    except (RuntimeError, TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint {path}: its BC policy does not fit its config ({one_line(err)})") from None
    network.eval()
    problem = normalizer_problem(network, obs_space)
    if problem:
        raise CheckpointError(f"{path}: the policy cannot act: {problem}")
    base = network_policy(network, str(path), obs_space, action_space,
                          bc_cfg.ensemble_decay if ensemble_decay is None else ensemble_decay)
    run_dir = path.parent.parent
    try:
        check_base(base, obs_space, action_space,
                   [*recorded, *recorded_observations(run_dir, state["config"], obs_space, action_space)])
    except BasePolicyError as err:
        raise CheckpointError(str(err)) from None
    return base


def _section(state: dict[str, Any], path: Path, name: str, cls: type[T]) -> T:
    """One section of the checkpoint's config, typed and checked: the network is built as it was
    trained (its widths and encoder), whatever this session's config says, and whatever task it names."""
    try:
        return build(cls, state["config"].get(name) or {}, file=f"{path} (its config)", where=name)
    except ConfigError as err:
        raise CheckpointError(str(err)) from None


def network_policy(network: BCNetwork, source: str, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
                   ensemble_decay: float) -> BCPolicy:
    """A BC network as a base policy: its chunks, temporally ensembled."""
    return BCPolicy(network, source, obs_space, action_space, ensemble_decay)


def recorded_bc_success(source: str) -> tuple[float, Path] | None:
    """``robot-rl train-bc``'s own sim eval success for a BC run directory or its checkpoint, and
    the file it came from; None when there is none (a real cell's BC run, or a checkpoint moved on
    its own) or the file is not a readable eval record: advice is never worth failing a run for.
    Only a regular file of at most ``MAX_EVAL_FILE_BYTES`` is read (a FIFO would block the open)."""
    where = Path(source)
    for folder in (where, where.parent):
        path = folder / EVAL_FILE
        try:
            if not path.is_file() or path.stat().st_size > MAX_EVAL_FILE_BYTES:
                continue
            with path.open("rb") as f:
                rate = json.loads(f.read(MAX_EVAL_FILE_BYTES + 1).decode("utf-8"))["success_rate"]
        except (OSError, ValueError, TypeError, KeyError):
            continue
        if isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isfinite(rate) \
                and 0.0 <= rate <= 1.0:
            return float(rate), path
    return None
