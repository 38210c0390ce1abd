"""Observation and action spaces as plain JSON, and a comparison that names the difference.

Demo files, checkpoints (and the learning plane's actor registration) record the spaces
they were made with. Loading them into a task with different spaces must fail with a
message that names the key, e.g. ``observation 'state' has shape (10,), the task's is (13,)``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


def box_spec(space: gym.spaces.Box) -> dict[str, Any]:
    spec: dict[str, Any] = {"shape": list(space.shape), "dtype": np.dtype(space.dtype).name}
    if space.dtype != np.uint8:  # image bounds are always 0..255; vector bounds matter
        spec["low"] = np.asarray(space.low, dtype=np.float64).ravel().tolist()
        spec["high"] = np.asarray(space.high, dtype=np.float64).ravel().tolist()
    return spec


def box_from_spec(spec: dict[str, Any]) -> gym.spaces.Box:
    """The Box a :func:`box_spec` describes (``null`` bounds unbounded); ValueError for what is not one."""
    try:
        shape = tuple(int(n) for n in spec["shape"])
        dtype = np.dtype(spec["dtype"])
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"not a space description ({err})") from None
    if dtype == np.uint8:
        return gym.spaces.Box(0, 255, shape, np.uint8)
    try:
        low, high = _bound(spec.get("low", []), "low"), _bound(spec.get("high", []), "high")
    except (TypeError, ValueError) as err:
        raise ValueError(f"bounds are not numbers ({err})") from None
    if low.size != int(np.prod(shape)) or high.size != low.size:
        raise ValueError(f"bounds do not match the shape {shape}")
    return gym.spaces.Box(low.reshape(shape).astype(dtype), high.reshape(shape).astype(dtype), shape, dtype)


def spaces_spec(obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> dict[str, Any]:
    """``{"observation": {key: box spec}, "action": box spec}``."""
    return {"observation": {k: box_spec(s) for k, s in sorted(obs_space.spaces.items())},
            "action": box_spec(action_space)}


def spec_mismatch(saved: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """The first difference between two :func:`spaces_spec` results, in words; None if equal.

    Bounds of unbounded vector entries (``inf``) are compared like any other value; a
    manifest written as standard JSON holds them as ``null`` (:mod:`robot_rl.jsonio`), read
    back as -inf (``low``) or +inf (``high``).
    """
    s_obs, e_obs = saved.get("observation", {}), expected.get("observation", {})
    for key in sorted(set(s_obs) | set(e_obs)):
        if key not in e_obs:
            return f"observation key '{key}' is not in the task's observation (it has {sorted(e_obs)})"
        if key not in s_obs:
            return f"observation key '{key}' is missing (it has {sorted(s_obs)})"
        diff = _box_diff(s_obs[key], e_obs[key])
        if diff:
            return f"observation '{key}' {diff}"
    diff = _box_diff(saved.get("action", {}), expected.get("action", {}))
    return f"action {diff}" if diff else None


def _box_diff(saved: dict[str, Any], expected: dict[str, Any]) -> str | None:
    if list(saved.get("shape", [])) != list(expected.get("shape", [])):
        return f"has shape {tuple(saved.get('shape', []))}, the task's is {tuple(expected.get('shape', []))}"
    if saved.get("dtype") != expected.get("dtype"):
        return f"has dtype {saved.get('dtype')}, the task's is {expected.get('dtype')}"
    for bound in ("low", "high"):
        a, b = saved.get(bound), expected.get(bound)
        if a is None or b is None:
            continue
        if not np.allclose(_bound(a, bound), _bound(b, bound), equal_nan=True):
            return f"has {bound} bound {a}, the task's is {b}"
    return None


def _bound(values: Any, bound: str) -> np.ndarray:
    """Bounds as floats; ``null`` (how standard JSON files hold an unbounded entry) is -inf/+inf."""
    fill = -np.inf if bound == "low" else np.inf
    return np.asarray([fill if v is None else v for v in np.asarray(values, dtype=object).ravel()], dtype=np.float64)
