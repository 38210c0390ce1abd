"""Behaviour cloning: a network that maps an observation to the next ``chunk`` actions.

:class:`BCNetwork` is the learner's observation encoder (:class:`~robot_rl.agents.encoders.ObsEncoder`,
same cameras, same state normalizer, same DrQ shift when training from pixels) under an
MLP of ``agent.hidden_dims`` and a linear head of ``chunk * action_dim`` outputs, squashed
by ``tanh`` into the agent's ``[-1, 1]`` action box. It is trained by mean squared error
on the squashed actions (a deterministic head: demos of one skill are close to
unimodal, and the error stays bounded where a demo sits at the box edge, as gripper
commands do).

What it learns from (:func:`bc_data`): every step of a demo folder, except in a replay
log (``source: learner replay``, the practice of a run), where only the steps a person
drove (``intervened``) are demos. With chunks, the target of step ``t`` is the executed
actions ``t .. t+chunk-1``; a future action past the episode's end, or one the person
did not drive, is masked out of the loss (as ACT pads and masks), never invented.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from robot_rl.agents.base_policy import ChunkedPolicy
from robot_rl.agents.encoders import ObsEncoder
from robot_rl.agents.networks import mlp
from robot_rl.agents.policy import check_action_space, obs_to_torch
from robot_rl.agents.policy_check import Forward, action_problem, eval_batch
from robot_rl.config.agent import AgentConfig
from robot_rl.data.transition import Step

#: A demo folder's manifest ``source`` for a run's replay log: there only intervened steps are demos.
REPLAY_SOURCE = "learner replay"


class BCNetwork(nn.Module):
    """Observation -> ``(chunk, action_dim)`` actions in ``[-1, 1]``; see the module docstring."""

    def __init__(self, cfg: AgentConfig, obs_space: gym.spaces.Dict, action_space: gym.Space, chunk: int = 1) -> None:
        super().__init__()
        if chunk < 1:
            raise ValueError(f"chunk must be at least 1, got {chunk}")
        self.action_dim = check_action_space(action_space)
        self.chunk = int(chunk)
        self.encoder = ObsEncoder(obs_space, cfg.encoder, normalize_state=cfg.normalize_state)
        self.trunk = mlp(self.encoder.feature_dim, cfg.hidden_dims)
        self.head = nn.Linear(cfg.hidden_dims[-1], self.chunk * self.action_dim)
        nn.init.xavier_uniform_(self.head.weight, gain=0.1)  # start near zero motion
        nn.init.zeros_(self.head.bias)

    def pre_squash(self, obs: Mapping[str, torch.Tensor], augment: bool = False,
                   generator: torch.Generator | None = None) -> torch.Tensor:
        """``(B, chunk, action_dim)`` before the ``tanh``."""
        hidden = self.trunk(self.encoder(obs, augment=augment, generator=generator))
        return self.head(hidden).view(-1, self.chunk, self.action_dim)

    def forward(self, obs: Mapping[str, torch.Tensor], augment: bool = False,
                generator: torch.Generator | None = None) -> torch.Tensor:
        return torch.tanh(self.pre_squash(obs, augment, generator))

    @torch.no_grad()
    def predict(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        """One env observation -> its float32 chunk ``(chunk, action_dim)``."""
        device = next(self.parameters()).device
        batch = {k: v.unsqueeze(0) for k, v in obs_to_torch(obs, device).items()}
        was_training = self.training
        self.eval()
        try:
            return self(batch)[0].cpu().numpy().astype(np.float32)
        finally:
            self.train(was_training)

    def weights(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().copy() for k, v in self.state_dict().items()}


class BCPolicy(ChunkedPolicy):
    """A :class:`BCNetwork` as a base policy: its chunks, temporally ensembled.

    Its load check also sees inside the network (:class:`~robot_rl.agents.policy_check.Forward`):
    features and hidden values must be finite and the chunk before its ``tanh`` within
    the check's bound, so weights scaled by 1e30, whose squashed actions look clean at the
    box edge, are refused too.
    """

    def __init__(self, network: BCNetwork, source: str, observation_space: gym.spaces.Dict,
                 action_space: gym.spaces.Box, decay: float) -> None:
        super().__init__(network.predict, source, observation_space, action_space, decay)
        self.network = network

    @torch.no_grad()
    def check_output(self, obs: Mapping[str, np.ndarray]) -> Forward:
        self.reset()
        net = self.network
        with eval_batch(net, obs) as batch:
            features = net.encoder(batch)
            hidden = net.trunk(features)
            pre = net.head(hidden).view(net.chunk, net.action_dim)
        chunk = torch.tanh(pre).cpu().numpy()
        row = next((i for i, action in enumerate(chunk) if action_problem(action, self.action_space)), 0)
        return Forward(chunk[row], pre.cpu().numpy(), {"features": features.cpu().numpy(),
                                                         "trunk": hidden.cpu().numpy()})


def chunk_loss(predicted: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over the unmasked ``(B, chunk)`` entries of ``(B, chunk, n)`` actions."""
    weight = mask.to(predicted.dtype).unsqueeze(-1)
    return ((predicted - target) ** 2 * weight).sum() / (weight.sum() * predicted.shape[-1]).clamp_min(1.0)


@dataclass
class BCData:
    """What BC trains on: one row per demo step."""

    obs: dict[str, np.ndarray]  # key -> (M, ...)
    actions: np.ndarray  # (M, chunk, n) float32: the executed actions t .. t+chunk-1
    mask: np.ndarray  # (M, chunk) bool: which of them are demo actions of the same episode
    episodes: int  # episodes that gave at least one row
    failed_left_out: int = 0  # episodes that never succeed, left out (bc.episodes: successful)

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    def batch(self, index: np.ndarray, device: torch.device | str) -> tuple[dict[str, torch.Tensor], torch.Tensor,
                                                                           torch.Tensor]:
        obs = obs_to_torch({k: v[index] for k, v in self.obs.items()}, device)
        actions = torch.as_tensor(self.actions[index], device=device)
        return obs, actions, torch.as_tensor(self.mask[index], device=device)


def demo_flags(steps: Sequence[Step], whole: bool) -> np.ndarray:
    """Which steps of an episode are demos: all of them (``whole``), else those a person drove."""
    return np.ones(len(steps), bool) if whole else np.array([bool(s.intervened) for s in steps], bool)


def bc_data(episodes: Sequence[tuple[Sequence[Step], bool]], chunk: int, successful_only: bool = False) -> BCData:
    """Rows for :class:`BCData` from ``(steps, whole)`` episodes (see :func:`demo_flags`).

    ``successful_only`` (``bc.episodes: successful``) leaves out every episode that never
    succeeds: a regression to the mean action learns a failed demo's mistakes as readily as a
    good demo's skill, and on a tight insertion a few misaimed demos pull the mean off the hole."""
    obs_rows: dict[str, list[np.ndarray]] = {}
    actions, masks = [], []
    used = failed = 0
    for steps, whole in episodes:
        if successful_only and not any(s.success for s in steps):
            failed += 1
            continue
        flags = demo_flags(steps, whole)
        if not flags.any():
            continue
        used += 1
        executed = np.stack([np.asarray(s.action, np.float32) for s in steps])
        n, t_max = executed.shape[1], len(steps)
        for t in np.flatnonzero(flags):
            target = np.zeros((chunk, n), np.float32)
            mask = np.zeros(chunk, bool)
            for k in range(chunk):
                if t + k >= t_max or not flags[t + k]:
                    break  # the demo stops here: later actions are not the demonstrator's plan
                target[k], mask[k] = executed[t + k], True
            actions.append(target)
            masks.append(mask)
            for key, value in steps[t].obs.items():
                obs_rows.setdefault(key, []).append(np.asarray(value))
    if not actions:
        return BCData({}, np.zeros((0, chunk, 0), np.float32), np.zeros((0, chunk), bool), 0, failed)
    return BCData({k: np.stack(v) for k, v in obs_rows.items()}, np.stack(actions), np.stack(masks), used, failed)
