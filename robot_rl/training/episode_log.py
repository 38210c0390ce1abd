"""The trainer's replay log: every finished online episode on disk the moment it ends.

``robot-rl train`` keeps the learner process's promise (at most the episode in flight is
lost to ``kill -9`` or a power cut) the same way the learner does: each finished episode
is appended to ``<run_dir>/replay/`` through :class:`robot_rl.training.replay_log.EpisodeLog`
(one fsync'd file per episode, the demo-directory format) before any update uses it.

A checkpoint records how many logged episodes it already holds (``replay_episodes``);
``--resume`` loads the checkpoint and re-ingests only the episodes logged after it
(:meth:`TrainingLog.tail`). Without a checkpoint it re-ingests them all. An episode file that
cannot be read back (damaged on disk, or holding NaN) is skipped with a warning naming
it; it stays on disk, and every other episode is kept.

Each file's ``meta`` holds the actor loop's state after the episode (episode id and the
env's RNG), so a resumed run goes on with fresh initial states rather than replaying
the ones it already saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym

from robot_rl.data.durable import durable_mkdir
from robot_rl.data.transition import Step
from robot_rl.errors import RobotRLError
from robot_rl.training.replay_log import EpisodeLog, LoggedEpisode

REPLAY_DIR = "replay"


class TrainingLog:
    """Collects the steps of the episode in flight and logs the episode when it ends."""

    def __init__(self, run_dir: Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                 task: str = "", env_config: dict[str, Any] | None = None) -> None:
        durable_mkdir(run_dir / REPLAY_DIR)
        self.episodes = EpisodeLog(run_dir / REPLAY_DIR, obs_space, action_space, task=task, env_config=env_config)
        self.directory = self.episodes.directory
        self.obs_space, self.action_space = obs_space, action_space
        self._steps: list[Step] = []

    @property
    def logged(self) -> int:
        """The number of the next episode file: a checkpoint holds every episode below it."""
        return self.episodes.next_index

    def add(self, step: Step, meta: dict[str, Any] | None = None) -> Path | None:
        """Keep ``step``; when it ends its episode, write the episode durably (with ``meta``)."""
        self._steps.append(step)
        if not step.last:
            return None
        steps, self._steps = self._steps, []
        try:
            return self.episodes.append(steps, meta or {})
        except OSError as err:
            raise RobotRLError(f"cannot write the replay log in {self.directory}: {err}") from None

    def tail(self, first: int) -> Iterator[LoggedEpisode]:
        """The logged episodes numbered ``first`` and up, in order; damaged ones skipped."""
        return self.episodes.read_all(first)
