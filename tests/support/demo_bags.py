"""Demo directories for the MCAP export/import tests: every field varied, floats a careless round trip changes."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np

from robot_rl.data.demos import DemoWriter, episode_files
from robot_rl.data.transition import Step

OBS = gym.spaces.Dict({
    "front": gym.spaces.Box(0, 255, (6, 8, 3), np.uint8),
    "gray": gym.spaces.Box(0, 255, (4, 5), np.uint8),
    "state": gym.spaces.Box(-np.inf, np.inf, (7,), np.float32),
})
ACTION = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
# float32 values a careless round trip would change: tiny, huge, negative zero, not a short decimal
AWKWARD = np.array([1e-45, -3.4028235e38, -0.0, 0.1, 1 / 3, 65504.0, 2.0**-126], dtype=np.float32)


def make_demos(directory: Path, lengths=(5, 3, 4), seed: int = 0) -> list[list[Step]]:
    """A demo directory of episodes with every field varied (and awkward floats), written by DemoWriter."""
    rng = np.random.default_rng(seed)

    def obs() -> dict[str, np.ndarray]:
        state = rng.normal(size=7).astype(np.float32)
        state[rng.integers(0, 7)] = AWKWARD[rng.integers(0, len(AWKWARD))]
        return {"front": rng.integers(0, 256, (6, 8, 3), dtype=np.uint8),
                "gray": rng.integers(0, 256, (4, 5), dtype=np.uint8), "state": state}

    writer = DemoWriter(directory, OBS, ACTION, task="PickCube", source="test", env_config={"control_hz": 20})
    episodes = []
    for e, n in enumerate(lengths):
        frames = [obs() for _ in range(n + 1)]
        steps = [Step(episode_id=e, step=t, obs=frames[t], action=rng.uniform(-1, 1, 4).astype(np.float32),
                      reward=float(AWKWARD[(t + e) % len(AWKWARD)]), terminated=(t == n - 1 and e != 1),
                      truncated=(t == n - 1 and e == 1), next_obs=frames[t + 1], intervened=bool(rng.random() < 0.5),
                      success=bool(t == n - 1), grasp_penalty=float(np.float32(-0.02 * t)))
                 for t in range(n)]
        writer.write_episode(steps)
        episodes.append(steps)
    return episodes


def arrays_of(directory: Path) -> list[dict[str, np.ndarray]]:
    out = []
    for path in episode_files(directory):
        with np.load(path) as data:
            out.append({k: data[k] for k in data.files})
    return out


def assert_same_episodes(a: Path, b: Path) -> None:
    """Two demo folders hold the same episodes, key by key, byte for byte (dtype and shape too)."""
    left, right = arrays_of(a), arrays_of(b)
    assert len(left) == len(right) > 0
    for x, y in zip(left, right):
        assert sorted(x) == sorted(y)
        for key in x:
            assert x[key].dtype == y[key].dtype and x[key].shape == y[key].shape, key
            assert x[key].tobytes() == y[key].tobytes(), key
