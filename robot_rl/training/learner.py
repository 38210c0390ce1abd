"""The learner half of training: ingest Steps, keep the update-to-data ratio, update the agent.

Used by single-process training (:mod:`robot_rl.training.trainer`) and by the learner
process of the learning plane. Contract:

* :meth:`Learner.ingest` takes one Step from actor ``source`` (an int), in the env's
  observation format (images ``uint8``). It goes into the online buffer, and into the
  demo buffer too when ``step.intervened`` (human corrections are demonstrations, as in
  HIL-SERL). The steps of one episode must arrive in order; steps of different
  episodes or actors may interleave (replay keys episodes by ``(source, episode_id)``).
* :meth:`Learner.add_demos` puts whole episodes into the demo buffer.
* Both update the running state statistics the policy normalises its input with
  (:class:`robot_rl.agents.encoders.RunningNormalizer`, part of the agent's state);
  pass ``update_stats=False`` when re-ingesting data those restored statistics already count.
* :attr:`Learner.env_steps` counts ingested online steps. :meth:`Learner.updates_due`
  is how many critic updates the UTD ratio asks for now:
  ``floor(utd_ratio * (env_steps - learning_starts)) - updates_done``. :meth:`Learner.train`
  runs them. Because this counts steps, not seconds, results do not depend on how fast
  the machine is.
* :meth:`Learner.weights` returns ``(version, {name: np.ndarray})``: only what an actor
  needs (:meth:`robot_rl.agents.policy.Policy.weights`). ``version`` is the number of
  critic updates done, so it only grows, and equal versions mean equal weights.
* :meth:`Learner.state_dict` / :meth:`Learner.load_state_dict` hold the agent (networks,
  optimizers, temperature, its RNG), both buffers, the counters and the sampling RNG.
* :meth:`Learner.window_metrics` returns each training metric averaged over the updates
  since its previous call (the logging window), read from device-side sums
  (:mod:`robot_rl.training.metric_window`): updates never wait for the GPU to log.
* ``train.prefetch`` prepares the next batches on background threads
  (:mod:`robot_rl.training.prefetch`); the batches, and so the whole run, are the same
  with it on or off. ``train.compile`` and ``train.precision`` choose how the update runs
  (:class:`robot_rl.agents.sac.SACAgent`). ``train.device: cuda`` without a GPU, or
  ``bf16`` where the GPU lacks it, is a ConfigError here, for every caller.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from typing import Any, Iterable, Mapping

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.execution import execution_device
from robot_rl.agents.sac import SACAgent
from robot_rl.config.agent import AgentConfig, TrainConfig
from robot_rl.data.replay import Alloc, Plan, ReplayBuffer, gather_mixed, plan_mixed
from robot_rl.data.transition import Step
from robot_rl.training.metric_window import MetricWindow
from robot_rl.training.prefetch import BatchPrefetcher

log = logging.getLogger(__name__)


def batch_to_torch(batch: Mapping[str, Any], device: torch.device) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in batch.items():
        if isinstance(value, Mapping):
            out[key] = {k: torch.as_tensor(v, device=device) for k, v in value.items()}
        else:
            out[key] = torch.as_tensor(value, device=device)
    return out


def _warn_if_replay_exceeds_memory(*buffers: ReplayBuffer) -> None:
    """Replay arrays are allocated lazily; a capacity that cannot fit shows up only when full."""
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return
    need = sum(b.capacity * b.bytes_per_slot() for b in buffers)
    if need > 0.8 * ram:
        log.warning("replay buffers need %.1f GB when full, more than this machine's %.1f GB of memory: "
                    "lower train.replay_capacity / train.demo_capacity", need / 1e9, ram / 1e9)


def prefetch_enabled(train_cfg: TrainConfig, device: torch.device) -> bool:
    """``train.prefetch``: ``auto`` is on with CUDA (copies overlap GPU work) and off on a CPU,
    where the update already uses every core and a copy thread would only compete with it."""
    if train_cfg.prefetch == "auto":
        return device.type == "cuda"
    return train_cfg.prefetch == "on"


class Learner:
    def __init__(self, agent_cfg: AgentConfig, train_cfg: TrainConfig, obs_space: gym.spaces.Dict,
                 action_space: gym.spaces.Box, seed: int = 0) -> None:
        self.train_cfg = train_cfg
        self.obs_space = obs_space
        self.action_space = action_space
        device = execution_device(train_cfg.device)
        self.agent = SACAgent(agent_cfg, obs_space, action_space, device=device, seed=seed,
                              precision=train_cfg.precision, compile=train_cfg.compile)
        self.encoder = self.agent.policy.encoder
        storage_space = self.encoder.storage_space(obs_space)
        n = int(action_space.shape[0])
        self.online = ReplayBuffer(storage_space, n, train_cfg.replay_capacity)
        self.demo = ReplayBuffer(storage_space, n, train_cfg.demo_capacity)
        _warn_if_replay_exceeds_memory(self.online, self.demo)
        self._rng = np.random.default_rng(seed + 2)
        self.env_steps = 0
        self.metric_window = MetricWindow()
        self._update_times: list[float] = []
        self.prefetcher: BatchPrefetcher[Plan] | None = None
        if prefetch_enabled(train_cfg, device):
            self.prefetcher = BatchPrefetcher(self._plan, self._gather, lambda: self._rng.bit_generator.state,
                                              self._set_rng_state, device, train_cfg.prefetch_depth)

    # --- data ------------------------------------------------------------------------

    def _to_storage(self, step: Step) -> Step:
        if not self.encoder.caches_features:
            return step
        frames = [step.obs, step.next_obs] if step.last else [step.obs]
        batch = {k: np.stack([f[k] for f in frames]) for k in step.obs}
        stored = self.encoder.storage_transform(batch)
        obs = {k: v[0] for k, v in stored.items()}
        next_obs = {k: v[1] for k, v in stored.items()} if step.last else obs
        return dataclasses.replace(step, obs=obs, next_obs=next_obs)

    def ingest(self, step: Step, source: int = 0, update_stats: bool = True) -> None:
        """``update_stats=False`` when re-ingesting replay after restoring an agent whose
        state statistics already count these steps."""
        self._discard_prefetched()
        if update_stats:
            self.encoder.update_normalizer({k: v[None] for k, v in step.obs.items()})
        stored = self._to_storage(step)
        self.online.add(stored, source)
        if step.intervened:
            self.demo.add(stored, source)
        elif self.demo.pending:  # the step right after an intervention completes its last transition
            self.demo.close_pending(stored, source)
        self.env_steps += 1

    def ingest_demo_part(self, step: Step, source: int = 0, update_stats: bool = False) -> None:
        """What :meth:`ingest` puts into the demo buffer, and nothing into the online one.

        For a resume that re-reads an intervention episode older than the online buffer's
        window: the online buffer would have overwritten it, the demo buffer still holds it.
        ``update_stats`` when the restored state statistics do not count the step yet (it
        arrived after the checkpoint), so they come out as if the run had never stopped."""
        self._discard_prefetched()
        if update_stats:
            self.encoder.update_normalizer({k: v[None] for k, v in step.obs.items()})
        if step.intervened:
            self.demo.add(self._to_storage(step), source)
        elif self.demo.pending:
            self.demo.close_pending(self._to_storage(step), source)

    def add_demos(self, episodes: Iterable[list[Step]], update_stats: bool = True) -> int:
        """Add whole demo episodes; returns the number of transitions added."""
        self._discard_prefetched()
        added = 0
        for episode in episodes:
            if update_stats:
                self.encoder.update_normalizer({k: np.stack([s.obs[k] for s in episode]) for k in episode[0].obs})
            for step in episode:
                self.demo.add(self._to_storage(step))
            added += len(episode)
        return added

    # --- updates ---------------------------------------------------------------------

    @property
    def updates_done(self) -> int:
        return self.agent.critic_updates

    def updates_due(self) -> int:
        if len(self.online) + len(self.demo) == 0:
            return 0
        steps = self.env_steps - self.train_cfg.learning_starts
        if steps <= 0:
            return 0
        return max(0, int(np.floor(self.train_cfg.utd_ratio * steps + 1e-9)) - self.updates_done)

    def sample(self) -> dict[str, Any]:
        """One training batch (numpy), ``demo_fraction`` of it from the demo buffer."""
        self._discard_prefetched()
        return self._gather(self._plan())

    def _plan(self) -> Plan:
        cfg = self.train_cfg
        return plan_mixed(self.online, self.demo, cfg.batch_size, cfg.demo_fraction, self._rng)

    def _gather(self, plan: Plan, alloc: Alloc | None = None) -> dict[str, Any]:
        """The batch ``plan`` names; with ``demo`` (1.0 on rows from the demo buffer) when the agent
        reads it (the warm start's BC term on the demos' actions)."""
        batch = gather_mixed(plan, self.agent.cfg.n_step, self.agent.cfg.discount, alloc)
        if self.agent.wants_demo_mask:
            batch["demo"] = np.concatenate([np.full(len(slots), float(buffer is self.demo), np.float32)
                                            for buffer, slots in plan])
        return batch

    def _set_rng_state(self, state: Mapping[str, Any]) -> None:
        self._rng.bit_generator.state = state

    @property
    def rng(self) -> np.random.Generator:
        """The sampling RNG, as a run without prefetching would have it now.

        Batches drawn ahead are dropped first (see :mod:`robot_rl.training.prefetch`), so
        whoever reads or sets its state (a checkpoint, a test peeking at the next batch)
        sees exactly the draws of the batches already used.
        """
        self._discard_prefetched()
        return self._rng

    def _discard_prefetched(self) -> None:
        if self.prefetcher is not None:
            self.prefetcher.discard()

    def update(self, ahead: int | None = None) -> dict[str, torch.Tensor]:
        """One critic update (and an actor update when its turn comes); its metrics as device tensors.

        With prefetching, up to ``ahead`` (default ``train.prefetch_depth``) further
        batches are prepared meanwhile; they are dropped if data arrives first.
        """
        start = time.perf_counter()
        if self.prefetcher is not None:
            batch = self.prefetcher.next(ahead)
        else:
            batch = batch_to_torch(self.sample(), self.agent.device)
        metrics = self.agent.update(batch)
        self.metric_window.add(metrics)
        self._update_times.append(time.perf_counter() - start)
        return metrics

    def train(self, max_updates: int | None = None) -> int:
        """Run the updates the UTD ratio asks for (at most ``max_updates``); returns how many ran.

        Batches are prefetched only for the updates of this call: the caller ingests
        new data next, which would make any further batch drawn ahead a wasted copy.
        """
        due = self.updates_due()
        if max_updates is not None:
            due = min(due, max_updates)
        for i in range(due):
            self.update(ahead=due - 1 - i)
        return due

    def window_metrics(self) -> dict[str, float]:
        """Each training metric's mean over the updates since the last call; starts a new window.

        The one place update metrics are read back from the device. An empty window
        (no update since the last call) gives ``{}``.
        """
        return self.metric_window.means()

    def close(self) -> None:
        """Stop the prefetch threads (they also stop when the learner is garbage-collected)."""
        if self.prefetcher is not None:
            self.prefetcher.close()

    def updates_per_second(self, reset: bool = True) -> float:
        """Update rate measured over the updates since the last call (update time only).

        On a GPU this is host time: updates are queued, not waited for, so a short
        window can read high; over a logging window the bounded CUDA queue makes it the
        GPU's own rate.
        """
        times, total = self._update_times, sum(self._update_times)
        rate = len(times) / total if total > 0 else 0.0
        if reset:
            self._update_times = []
        return rate

    # --- actors ----------------------------------------------------------------------

    def weights(self) -> tuple[int, dict[str, np.ndarray]]:
        return self.updates_done, self.agent.policy.weights()

    # --- checkpoints -----------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Agent and counters (torch-saveable) plus the two buffers (numpy dicts).

        Batches drawn ahead are dropped first, so the saved sampling RNG is where an
        uninterrupted run, prefetching or not, would draw its next batch."""
        self._discard_prefetched()
        return {"agent": self.agent.state_dict(), "env_steps": self.env_steps,
                "rng": self.rng.bit_generator.state,
                "online": self.online.state_dict(), "demo": self.demo.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._discard_prefetched()
        self.agent.load_state_dict(state["agent"])
        self.env_steps = int(state["env_steps"])
        self.rng.bit_generator.state = state["rng"]
        self.online.load_state_dict(state["online"])
        self.demo.load_state_dict(state["demo"])
