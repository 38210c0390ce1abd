"""Synthetic spaces, Steps and weights for tests and benchmarks of the learning plane.

They exercise the transport with the shapes a real setup sends (a state vector, uint8
camera images, a 7-D action) without an env or an agent.
"""

from __future__ import annotations

import socket
from typing import Iterator

import numpy as np

from robot_rl.data.transition import Step
from robot_rl.training.remote.spaces import EnvSpaces, SpaceSpec


def box(key: str, shape: tuple[int, ...], dtype: str, low: float, high: float) -> SpaceSpec:
    return SpaceSpec(key, np.dtype(dtype).name, shape, np.full(shape, low, dtype=dtype),
                     np.full(shape, high, dtype=dtype))


def make_spaces(state_dim: int = 11, cameras: tuple[str, ...] = (), image_size: int = 128,
                action_dim: int = 7) -> EnvSpaces:
    obs = {"state": box("state", (state_dim,), "float32", -np.inf, np.inf)}
    for name in cameras:
        obs[name] = box(name, (image_size, image_size, 3), "uint8", 0, 255)
    return EnvSpaces(obs, box("action", (action_dim,), "float32", -1.0, 1.0))


def random_obs(spaces: EnvSpaces, rng: np.random.Generator) -> dict[str, np.ndarray]:
    obs = {}
    for key, spec in spaces.observation.items():
        if np.dtype(spec.dtype).kind == "u":
            obs[key] = rng.integers(0, 256, size=spec.shape, dtype=spec.dtype)
        else:
            obs[key] = rng.standard_normal(spec.shape).astype(spec.dtype)
    return obs


def episode(spaces: EnvSpaces, episode_id: int, length: int, rng: np.random.Generator, *,
            intervene_every: int = 0, success: bool = False, truncate: bool = True) -> Iterator[Step]:
    """One episode of ``length`` Steps that follows the Step contract (next_obs chained).

    Every ``intervene_every``-th step is marked as a human intervention (0: none).
    """
    obs = random_obs(spaces, rng)
    for t in range(length):
        nxt = random_obs(spaces, rng)
        last = t == length - 1
        yield Step(episode_id=episode_id, step=t, obs=obs,
                   action=rng.uniform(-1, 1, size=spaces.action.shape).astype(np.float32),
                   reward=float(last and success), terminated=last and success,
                   truncated=last and not success and truncate, next_obs=nxt,
                   intervened=bool(intervene_every and t % intervene_every == 0),
                   success=last and success, grasp_penalty=0.0)
        obs = nxt


def policy_weights(rng: np.random.Generator, hidden: int = 256, obs_dim: int = 11,
                   action_dim: int = 7, extra_params: int = 0) -> dict[str, np.ndarray]:
    """An MLP-policy-shaped weight dict (plus ``extra_params`` float32s, e.g. an encoder)."""
    weights = {
        "trunk.0.weight": rng.standard_normal((hidden, obs_dim)).astype(np.float32),
        "trunk.0.bias": np.zeros(hidden, np.float32),
        "trunk.2.weight": rng.standard_normal((hidden, hidden)).astype(np.float32),
        "trunk.2.bias": np.zeros(hidden, np.float32),
        "head.weight": rng.standard_normal((2 * action_dim, hidden)).astype(np.float32),
        "head.bias": np.zeros(2 * action_dim, np.float32),
    }
    if extra_params:
        weights["encoder.flat"] = rng.standard_normal(extra_params).astype(np.float32)
    return weights


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (bind to 0, read it back, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
