"""Plain building blocks: an MLP, and an ensemble of MLPs evaluated as one batched matmul.

The ensemble keeps member weights stacked, ``(members, in, out)``, so ten critics cost
one ``baddbmm`` per layer instead of ten small matmuls: on a CPU this is what makes a
10-critic RLPD ensemble affordable, and on a GPU it is one kernel per layer whatever the
ensemble size. Its output layer always runs in float32, even under bf16 autocast: the
Q-values feed TD errors, where bfloat16's 8-bit mantissa (steps of 1/16 at Q = 10) would
be noise of the size of the signal.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F


def mlp(in_dim: int, hidden_dims: Sequence[int], out_dim: int | None = None,
        layer_norm: bool = False, activate_last: bool = False) -> nn.Sequential:
    """``Linear -> [LayerNorm] -> ReLU`` per hidden layer, then an optional output layer."""
    layers: list[nn.Module] = []
    dim = in_dim
    for width in hidden_dims:
        layers.append(_xavier(nn.Linear(dim, width)))
        if layer_norm:
            layers.append(nn.LayerNorm(width))
        layers.append(nn.ReLU())
        dim = width
    if out_dim is not None:
        layers.append(_xavier(nn.Linear(dim, out_dim)))
        if activate_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _xavier(layer: nn.Linear) -> nn.Linear:
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


class EnsembleLinear(nn.Module):
    """``members`` independent linear layers applied to a ``(members, batch, in)`` input."""

    def __init__(self, members: int, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(members, in_dim, out_dim))
        self.bias = nn.Parameter(torch.zeros(members, 1, out_dim))
        bound = math.sqrt(6.0 / (in_dim + out_dim))  # xavier uniform, per member
        nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class EnsembleLayerNorm(nn.Module):
    """LayerNorm over the last dim with a separate affine per ensemble member."""

    def __init__(self, members: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(members, 1, dim))
        self.bias = nn.Parameter(torch.zeros(members, 1, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-1:]) * self.weight + self.bias


class EnsembleMLP(nn.Module):
    """``members`` MLPs with the same shape; input ``(batch, in)`` or ``(members, batch, in)``.

    Returns ``(members, batch, out)``.
    """

    def __init__(self, members: int, in_dim: int, hidden_dims: Sequence[int], out_dim: int,
                 layer_norm: bool = True) -> None:
        super().__init__()
        self.members = members
        layers: list[nn.Module] = []
        dim = in_dim
        for width in hidden_dims:
            layers.append(EnsembleLinear(members, dim, width))
            if layer_norm:
                layers.append(EnsembleLayerNorm(members, width))
            layers.append(nn.ReLU())
            dim = width
        layers.append(EnsembleLinear(members, dim, out_dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            x = x.unsqueeze(0).expand(self.members, -1, -1)
        *hidden, last = self.net
        for layer in hidden:
            x = layer(x)
        with torch.autocast(x.device.type, enabled=False):  # a no-op outside autocast
            return last(x.float())
