"""The actor's bounded queue of unsent steps.

The control loop hands every Step to :meth:`Outbox.add`, which never blocks on the
network: it appends to an open batch and seals the batch after ``batch_steps`` steps or
at an episode's end (so a batch never spans two episodes). A sender thread takes sealed
batches in order with :meth:`Outbox.next_batch`, sends one, and removes it with
:meth:`Outbox.ack` only once the learner acknowledged it; while the learner is away
batches stay queued and go out in order on reconnect.

Acknowledged batches of the episode in progress are *retained* until the batch that
ends the episode is acknowledged: the learner persists replay an episode at a time, so a
learner that crashes loses the part of an episode it had not finished. After
reconnecting to a new learner process, :meth:`Outbox.requeue_retained` puts that part
back at the front of the queue and nothing the actor produced is lost.

Batches are numbered (seq 1, 2, 3, ... per actor incarnation) when they are first handed
to the sender, so a batch evicted before it was ever sent leaves no gap: the learner
takes batches only in seq order, without gaps. When the learner says which seq it takes
next (at registration, or refusing a batch with OUT_OF_RANGE), :meth:`Outbox.renumber`
numbers the queued batches it does not hold from there.

The queue holds at most ``capacity_steps`` steps. Beyond that the oldest sealed batch
holding no intervention steps is evicted (interventions are the scarcest data); when
every queued batch holds interventions, the incoming step is refused instead. Either way
the loss is counted in :attr:`Outbox.dropped_steps` and
:attr:`Outbox.dropped_intervention_steps`, never silent. The batch being sent is never
evicted, so a batch is either delivered or counted as dropped, not both.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from robot_rl.data.transition import Step


@dataclass
class Batch:
    seq: int  # 0 until the batch is first handed to the sender
    steps: list[Step] = field(default_factory=list)
    opened: float = 0.0

    @property
    def interventions(self) -> int:
        return sum(1 for s in self.steps if s.intervened)


class Outbox:
    """Thread-safe FIFO of sealed step batches with a bound and overflow accounting."""

    def __init__(self, batch_steps: int, capacity_steps: int, max_age_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if batch_steps < 1 or capacity_steps < 1:
            raise ValueError("batch_steps and capacity_steps must be positive")
        self.batch_steps = batch_steps
        self.capacity_steps = capacity_steps
        self.max_age_s = max_age_s
        self._clock = clock
        self._cond = threading.Condition()
        self._sealed: collections.deque[Batch] = collections.deque()
        self._open: Batch | None = None
        self._next_seq = 1
        self._in_flight: Batch | None = None  # the batch being sent; never evicted
        self._size = 0  # steps in sealed + open batches
        self.added_steps = 0
        self.acked_steps = 0
        self.dropped_steps = 0
        self.dropped_intervention_steps = 0
        self.rejected_steps = 0  # refused by the learner as malformed
        self.resent_steps = 0  # requeued after a learner restart
        self._retained: list[Batch] = []  # acked batches of the episode in progress

    # -- control-loop side --------------------------------------------------------------
    def add(self, step: Step) -> bool:
        """Queue one step; False when it had to be refused (counted as dropped)."""
        with self._cond:
            self.added_steps += 1
            if self._size >= self.capacity_steps and not self._evict_one():
                self._count_dropped([step])
                return False
            if self._open is None:
                self._open = Batch(seq=0, opened=self._clock())
            self._open.steps.append(step)
            self._size += 1
            if len(self._open.steps) >= self.batch_steps or step.last:
                self._seal()
            return True

    def seal(self, max_age_s: float | None = None) -> None:
        """Seal the open batch (only if older than ``max_age_s`` when given)."""
        with self._cond:
            if self._open is not None and (max_age_s is None or self._clock() - self._open.opened >= max_age_s):
                self._seal()

    # -- sender side --------------------------------------------------------------------
    def next_batch(self, timeout: float | None = None) -> Batch | None:
        """The oldest sealed batch (left queued until acked), or None after ``timeout``.

        A partial open batch older than ``max_age_s`` is sealed, so data keeps flowing
        during long episodes.
        """
        deadline = None if timeout is None else self._clock() + timeout
        with self._cond:
            while True:
                if self._open is not None and self._clock() - self._open.opened >= self.max_age_s:
                    self._seal()
                if self._sealed:
                    head = self._sealed[0]
                    if not head.seq:
                        head.seq = self._next_seq
                        self._next_seq += 1
                    self._in_flight = head
                    return head
                wait = self.max_age_s if self._open is not None else None
                if deadline is not None:
                    left = deadline - self._clock()
                    if left <= 0:
                        return None
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def ack(self, seq: int) -> None:
        """The learner holds batch ``seq``: remove it (and anything older still queued)."""
        with self._cond:
            while self._sealed and 0 < self._sealed[0].seq <= seq:
                batch = self._sealed.popleft()
                self._size -= len(batch.steps)
                self.acked_steps += len(batch.steps)
                self._retain(batch)
            if self._in_flight is not None and self._in_flight.seq <= seq:
                self._in_flight = None
            self._cond.notify_all()

    def reject(self, seq: int) -> int:
        """The learner refused batch ``seq`` for good: remove it, count it; returns its size.

        The learner did not store it, so it takes ``seq`` next: the following batches are
        numbered from there.
        """
        with self._cond:
            for batch in self._sealed:
                if batch.seq == seq:
                    self._sealed.remove(batch)
                    self._size -= len(batch.steps)
                    self.rejected_steps += len(batch.steps)
                    if self._in_flight is batch:
                        self._in_flight = None
                    self._renumber(seq)
                    self._cond.notify_all()
                    return len(batch.steps)
            return 0

    def renumber(self, next_seq: int) -> None:
        """The learner holds every seq below ``next_seq`` and none from it: number what is queued from there.

        Call :meth:`ack` with ``next_seq - 1`` first, so that nothing the learner holds is
        sent again under a new number.
        """
        with self._cond:
            self._renumber(next_seq)

    @property
    def retained_steps(self) -> int:
        """Acked steps of the episode in progress: what a restarted learner would need again."""
        with self._cond:
            return sum(len(b.steps) for b in self._retained)

    def requeue_retained(self) -> int:
        """Put the acked batches of the unfinished episode back in front; returns their steps.

        For a learner that restarted and lost the part of the episode it held in memory.
        Batches keep their seq, so a learner that does hold them acks them as duplicates.
        """
        with self._cond:
            steps = sum(len(b.steps) for b in self._retained)
            self._sealed.extendleft(reversed(self._retained))
            self._size += steps
            self.acked_steps -= steps
            self.resent_steps += steps
            self._retained = []
            self._cond.notify_all()
            return steps

    def release(self) -> None:
        """The in-flight batch was not delivered; it may be evicted again if space runs out."""
        with self._cond:
            self._in_flight = None

    def wait_empty(self, timeout: float) -> bool:
        """Seal the open batch and wait until everything is acked (True) or ``timeout``."""
        deadline = self._clock() + timeout
        self.seal()
        with self._cond:
            while self._size > 0:
                left = deadline - self._clock()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
            return True

    @property
    def queued_steps(self) -> int:
        with self._cond:
            return self._size

    # -- internals (hold the lock) --------------------------------------------------------
    def _renumber(self, next_seq: int) -> None:
        for batch in self._sealed:
            if batch.seq:
                batch.seq = next_seq
                next_seq += 1
        self._next_seq = next_seq

    def _seal(self) -> None:
        assert self._open is not None
        self._sealed.append(self._open)
        self._open = None
        self._cond.notify_all()

    def _retain(self, batch: Batch) -> None:
        if self._retained and self._retained[-1].steps[-1].episode_id != batch.steps[0].episode_id:
            self._retained = []  # that episode never finished (its end was dropped)
        if batch.steps[-1].last:
            self._retained = []
        else:
            self._retained.append(batch)

    def _evict_one(self) -> bool:
        for batch in self._sealed:
            if batch is not self._in_flight and batch.interventions == 0:
                self._sealed.remove(batch)
                self._size -= len(batch.steps)
                self._count_dropped(batch.steps)
                return True
        return False

    def _count_dropped(self, steps: list[Step]) -> None:
        self.dropped_steps += len(steps)
        self.dropped_intervention_steps += sum(1 for s in steps if s.intervened)
