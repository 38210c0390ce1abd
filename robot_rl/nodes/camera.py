"""A camera as the actor sees it over topics (:class:`TopicCamera`), and pinhole intrinsics.

The node's image subscription decodes ``sensor_msgs/Image`` (rgb8 or bgr8) and hands the
array to :meth:`TopicCamera.on_image`; ``read()`` returns a copy of the newest frame,
so the env's observation never aliases a message buffer. The size is checked against
the session config on arrival (a wrong size is a malformed message: dropped and
counted by the node), so the env's observation space always holds.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

import numpy as np

from robot_rl.errors import DeviceError
from robot_rl.interfaces import Camera, Frame
from robot_rl.nodes.latest import Latest


def pinhole_k(fovy_deg: float, width: int, height: int) -> np.ndarray:
    """3x3 intrinsics of an ideal camera with vertical field of view ``fovy_deg`` (MuJoCo's)."""
    f = 0.5 * height / math.tan(math.radians(fovy_deg) / 2.0)
    return np.array([[f, 0.0, width / 2.0], [0.0, f, height / 2.0], [0.0, 0.0, 1.0]])


class TopicCamera(Camera):
    """Frames from an image topic; a missing or stale stream is a :class:`DeviceError`."""

    def __init__(self, name: str, topic: str, width: int, height: int, *, timeout_s: float,
                 wait_timeout_s: float, cancel: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cancel = cancel
        self.name, self.topic = name, topic
        self.shape = (height, width, 3)
        self.timeout_s, self.wait_timeout_s = timeout_s, wait_timeout_s
        self._latest: Latest[tuple[np.ndarray, float]] = Latest(clock)

    def on_image(self, image: np.ndarray, stamp: float) -> None:
        """From the subscription; ValueError for an image of another size than configured."""
        if image.shape != self.shape:
            raise ValueError(f"camera {self.name}: image is {image.shape[1]}x{image.shape[0]}, the config says "
                             f"{self.shape[1]}x{self.shape[0]}")
        self._latest.put((image, float(stamp)))

    def wait_for_frame(self, timeout: float | None = None) -> None:
        timeout = self.wait_timeout_s if timeout is None else timeout
        if self._latest.wait(timeout, cancel=self.cancel) is None:
            raise DeviceError(f"camera {self.name}: no image on {self.topic} within {timeout:.0f} s "
                              "(is its camera node running?)")

    def read(self) -> Frame:
        if self._latest.value is None:
            self.wait_for_frame()
        age = self._latest.age()
        if age > self.timeout_s:
            raise DeviceError(f"camera {self.name}: the newest image on {self.topic} is {age:.2f} s old "
                              f"(ros.image_timeout_s {self.timeout_s}): is its camera node running?")
        image, stamp = self._latest.value
        return Frame(image=np.array(image, dtype=np.uint8, copy=True), stamp=stamp)
