"""Observation and action spaces described as data, so a learner can check an actor's.

An actor registers with its spaces; the learner compares them with its own and refuses
the actor when they differ, with a message that names the differing key. Spaces travel
as plain fields (key, dtype, shape, low, high), never pickled gymnasium objects.

Only what robot_rl's envs produce is supported: a flat ``Dict`` of ``Box`` observations
and a ``Box`` action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np


@dataclass(frozen=True)
class SpaceSpec:
    """One Box: its key, dtype name, shape and bounds (arrays of that shape)."""

    key: str
    dtype: str
    shape: tuple[int, ...]
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def from_box(cls, key: str, box: Any) -> "SpaceSpec":
        if not hasattr(box, "low") or not hasattr(box, "high") or not hasattr(box, "dtype"):
            raise TypeError(f"space '{key}' is a {type(box).__name__}; only Box spaces are supported")
        shape = tuple(int(d) for d in box.shape)
        dtype = np.dtype(box.dtype)
        low = np.broadcast_to(np.asarray(box.low, dtype=dtype), shape).copy()
        high = np.broadcast_to(np.asarray(box.high, dtype=dtype), shape).copy()
        return cls(key, dtype.name, shape, low, high)

    def difference(self, other: "SpaceSpec") -> str | None:
        """How ``other`` differs from this spec ('dtype ...'), or None when equal."""
        if self.dtype != other.dtype:
            return f"dtype {other.dtype} vs {self.dtype}"
        if self.shape != other.shape:
            return f"shape {other.shape} vs {self.shape}"
        if not np.array_equal(self.low, other.low):
            return "low bound differs"
        if not np.array_equal(self.high, other.high):
            return "high bound differs"
        return None


@dataclass(frozen=True)
class EnvSpaces:
    """The observation entries (by key) and the action of one env."""

    observation: Mapping[str, SpaceSpec]
    action: SpaceSpec

    @classmethod
    def from_gym(cls, observation_space: Any, action_space: Any) -> "EnvSpaces":
        """From a gymnasium ``Dict`` observation space (or a single Box, keyed 'obs')."""
        subspaces = getattr(observation_space, "spaces", None)
        if subspaces is None:
            subspaces = {"obs": observation_space}
        obs = {str(k): SpaceSpec.from_box(str(k), v) for k, v in sorted(subspaces.items())}
        return cls(obs, SpaceSpec.from_box("action", action_space))

    def mismatch(self, other: "EnvSpaces") -> str | None:
        """None when ``other`` equals these spaces, else one line naming the first differing key.

        ``self`` is the reference (the learner's); the message reads
        "<key>: <other's value> vs <ours>".
        """
        mine, theirs = set(self.observation), set(other.observation)
        for key in sorted(theirs - mine):
            return f"observation key '{key}' is not in the learner's observation space"
        for key in sorted(mine - theirs):
            return f"observation key '{key}' is missing (the learner's observation space has it)"
        for key in sorted(mine):
            diff = self.observation[key].difference(other.observation[key])
            if diff:
                return f"observation key '{key}': {diff} (actor vs learner)"
        diff = self.action.difference(other.action)
        if diff:
            return f"action: {diff} (actor vs learner)"
        return None
