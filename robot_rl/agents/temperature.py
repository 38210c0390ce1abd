"""SAC's learned entropy temperature alpha, kept as log(alpha) so it stays positive."""

from __future__ import annotations

import math

import torch
from torch import nn


class Temperature(nn.Module):
    def __init__(self, init_value: float) -> None:
        super().__init__()
        self.log_alpha = nn.Parameter(torch.tensor(math.log(init_value), dtype=torch.float32))

    def forward(self) -> torch.Tensor:
        return self.log_alpha.exp()

    def loss(self, entropy: torch.Tensor, target_entropy: float) -> torch.Tensor:
        """Raises alpha when the policy's entropy is below target, lowers it above."""
        return self.forward() * (entropy.detach() - target_entropy).mean()
