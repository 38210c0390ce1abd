"""``robot-rl train-bc``: behaviour cloning from a demo folder, written in the one checkpoint format.

The run, top to bottom (:func:`train_bc`):

1. The demos are read and checked before anything is written: a demo folder
   (``--demos``, else ``train.demos``) must hold episodes for the task's spaces with at
   least one demo step (:func:`robot_rl.agents.bc.bc_data`: every step of a demo folder,
   the ``intervened`` steps of a replay log; with ``bc.episodes: successful``, the default,
   only of episodes that succeed). Without one, in sim, ``train.scripted_demos``
   scripted demos (with ``train.scripted_demo_noise``) are recorded into ``<run_dir>/demos``
   as ``robot-rl train`` does.
2. The run directory (``--run-dir``, else ``bc.run_dir``, else ``<train.run_dir>_bc``)
   is claimed: one that holds another run needs ``--force``, which removes only the run's
   own files (a demo folder given with ``--demos`` is only read). ``config.yaml`` goes first.
3. :class:`~robot_rl.agents.bc.BCNetwork` (the learner's encoder and widths) is fitted
   for ``bc.steps`` Adam steps of ``bc.batch_size`` rows, seeded by ``seed``; the state
   normalizer takes its statistics from the demos once, before the first step.
4. The checkpoint (``kind: bc``; the network's weights in ``bc.policy``) is saved, then
   the policy is evaluated in sim exactly as ``robot-rl train`` evaluates: ``train.eval_episodes``
   seeded episodes from ``train.eval_seed`` on the policy's mean, behind the actor's
   action guard (an episode whose action is refused ends as failed, and is counted).
   ``eval.json`` holds the result.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np
import torch

from robot_rl import jsonio
from robot_rl.agents import resolve_device
from robot_rl.agents.base_policy import BasePolicyError, check_base
from robot_rl.agents.bc import REPLAY_SOURCE, BCData, BCNetwork, bc_data, chunk_loss
from robot_rl.agents.execution import no_cuda
from robot_rl.agents.policy_check import ActionGuard, EndOnRefusal
from robot_rl.config import Config, to_dict
from robot_rl.data.demos import DemoFormatError, DemoWriter, load_demos, read_manifest
from robot_rl.data.durable import durable_write_text
from robot_rl.data.recording import make_source, record
from robot_rl.data.spaces import spaces_spec
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.training.base_loader import BC_KIND, EVAL_FILE, network_policy
from robot_rl.training.checkpoint import (
    CHECKPOINT_NAMES,
    CONFIG_FILE,
    checkpoint_config,
    claim_run_dir,
    save_checkpoint,
    write_run_config,
)
from robot_rl.training.evaluation import EvalResult, evaluate
from robot_rl.training.progress import Progress

log = logging.getLogger(__name__)

_RUN_FILES = (*CHECKPOINT_NAMES, "demos", CONFIG_FILE, EVAL_FILE)

EnvFn = Callable[[Config, str], gym.Env]


@dataclass
class BCResult:
    run_dir: Path
    demos: str  # where the demos came from
    demo_episodes: int
    demo_steps: int  # rows trained on
    failed_left_out: int  # demo episodes left out because they never succeed (bc.episodes: successful)
    steps: int
    loss: float  # mean loss over the last 100 steps
    wall_s: float
    eval: EvalResult | None = None
    faults: list[dict[str, Any]] = field(default_factory=list)  # eval episodes ended by a refused action


def bc_run_dir(cfg: Config) -> Path:
    return Path(cfg.bc.run_dir) if cfg.bc.run_dir else Path(f"{cfg.train.run_dir.rstrip('/')}_bc")


def _default_env(cfg: Config, role: str) -> gym.Env:
    from robot_rl.assemble import config_spaces_env, make_actor_env  # sim: imported only when an env is built

    if cfg.robot.backend != "sim":
        return config_spaces_env(cfg)  # a real cell: the spaces only, nothing to evaluate on
    return make_actor_env(cfg, role)  # type: ignore[arg-type]


def read_demo_folder(directory: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
                     chunk: int, episodes_kept: str) -> BCData:
    """The BC rows of a demo folder or replay log (``episodes_kept``: ``bc.episodes``); one
    DemoFormatError line when it gives none."""
    manifest = read_manifest(directory)  # a missing folder or manifest is one line
    episodes = load_demos(directory, obs_space, action_space)  # other spaces, damage, no episodes: one line
    whole = manifest.get("source") != REPLAY_SOURCE
    successful_only = episodes_kept == "successful"
    data = bc_data([(steps, whole) for steps in episodes], chunk, successful_only=successful_only)
    if not len(data):
        if successful_only and data.failed_left_out == len(episodes):  # no step of any episode has success set
            raise DemoFormatError(f"{directory}: none of its {len(episodes)} episodes succeeds (no step has "
                                  "success set), and bc.episodes is 'successful'; for demos recorded without "
                                  "success labels set bc.episodes=all")
        raise DemoFormatError(f"{directory}: no demo steps in its {len(episodes)} episodes (a replay log's demos "
                              "are the steps a person drove, and none is marked intervened"
                              + (" in an episode that succeeds)" if successful_only else ")"))
    return data


def _record_scripted(cfg: Config, run_dir: Path, env_fn: EnvFn, obs_space: gym.spaces.Dict,
                     action_space: gym.spaces.Box) -> BCData:
    env = env_fn(cfg, "demos")
    try:
        writer = DemoWriter(run_dir / "demos", env.observation_space, env.action_space, task=cfg.task.name,
                            source="scripted", env_config=to_dict(cfg.env), force=True)
        count = cfg.train.scripted_demos
        summary = record(env, make_source("scripted", env, cfg), writer, count, seed=cfg.seed + 1_000_000)
    finally:
        env.close()
    if summary.saved < count:
        raise RobotRLError(f"the scripted expert succeeded in only {summary.saved} of {summary.attempted} "
                           f"episodes; cannot record {count} demos")
    return read_demo_folder(run_dir / "demos", obs_space, action_space, cfg.bc.chunk, cfg.bc.episodes)


def fit(network: BCNetwork, data: BCData, cfg: Config, device: torch.device,
        progress: Progress | None = None) -> float:
    """``bc.steps`` steps on ``data``; the mean loss of the last 100."""
    bc = cfg.bc
    network.encoder.update_normalizer(data.obs)
    network.to(device).train()
    optimizer = torch.optim.AdamW(network.parameters(), lr=bc.learning_rate, weight_decay=bc.weight_decay)
    rng = np.random.default_rng(cfg.seed)
    generator = torch.Generator(device=device)
    generator.manual_seed(cfg.seed + 1)
    augment = bool(network.encoder.image_keys)
    recent: list[float] = []
    for step in range(1, bc.steps + 1):
        index = rng.integers(0, len(data), size=min(bc.batch_size, len(data)))
        obs, target, mask = data.batch(index, device)
        loss = chunk_loss(network(obs, augment=augment, generator=generator), target, mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        value = float(loss.detach())
        if not np.isfinite(value):
            raise RobotRLError(f"BC loss became {value} at step {step} (bc.learning_rate {bc.learning_rate} is "
                               "likely too high)")
        recent = (recent + [value])[-100:]
        if progress is not None and progress.due():
            progress.show(step, {"loss": f"{np.mean(recent):.4g}"})
    network.eval()
    if progress is not None:
        progress.close(bc.steps, {"loss": f"{np.mean(recent):.4g}"})
    return float(np.mean(recent))


def train_bc(cfg: Config, *, demos: str | None = None, force: bool = False, env_fn: EnvFn | None = None) -> BCResult:
    """Run behaviour cloning (see the module docstring) and return its figures."""
    start = time.perf_counter()
    env_fn = env_fn or _default_env
    run_dir = bc_run_dir(cfg)
    if cfg.train.torch_threads:
        torch.set_num_threads(cfg.train.torch_threads)
    if cfg.train.device == "cuda" and not torch.cuda.is_available():
        raise no_cuda("cuda")
    torch.manual_seed(cfg.seed)
    env = env_fn(cfg, "eval")
    try:
        obs_space, action_space = env.observation_space, env.action_space
        folder = demos or cfg.train.demos
        data = (read_demo_folder(folder, obs_space, action_space, cfg.bc.chunk, cfg.bc.episodes)  # before any write
                if folder else None)
        if data is None and (cfg.train.scripted_demos <= 0 or cfg.robot.backend != "sim"):
            raise ConfigError("train-bc has no demos: give --demos DIR (or train.demos); in sim, "
                              "train.scripted_demos > 0 records scripted ones")
        claim_run_dir(run_dir, _RUN_FILES, force, resumable=False)
        write_run_config(run_dir, cfg)
        if data is None:
            data = _record_scripted(cfg, run_dir, env_fn, obs_space, action_space)
            source = f"{cfg.train.scripted_demos} scripted episodes in {run_dir / 'demos'}"
        else:
            source = str(folder)
        log.info("BC on %d demo steps of %d episodes from %s (%d that never succeed left out)", len(data),
                 data.episodes, source, data.failed_left_out)
        device = resolve_device(cfg.train.device)
        network = BCNetwork(cfg.agent, obs_space, action_space, chunk=cfg.bc.chunk)
        progress = Progress("train-bc", total=cfg.bc.steps, enabled=cfg.train.progress, every_s=5.0)
        try:
            loss = fit(network, data, cfg, device, progress)
        finally:
            progress.close()
        network.cpu()
        save_checkpoint(run_dir, {
            "kind": BC_KIND, "config": checkpoint_config(cfg), "spaces": spaces_spec(obs_space, action_space),
            "bc": {"policy": network.weights(), "steps": cfg.bc.steps, "loss": loss, "demo_steps": len(data),
                   "demo_episodes": data.episodes, "failed_left_out": data.failed_left_out, "demos": source}})
        result = BCResult(run_dir, source, data.episodes, len(data), data.failed_left_out, cfg.bc.steps, loss, 0.0)
        if cfg.robot.backend == "sim" and cfg.train.eval_episodes > 0:
            result.eval, result.faults = _evaluate(network, cfg, env, data)
            durable_write_text(run_dir / EVAL_FILE, jsonio.dumps(
                {**result.eval.as_dict(), "episodes": result.eval.episodes, "successes": result.eval.successes,
                 "lengths": result.eval.lengths, "seed": cfg.train.eval_seed, "policy_faults": result.faults}))
    finally:
        env.close()
    result.wall_s = time.perf_counter() - start
    return result


def _evaluate(network: BCNetwork, cfg: Config, env: gym.Env, data: BCData) -> tuple[EvalResult, list[dict[str, Any]]]:
    """The trainer's evaluation of the BC policy, behind the actor's guard (refusals end an episode)."""
    obs_space, action_space = env.observation_space, env.action_space
    base = network_policy(network, str(bc_run_dir(cfg)), obs_space, action_space, cfg.bc.ensemble_decay)
    recorded = [{k: v[i] for k, v in data.obs.items()} for i in np.linspace(0, len(data) - 1, 8).astype(int)]
    try:
        check_base(base, obs_space, action_space, recorded)
    except BasePolicyError as err:  # the checkpoint is saved; the report says why it cannot act
        raise RobotRLError(f"{err} (checkpoint saved in {bc_run_dir(cfg) / 'checkpoint'})") from None
    guard = ActionGuard(env, base)
    ended = EndOnRefusal(env, guard)
    result = evaluate(ended, guard, cfg.train.eval_episodes, cfg.train.eval_seed)
    return result, ended.faults
