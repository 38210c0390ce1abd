"""How many authenticated calls the learner serves at once, per connection and in all.

A client with the shared token could still starve everyone else: gRPC's sync server
runs every call's handler on a thread of its pool, and a handler waits on that thread
for the request body, so a caller that sends headers and never a body (or trickles
it) holds a thread, and with the old global bound a concurrency slot, for as long as
its deadline allowed: 60 such Register calls locked every actor out. The body is what
tells a working caller from a stalled one, so capacity is counted in two stages:

* **Waiting for the body.** A call waits at most ``body_timeout_s`` after its handler
  started; then it is cancelled. At most ``max_waiting`` calls wait at once; one more
  cancels the call that waited longest, taken from the host with the most waiting
  calls, so the newest call (a legitimate actor's body arrives within milliseconds)
  always gets its turn. A connection (peer address and port) has at most
  ``per_connection`` short calls and as many weight streams in flight; more get
  RESOURCE_EXHAUSTED at once.
* **Running.** Only a call whose body arrived takes one of ``calls`` places
  (Register, PushTransitions) or ``streams`` places (StreamWeights); beyond them the
  caller is told RESOURCE_EXHAUSTED and retries later.

The learner's pool has a thread for every call these bounds let exist at once
(:attr:`Intake.threads`), so a call never queues behind stalled ones. Every refusal
and cancellation is counted by cause in :class:`~robot_rl.training.remote.refusals.Refusals`
with the peer (``connection_limit``, ``body_timeout``, ``waiting_full``, ``busy``).
"""

from __future__ import annotations

import collections
import itertools
import threading
import time
from typing import Any, Callable

from robot_rl.training.remote.refusals import Refusals, peer_host

QUEUED, WAITING, RUNNING, DONE, CANCELLED = "queued", "waiting", "running", "done", "cancelled"
THREAD_MARGIN = 8  # threads for calls that are being cancelled and have not returned yet


class Ticket:
    """One authenticated call, from its headers until it ends."""

    __slots__ = ("number", "streaming", "started", "state", "peer", "host", "context", "cause", "why")

    def __init__(self, number: int, streaming: bool, now: float) -> None:
        self.number = number
        self.streaming = streaming
        self.started = now
        self.state = QUEUED
        self.peer = ""  # set while the call counts against its connection
        self.host = ""
        self.context: Any = None
        self.cause = ""  # why it was cancelled: refusal cause and message
        self.why = ""


class Intake:
    """Thread-safe accounting of authenticated calls; cancels stalled ones from a watchdog thread."""

    def __init__(self, *, calls: int, streams: int, per_connection: int, max_waiting: int, body_timeout_s: float,
                 refusals: Refusals, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = {False: calls, True: streams}
        self.per_connection = per_connection
        self.max_waiting = max_waiting
        self.body_timeout_s = body_timeout_s
        self.refusals = refusals
        self._clock = clock
        self._lock = threading.Lock()
        self._numbers = itertools.count()
        self._queued = 0  # tickets whose handler has not started yet
        self._waiting: dict[str, collections.OrderedDict[int, Ticket]] = {}  # host -> waiting tickets, oldest first
        self._waiting_count = 0
        self._running = {False: 0, True: 0}
        self._per_peer: dict[tuple[str, bool], int] = {}
        self._stop = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, name="learner-intake", daemon=True)
        self._watchdog.start()

    @property
    def threads(self) -> int:
        """Pool threads that let every call these bounds allow run at once."""
        return self.max_waiting + self.limits[False] + self.limits[True] + THREAD_MARGIN

    def close(self) -> None:
        self._stop.set()

    # -- the three stages of a call -------------------------------------------------------
    def headers(self, streaming: bool) -> Ticket:
        """A call's headers passed the token check (no peer known yet): count it as waiting."""
        with self._lock:
            ticket = Ticket(next(self._numbers), streaming, self._clock())
            self._queued += 1
            victim = self._make_room()
        self._cancel(victim)
        return ticket

    def start(self, ticket: Ticket, peer: str, context: Any) -> str | None:
        """Its handler runs: None, or why the call is refused (already cancelled, or its connection is full)."""
        with self._lock:
            self._queued -= 1
            if ticket.state == CANCELLED:
                return ticket.why
            key = (peer, ticket.streaming)
            if self._per_peer.get(key, 0) >= self.per_connection:
                ticket.state = DONE
                what = "weight streams" if ticket.streaming else "Register/PushTransitions calls"
                return (f"this connection already has {self.per_connection} {what} in flight "
                        "(learning.max_calls_per_connection); retry when one has ended")
            self._per_peer[key] = self._per_peer.get(key, 0) + 1
            ticket.peer, ticket.host, ticket.context = peer, peer_host(peer), context
            ticket.state, ticket.started = WAITING, self._clock()
            self._waiting.setdefault(ticket.host, collections.OrderedDict())[ticket.number] = ticket
            self._waiting_count += 1
        return None

    def arrived(self, ticket: Ticket) -> str | None:
        """Its body arrived: None when it may run now, or why not (cancelled meanwhile, learner busy)."""
        with self._lock:
            if ticket.state != WAITING:
                return ticket.why or "call cancelled"
            self._unwait(ticket)
            streaming = ticket.streaming
            if self._running[streaming] >= self.limits[streaming]:
                ticket.state = DONE
                what = "weight streams (2 x learning.max_actors)" if streaming else \
                    "calls (learning.max_concurrent_calls)"
                return f"learner busy: {self.limits[streaming]} {what} in progress; retry shortly"
            self._running[streaming] += 1
            ticket.state = RUNNING
        return None

    def leave(self, ticket: Ticket) -> None:
        """The call is over, however it ended (idempotent)."""
        with self._lock:
            if ticket.state == QUEUED:  # ended before its handler ran (server stopping)
                self._queued -= 1
            elif ticket.state == WAITING:
                self._unwait(ticket)
            elif ticket.state == RUNNING:
                self._running[ticket.streaming] -= 1
            if ticket.peer:
                key = (ticket.peer, ticket.streaming)
                left = self._per_peer.get(key, 0) - 1
                if left > 0:
                    self._per_peer[key] = left
                else:
                    self._per_peer.pop(key, None)
                ticket.peer = ""
            if ticket.state != CANCELLED:
                ticket.state = DONE
            ticket.context = None

    def snapshot(self) -> dict[str, int]:
        """Calls in each stage now (for tests and status)."""
        with self._lock:
            return {"queued": self._queued, "waiting": self._waiting_count, "running": self._running[False],
                    "streams": self._running[True], "connections": len({p for p, _ in self._per_peer})}

    # -- cancelling stalled calls ---------------------------------------------------------
    def _unwait(self, ticket: Ticket) -> None:
        """Take ``ticket`` off the waiting lists (holds the lock)."""
        host = self._waiting.get(ticket.host)
        if host is not None and host.pop(ticket.number, None) is not None:
            self._waiting_count -= 1
            if not host:
                del self._waiting[ticket.host]

    def _make_room(self) -> Ticket | None:
        """With too many calls waiting, pick the one that waited longest on the busiest host (holds the lock)."""
        if self._queued + self._waiting_count <= self.max_waiting or not self._waiting:
            return None
        host = max(self._waiting, key=lambda h: (len(self._waiting[h]), -next(iter(self._waiting[h].values())).started))
        victim = next(iter(self._waiting[host].values()))
        return self._mark(victim, "waiting_full",
                          f"{self.max_waiting} calls were waiting for their request body "
                          "(learning.max_waiting_calls); the one waiting longest, from the busiest host, was cancelled")

    def _mark(self, ticket: Ticket, cause: str, why: str) -> Ticket:
        """Mark a waiting ticket cancelled (holds the lock); :meth:`_cancel` then ends its call."""
        self._unwait(ticket)
        ticket.state, ticket.cause, ticket.why = CANCELLED, cause, why
        return ticket

    def _cancel(self, ticket: Ticket | None) -> None:
        if ticket is None:
            return
        self.refusals.count(ticket.cause, ticket.why, ticket.host or None)
        context = ticket.context
        if context is not None:
            context.cancel()  # wakes its handler, which ends the call (the client sees CANCELLED)

    def _overdue(self) -> list[Ticket]:
        now = self._clock()
        with self._lock:
            late = []
            for host in self._waiting.values():
                for ticket in host.values():  # oldest first
                    if now - ticket.started <= self.body_timeout_s:
                        break
                    late.append(ticket)
            return [self._mark(t, "body_timeout",
                               f"its request body did not arrive within {self.body_timeout_s:g} s "
                               "(learning.body_timeout_s); call cancelled") for t in late]

    def _watch(self) -> None:
        period = min(0.25, self.body_timeout_s / 4)
        while not self._stop.wait(period):
            for ticket in self._overdue():
                self._cancel(ticket)
