"""Deterministic evaluation on several seeded initial states, and its video.

Episode ``i`` resets with seed ``eval_seed + i``, so every evaluation of a run (and of
every run) sees the same set of different starts, and the policy acts with its mean
action. Evaluation uses its own env and no shared RNG, so it never changes what
training does next (a resumed run stays identical to an uninterrupted one).

:class:`EpisodeVideo` wraps the evaluation env to write what it renders into one MP4,
so watching an evaluation costs nothing but the wrapper: the episodes in the video are
episodes the success rate is computed on, never extra ones. ``robot-rl eval`` records
all of its episodes; training records the first ``train.eval_video_episodes`` of each
evaluation and also keeps their frames for TensorBoard and W&B. Each frame is labelled
with its episode, step and return so far; the episode's last frame, held for
:data:`~robot_rl.training.frames.HOLD_S` seconds, gets a green (success) or red (failure) border.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.agents.policy import Policy
from robot_rl.data.rollout import ActorLoop, Deterministic
from robot_rl.errors import RobotRLError
from robot_rl.training.frames import Mp4Writer, camera_tiles, hold_frames, label, mark_outcome, readable


@dataclass
class EvalResult:
    success_rate: float
    mean_return: float
    mean_length: float
    episodes: int
    lengths: list[int] = field(default_factory=list)  # per episode, in the order of their seeds
    successes: list[bool] = field(default_factory=list)

    def as_dict(self) -> dict[str, float]:
        return {"success_rate": self.success_rate, "return": self.mean_return, "length": self.mean_length}


def evaluate(env: gym.Env, policy: Policy, episodes: int, seed: int,
             stop: Callable[[], bool] | None = None) -> EvalResult:
    """``episodes`` deterministic episodes seeded ``seed``, ``seed + 1``, ...; ``stop`` is asked
    before each episode, and a True ends the evaluation early (fewer ``episodes`` in the result),
    so a caller with a deadline is never held by a whole evaluation."""
    loop = ActorLoop(env, Deterministic(policy))
    stats = []
    for i in range(episodes):
        if stop is not None and stop():
            break
        loop.run_episode(seed=seed + i)
        stats.append(loop.last_episode)
    return EvalResult(success_rate=float(np.mean([s.success for s in stats])) if stats else 0.0,
                      mean_return=float(np.mean([s.ret for s in stats])) if stats else 0.0,
                      mean_length=float(np.mean([s.length for s in stats])) if stats else 0.0,
                      episodes=len(stats), lengths=[int(s.length) for s in stats],
                      successes=[bool(s.success) for s in stats])


class EpisodeVideo(gym.Wrapper):
    """Writes the frame ``env.render()`` returns after every reset and step into one MP4.

    The env needs ``render_mode="rgb_array"``. Only the first ``episodes`` episodes are
    recorded (all when None); later ones are not rendered at all. An episode of ``n``
    steps gives ``1 + n + hold_frames(fps)`` frames: its reset, its steps, and its last
    frame marked with the outcome (``info["success"]`` of its last step) and held.
    ``keep_frames`` also keeps the written frames in :attr:`kept` (for TensorBoard and
    W&B). The video is written as ``<name>.partial.mp4`` and renamed to ``path`` by
    :meth:`finish`, so a file under the final name is always a whole video (OpenCV picks
    the container by the extension, hence not ``.mp4.tmp``).
    """

    def __init__(self, env: gym.Env, path: str | Path, fps: float | None = None, *, episodes: int | None = None,
                 keep_frames: bool = False) -> None:
        super().__init__(env)
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.stem + ".partial" + self.path.suffix)
        self.fps = float(fps if fps is not None else env.metadata.get("render_fps") or 10)
        if not np.isfinite(self.fps) or self.fps <= 0:
            raise RobotRLError(f"video frame rate must be positive, got {fps}")
        self.max_episodes = episodes
        self.keep_frames = keep_frames
        self.kept: list[np.ndarray] = []
        self.episodes = 0  # episodes started while recording
        self._writer = Mp4Writer(self.path, self.fps)
        self._recording = False
        self._t = 0
        self._return = 0.0

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._recording = self.max_episodes is None or self.episodes < self.max_episodes
        if self._recording:
            self.episodes += 1
            self._t, self._return = 0, 0.0
            self._write(label(self._render(), self._caption()))
        return obs, info

    def step(self, action: Any):
        result = self.env.step(action)
        if self._recording:
            _, reward, terminated, truncated, info = result
            self._t += 1
            self._return += float(reward) if np.isfinite(reward) else 0.0
            frame = self._render()
            if terminated or truncated:
                marked = mark_outcome(frame, bool(info.get("success", False)), self._caption())
                for _ in range(1 + hold_frames(self.fps)):
                    self._write(marked)
                self._recording = False
            else:
                self._write(label(frame, self._caption()))
        return result

    def _caption(self) -> str:
        return f"ep {self.episodes}  t {self._t}  R {self._return:.2f}"

    @property
    def frames(self) -> int:
        return self._writer.frames

    @property
    def size(self) -> tuple[int, int] | None:
        return self._writer.size

    def _render(self) -> np.ndarray:
        views = getattr(self.env.unwrapped, "render_views", None)  # a RobotEnv: its cameras, named
        named = views() if callable(views) else {}
        frame = camera_tiles(named) if named else self.env.render()
        if frame is None:
            raise RobotRLError("the env renders no frames for the video (it needs render_mode='rgb_array' "
                               "and a camera)")
        return readable(frame)

    def _write(self, frame: np.ndarray) -> None:
        self._writer.write(frame)
        if self.keep_frames:
            self.kept.append(frame)

    def finish(self) -> Path | None:
        """Close the video and put it in place; its path, or None when no frame was written."""
        return self._writer.finish()

    def close(self) -> None:
        self.finish()
        super().close()
