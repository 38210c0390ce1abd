"""Joining each actor's batches back into episodes, on the learner.

Batches arrive per actor incarnation, in order, carrying ``next_obs`` only on an
episode's last step. :class:`EpisodeAssembler` is the learner server's
:class:`~robot_rl.training.remote.server.TransitionSink`: it keeps one open episode per actor
incarnation, fills each step's ``next_obs`` from the step after it, and when the last
step arrives it writes the episode to the :class:`EpisodeLog` (durably, before the
batch is acknowledged) and queues it for the training thread, which takes finished
episodes with :meth:`EpisodeAssembler.take`. Whole episodes go into replay, so steps of
different actors never interleave inside a buffer (see
:class:`robot_rl.training.learner.Learner`).

Contract with actors: ``episode_id`` is unique per actor incarnation and ``step``
counts up by one inside an episode. What does not fit is counted, never silently
dropped: steps of an episode already logged (a resend) are *duplicates*; the held part
of an episode that never ended, or that has a gap (its middle was lost in the actor's
overflow), is *lost*. An episode may start at a step other than 0 (its beginning was
lost); it is kept from where it starts.

Memory per actor is bounded: an unfinished episode holds at most ``max_open_steps``
steps (a batch that would go beyond is refused whole with a PayloadError, so the actor
counts it and goes on; the held part is lost when the next episode starts), an actor
incarnation that can send no more is forgotten (:meth:`EpisodeAssembler.forget`), and
only the ids of the last ``DONE_KEPT`` logged episodes are remembered per incarnation
(the server recognises resent batches by their seq; these ids only catch resent steps).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from robot_rl.data.transition import Step
from robot_rl.training.remote.errors import PayloadError
from robot_rl.training.replay_log import EpisodeLog

log = logging.getLogger(__name__)

Producer = tuple[str, str]  # (actor id, incarnation)
DONE_KEPT = 4096


@dataclass
class Episode:
    """A finished episode as the training thread receives it."""

    index: int  # file number in the replay log (or arrival number without a log)
    actor_id: str
    steps: list[Step]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return bool(self.steps[-1].success)

    @property
    def ret(self) -> float:
        return float(sum(s.reward for s in self.steps))

    @property
    def interventions(self) -> int:
        return sum(1 for s in self.steps if s.intervened)


@dataclass
class _ProducerState:
    open: list[Step] = field(default_factory=list)
    done: dict[int, None] = field(default_factory=dict)  # ids of the last DONE_KEPT episodes logged, in order
    last_seq: int = 0

    def mark_done(self, episode_id: int) -> None:
        self.done[episode_id] = None
        if len(self.done) > DONE_KEPT:
            del self.done[next(iter(self.done))]


class EpisodeAssembler:
    """A TransitionSink that turns batches into finished, logged episodes."""

    def __init__(self, episode_log: EpisodeLog | None = None, max_open_steps: int = 1 << 20) -> None:
        self.log = episode_log
        self.max_open_steps = max_open_steps
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._producers: dict[Producer, _ProducerState] = {}
        self._finished: collections.deque[Episode] = collections.deque()
        self._count = 0
        self.received_steps = 0
        self.episodes = 0
        self.duplicate_steps = 0
        self.lost_steps = 0

    def restore(self, meta: dict[str, Any], length: int) -> None:
        """Account for an episode read back from the log at resume (it counts as received)."""
        key = (str(meta.get("actor_id", "")), str(meta.get("incarnation", "")))
        with self._lock:
            state = self._producers.setdefault(key, _ProducerState())
            state.mark_done(int(meta.get("episode_id", -1)))
            state.last_seq = max(state.last_seq, int(meta.get("last_seq", 0)))
            self.received_steps += length
            self.episodes += 1
            self._count += 1

    def restore_pruned(self, episodes: int, steps: int, producers: dict[Producer, int]) -> None:
        """Account for episodes the replay log pruned (``pruned.json``): they count as received,
        and their actors' batches up to the seq given count as acknowledged."""
        with self._lock:
            for key, seq in producers.items():
                state = self._producers.setdefault(key, _ProducerState())
                state.last_seq = max(state.last_seq, int(seq))
            self.received_steps += steps
            self.episodes += episodes
            self._count += episodes

    def acked(self) -> dict[Producer, int]:
        """Highest batch seq per actor incarnation whose episode is logged (for the server)."""
        with self._lock:
            return {k: v.last_seq for k, v in self._producers.items() if v.last_seq}

    # -- TransitionSink ----------------------------------------------------------------
    def receive(self, actor_id: str, incarnation: str, seq: int, steps: list[Step]) -> None:
        with self._lock:
            state = self._producers.setdefault((actor_id, incarnation), _ProducerState())
            self._check_room(state, steps)
            for step in steps:
                self._add(actor_id, incarnation, seq, state, step)

    def forget(self, actor_id: str, incarnation: str) -> None:
        """This actor incarnation sends no more: drop what it holds (its open part counts as lost)."""
        with self._lock:
            state = self._producers.pop((actor_id, incarnation), None)
            if state is not None and state.open:
                self._lose(actor_id, state.open, "will never end (its actor process is gone)")

    def _check_room(self, state: _ProducerState, steps: list[Step]) -> None:
        """Refuse the whole batch (before holding any of it) if an open episode would grow past the cap."""
        held_id = state.open[-1].episode_id if state.open else None
        count = len(state.open)
        for step in steps:
            if step.episode_id in state.done:
                continue
            if step.episode_id != held_id:
                held_id, count = step.episode_id, 0
            count += 1
            if count > self.max_open_steps:
                raise PayloadError(f"episode {step.episode_id} would hold more than {self.max_open_steps} steps "
                                   "without ending (learning.max_episode_steps); its steps are refused until "
                                   "the next episode", "episode_too_long")
            if step.last:
                held_id, count = None, 0

    def _add(self, actor_id: str, incarnation: str, seq: int, state: _ProducerState, step: Step) -> None:
        if step.episode_id in state.done:
            self.duplicate_steps += 1
            return
        held = state.open
        if held and held[-1].episode_id != step.episode_id:
            self._lose(actor_id, held, "never ended")
            held = state.open = []
        if held and step.step <= held[-1].step:
            self.duplicate_steps += 1
            return
        if held and step.step != held[-1].step + 1:
            self._lose(actor_id, held, f"has a gap before step {step.step}")
            held = state.open = []
        if held:
            held[-1].next_obs = step.obs
        held.append(step)
        self.received_steps += 1
        if not step.last:
            return
        meta = {"actor_id": actor_id, "incarnation": incarnation, "episode_id": step.episode_id,
                "first_step": held[0].step, "last_seq": seq, "received_unix": time.time()}
        index = self._count
        if self.log is not None:
            index = self.log.next_index
            try:
                self.log.append(held, meta)
            except BaseException:  # not stored: the batch is not acked and comes again
                held.pop()
                self.received_steps -= 1
                raise
        state.open = []
        state.mark_done(step.episode_id)
        state.last_seq = max(state.last_seq, seq)
        self._count += 1
        self.episodes += 1
        self._finished.append(Episode(index, actor_id, held, meta))
        self._ready.notify_all()

    def _lose(self, actor_id: str, held: list[Step], why: str) -> None:
        self.lost_steps += len(held)
        log.warning("actor %s: episode %d %s; dropping its %d held steps", actor_id, held[0].episode_id, why,
                    len(held))

    # -- training thread ---------------------------------------------------------------
    def take(self, timeout: float = 0.0) -> list[Episode]:
        """Finished episodes not taken yet, oldest first (waits up to ``timeout`` for one)."""
        with self._lock:
            if not self._finished and timeout > 0:
                self._ready.wait(timeout)
            out = list(self._finished)
            self._finished.clear()
            return out

    def open_steps(self) -> int:
        with self._lock:
            return sum(len(s.open) for s in self._producers.values())
