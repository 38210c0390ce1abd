"""Whether a learner keeps its update-to-data ratio, and how far behind it is.

The learner process updates ``train.utd_ratio`` times per env step *received*, and actors
do not wait for it (unless ``learning.sync_steps`` makes sim actors wait for each new
weight version). On a slow CPU, or with many actors, updates fall behind the data: the
*backlog* (``floor(utd_ratio x (steps received - learning_starts)) - updates done``)
grows without end, the policy the actors run lags ever further behind the data, and
evaluations come later and later. :class:`UtdMonitor` measures the *effective* ratio,
updates done per step received over a window of ``learning.utd_window_s`` seconds, and
when it is below ``learning.utd_warn_fraction`` of the configured ratio while a backlog
is left, it says so: once per window, with the remedy.

The remedy named is ``learning.sync_steps``: a sim actor then takes at most that many
steps per weight version and waits for the learner to catch up, so the ratio holds at
the cost of collection speed. A robot cannot wait mid-task, so there the remedies are
fewer updates per step (``train.utd_ratio``), fewer actors, or a faster learner
(``train.device``); the warning names them too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class UtdWindow:
    """One finished window: its effective ratio, and the backlog at its end."""

    seconds: float
    steps: int  # env steps received during the window (past learning_starts)
    updates: int  # updates done during the window
    backlog: int  # at the window's end
    backlog_growth: int  # backlog at its end minus at its start

    @property
    def effective(self) -> float:
        return self.updates / self.steps if self.steps > 0 else float("nan")

    @property
    def growth_per_hour(self) -> float:
        return self.backlog_growth * 3600.0 / self.seconds if self.seconds > 0 else 0.0


class UtdMonitor:
    """Feed it the counters every loop turn (:meth:`observe`); it judges each finished window."""

    def __init__(self, utd_ratio: float, *, window_s: float = 60.0, fraction: float = 0.8,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.utd_ratio = float(utd_ratio)
        self.window_s = float(window_s)
        self.fraction = float(fraction)
        self.clock = clock
        self.behind = False  # the last finished window was behind
        self.warnings = 0  # windows that were behind (each warned once)
        self.backlog = 0
        self.max_backlog = 0
        self.last: UtdWindow | None = None
        self._start: tuple[float, int, int, int] | None = None  # (time, steps, updates, backlog) at window start

    def observe(self, steps: int, updates: int, backlog: int) -> str | None:
        """``steps``: env steps received past ``learning_starts``; ``updates``: updates done;
        ``backlog``: updates due now. Returns the warning line when a window that just
        ended was behind (so at most once per window), else None."""
        now = self.clock()
        self.backlog = max(0, int(backlog))
        self.max_backlog = max(self.max_backlog, self.backlog)
        if self._start is None or steps <= 0:
            self._start = (now, max(0, steps), updates, self.backlog)
            return None
        t0, s0, u0, b0 = self._start
        if now - t0 < self.window_s:
            return None
        window = UtdWindow(now - t0, steps - s0, updates - u0, self.backlog, self.backlog - b0)
        self._start = (now, steps, updates, self.backlog)
        self.last = window
        self.behind = (window.steps > 0 and self.backlog > 0
                       and window.effective < self.fraction * self.utd_ratio)
        if not self.behind:
            return None
        self.warnings += 1
        return self.warning(window)

    def warning(self, window: UtdWindow) -> str:
        return (f"learner is behind its update-to-data ratio: {window.updates} updates for {window.steps} env steps "
                f"received in the last {window.seconds:.0f} s (effective UTD {window.effective:.2f}, "
                f"train.utd_ratio {self.utd_ratio:g}); backlog {window.backlog} updates, growing "
                f"{window.growth_per_hour:+.0f}/hour. Set learning.sync_steps (e.g. 20) so sim actors wait for "
                "the learner after that many steps per weight version; on a robot lower train.utd_ratio, run "
                "fewer actors or a faster train.device")

    def field(self) -> str | None:
        """The progress display's note while behind (None while the ratio holds)."""
        if not self.behind or self.last is None:
            return None
        return (f"UTD {self.last.effective:.2f} < {self.fraction:g} x {self.utd_ratio:g} over "
                f"{self.last.seconds:.0f} s, backlog {self.backlog}")

    def status(self) -> dict[str, Any]:
        """The learner status's figures (``stats.json``)."""
        last = self.last
        return {"configured": self.utd_ratio,
                "effective": None if last is None or last.steps <= 0 else round(last.effective, 4),
                "window_s": self.window_s, "backlog": self.backlog, "max_backlog": self.max_backlog,
                "backlog_growth_per_hour": None if last is None else round(last.growth_per_hour, 1),
                "behind": self.behind, "warnings": self.warnings}
