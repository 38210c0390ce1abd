"""The success curve as a PNG: success rate against env steps, one line per setting.

``robot-rl train`` draws its evaluations into ``<run_dir>/success.png``; every learning
bench draws its runs with the same :func:`plot_success`. A setting run with several
seeds is drawn as its median with the band from the lowest to the highest seed; a
single run as its line. Each run's curve is a step function (its last evaluation holds
until its next one), and a run that stopped early (``train.stop_at_success``) holds
its last value to the end of the longest run, which is what stopping there means.

matplotlib (a dependency) is imported only here and only when a curve is drawn, with
the Agg backend, so no display is ever needed.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from robot_rl.data.durable import durable_write
from robot_rl.errors import RobotRLError

#: One run: (env steps, success rate) points.
Run = Sequence[tuple[float, float]]


def read_evals(path: str | Path) -> list[tuple[int, float]]:
    """The (env steps, success rate) points of an ``evals.jsonl``; lines without both are skipped
    (a torn last line after a crash, a record with a null rate)."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return [(int(step), rate) for step, rate in runs_of(records) if math.isfinite(step) and math.isfinite(rate)]


def band(runs: Sequence[Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The x grid (every env-step count any run evaluated at) and the median, min and max over
    runs there. Before its first point a run does not count; after its last it holds it."""
    clean = [sorted((float(x), float(y)) for x, y in run if math.isfinite(x) and math.isfinite(y)) for run in runs]
    clean = [run for run in clean if run]
    if not clean:
        return (np.zeros(0),) * 4  # type: ignore[return-value]
    grid = np.unique(np.concatenate([[x for x, _ in run] for run in clean]))
    values = np.full((len(clean), len(grid)), np.nan)
    for i, run in enumerate(clean):
        xs = np.array([x for x, _ in run])
        ys = np.array([y for _, y in run])
        at = np.searchsorted(xs, grid, side="right") - 1  # the last point at or before each grid x
        values[i] = np.where(at >= 0, ys[np.clip(at, 0, None)], np.nan)
    counted = ~np.all(np.isnan(values), axis=0)
    grid, values = grid[counted], values[:, counted]
    return grid, np.nanmedian(values, axis=0), np.nanmin(values, axis=0), np.nanmax(values, axis=0)


def plot_success(path: str | Path, series: Mapping[str, Sequence[Run]], *, title: str = "",
                 target: float | None = None, ylabel: str = "eval success rate", xlabel: str = "env steps") -> Path:
    """Draw ``series`` (label -> runs) into the PNG ``path``, written whole or not at all.

    Raises :class:`~robot_rl.errors.RobotRLError` when there is nothing to draw or
    matplotlib is missing.
    """
    if not any(run for runs in series.values() for run in runs):
        raise RobotRLError(f"no success points to plot into {path}")
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display; must come before pyplot
        import matplotlib.pyplot as plt
    except ImportError:
        raise RobotRLError("drawing the success curve needs matplotlib, one of robot_rl's requirements: "
                           "rerun scripts/setup.sh") from None

    path = Path(path)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    try:
        for i, (name, runs) in enumerate(series.items()):
            grid, median, low, high = band(runs)
            if not len(grid):
                continue
            color = f"C{i % 10}"
            seeds = sum(1 for run in runs if run)
            name = str(name) or "success"  # matplotlib leaves an empty label out of the legend
            shown = f"{name} (median of {seeds} seeds)" if seeds > 1 else name
            ax.step(grid, median, where="post", color=color, label=shown, marker="o" if len(grid) < 30 else None,
                    markersize=3)
            if seeds > 1:
                ax.fill_between(grid, low, high, step="post", color=color, alpha=0.2, linewidth=0)
        if target is not None and math.isfinite(target):
            ax.axhline(target, color="grey", linestyle="--", linewidth=1, label=f"target {target:.0%}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(True, alpha=0.3)
        if title:
            ax.set_title(title)
        ax.legend(loc="best", fontsize=8)
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png")
    finally:
        plt.close(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    return durable_write(path, png.getvalue())


def runs_of(records: Iterable[Mapping], x: str = "env_steps", y: str = "success_rate") -> list[tuple[float, float]]:
    """(x, y) points of eval records (dicts such as ``TrainResult.evals``), skipping incomplete ones."""
    return [(float(r[x]), float(r[y])) for r in records
            if isinstance(r.get(x), (int, float)) and isinstance(r.get(y), (int, float))]

