"""A LeRobotDataset's actions into the task's action space: checked, and rescaled only when asked.

robot_rl's agent acts in the task's action space ([-1, 1] per dimension). A dataset recorded
elsewhere (a real robot, LeRobot's gym-hil recorder) often stores actions in its own units
(metres, radians, a gripper command in 0..2). Taking those as they are, or clipping them,
would teach the agent actions it never meant, so an import refuses a dataset whose actions
leave the task's space (beyond :data:`TOLERANCE`), naming the dimension and both ranges. Like
images of another size (``--resize``), the fix is asked for, never applied silently:
``--action-range LOW HIGH`` (the units' range: one value for every dimension or one per
dimension, comma-separated) or ``--action-range stats`` (the min/max of ``action`` in the
dataset's own ``meta/stats.json``) maps each dimension linearly from that range onto the
task's bounds. The demo folder's manifest records the mapping (:func:`record_mapping`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.data.demos import MANIFEST, read_manifest
from robot_rl.data.durable import durable_write
from robot_rl.data.lerobot_layout import STATS, LeRobotFormatError
from robot_rl.errors import ConfigError, one_line

OPTION = "--action-range"
FROM_STATS = "stats"
#: how far (in the task's units) an action may lie outside the task's bounds: float rounding, not data
TOLERANCE = 1e-6
#: the manifest key that lists each import's mapping (a list: ``--append`` adds one)
MANIFEST_KEY = "action_rescale"
_HINT = (f"pass {OPTION} LOW HIGH (the range of its units, one value or one per dimension) or {OPTION} "
         f"{FROM_STATS} (the min/max in meta/stats.json) to rescale it")


@dataclass(frozen=True)
class ActionRange:
    """What ``--action-range`` asked for: LOW and HIGH (one value each, or one per dimension), or the stats."""

    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    from_stats: bool = False


@dataclass(frozen=True)
class ActionMapping:
    """A linear map of each action dimension from ``[low, high]`` (the dataset's units) onto the task's bounds."""

    low: np.ndarray  # (n,) float64
    high: np.ndarray  # (n,) float64
    source: str  # where the range came from, for messages and the manifest: the option or meta/stats.json

    def apply(self, actions: np.ndarray, space: gym.spaces.Box) -> np.ndarray:
        """``actions`` (T, n) in the dataset's units -> the task's units, float64.

        Centre and half-width are taken as ``low/2 + high/2`` and ``high/2 - low/2`` so that a
        range as wide as float64 allows does not overflow, and onto [-1, 1] a symmetric range
        is a plain division (``--action-range -2 2`` gives ``action / 2`` exactly).
        """
        centre, half = self.low / 2 + self.high / 2, self.high / 2 - self.low / 2
        t_low, t_high = _bounds(space)
        t_centre, t_half = t_low / 2 + t_high / 2, t_high / 2 - t_low / 2
        return t_centre + (actions.astype(np.float64) - centre) / half * t_half


def parse_action_range(values: Sequence[str]) -> ActionRange:
    """``--action-range``'s words: ``stats``, or ``LOW HIGH`` (each a number or comma-separated numbers).

    Every mistake is a one-line :class:`ConfigError` naming the option; the count of
    dimensions is checked against the dataset's action later (:func:`mapping_for`).
    """
    words = list(values)
    if words == [FROM_STATS]:
        return ActionRange(from_stats=True)
    if len(words) != 2:
        raise ConfigError(f"{OPTION}: give LOW HIGH (numbers, or comma-separated numbers per dimension) or "
                          f"'{FROM_STATS}', not {' '.join(words)!r}")
    low, high = (_numbers(word, name) for word, name in zip(words, ("LOW", "HIGH")))
    if len(low) != len(high) and 1 not in (len(low), len(high)):
        raise ConfigError(f"{OPTION}: LOW has {len(low)} values and HIGH {len(high)}; give one value or the same "
                          "number per dimension")
    n = max(len(low), len(high))
    lo, hi = np.broadcast_to(np.array(low), n), np.broadcast_to(np.array(high), n)
    bad = np.flatnonzero(~(lo < hi))
    if bad.size:
        d = int(bad[0])
        raise ConfigError(f"{OPTION}: LOW {lo[d]:g} is not below HIGH {hi[d]:g}"
                          + (f" (dimension {d})" if n > 1 else ""))
    return ActionRange(tuple(low), tuple(high))


def _numbers(word: str, name: str) -> list[float]:
    out = []
    for part in word.split(","):
        try:
            value = float(part)
        except ValueError:
            raise ConfigError(f"{OPTION}: {name} {word!r}: {part.strip()!r} is not a number") from None
        if not math.isfinite(value):
            raise ConfigError(f"{OPTION}: {name} {word!r} holds {part.strip()!r}; the range must be finite numbers")
        out.append(value)
    return out


def mapping_for(asked: ActionRange | None, root: Path, space: gym.spaces.Box) -> ActionMapping | None:
    """The mapping ``asked`` means for a dataset at ``root`` and the task's action ``space`` (None: none asked)."""
    if asked is None:
        return None
    n = int(np.prod(space.shape))
    t_low, t_high = _bounds(space)
    unbounded = np.flatnonzero(~(np.isfinite(t_low) & np.isfinite(t_high)))
    if unbounded.size:
        raise LeRobotFormatError(f"{OPTION}: the task's action dimension {int(unbounded[0])} is unbounded; there "
                                 "is no range to rescale into")
    if asked.from_stats:
        low, high = _stats_range(root / STATS, n)
        return ActionMapping(low, high, STATS)
    for name, values in (("LOW", asked.low), ("HIGH", asked.high)):
        if len(values) not in (1, n):
            raise LeRobotFormatError(f"{OPTION}: {name} has {len(values)} values, the action has {n} dimensions; "
                                     "give one value or one per dimension")
    low = np.broadcast_to(np.asarray(asked.low, np.float64), n).copy()
    high = np.broadcast_to(np.asarray(asked.high, np.float64), n).copy()
    return ActionMapping(low, high, OPTION)


def _stats_range(path: Path, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The min/max of ``action`` in a v3 ``meta/stats.json``: n finite numbers each, min below max."""
    if not path.is_file():
        raise LeRobotFormatError(f"{path}: file missing ({OPTION} {FROM_STATS} reads the min/max of 'action' "
                                 f"there); pass {OPTION} LOW HIGH instead")
    try:
        stats = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as err:
        raise LeRobotFormatError(f"{path}: not valid JSON ({one_line(err)})") from None
    entry = stats.get("action") if isinstance(stats, dict) else None
    if not isinstance(entry, dict):
        raise LeRobotFormatError(f"{path}: no stats of 'action'; pass {OPTION} LOW HIGH instead")
    out = []
    for key in ("min", "max"):
        try:
            values = np.asarray(entry.get(key), dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            values = np.array([np.nan])
        if values.size != n or not np.isfinite(values).all():
            raise LeRobotFormatError(f"{path}: 'action' '{key}' is {entry.get(key)!r}, not {n} finite numbers")
        out.append(values)
    low, high = out
    flat = np.flatnonzero(~(low < high))
    if flat.size:
        d = int(flat[0])
        raise LeRobotFormatError(f"{path}: 'action' dimension {d} has min {low[d]:g} and max {high[d]:g}, no range "
                                 f"to rescale; pass {OPTION} LOW HIGH instead")
    return low, high


def fit_actions(episodes: Sequence[tuple[Path, np.ndarray]], space: gym.spaces.Box,
                mapping: ActionMapping | None) -> list[np.ndarray]:
    """Each episode's actions ((T, n) as read, from its data file) in the task's space, float32.

    An action outside the task's bounds by more than :data:`TOLERANCE` (after the mapping,
    if any) refuses the whole dataset in one line: the data file of the first such value,
    the dimension, the range found over the dataset and the range expected. With a mapping,
    values within the tolerance are clipped onto the bounds (rounding of the map itself).
    """
    t_low, t_high = _bounds(space)
    raw = [np.asarray(a).reshape(len(a), -1) for _, a in episodes]
    fitted = [mapping.apply(a, space) if mapping is not None else a.astype(np.float64) for a in raw]
    found_low = np.min([a.min(axis=0) for a in fitted], axis=0)
    found_high = np.max([a.max(axis=0) for a in fitted], axis=0)
    outside = (found_low < t_low - TOLERANCE) | (found_high > t_high + TOLERANCE)
    if outside.any():
        d = int(np.flatnonzero(outside)[0])
        path = next(p for (p, _), a in zip(episodes, fitted)
                    if (a[:, d] < t_low[d] - TOLERANCE).any() or (a[:, d] > t_high[d] + TOLERANCE).any())
        expected = f"the task's action space [{t_low[d]:g}, {t_high[d]:g}]"
        if mapping is None:
            raise LeRobotFormatError(f"{path}: feature 'action' dimension {d} spans [{found_low[d]:g}, "
                                     f"{found_high[d]:g}] in this dataset, outside {expected}; {_HINT}")
        raw_low = min(float(a[:, d].min()) for a in raw)
        raw_high = max(float(a[:, d].max()) for a in raw)
        raise LeRobotFormatError(f"{path}: feature 'action' dimension {d} spans [{raw_low:g}, {raw_high:g}] in "
                                 f"this dataset, beyond [{mapping.low[d]:g}, {mapping.high[d]:g}], the range "
                                 f"{mapping.source} gives it: rescaled, it would leave {expected}")
    if mapping is not None:
        fitted = [np.clip(a, t_low, t_high) for a in fitted]
    return [a.astype(np.float32).reshape(np.shape(b)) for a, (_, b) in zip(fitted, episodes)]


def describe(mapping: ActionMapping, space: gym.spaces.Box) -> dict[str, Any]:
    """The mapping as the manifest records it: from which range, per dimension, onto which."""
    t_low, t_high = _bounds(space)
    return {"from": mapping.source, "low": mapping.low.tolist(), "high": mapping.high.tolist(),
            "to_low": t_low.tolist(), "to_high": t_high.tolist(), "map": "linear per dimension"}


def record_mapping(directory: Path, entry: dict[str, Any]) -> None:
    """Add ``entry`` to the list under :data:`MANIFEST_KEY` of the demo folder's manifest (durably)."""
    manifest = read_manifest(directory)
    previous = manifest.get(MANIFEST_KEY)
    manifest[MANIFEST_KEY] = [*(previous if isinstance(previous, list) else []), entry]
    durable_write(directory / MANIFEST, jsonio.dumps(manifest, indent=1).encode())


def summary(mapping: ActionMapping) -> str:
    """The report line's words for a mapping."""
    def numbers(values: np.ndarray) -> str:
        return f"{values[0]:g}" if np.all(values == values[0]) else ",".join(f"{v:g}" for v in values)

    return f"actions rescaled from [{numbers(mapping.low)}, {numbers(mapping.high)}] ({mapping.source})"


def _bounds(space: gym.spaces.Box) -> tuple[np.ndarray, np.ndarray]:
    return (np.asarray(space.low, np.float64).reshape(-1), np.asarray(space.high, np.float64).reshape(-1))
