"""The learning agent: SAC with the RLPD choices, image encoders and a discrete gripper critic.

* :mod:`networks`, :mod:`ensemble`: MLPs and the LayerNorm critic ensemble with its
  random-subset target;
* :mod:`distributions`, :mod:`temperature`: the tanh-Gaussian actor head and alpha;
* :mod:`encoders`, :mod:`augment`: per-camera encoders (small conv or frozen ResNet-10)
  and DrQ random shifts;
* :mod:`gripper`: the 3-action gripper critic;
* :mod:`policy`: the actor-side modules an actor process needs, and their weights;
* :mod:`sac`: the update.
"""

from __future__ import annotations

import gymnasium as gym
import torch

from robot_rl.agents.policy import Policy
from robot_rl.agents.sac import SACAgent
from robot_rl.config.agent import AgentConfig


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when available; ``cuda`` without a GPU is an error from torch."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def make_agent(cfg: AgentConfig, obs_space: gym.spaces.Dict, action_space: gym.Space,
               device: str = "cpu", seed: int = 0) -> SACAgent:
    return SACAgent(cfg, obs_space, action_space, device=resolve_device(device), seed=seed)


__all__ = ["Policy", "SACAgent", "make_agent", "resolve_device"]
