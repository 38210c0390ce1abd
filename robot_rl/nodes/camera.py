"""A camera as the actor sees it over topics (:class:`TopicCamera`), and pinhole intrinsics.

The actor node's image subscription decodes the message (``sensor_msgs/Image`` rgb8,
bgr8, rgba8 or bgra8; or ``sensor_msgs/CompressedImage``, a colour JPEG or PNG, for a
``topic`` camera with ``transport: compressed``) and hands the array to
:meth:`TopicCamera.on_image`; ``read()`` returns a copy of the newest frame, so the
env's observation never aliases a message buffer. The size is checked against the
session config on arrival, so the env's observation space always holds.

A message the camera cannot use (another size, another encoding, a corrupt payload) is
dropped and counted by the node, and told to :meth:`TopicCamera.refuse`: one such
message in a good stream changes nothing, but a stream that brings *only* such images is
a one-line :class:`~robot_rl.errors.DeviceError` saying what arrives and what the config
says, instead of a silent timeout::

    camera front: /camera/camera/color/image_raw publishes 640x480 mono8, the config says 128x128 rgb8, ...

A topic with no image at all names the node that should publish it (the sim node, the
camera's own camera node, or, for ``backend: topic``, another driver).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from robot_rl.config import Config
from robot_rl.errors import DeviceError
from robot_rl.interfaces import Camera, Frame
from robot_rl.nodes.latest import Latest

RAW_ACCEPTED = "rgb8, bgr8, rgba8 or bgra8"  # robot_rl.ros.convert.RAW_ACCEPTED (core code imports no ROS layer)
COMPRESSED_ACCEPTED = "colour JPEG or PNG (8 bit)"


def pinhole_k(fovy_deg: float, width: int, height: int) -> np.ndarray:
    """3x3 intrinsics of an ideal camera with vertical field of view ``fovy_deg`` (MuJoCo's)."""
    f = 0.5 * height / math.tan(math.radians(fovy_deg) / 2.0)
    return np.array([[f, 0.0, width / 2.0], [0.0, f, height / 2.0], [0.0, 0.0, 1.0]])


def is_topic_camera(cfg: Config, name: str) -> bool:
    """Whether camera ``name`` comes from another driver's topic (no camera node of ours)."""
    from robot_rl_drivers.cameras import camera_spec

    return camera_spec(cfg.cameras[name].backend).reads_topic


def own_cameras(cfg: Config) -> list[str]:
    """The cameras robot_rl publishes itself (a camera node, or the sim node): all but the topic cameras."""
    return [name for name in cfg.cameras if not is_topic_camera(cfg, name)]


def compressed(cfg: Config, name: str) -> bool:
    """Whether the actor reads camera ``name`` as ``sensor_msgs/CompressedImage``."""
    return is_topic_camera(cfg, name) and cfg.cameras[name].hardware.transport == "compressed"


def image_topic(cfg: Config, name: str, default: str) -> str:
    """The topic the actor reads camera ``name`` from: a topic camera's own (``/compressed``
    appended for compressed transport), else ``default`` (what our camera or sim node publishes)."""
    return cfg.cameras[name].hardware.subscribed_topic if is_topic_camera(cfg, name) else default


def publisher_of(cfg: Config, name: str) -> str:
    """Who should publish camera ``name``'s images, for error messages."""
    from robot_rl_drivers.cameras import camera_spec

    backend = cfg.cameras[name].backend
    spec = camera_spec(backend)
    if spec.reads_topic:
        return (f"another driver (cameras.{name}.backend is {backend}, so robot_rl starts no camera node for it, "
                "e.g. realsense2_camera)")
    if spec.simulated:
        return "the sim node (sim_node)"
    return f"its camera node (camera_{name})"


@dataclass
class _Refusals:
    """Images refused since the last good one (all guarded by the camera's lock)."""

    first: Optional[float] = None  # clock time of the first refusal since the last good image
    last: Optional[float] = None
    count: int = 0
    what: str = ""  # e.g. "640x480 mono8"
    reason: str = ""


class TopicCamera(Camera):
    """Frames from an image topic; a missing, stale or wrong stream is a :class:`DeviceError`.

    ``publisher`` (who should publish the topic) and ``accepts`` (the encodings the
    subscription reads) go into the error lines. ``count_publishers`` may be set by the
    node to the subscription's publisher count, so a silent topic says whether anything
    publishes it at all.
    """

    def __init__(self, name: str, topic: str, width: int, height: int, *, timeout_s: float,
                 wait_timeout_s: float, cancel: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic, publisher: str = "its camera node",
                 accepts: str = "rgb8 or bgr8") -> None:
        self.cancel = cancel
        self.name, self.topic = name, topic
        self.shape = (height, width, 3)
        self.timeout_s, self.wait_timeout_s = timeout_s, wait_timeout_s
        self.publisher, self.accepts = publisher, accepts
        self.count_publishers: Optional[Callable[[], int]] = None
        self._clock = clock
        self._latest: Latest[tuple[np.ndarray, float]] = Latest(clock)
        self._lock = threading.Lock()
        self._refused = _Refusals()
        self.refused_total = 0

    @property
    def expected(self) -> str:
        return f"{self.shape[1]}x{self.shape[0]} {self.accepts}"

    def on_image(self, image: np.ndarray, stamp: float) -> None:
        """From the subscription; ValueError for an image of another size than configured."""
        if image.shape != self.shape:
            raise ValueError(f"camera {self.name}: image is {image.shape[1]}x{image.shape[0]}, the config says "
                             f"{self.shape[1]}x{self.shape[0]}")
        with self._lock:
            self._refused = _Refusals()
        self._latest.put((image, float(stamp)))

    def refuse(self, what: str, reason: str) -> None:
        """From the subscription: a message was dropped; ``what`` it held (``640x480 mono8``) and why."""
        now = self._clock()
        with self._lock:
            r = self._refused
            r.first = now if r.first is None else r.first
            r.last, r.count, r.what, r.reason = now, r.count + 1, what, reason
            self.refused_total += 1

    def _wrong_stream(self, now: float, *, final: bool) -> Optional[str]:
        """The error line when the stream has brought only refused images for ``timeout_s``
        (or, with ``final``, any refused image and no good one)."""
        with self._lock:
            r = self._refused
            if r.first is None or r.last is None:
                return None
            live = now - r.last <= self.timeout_s and now - r.first >= self.timeout_s and r.count >= 2
            if not (live or final):
                return None
            return (f"camera {self.name}: {self.topic} publishes {r.what}, the config says {self.expected} "
                    f"({r.count} refused: {r.reason})")

    def wait_for_frame(self, timeout: float | None = None) -> None:
        """Wait for the first usable image; DeviceError for a silent or wrong stream."""
        timeout = self.wait_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if self._latest.wait(max(0.0, min(left, 0.2)), cancel=self.cancel) is not None:
                return
            wrong = self._wrong_stream(self._clock(), final=left <= 0)
            if wrong is not None:
                raise DeviceError(wrong)
            if left <= 0:
                raise DeviceError(self._silent(timeout))

    def _silent(self, timeout: float) -> str:
        count = None
        if self.count_publishers is not None:
            try:
                count = self.count_publishers()
            except Exception:  # noqa: BLE001 - a count is a hint; the error line must come out
                count = None
        seen = "" if count is None else (
            "; nothing publishes that topic" if count == 0 else
            f"; {count} publisher{'s' if count != 1 else ''} matched but sent nothing")
        return (f"camera {self.name}: no image on {self.topic} within {timeout:g} s{seen}: it should come from "
                f"{self.publisher}; is it running, on this topic?")

    def read(self) -> Frame:
        if self._latest.value is None:
            self.wait_for_frame()
        age = self._latest.age()
        if age > self.timeout_s:
            wrong = self._wrong_stream(self._clock(), final=True)
            if wrong is not None:
                raise DeviceError(f"{wrong}; the newest usable image is {age:.2f} s old")
            raise DeviceError(f"camera {self.name}: the newest image on {self.topic} is {age:.2f} s old "
                              f"(ros.image_timeout_s {self.timeout_s}): is {self.publisher} still running?")
        image, stamp = self._latest.value
        return Frame(image=np.array(image, dtype=np.uint8, copy=True), stamp=stamp)


def topic_camera(cfg: Config, name: str, topic: str, cancel: threading.Event | None = None) -> TopicCamera:
    """The actor's :class:`TopicCamera` for camera ``name`` of ``cfg``, reading ``topic``."""
    c, ros = cfg.cameras[name], cfg.ros
    return TopicCamera(name, topic, c.width, c.height, timeout_s=ros.image_timeout_s,
                       wait_timeout_s=ros.startup_timeout_s, cancel=cancel, publisher=publisher_of(cfg, name),
                       accepts=COMPRESSED_ACCEPTED if compressed(cfg, name) else RAW_ACCEPTED)

