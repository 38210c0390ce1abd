"""DrQ random-shift augmentation: pad by replication, then crop back at a random offset.

Each image in the batch gets its own integer shift in ``[-pad, pad]`` pixels on both
axes. Applied in the learner only (to obs and next_obs independently), never when acting.

Drawing and shifting are separate steps. :func:`draw_shifts` takes the random offsets
from ``generator`` on the images' device; :func:`apply_shifts` gathers the whole batch
(no per-image loop, no padded copy): cropping a replicate-padded image at offset ``s``
reads pixel ``clamp(i + s - pad, 0, H - 1)``. It takes whole rows first, then the columns
within them: two gathers of contiguous runs, 1.7-3x faster on a CPU than one gather of
single pixels, with the same bytes. Being gathers, they work on
any dtype and either layout, so the learner shifts the ``uint8`` channels-last images
as they come from replay, on the GPU, before the encoder converts them to float; and
it can draw the offsets outside a ``torch.compile``-d region (which cannot trace
``randint`` with an explicit generator) and shift inside it.
"""

from __future__ import annotations

import torch


def draw_shifts(batch: int, pad: int, generator: torch.Generator | None, device: torch.device) -> torch.Tensor:
    """``(2, batch)`` offsets in ``[0, 2 * pad]``: rows, then columns."""
    return torch.randint(0, 2 * pad + 1, (2, batch), generator=generator, device=device)


def apply_shifts(images: torch.Tensor, shifts: torch.Tensor, pad: int, channels_last: bool = False) -> torch.Tensor:
    """Crop each replicate-padded image at its offset: ``(B, C, H, W)``, or ``(B, H, W, C)`` with ``channels_last``."""
    b = images.shape[0]
    h, w = images.shape[1:3] if channels_last else images.shape[2:4]
    device = images.device
    rows = (shifts[0][:, None] + torch.arange(h, device=device)[None] - pad).clamp_(0, h - 1)  # (B, H)
    cols = (shifts[1][:, None] + torch.arange(w, device=device)[None] - pad).clamp_(0, w - 1)  # (B, W)
    if channels_last:
        c = images.shape[3]
        by_row = images[torch.arange(b, device=device)[:, None], rows]  # (B, H, W, C): whole rows
        return torch.gather(by_row, 2, cols[:, None, :, None].expand(b, h, w, c))
    c = images.shape[1]
    by_row = torch.gather(images, 2, rows[:, None, :, None].expand(b, c, h, images.shape[3]))
    return torch.gather(by_row, 3, cols[:, None, None, :].expand(b, c, h, w))


def random_shift(images: torch.Tensor, pad: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Shift a ``(B, C, H, W)`` batch; ``pad == 0`` returns the input unchanged."""
    if pad <= 0:
        return images
    return apply_shifts(images, draw_shifts(images.shape[0], pad, generator, images.device), pad)
