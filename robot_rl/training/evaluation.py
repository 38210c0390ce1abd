"""Deterministic evaluation on several seeded initial states, and its video.

Episode ``i`` resets with seed ``eval_seed + i``, so every evaluation of a run (and of
every run) sees the same set of different starts, and the policy acts with its mean
action. Evaluation uses its own env and no shared RNG, so it never changes what
training does next (a resumed run stays identical to an uninterrupted one).

:class:`EpisodeVideo` wraps the evaluation env to write what it renders into one MP4,
so watching an evaluation costs nothing but the wrapper (``robot-rl eval`` uses it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl.agents.policy import Policy
from robot_rl.data.durable import durable_rename
from robot_rl.data.rollout import ActorLoop, Deterministic
from robot_rl.errors import RobotRLError


@dataclass
class EvalResult:
    success_rate: float
    mean_return: float
    mean_length: float
    episodes: int

    def as_dict(self) -> dict[str, float]:
        return {"success_rate": self.success_rate, "return": self.mean_return, "length": self.mean_length}


def evaluate(env: gym.Env, policy: Policy, episodes: int, seed: int) -> EvalResult:
    loop = ActorLoop(env, Deterministic(policy))
    stats = []
    for i in range(episodes):
        loop.run_episode(seed=seed + i)
        stats.append(loop.last_episode)
    return EvalResult(success_rate=float(np.mean([s.success for s in stats])) if stats else 0.0,
                      mean_return=float(np.mean([s.ret for s in stats])) if stats else 0.0,
                      mean_length=float(np.mean([s.length for s in stats])) if stats else 0.0,
                      episodes=len(stats))


class EpisodeVideo(gym.Wrapper):
    """Writes the frame ``env.render()`` returns after every reset and step into one MP4.

    The env needs ``render_mode="rgb_array"``. The video is written as
    ``<name>.partial.mp4`` and renamed to ``path`` by :meth:`finish`, so a file under the
    final name is always a whole video (OpenCV picks the container by the extension,
    hence not ``.mp4.tmp``).
    """

    def __init__(self, env: gym.Env, path: str | Path, fps: float | None = None) -> None:
        super().__init__(env)
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.stem + ".partial" + self.path.suffix)
        self.fps = float(fps or env.metadata.get("render_fps") or 10)
        self.frames = 0
        self.size: tuple[int, int] | None = None  # (width, height)
        self._writer: Any = None

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._record()
        return obs, info

    def step(self, action: Any):
        result = self.env.step(action)
        self._record()
        return result

    def _record(self) -> None:
        import cv2  # only an evaluation that records needs OpenCV

        frame = self.env.render()
        if frame is None:
            raise RobotRLError("the env renders no frames for the video (it needs render_mode='rgb_array' "
                               "and a camera)")
        frame = np.asarray(frame, dtype=np.uint8)
        height, width = frame.shape[:2]
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = cv2.VideoWriter(str(self.partial), cv2.VideoWriter_fourcc(*"mp4v"), self.fps,
                                           (width, height))
            if not self._writer.isOpened():
                raise RobotRLError(f"cannot write the video {self.partial} (OpenCV has no mp4v writer here)")
            self.size = (width, height)
        self._writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
        self.frames += 1

    def finish(self) -> Path | None:
        """Close the video and put it in place; its path, or None when no frame was written."""
        if self._writer is None:
            return None
        self._writer.release()
        self._writer = None
        durable_rename(self.partial, self.path)
        return self.path

    def close(self) -> None:
        self.finish()
        super().close()
