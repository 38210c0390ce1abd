"""Ctrl-C and SIGTERM during training: finish the episode in flight, save, say how to resume.

A checkpoint is only taken between episodes (its actor state and buffers have no
half episode), so the first SIGINT or SIGTERM asks the training loop to stop at the end
of the episode in flight (an episode is seconds of sim); the loop then saves a
checkpoint and raises :class:`TrainingStopped`, which the CLI prints as one line and
exits with ``128 + signal`` (130 for Ctrl-C). A second signal stops at once with
:class:`KeyboardInterrupt`: nothing recorded is lost then either, as every finished
episode is already in the replay log and ``--resume`` re-ingests it.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

from robot_rl.errors import RobotRLError

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingStopped(RobotRLError):
    """Training stopped on a signal (after saving a checkpoint, unless it says otherwise)."""

    def __init__(self, message: str, signum: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.signum = signum
        self.exit_code = 128 + int(signum)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class StopRequest:
    """While active (a context manager, main thread only), SIGINT/SIGTERM set :attr:`signum`
    instead of killing the process; a second one raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> "StopRequest":
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:  # e.g. SIGINT of a background job stays ignored
                    self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum
        print(f"robot-rl: {signal_name(signum)}: finishing the episode in flight, then saving a checkpoint "
              "(press Ctrl-C again to stop at once)", file=sys.stderr, flush=True)
