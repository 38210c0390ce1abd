"""DrQ random-shift augmentation: pad by replication, then crop back at a random offset.

Each image in the batch gets its own integer shift in ``[-pad, pad]`` pixels on both
axes. Applied in the learner only (to obs and next_obs independently), never when acting.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F


def random_shift(images: torch.Tensor, pad: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Shift a ``(B, C, H, W)`` float batch; ``pad == 0`` returns the input unchanged."""
    if pad <= 0:
        return images
    b, c, h, w = images.shape
    padded = F.pad(images, (pad, pad, pad, pad), mode="replicate")
    shifts = torch.randint(0, 2 * pad + 1, (2, b), generator=generator).to(images.device)
    rows = (shifts[0][:, None] + torch.arange(h, device=images.device)[None])  # (B, H)
    cols = (shifts[1][:, None] + torch.arange(w, device=images.device)[None])  # (B, W)
    batch_idx = torch.arange(b, device=images.device)[:, None, None, None]
    chan_idx = torch.arange(c, device=images.device)[None, :, None, None]
    return padded[batch_idx, chan_idx, rows[:, None, :, None], cols[:, None, None, :]]
