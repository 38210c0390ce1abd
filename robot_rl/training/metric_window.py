"""Training metrics averaged over a logging window, accumulated where they are computed.

Reading a loss off a GPU (``.item()``) waits for every kernel queued before it, so an
update that logs its losses that way can never run ahead of the GPU. The learner instead
adds each update's metrics (0-d tensors on the device) into running sums there, and
reads them out once per logging window: one host transfer for the whole window. What is
logged is then the mean over every update since the last read, not the last update's
value (a single update's loss is too noisy to plot).
"""

from __future__ import annotations

from typing import Mapping

import torch


class MetricWindow:
    """Sums and counts of per-update metrics; :meth:`means` reads and resets them."""

    def __init__(self) -> None:
        # one float64 sum vector per distinct set of metric names (critic-only and critic+actor updates)
        self._sums: dict[tuple[str, ...], torch.Tensor] = {}
        self._counts: dict[tuple[str, ...], int] = {}

    def add(self, metrics: Mapping[str, torch.Tensor]) -> None:
        """Add one update's metrics: one stack and one in-place add on their device, no host sync."""
        if not metrics:
            return
        keys = tuple(metrics)
        values = torch.stack([v.detach().reshape(()).to(torch.float64) for v in metrics.values()])
        total = self._sums.get(keys)
        if total is None:
            self._sums[keys] = values
        else:
            total.add_(values)
        self._counts[keys] = self._counts.get(keys, 0) + 1

    @property
    def updates(self) -> int:
        """Updates added since the window opened."""
        return sum(self._counts.values())

    def means(self) -> dict[str, float]:
        """Each metric's mean over the updates in the window that reported it ({} for an empty
        window); the window starts afresh."""
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for keys, total in self._sums.items():
            for key, value in zip(keys, total.tolist()):  # the window's only device -> host copy per key set
                sums[key] = sums.get(key, 0.0) + value
                counts[key] = counts.get(key, 0) + self._counts[keys]
        self._sums, self._counts = {}, {}
        return {key: sums[key] / counts[key] for key in sums}
