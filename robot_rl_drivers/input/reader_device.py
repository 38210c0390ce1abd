"""What an input device read by a background thread shares (the SpaceMouse, the gamepad).

The thread reads what the device sends as it comes and keeps the latest state, so
``read()`` never blocks and never lags the hand. When the device goes away (unplugged)
the thread records one :class:`~robot_rl.errors.DeviceError` and ends quietly (no
traceback, no log spam); the next ``read()`` raises it once and later reads return a
neutral command, so the caller ends the intervention, logs one warning and keeps its data
(:class:`robot_rl.envs.inputs.FailSafeInput`). ``read()`` after ``close()`` is an error;
``close()`` works after an unplug.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputDevice


class ReaderDevice(InputDevice):
    """The reader thread, the lost-device error and ``close()`` (module docstring).

    A subclass sets ``where`` (the device, for messages), ``log`` and ``handle`` (what
    ``close()`` leaves open if the reader is stuck: "device", "node"), opens the device, and
    calls :meth:`_start_reader`; its reader calls :meth:`_lost` when the device goes away,
    and its ``read()`` starts with :meth:`_readable` under ``self._lock``.
    """

    where: str
    log: logging.Logger
    handle: str
    cfg: Any  # the device's config section: ``read_timeout_ms`` bounds how long the reader waits

    def _start_reader(self, target: Callable[[], None], name: str) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._error: DeviceError | None = None
        self._error_raised = False
        self._closed = False
        self._thread = threading.Thread(target=target, name=name, daemon=True)
        self._thread.start()
        self.log.info("opened %s", self.where)

    @property
    def connected(self) -> bool:
        """False once the device went away (unplugged) or was closed."""
        return self._error is None and not self._closed

    def _lost(self, message: str, reason: Any) -> None:
        """The reader's end when the device went away: ``message`` is the one line ``read()`` raises."""
        if self._stop.is_set():
            return
        with self._lock:
            self._error = DeviceError(message)
        self.log.debug("%s reader ends: %s", self.where, reason)

    def _readable(self) -> bool:
        """Under ``self._lock``: True while the device reads; raises after ``close()`` and, once, the
        error of a lost device; False after that (``read()`` returns a neutral command)."""
        if self._closed:
            raise DeviceError(f"{self.where} was closed; read() after close()")
        if self._error is not None:
            if not self._error_raised:
                self._error_raised = True
                raise self._error
            return False
        return True

    def _close_handle(self) -> None:
        """Close the device once the reader has stopped."""
        raise NotImplementedError

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._thread.join(timeout=2.0 + self.cfg.read_timeout_ms / 1000.0)
        if self._thread.is_alive():  # stuck in a read: leaking the handle beats closing it under the reader
            self.log.warning("%s: reader thread did not stop; leaving the %s open", self.where, self.handle)
            return
        try:
            self._close_handle()
        except (OSError, ValueError) as err:
            self.log.debug("closing %s: %s", self.where, err)
