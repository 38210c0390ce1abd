"""A TransitionSink for learning-plane tests: what a LearnerServer stored, per actor, in order."""

from __future__ import annotations

import threading
from typing import Any, Sequence


class Recorder:
    """A TransitionSink that keeps (episode, step) per actor, in arrival order, and counts its calls.

    Tests compare :meth:`got` with the steps an actor submitted: nothing lost, nothing twice,
    in order. ``calls`` tells a batch stored once from one stored again.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keys: dict[str, list[tuple[int, int]]] = {}
        self.calls = 0

    def receive(self, actor_id: str, incarnation: str, seq: int, steps: Sequence[Any]) -> None:
        with self.lock:
            self.calls += 1
            self.keys.setdefault(actor_id, []).extend((s.episode_id, s.step) for s in steps)

    def got(self, actor_id: str) -> list[tuple[int, int]]:
        with self.lock:
            return list(self.keys.get(actor_id, []))
