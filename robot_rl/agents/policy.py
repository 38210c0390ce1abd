"""The actor side of the agent: everything needed to pick an action, and nothing else.

A :class:`Policy` holds the observation encoder, the SAC actor and (when enabled) the
gripper critic's online network. The learner trains it inside :class:`SACAgent`; an
actor process builds its own copy from the same config and spaces and swaps in weights.

Weights contract (the learner -> actor message of the learning plane):
* :meth:`Policy.weights` returns ``{name: np.ndarray}``, every parameter and buffer the
  actor needs, named as in ``Policy.state_dict()``. A frozen backbone loaded from a local
  file (``agent.encoder.pretrained_path``) is left out: it never changes, and the actor
  loads it from the same file.
* :meth:`Policy.load_weights` accepts exactly that key set, with the same shapes and
  dtypes, and raises ``ValueError`` naming the first differing key otherwise.
"""

from __future__ import annotations

from typing import Mapping

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from robot_rl.agents.distributions import TanhNormal, TanhNormalHead
from robot_rl.agents.encoders import ObsEncoder
from robot_rl.agents.gripper import GRIPPER_COMMANDS, GripperCritic
from robot_rl.agents.networks import mlp
from robot_rl.config.agent import AgentConfig
from robot_rl.errors import ConfigError


def check_action_space(space: gym.Space) -> int:
    """The agent acts in ``Box[-1, 1]^n``; returns ``n``."""
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
        raise ConfigError(f"the agent needs a flat Box action space, got {space}")
    if not (np.allclose(space.low, -1.0) and np.allclose(space.high, 1.0)):
        raise ConfigError(f"the agent needs actions normalised to [-1, 1], got low={space.low} high={space.high}")
    return int(space.shape[0])


def obs_to_torch(obs: Mapping[str, np.ndarray], device: torch.device | str) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.asarray(v), device=device) for k, v in obs.items()}


class Policy(nn.Module):
    def __init__(self, cfg: AgentConfig, obs_space: gym.spaces.Dict, action_space: gym.Space) -> None:
        super().__init__()
        if not isinstance(obs_space, gym.spaces.Dict):
            raise ConfigError(f"the agent needs a Dict observation space, got {type(obs_space).__name__}")
        self.cfg = cfg
        self.action_dim = check_action_space(action_space)
        self.use_gripper_critic = cfg.gripper_critic
        if self.use_gripper_critic and self.action_dim < 2:
            raise ConfigError("agent.gripper_critic needs the gripper plus at least one other action dim")
        self.continuous_dim = self.action_dim - (1 if self.use_gripper_critic else 0)
        self.encoder = ObsEncoder(obs_space, cfg.encoder, normalize_state=cfg.normalize_state)
        feature_dim = self.encoder.feature_dim
        self.actor_trunk = mlp(feature_dim, cfg.hidden_dims, activate_last=False)
        self.actor_head = TanhNormalHead(cfg.hidden_dims[-1], self.continuous_dim, cfg.log_std_min, cfg.log_std_max)
        self.gripper = GripperCritic(feature_dim, cfg.hidden_dims) if self.use_gripper_critic else None

    def distribution(self, features: torch.Tensor) -> TanhNormal:
        return self.actor_head(self.actor_trunk(features))

    @torch.no_grad()
    def act_batch(self, obs: Mapping[str, torch.Tensor], deterministic: bool,
                  generator: torch.Generator | None = None) -> torch.Tensor:
        """Actions ``(B, action_dim)`` for a batch of observations."""
        features = self.encoder(obs)
        dist = self.distribution(features)
        action = dist.mode() if deterministic else dist.rsample_with_log_prob(generator)[0]
        if self.gripper is not None:
            idx = self.gripper(features).argmax(dim=-1)
            eps = self.cfg.gripper_epsilon
            if not deterministic and eps > 0:
                explore = torch.rand(idx.shape, generator=generator, device=idx.device) < eps
                rand_idx = torch.randint(0, len(GRIPPER_COMMANDS), idx.shape, generator=generator, device=idx.device)
                idx = torch.where(explore, rand_idx, idx)
            commands = torch.as_tensor(GRIPPER_COMMANDS, device=idx.device)[idx]
            action = torch.cat([action, commands.unsqueeze(-1)], dim=-1)
        return action

    def act(self, obs: Mapping[str, np.ndarray], deterministic: bool = False,
            generator: torch.Generator | None = None) -> np.ndarray:
        """One env observation -> one float32 action in the env's action space."""
        device = next(self.parameters()).device
        batch = {k: v.unsqueeze(0) for k, v in obs_to_torch(obs, device).items()}
        was_training = self.training
        self.eval()
        try:
            action = self.act_batch(batch, deterministic, generator)[0]
        finally:
            self.train(was_training)
        return action.cpu().numpy().astype(np.float32)

    # --- weights for actors ----------------------------------------------------------

    def _shipped_keys(self) -> list[str]:
        skip_backbone = self.encoder.frozen and bool(self.cfg.encoder.pretrained_path)
        return [k for k in self.state_dict() if not (skip_backbone and k.startswith("encoder.backbones."))]

    def weights(self) -> dict[str, np.ndarray]:
        state = self.state_dict()
        return {k: state[k].detach().cpu().numpy().copy() for k in self._shipped_keys()}

    def load_weights(self, weights: Mapping[str, np.ndarray]) -> None:
        expected = self._shipped_keys()
        state = self.state_dict()
        for key in expected:
            if key not in weights:
                raise ValueError(f"policy weights lack '{key}'")
            got = np.asarray(weights[key])
            if tuple(got.shape) != tuple(state[key].shape):
                raise ValueError(f"policy weight '{key}' has shape {tuple(got.shape)}, "
                                 f"expected {tuple(state[key].shape)}")
        extra = sorted(set(weights) - set(expected))
        if extra:
            raise ValueError(f"policy weights hold an unknown key '{extra[0]}'")
        new = {k: torch.as_tensor(np.asarray(weights[k])) for k in expected}
        self.load_state_dict(new, strict=False)
