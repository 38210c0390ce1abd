"""Counting what the learner refused, by cause, without flooding the log.

Inside a running learner bad input is refused, counted and the learner keeps serving.
A client that misbehaves (or an attacker without the token) may cause thousands of
refusals a second, so each cause is logged once, the first time it happens, with one
example; after that only its count grows. The counts are part of the learner's status
(``stats.json`` and the progress lines).
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Refusals:
    """Thread-safe counters of refused calls and batches, keyed by cause."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def count(self, cause: str, detail: str) -> None:
        """Count one refusal; the first of each ``cause`` is logged with its ``detail``."""
        with self._lock:
            first = cause not in self._counts
            self._counts[cause] = self._counts.get(cause, 0) + 1
        if first:
            log.warning("learner refused a call (%s): %s; further refusals of this kind are only counted "
                        "(see the learner's status)", cause, detail)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
