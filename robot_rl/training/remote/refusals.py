"""Counting and logging what the learner refused, by cause and peer, without flooding the log.

Inside a running learner bad input is refused, counted and the learner keeps serving.
A client that misbehaves (or an attacker without the token) may cause thousands of
refusals a second, so the log is rate-limited per (peer host, cause): the first refusal
is logged at once with the peer's address and the reason; later ones are only counted
and summed up in one line at most every ``LOG_EVERY_S`` seconds (``N more ...``), and
:meth:`Refusals.flush` (called when the server stops) logs what is still unreported, so
the counts in the log add up to the refusals. The counts by cause are part of the
learner's status (``stats.json`` and the progress lines).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

LOG_EVERY_S = 10.0
MAX_PEERS = 256  # (peer, cause) pairs tracked one by one; beyond that they share one entry


def peer_host(peer: str | None) -> str:
    """``ipv4:10.0.0.5:53211`` -> ``10.0.0.5``: one client's connections share a host, not a port."""
    if not peer:
        return "unknown peer"
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6") and rest:
        host = rest.rsplit(":", 1)[0] if ":" in rest else rest
        return host.strip("[]").replace("%5B", "").replace("%5D", "")
    return peer


class _Entry:
    __slots__ = ("logged_at", "pending", "detail")

    def __init__(self, now: float) -> None:
        self.logged_at = now
        self.pending = 0
        self.detail = ""


class Refusals:
    """Thread-safe counters of refused calls and batches, keyed by cause, with a rate-limited log."""

    def __init__(self, *, log_every_s: float = LOG_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._log_every_s = log_every_s
        self._clock = clock

    def count(self, cause: str, detail: str, peer: str | None = None) -> None:
        """Count one refusal of ``peer`` (gRPC's ``context.peer()``); log it if its turn has come."""
        host = peer_host(peer)
        now = self._clock()
        with self._lock:
            self._counts[cause] = self._counts.get(cause, 0) + 1
            key = (host, cause)
            entry = self._entries.get(key)
            if entry is None and len(self._entries) >= MAX_PEERS:
                key = ("other peers", cause)
                entry = self._entries.get(key)
            if entry is None:
                self._entries[key] = _Entry(now)
                first, more = True, 0
            else:
                entry.pending += 1
                entry.detail = detail
                if now - entry.logged_at < self._log_every_s:
                    return
                first, more = False, entry.pending
                entry.pending, entry.logged_at = 0, now
        if first:
            log.warning("learner refused a call from %s (%s): %s", key[0], cause, detail)
        else:
            log.warning("learner refused %d more calls from %s (%s) in the last %.0f s; latest: %s",
                        more, key[0], cause, self._log_every_s, detail)

    def flush(self) -> None:
        """Log the refusals counted but not yet logged."""
        with self._lock:
            due = [(key, entry.pending, entry.detail) for key, entry in self._entries.items() if entry.pending]
            for key, _, _ in due:
                self._entries[key].pending = 0
        for (host, cause), more, detail in due:
            log.warning("learner refused %d more calls from %s (%s); latest: %s", more, host, cause, detail)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
