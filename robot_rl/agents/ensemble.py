"""The RLPD critic: an ensemble of N LayerNorm Q-networks, and the random subset for the target.

With N = 2 and a subset of 2 this is SAC's clipped double Q. With N = 10 and a subset
of 2 it is RLPD's: every backup takes the min over a fresh random pair of target
critics, which keeps the target pessimistic enough without the bias of a min over all ten.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from robot_rl.agents.networks import EnsembleMLP


class CriticEnsemble(nn.Module):
    """``Q_i(features, action)`` for ``i < num_critics``; ``forward`` returns ``(num_critics, batch)``."""

    def __init__(self, feature_dim: int, action_dim: int, hidden_dims: Sequence[int],
                 num_critics: int = 2, layer_norm: bool = True) -> None:
        super().__init__()
        self.num_critics = num_critics
        self.q = EnsembleMLP(num_critics, feature_dim + action_dim, hidden_dims, 1, layer_norm=layer_norm)
        # Start every Q near 0, the value of a sparse 0/1 reward before any success: a
        # random +-0.5 start would take thousands of slow target updates to wash out.
        last = self.q.net[-1]
        with torch.no_grad():
            last.weight.uniform_(-3e-3, 3e-3)

    def forward(self, features: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.q(torch.cat([features, action], dim=-1)).squeeze(-1)


def subsample_min(q_values: torch.Tensor, num_min_qs: int, generator: torch.Generator | None = None,
                  keys: torch.Tensor | None = None) -> torch.Tensor:
    """Min over a random subset of ``num_min_qs`` ensemble members: ``(N, batch) -> (batch,)``.

    The subset is the members with the ``num_min_qs`` smallest of ``N`` Gaussian
    ``keys`` (the start of a uniformly random permutation), drawn from ``generator``
    unless given: a caller that compiles this draws them outside the compiled code.
    """
    members = q_values.shape[0]
    if num_min_qs < members:
        if keys is None:
            device = generator.device if generator is not None else q_values.device  # drawn where the generator is
            keys = torch.randn(members, generator=generator, device=device)
        q_values = q_values.index_select(0, keys.argsort()[:num_min_qs].to(q_values.device))
    return q_values.min(dim=0).values
