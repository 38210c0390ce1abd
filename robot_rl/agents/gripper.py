"""The discrete gripper critic: a DQN over three gripper actions (close, stay, open).

When ``agent.gripper_critic`` is on, the gripper is the env action's last dimension,
SAC's actor outputs only the other dimensions, and the gripper command is
``argmax_a Q_grip(features, a)``. The gripper env reads ``> 0.5`` as close, ``< -0.5`` as
open and anything between as stay, so the three actions are sent as +1, 0 and -1.

Its reward is the task reward plus ``grasp_penalty`` (``<= 0``, from the env's
gripper-penalty wrapper), which discourages needless gripper toggling. The penalty goes
into this critic only; SAC's critics never see it. The target is double DQN: the online
network picks the next action, the polyak-averaged target network values it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from robot_rl.agents.networks import mlp

GRIPPER_COMMANDS = np.array([1.0, 0.0, -1.0], dtype=np.float32)  # close, stay, open
CLOSE, STAY, OPEN = 0, 1, 2


def gripper_index(command: np.ndarray | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Continuous gripper commands -> action indices, with the env's thresholds."""
    if isinstance(command, torch.Tensor):
        idx = torch.full_like(command, STAY, dtype=torch.long)
        idx[command > 0.5] = CLOSE
        idx[command < -0.5] = OPEN
        return idx
    command = np.asarray(command)
    return np.where(command > 0.5, CLOSE, np.where(command < -0.5, OPEN, STAY))


class GripperCritic(nn.Module):
    """``Q(features, .)`` for the three gripper actions: ``(B, F) -> (B, 3)``."""

    def __init__(self, feature_dim: int, hidden_dims: tuple[int, ...]) -> None:
        super().__init__()
        self.q = mlp(feature_dim, hidden_dims, len(GRIPPER_COMMANDS), layer_norm=True)
        with torch.no_grad():  # start near 0, like the SAC critics (see robot_rl.agents.ensemble)
            self.q[-1].weight.uniform_(-3e-3, 3e-3)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.q(features)


def gripper_td_loss(critic: GripperCritic, target: GripperCritic, features: torch.Tensor,
                    next_features: torch.Tensor, gripper_command: torch.Tensor, reward: torch.Tensor,
                    grasp_penalty: torch.Tensor, not_done: torch.Tensor,
                    discount: float | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Double-DQN TD loss; returns ``(loss, mean Q of the taken action)``."""
    with torch.no_grad():
        next_action = critic(next_features).argmax(dim=-1, keepdim=True)
        next_q = target(next_features).gather(-1, next_action).squeeze(-1)
        target_q = reward + grasp_penalty + discount * not_done * next_q
    taken = gripper_index(gripper_command).unsqueeze(-1)
    q = critic(features).gather(-1, taken).squeeze(-1)
    return F.mse_loss(q, target_q), q.mean()
