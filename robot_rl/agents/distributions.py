"""The actor's action distribution: a diagonal Gaussian squashed by tanh into [-1, 1]."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class TanhNormal:
    """``tanh(mean + std * eps)``; ``log_prob`` includes the tanh change of variables."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor) -> None:
        self.mean = mean
        self.log_std = log_std

    def mode(self) -> torch.Tensor:
        """The deterministic (eval) action."""
        return torch.tanh(self.mean)

    def rsample_with_log_prob(self, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """A reparameterised sample and its log-density, summed over action dims."""
        eps = torch.randn(self.mean.shape, generator=generator, device=self.mean.device, dtype=self.mean.dtype)
        pre_tanh = self.mean + self.log_std.exp() * eps
        action = torch.tanh(pre_tanh)
        gaussian_log_prob = (-0.5 * eps.pow(2) - self.log_std - _LOG_SQRT_2PI).sum(-1)
        # log(1 - tanh(x)^2) = 2 * (log 2 - x - softplus(-2x)), stable for large |x|
        log_det = (2.0 * (math.log(2.0) - pre_tanh - F.softplus(-2.0 * pre_tanh))).sum(-1)
        return action, gaussian_log_prob - log_det


class TanhNormalHead(nn.Module):
    """Features -> TanhNormal, with the log-std squashed into ``[log_std_min, log_std_max]``."""

    def __init__(self, in_dim: int, action_dim: int, log_std_min: float, log_std_max: float) -> None:
        super().__init__()
        self.mean = nn.Linear(in_dim, action_dim)
        self.log_std = nn.Linear(in_dim, action_dim)
        for layer in (self.mean, self.log_std):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max

    def forward(self, h: torch.Tensor) -> TanhNormal:
        log_std = torch.tanh(self.log_std(h))
        log_std = self.log_std_min + 0.5 * (self.log_std_max - self.log_std_min) * (log_std + 1.0)
        return TanhNormal(self.mean(h), log_std)
