"""The learner's replay on disk: append-only, one file per finished episode, fsync'd.

The directory is a demo directory in the documented format of
:mod:`robot_rl.data.demos` (a ``manifest.json`` with the spaces, then
``episode_NNNNNN.npz`` files numbered in arrival order), so ``robot-rl train --set
train.demos=<run>/replay`` or any demo tool can read it. Each file also holds a
``meta`` member (UTF-8 JSON as a uint8 array): which actor and actor incarnation sent
it, its episode id there, and the seq of the batch that ended it, which is what a
restarted learner needs to recognise batches it already holds.

A file is written under a temporary name, fsync'd, renamed, and the directory fsync'd
(:mod:`robot_rl.data.durable`), before the learner acknowledges the batch that ended the
episode. So after ``kill -9``
(or a power cut) every acknowledged episode is on disk whole, and a half-written file
is never mistaken for an episode.
"""

from __future__ import annotations

import datetime
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.data.demos import (
    FORMAT,
    MANIFEST,
    VERSION,
    DemoFormatError,
    check_demo_dir,
    episode_arrays,
    episode_files,
    episode_index,
    read_episode,
    remove_stale_episodes,
)
from robot_rl.data.durable import READ_ERRORS, durable_write, durable_writer
from robot_rl.data.spaces import spaces_spec
from robot_rl.data.transition import Step

log = logging.getLogger(__name__)


@dataclass
class LoggedEpisode:
    index: int  # file number, in arrival order
    steps: list[Step]
    meta: dict[str, Any]


class EpisodeLog:
    """Writes and reads back the episode files of one replay directory."""

    def __init__(self, directory: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                 task: str = "", env_config: dict[str, Any] | None = None) -> None:
        self.directory = Path(directory)
        self.obs_space, self.action_space = obs_space, action_space
        self.obs_keys = sorted(obs_space.spaces)
        self.directory.mkdir(parents=True, exist_ok=True)
        if (self.directory / MANIFEST).exists():
            check_demo_dir(self.directory, obs_space, action_space)  # names a mismatching key
        else:
            manifest = {"format": FORMAT, "version": VERSION, "task": task, "source": "learner replay",
                        "created": datetime.datetime.now().isoformat(timespec="seconds"),
                        "spaces": spaces_spec(obs_space, action_space), "env": env_config or {}}
            durable_write(self.directory / MANIFEST, jsonio.dumps(manifest, indent=1).encode())
        remove_stale_episodes(self.directory)
        files = episode_files(self.directory)
        self.next_index = episode_index(files[-1]) + 1 if files else 0

    def append(self, steps: list[Step], meta: dict[str, Any]) -> Path:
        """Write one episode (its last step ends it) durably; returns the file."""
        arrays = episode_arrays(steps, self.obs_keys)
        arrays["meta"] = np.frombuffer(jsonio.dumps(meta).encode(), dtype=np.uint8)
        path = self.directory / f"episode_{self.next_index:06d}.npz"
        with durable_writer(path) as f:
            np.savez(f, **arrays)
        self.next_index += 1
        return path

    def read_all(self, first: int = 0) -> Iterator[LoggedEpisode]:
        """The logged episodes numbered ``first`` and up, in arrival order (``next_obs`` filled
        in for every step). One that cannot be read back (damaged on disk, or holding NaN)
        is skipped with a warning naming it: it stays on disk, and every other one is kept."""
        for path in episode_files(self.directory):
            index = episode_index(path)
            if index < first:
                continue
            try:
                steps = read_episode(path, self.obs_space, self.action_space, episode_id=index)
                meta = _read_meta(path)
            except DemoFormatError as err:
                log.warning("skipping a damaged replay episode (the file stays): %s", err)
                continue
            yield LoggedEpisode(index, steps, meta)


def _read_meta(path: Path) -> dict[str, Any]:
    """The episode's ``meta`` member (JSON); an unreadable one is a DemoFormatError."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if "meta" not in data.files:
                return {}
            meta = json.loads(data["meta"].tobytes().decode())
    except READ_ERRORS as err:
        raise DemoFormatError(f"{path}: unreadable meta ({type(err).__name__})") from None
    if not isinstance(meta, dict):
        raise DemoFormatError(f"{path}: meta is not a JSON object")
    return meta
