"""A background thread that keeps the newest frame of a camera.

Camera drivers deliver frames at their own rate; the env asks for one at its control
rate. :class:`FrameGrabber` runs the driver's blocking ``grab()`` in a thread and keeps
only the newest :class:`~robot_rl.interfaces.Frame`, so ``read()`` never waits for the
next exposure (only for the very first one) and old frames never queue up.

Contract for ``grab``: it blocks until the next frame and returns it, returns ``None``
when it timed out without one (the grabber retries), and raises when the device failed.
A grabber whose newest frame is older than ``timeout_s`` reports the camera as gone.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Optional

from robot_rl.errors import DeviceError
from robot_rl.interfaces import Frame

log = logging.getLogger("robot_rl_drivers.cameras")


class FrameGrabber:
    def __init__(self, name: str, grab: Callable[[], Optional[Frame]], timeout_s: float) -> None:
        self.name = name
        self._grab = grab
        self.timeout_s = timeout_s
        self._cond = threading.Condition()
        self._frame: Frame | None = None
        self._arrived = 0.0  # monotonic time the newest frame arrived
        self._error: str | None = None
        self._running = True
        self.frames = 0
        self._thread = threading.Thread(target=self._run, name=f"camera-{name}", daemon=True)

    def start(self) -> "FrameGrabber":
        self._thread.start()
        return self

    def _run(self) -> None:
        while self._running:
            try:
                frame = self._grab()
            except Exception as err:  # noqa: BLE001 - any driver failure ends the stream
                with self._cond:
                    self._error = str(err) or type(err).__name__
                    self._cond.notify_all()
                return
            if frame is None:
                continue
            with self._cond:
                self._frame = frame
                self._arrived = time.monotonic()
                self.frames += 1
                self._cond.notify_all()

    def read(self) -> Frame:
        """The newest frame; waits for the first one up to ``timeout_s``."""
        with self._cond:
            if self._frame is None and self._error is None:
                self._cond.wait_for(lambda: self._frame is not None or self._error is not None,
                                    timeout=self.timeout_s)
            if self._error is not None:
                raise DeviceError(f"camera '{self.name}': {self._error}")
            if self._frame is None:
                raise DeviceError(f"camera '{self.name}': no frame within {self.timeout_s:g} s of starting")
            age = time.monotonic() - self._arrived
            if age > self.timeout_s:
                raise DeviceError(f"camera '{self.name}': no new frame for {age:.1f} s (unplugged or stalled?)")
            return self._frame

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._running = False
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=self.timeout_s + 1.0)
