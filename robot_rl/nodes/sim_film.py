"""The sim node's film of a session's episodes (``ros.video``; ``robot-rl eval --graph`` sets it).

Through the node graph the frames never reach the process that evaluates: the sim node
is the one that can render, so it films. :class:`EpisodeFilm` writes what the scene's
cameras see (each named, as ``robot-rl eval``'s own video shows them) into one MP4, in
the same form as :class:`~robot_rl.training.evaluation.EpisodeVideo`: every episode
from the reset the actor asked for, one frame per control period of simulated time,
labelled with its episode and time, its last frame marked green (success) or red and
held. An episode ends at the next reset request, or when the node shuts down. The
startup reset is no episode (no actor asked for it). No ROS in here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from robot_rl.training.frames import Mp4Writer, camera_tiles, hold_frames, label, mark_outcome, readable


class EpisodeFilm:
    """Episodes of the sim, filmed from its cameras on simulated time (see the module docstring)."""

    def __init__(self, path: str | Path, fps: float, render: Callable[[], Mapping[str, np.ndarray]]) -> None:
        if not np.isfinite(fps) or fps <= 0:
            raise ValueError(f"a film needs a positive frame rate, got {fps}")
        self.writer = Mp4Writer(path, fps)
        self.period = 1.0 / fps
        self.render = render
        self.episodes = 0
        self._start: float | None = None  # simulated time of the episode's reset; None between episodes
        self._next = 0.0
        self._last: np.ndarray | None = None
        self._success = False

    def _frame(self, now: float) -> np.ndarray:
        frame = readable(camera_tiles(self.render()))
        self._last = frame
        return label(frame, f"ep {self.episodes}  t {now - (self._start or now):.1f} s")

    def reset(self, now: float) -> None:
        """An actor's reset at simulated time ``now``: the episode before it ends, a new one starts."""
        self.end()
        self.episodes += 1
        self._start, self._next, self._success = now, now + self.period, False
        self.writer.write(self._frame(now))

    def tick(self, now: float, success: bool) -> None:
        """Simulated time ``now`` with the task's verdict: a frame once per period while in an episode."""
        if self._start is None or not np.isfinite(now):  # between episodes, or a broken clock: no frame
            return
        self._success = success
        if now >= self._next:
            self._next = max(self._next + self.period, now)
            self.writer.write(self._frame(now))

    def end(self) -> None:
        """End the episode in flight (its last frame marked with its outcome and held)."""
        if self._start is None or self._last is None:
            return
        marked = mark_outcome(self._last, self._success, f"ep {self.episodes}")
        for _ in range(1 + hold_frames(self.writer.fps)):
            self.writer.write(marked)
        self._start = None

    def close(self) -> Path | None:
        """End the last episode and put the video in place; its path, or None when nothing was filmed."""
        self.end()
        return self.writer.finish()
