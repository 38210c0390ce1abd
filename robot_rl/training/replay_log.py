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

The log is bounded (:meth:`EpisodeLog.prune`, ``train.replay_log``): the oldest episodes
are deleted, whole files, once they are neither among the newest that fill the online
buffer, nor hold an intervened step (human data is never deleted), nor are still needed
by a resume. What was pruned is counted in ``pruned.json`` (episodes, steps, bytes, and
the last batch seq of each actor incarnation whose episodes went), written durably
*before* any file is deleted: a ``kill -9`` in the middle of a prune leaves files that
the record already counts, and the next open finishes deleting them (every episode a
prune keeps is never touched). So a resumed learner still knows how many steps it
received. :meth:`EpisodeLog.read_window` reads back only what the buffers can hold,
newest first: a resume costs what the log keeps, not what the run ever logged.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.config.agent import TrainConfig
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
from robot_rl.data.durable import READ_ERRORS, durable_write, durable_writer, fsync_dir
from robot_rl.data.spaces import spaces_spec
from robot_rl.data.transition import Step

log = logging.getLogger(__name__)


PRUNED_FILE = "pruned.json"
#: Actor incarnations whose last batch seq ``pruned.json`` remembers (the newest ones).
PRODUCERS_KEPT = 1024


@dataclass
class LoggedEpisode:
    index: int  # file number, in arrival order
    steps: list[Step]
    meta: dict[str, Any]


@dataclass
class _Entry:
    """What pruning and a resume need to know of one episode file, without reading its frames."""

    index: int
    steps: int
    frames: int  # slots it takes in a replay buffer: its steps, plus the final frame unless it terminated
    nbytes: int
    intervened: int  # intervened steps; -1: the file cannot be read (kept, like human data)
    producer: tuple[str, str] | None = None  # (actor id, incarnation) of the learning plane
    last_seq: int = 0
    episode_id: int = -1  # the actor's own number for it

    @property
    def protected(self) -> bool:
        return self.intervened != 0


@dataclass
class PruneTotals:
    """Everything pruned from the log so far (``pruned.json``)."""

    below: int = 0  # every episode numbered below it is pruned, except the protected ones
    episodes: int = 0
    steps: int = 0
    bytes: int = 0
    producers: dict[tuple[str, str], int] = field(default_factory=dict)  # -> highest batch seq pruned

    def as_dict(self) -> dict[str, Any]:
        return {"below": self.below, "episodes": self.episodes, "steps": self.steps, "bytes": self.bytes,
                "producers": [[a, i, seq] for (a, i), seq in self.producers.items()]}

    @classmethod
    def from_dict(cls, data: Any) -> "PruneTotals":
        producers = {(str(a), str(i)): int(seq) for a, i, seq in data.get("producers", [])}
        return cls(int(data["below"]), int(data["episodes"]), int(data["steps"]), int(data["bytes"]), producers)


@dataclass
class Pruned:
    """What one :meth:`EpisodeLog.prune` deleted."""

    episodes: int
    steps: int
    bytes: int
    first: int  # lowest and highest file number deleted
    last: int


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
        self._lock = threading.Lock()  # appends come from the server's threads, prunes from the training one
        self.pruned = _read_pruned(self.directory / PRUNED_FILE)
        self._entries: dict[int, _Entry] = {}  # by file number, oldest first
        self._bytes = 0
        self.over_bound_said = False  # the log had to stay above max_mb, and a warning said so
        self.prunes = 0  # prunes that deleted something, by this object
        self.prune_failures = 0  # prunes after an append that failed (disk trouble): the episode stays stored
        #: With a TrainConfig, every append is followed by a prune to its ``replay_log`` bound,
        #: so the files on disk never exceed the bound by more than the episode just written.
        self.auto_bound: TrainConfig | None = None
        #: Episodes numbered this or more are never pruned (``below`` of :meth:`prune`): the learner's
        #: last checkpoint does not hold them yet, so a resume must read them back.
        self.keep_from: int | None = None
        files = episode_files(self.directory)
        self.next_index = episode_index(files[-1]) + 1 if files else 0
        self.next_index = max(self.next_index, self.pruned.below)
        leftovers = 0
        for path in files:
            entry = _scan(path)
            if entry.index < self.pruned.below and not entry.protected:
                _unlink(path)  # a prune a crash interrupted: the record already counts it
                leftovers += 1
                continue
            self._add_entry(entry)
        if leftovers:
            fsync_dir(self.directory)
            log.info("replay log %s: finished an interrupted prune (%d episode files)", self.directory, leftovers)

    def _add_entry(self, entry: _Entry) -> None:
        self._entries[entry.index] = entry
        self._bytes += entry.nbytes

    @property
    def size_bytes(self) -> int:
        """Bytes of the episode files the log holds now."""
        return self._bytes

    @property
    def kept_episodes(self) -> int:
        return len(self._entries)

    @property
    def kept_steps(self) -> int:
        with self._lock:
            return sum(e.steps for e in self._entries.values())

    def kept(self) -> list[tuple[dict[str, Any], int]]:
        """Each readable kept episode's origin (as its ``meta`` names it) and length, oldest first:
        what a resumed learner counts as received without reading the episodes."""
        with self._lock:
            entries = list(self._entries.values())
        return [({"actor_id": e.producer[0], "incarnation": e.producer[1], "episode_id": e.episode_id,
                  "last_seq": e.last_seq} if e.producer else {}, e.steps) for e in entries if e.intervened >= 0]

    def append(self, steps: list[Step], meta: dict[str, Any]) -> Path:
        """Write one episode (its last step ends it) durably; returns the file."""
        arrays = episode_arrays(steps, self.obs_keys)
        arrays["meta"] = np.frombuffer(jsonio.dumps(meta).encode(), dtype=np.uint8)
        with self._lock:
            path = self.directory / f"episode_{self.next_index:06d}.npz"
            with durable_writer(path) as f:
                np.savez(f, **arrays)
            entry = _Entry(self.next_index, len(steps), len(steps) + (0 if steps[-1].terminated else 1),
                           path.stat().st_size, int(arrays["intervened"].sum()), *_producer(meta))
            self._add_entry(entry)
            self.next_index += 1
        if self.auto_bound is not None:
            try:  # the episode is stored whatever happens here: a failed prune must not undo its ack
                prune_to_config(self, self.auto_bound, below=self.keep_from)
            except OSError as err:
                self.prune_failures += 1
                log.warning("replay log %s: could not prune (%s); the log is over its bound until a prune "
                            "succeeds", self.directory, err)
        return path

    # --- the bound -------------------------------------------------------------------

    def prune(self, keep_frames: int, *, max_bytes: float | None = None, max_age_steps: int | None = None,
              below: int | None = None) -> Pruned | None:
        """Delete the oldest episode files the bound no longer keeps; returns what went (None: nothing).

        Always kept: the newest episodes holding ``keep_frames`` buffer frames (what the
        online buffer can hold), every episode with an intervened step or that cannot be
        read, and with ``below`` every episode numbered ``below`` or more (a resume still
        needs them). Of the others, the newest are kept while the whole log stays within
        ``max_bytes`` and fewer than ``max_age_steps`` steps were logged after them; the
        rest go, oldest first. ``pruned.json`` counts them before the first is deleted.
        """
        with self._lock:
            entries = list(self._entries.values())
            must: set[int] = set()
            frames = 0
            for e in reversed(entries):
                if frames < keep_frames or e.protected or (below is not None and e.index >= below):
                    must.add(e.index)
                frames += e.frames
            budget = None if max_bytes is None else max_bytes - sum(self._entries[i].nbytes for i in must)
            victims: list[_Entry] = []
            age = 0
            for e in reversed(entries):
                fits = e.index in must or (
                    not victims and (budget is None or e.nbytes <= budget)
                    and (max_bytes is not None or max_age_steps is not None)
                    and (max_age_steps is None or age < max_age_steps))
                if fits:
                    if e.index not in must and budget is not None:
                        budget -= e.nbytes
                else:
                    victims.append(e)
                age += e.steps
            if not victims:
                return None
            victims.reverse()  # oldest first
            totals = self.pruned
            for e in victims:
                if e.producer is not None:  # newest last: the oldest are forgotten first
                    totals.producers[e.producer] = max(totals.producers.pop(e.producer, 0), e.last_seq)
            while len(totals.producers) > PRODUCERS_KEPT:
                del totals.producers[next(iter(totals.producers))]
            totals.below = max(totals.below, victims[-1].index + 1)
            totals.episodes += len(victims)
            totals.steps += sum(e.steps for e in victims)
            totals.bytes += sum(e.nbytes for e in victims)
            durable_write(self.directory / PRUNED_FILE, jsonio.dumps(totals.as_dict()).encode())
            for e in victims:  # the record counts them already: a crash here is finished at the next open
                _unlink(self.directory / f"episode_{e.index:06d}.npz")
                del self._entries[e.index]
                self._bytes -= e.nbytes
            fsync_dir(self.directory)
            self.prunes += 1
        return Pruned(len(victims), sum(e.steps for e in victims), sum(e.nbytes for e in victims),
                      victims[0].index, victims[-1].index)

    def read_window(self, online_frames: int, demo_steps: int,
                    since: int | None = None) -> Iterator[tuple[LoggedEpisode, bool]]:
        """What a resume needs, in arrival order, each with whether it goes into the online buffer.

        The newest episodes holding ``online_frames`` frames (``True``: all their steps go in),
        then, older than those, the newest episodes with intervened steps until
        ``demo_steps`` intervened steps are reached (``False``: only their intervened steps
        feed the demo buffer; the online buffer would have overwritten the rest). Nothing
        older is read: a resume reads what the buffers hold, newest first. With ``since``,
        every episode numbered ``since`` or more is read as well (``False`` when outside the
        online window): the checkpoint's state statistics do not count their steps yet.
        """
        with self._lock:
            entries = list(self._entries.values())
        chosen: dict[int, bool] = {}
        frames, demo_left = 0, demo_steps
        for e in reversed(entries):
            if frames < online_frames:
                chosen[e.index] = True
                frames += e.frames
                demo_left -= max(0, e.intervened)
            elif e.intervened > 0 and demo_left > 0:
                chosen[e.index] = False
                demo_left -= e.intervened
            elif since is not None and e.index >= since:
                chosen[e.index] = False
        for logged in self._read(sorted(chosen)):
            yield logged, chosen[logged.index]

    def read_all(self, first: int = 0) -> Iterator[LoggedEpisode]:
        """The logged episodes numbered ``first`` and up, in arrival order (``next_obs`` filled
        in for every step). One that cannot be read back (damaged on disk, or holding NaN)
        is skipped with a warning naming it: it stays on disk, and every other one is kept."""
        yield from self._read([episode_index(p) for p in episode_files(self.directory) if episode_index(p) >= first])

    def _read(self, indices: list[int]) -> Iterator[LoggedEpisode]:
        for index in indices:
            path = self.directory / f"episode_{index:06d}.npz"
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


def prune_to_config(episode_log: EpisodeLog, train_cfg: TrainConfig, *, below: int | None = None) -> Pruned | None:
    """Hold ``episode_log`` to ``train.replay_log`` (keeping ``train.replay_capacity`` frames' worth and,
    with ``below``, every episode numbered ``below`` or more); log what went, in one line."""
    rc = train_cfg.replay_log
    if rc.keep_all:
        return None
    max_bytes = None if rc.max_mb is None else rc.max_mb * 1e6
    pruned = episode_log.prune(train_cfg.replay_capacity, max_bytes=max_bytes, max_age_steps=rc.max_age_steps,
                               below=below)
    if pruned is not None:
        total = episode_log.pruned
        log.info("replay log: pruned %d episodes (files %d..%d, %d steps, %.2f MB); it keeps %d episodes, %.2f MB; "
                 "pruned in all: %d episodes, %d steps, %.2f MB", pruned.episodes, pruned.first, pruned.last,
                 pruned.steps, pruned.bytes / 1e6, episode_log.kept_episodes, episode_log.size_bytes / 1e6,
                 total.episodes, total.steps, total.bytes / 1e6)
        if max_bytes is not None and episode_log.size_bytes > max_bytes and not episode_log.over_bound_said:
            episode_log.over_bound_said = True  # once: it stays so while the buffers need more than the bound
            log.warning("replay log %s holds %.2f MB, more than train.replay_log.max_mb=%g: the episodes that fill "
                        "train.replay_capacity=%d frames, those with interventions and those a resume needs are "
                        "never pruned", episode_log.directory, episode_log.size_bytes / 1e6, rc.max_mb,
                        train_cfg.replay_capacity)
    return pruned


def _producer(meta: dict[str, Any]) -> tuple[tuple[str, str] | None, int, int]:
    """The learning plane's (actor id, incarnation), batch seq and episode id in an episode's meta, if any."""
    if "actor_id" not in meta:
        return None, 0, -1
    try:
        return ((str(meta["actor_id"]), str(meta.get("incarnation", ""))), int(meta.get("last_seq", 0)),
                int(meta.get("episode_id", -1)))
    except (TypeError, ValueError):
        return None, 0, -1


def _scan(path: Path) -> _Entry:
    """An episode file's sizes and flags, from its small arrays (its frames stay unread)."""
    index, nbytes = episode_index(path), path.stat().st_size
    try:
        with np.load(path, allow_pickle=False) as data:
            terminated, intervened = data["terminated"], data["intervened"]
            meta = json.loads(data["meta"].tobytes().decode()) if "meta" in data.files else {}
        steps = int(terminated.shape[0])
        if steps == 0 or not isinstance(meta, dict):
            raise ValueError("empty episode or meta")
    except READ_ERRORS + (TypeError, IndexError):
        return _Entry(index, 0, 0, nbytes, -1)  # unreadable: kept, and skipped with a warning when read
    return _Entry(index, steps, steps + (0 if bool(terminated[-1]) else 1), nbytes, int(intervened.sum()),
                  *_producer(meta))


def _read_pruned(path: Path) -> PruneTotals:
    """``pruned.json``, or no prune yet. A damaged one is an error: the counts would be wrong."""
    if not path.exists():
        return PruneTotals()
    try:
        return PruneTotals.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DemoFormatError(f"{path}: the replay log's prune record is unreadable ({type(err).__name__}); "
                              "restore it from a backup, or delete it to count only the episodes kept") from None


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
