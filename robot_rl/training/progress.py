"""Progress of long work on stderr: ``robot-rl train``, ``train-bc``, the learner, an actor, a
launched session, ``rollout``, ``record-demos``, ``record-rewards`` and ``train-reward``.

One mechanism for all of them. On a terminal it is a tqdm bar with the figures
after it; elsewhere (a log file, a pipe, a service) a bar would be a stream of carriage
returns, so it is one plain status line as soon as there is something to show, then one
every ``every_s`` seconds and a last one at the end::

    learner: 1200/8000 env steps, updates 580, UTD 0.50, weights v12, actors a1 600 / a2 600

``enabled=False`` (``train.progress: false``, ``--no-progress``) draws no bar and fewer
lines, not none: the same status line when the work starts, every :data:`QUIET_EVERY_S`
seconds and at the end, so a quiet run still says what it is doing. Callers ask
:meth:`Progress.due` before they gather their figures, so a hot loop pays for them only
a few times a second.

A wait that has no count to show (loading data, scoring after the last step) is announced
with :meth:`Progress.note`, one ``name: what`` line (above the bar on a terminal), so a
log that goes quiet for a while has said why.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Callable, Mapping

#: How often a terminal bar is redrawn at most.
BAR_EVERY_S = 0.2
#: How often a quiet one (``--no-progress``) writes its status line.
QUIET_EVERY_S = 60.0


def format_fields(fields: Mapping[str, Any]) -> str:
    """``{"updates": 5, "weights": "v2"}`` -> ``updates 5, weights v2``."""
    return ", ".join(f"{k} {v}" for k, v in fields.items())


class Progress:
    """A bar on a terminal, periodic lines elsewhere, rare lines when quiet (see the module docstring)."""

    def __init__(self, name: str, *, total: int | None = None, unit: str = "step", enabled: bool = True,
                 every_s: float = 10.0, stream: IO[str] | None = None, initial: int = 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name, self.unit = name, unit
        self.total = max(total, initial) if total is not None else None  # a resumed run past it starts full
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.every_s = every_s if enabled else max(every_s, QUIET_EVERY_S)
        self.n = initial
        self.fields: dict[str, Any] = {}
        self.lines = 0  # status lines written (not on a terminal)
        isatty = getattr(self.stream, "isatty", None)
        self.bar: Any = None
        if enabled and callable(isatty) and isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, unit=unit, desc=name, file=self.stream,
                            dynamic_ncols=True)
            self.every_s = BAR_EVERY_S
        self._last: float | None = None  # nothing drawn yet: the first show draws (the work has started)

    def due(self) -> bool:
        """Whether the next :meth:`show` would draw anything (so figures are worth gathering)."""
        return self._last is None or self.clock() - self._last >= self.every_s

    def show(self, n: int, fields: Mapping[str, Any] | None = None, *, force: bool = False) -> None:
        """Progress is ``n`` (of ``total``) with ``fields``; drawn when due (or ``force``)."""
        self.n = n
        if fields is not None:
            self.fields = dict(fields)
        if not force and not self.due():
            return
        self._last = self.clock()
        if self.total is not None and n > self.total:
            self.total = n  # more than planned arrived (actors keep sending): never read past 100%
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.n = n
            self.bar.set_postfix_str(format_fields(self.fields), refresh=False)
            self.bar.refresh()
        else:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self.lines += 1

    def note(self, what: str) -> None:
        """Say ``what`` the work is doing now that the count cannot show (always, quiet or not).

        One line, ``name: what``: above the bar on a terminal (the bar stays whole),
        a plain line elsewhere; line breaks in ``what`` are flattened so a log keeps one
        line per note.
        """
        text = f"{self.name}: {' '.join(str(what).split())}"
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def line(self) -> str:
        """The status line for the figures shown last."""
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        rest = format_fields(self.fields)
        return f"{self.name}: {count} {self.unit}s" + (f", {rest}" if rest else "")

    def close(self, n: int | None = None, fields: Mapping[str, Any] | None = None) -> None:
        """Show the final figures (always) and end the bar."""
        self.show(self.n if n is None else n, fields, force=True)
        if self.bar is not None:
            self.bar.close()
            self.bar = None
