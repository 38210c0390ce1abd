"""The gripper behind a robot backend, whatever drives it (the Franka Hand, a Robotiq on a UR).

robot_rl's convention is an opening fraction: ``0.0`` closed, ``1.0`` fully open. A
backend hands :meth:`Gripper.command` the checked fraction of ``Robot.command`` and
reports :attr:`Gripper.fraction` in ``RobotState.gripper``. Grippers move slowly and
their calls block (a socket answer, a whole finger motion), while ``Robot.command`` must
return at once: an implementation executes the newest request on a thread of its own,
and a request equal to the last one costs nothing. A failed grasp or move is logged and
counted (``failures``), never raised: a missed grasp is an outcome the policy learns from,
not a robot fault. A gripper that cannot be reached at start is a one-line DeviceError.
"""

from __future__ import annotations

import abc
import threading
from typing import Any, Optional


class Gripper(abc.ABC):
    """An opening fraction in, an opening fraction out (module docstring)."""

    commands: int = 0  # requests executed
    failures: int = 0  # requests the gripper did not carry out

    @property
    @abc.abstractmethod
    def fraction(self) -> float:
        """The opening last read, 0 closed .. 1 open."""

    @abc.abstractmethod
    def command(self, fraction: float) -> None:
        """Ask for an opening fraction in [0, 1]; returns at once."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop the gripper's threads and connection; the fingers stay as they are (a held part stays held)."""


class ThreadedGripper(Gripper):
    """The threads and the request logic of the module docstring, for a gripper whose calls block.

    ``settings`` has ``mode`` (``binary`` or ``continuous``), ``threshold``, ``deadband``
    and ``state_hz``. :meth:`command` maps a fraction to a request: ``binary`` makes it
    0.0 (close, a grasp) below ``threshold`` and 1.0 (open fully) otherwise; ``continuous``
    keeps it, and a change within ``deadband`` of the pending or last request is no new
    request. A worker thread hands the newest request to :meth:`_execute`; a reader thread
    calls :meth:`_read` at ``state_hz``. A subclass connects, then calls
    :meth:`_start_threads`.
    """

    settings: Any

    def _start_threads(self, name: str) -> None:
        """Start the worker (thread ``name``) and the reader (``name-state``); the counters start at 0."""
        self.commands = 0
        self.failures = 0
        self._requested: Optional[float] = None  # target fraction not yet executed
        self._last: Optional[float] = None  # last fraction sent to the gripper
        self._cond = threading.Condition()
        self._running = True
        self._worker = threading.Thread(target=self._run_commands, name=name, daemon=True)
        self._reader = threading.Thread(target=self._run_reader, name=f"{name}-state", daemon=True)
        self._worker.start()
        self._reader.start()

    @abc.abstractmethod
    def _execute(self, fraction: float) -> None:
        """Carry one request out (blocking is fine): count it, count and log a failure, never raise."""

    @abc.abstractmethod
    def _read(self) -> None:
        """Read the opening once (blocking is fine); log a failure, never raise."""

    def _disconnect(self) -> None:
        """Close the connection once the threads have stopped; nothing by default."""

    def command(self, fraction: float) -> None:
        """Ask for an opening fraction; returns at once."""
        s = self.settings
        fraction = min(1.0, max(0.0, float(fraction)))
        if s.mode == "binary":
            fraction = 0.0 if fraction < s.threshold else 1.0
        with self._cond:
            reference = self._requested if self._requested is not None else self._last
            if reference is not None and abs(fraction - reference) <= (s.deadband if s.mode == "continuous" else 0.0):
                return
            self._requested = fraction
            self._cond.notify_all()

    def _run_commands(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._requested is not None or not self._running)
                if not self._running:
                    return
                fraction, self._requested = self._requested, None
                self._last = fraction
            self._execute(fraction)

    def _run_reader(self) -> None:
        period = 1.0 / self.settings.state_hz
        stop = threading.Event()
        while self._running:
            self._read()
            stop.wait(period)

    def close(self) -> None:
        """Stop the threads, then the connection; the fingers stay as they are (a held part stays held)."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        self._worker.join(timeout=5.0)
        self._reader.join(timeout=2.0)
        self._disconnect()
