"""A software RealSense (pyrealsense2.software_device) streaming synthetic frames.

The software device stands in for the camera at librealsense's sensor level, so
everything above it (device lookup by serial, profile choice, options, syncer, align,
timestamps) is the code a real D4xx runs. Importing this module needs pyrealsense2:
import it after ``pytest.importorskip("pyrealsense2", ...)``.

Used by tests/drivers/cameras/test_realsense.py and the ``realsense`` contract rig.
"""

from __future__ import annotations

import threading
import time
from typing import Optional

import numpy as np
import pyrealsense2 as rs

W, H, FPS = 64, 48, 30
SERIAL = "012345678901"


def option_range(lo: float, hi: float, step: float, default: float):
    """An rs.option_range; pyrealsense2 2.59 binds (step, default) in swapped order."""
    rng = rs.option_range(lo, hi, step, default)
    if rng.step != step:
        rng = rs.option_range(lo, hi, default, step)
    assert (rng.step, rng.default) == (step, default)
    return rng


class SyntheticRealSense:
    """A software RealSense: an RGB sensor (with exposure/white-balance options, and a
    second colour mode at half the size) and, optionally, a depth sensor on a separate
    module, like a D435.

    Frame ``n`` has colour (n, 2n, 3n) mod 256, depth ``500 + n`` raw units, and device
    timestamp ``t0_ms + n * 1000 / fps`` in ``domain``. :meth:`start` streams frames
    1, 2, ... at ``fps`` on a thread (``sent`` is the last one); start it after the camera
    has started its sensors (the software syncer builds its matcher from the streams
    active at the first frame).
    """

    def __init__(self, width: int = W, height: int = H, *, fps: int = FPS, depth: bool = False,
                 depth_units: float = 0.001, domain=None, t0_ms: float = 1000.0, serial: str = SERIAL) -> None:
        self.w, self.h, self.fps = width, height, fps
        self.domain = domain if domain is not None else rs.timestamp_domain.hardware_clock
        self.t0_ms = t0_ms
        self.device = rs.software_device()
        self.device.register_info(rs.camera_info.serial_number, serial)
        self.device.register_info(rs.camera_info.name, "Synthetic D435")
        intr = rs.intrinsics()
        intr.width, intr.height, intr.fx, intr.fy = width, height, 60.0, 60.0
        intr.ppx, intr.ppy = width / 2, height / 2
        intr.model, intr.coeffs = rs.distortion.none, [0.0] * 5
        self.color = self.device.add_sensor("RGB Camera")
        self.color_profile = self.color.add_video_stream(self._stream(rs.stream.color, 0, 3, rs.format.rgb8, intr),
                                                         True)
        self.color.add_option(rs.option.enable_auto_exposure, option_range(0, 1, 1, 1), True)
        self.color.add_option(rs.option.exposure, option_range(1, 10000, 1, 156), True)
        self.color.add_option(rs.option.gain, option_range(0, 128, 1, 64), True)
        self.color.add_option(rs.option.enable_auto_white_balance, option_range(0, 1, 1, 1), True)
        self.color.add_option(rs.option.white_balance, option_range(2800, 6500, 10, 4600), True)
        # A second, smaller colour mode, so that "no such mode" errors list more than one.
        self.color.add_video_stream(self._stream(rs.stream.color, 5, 3, rs.format.rgb8, intr,
                                                 w=width // 2, h=height // 2))
        self.depth_sensor = None
        if depth:
            self.depth_sensor = self.device.add_sensor("Stereo Module")
            self.depth_profile = self.depth_sensor.add_video_stream(
                self._stream(rs.stream.depth, 1, 2, rs.format.z16, intr), True)
            self.depth_sensor.add_read_only_option(rs.option.depth_units, depth_units)
            identity = rs.extrinsics()
            identity.rotation, identity.translation = [1, 0, 0, 0, 1, 0, 0, 0, 1], [0, 0, 0]
            self.depth_profile.register_extrinsics_to(self.color_profile, identity)
        self.device.create_matcher(rs.matchers.dlr_c)
        self.sent = 0
        self._running = False
        self._thread: Optional[threading.Thread] = None
        self._keep: list[np.ndarray] = []  # the pixels of recent frames: librealsense does not copy them

    def _stream(self, kind, uid, bpp, fmt, intr, w: Optional[int] = None, h: Optional[int] = None):
        stream = rs.video_stream()
        stream.type, stream.index, stream.uid = kind, 0, uid
        stream.width, stream.height, stream.fps = w or self.w, h or self.h, self.fps
        stream.bpp, stream.fmt = bpp, fmt
        stream.intrinsics = intr
        return stream

    def stamp_ms(self, n: int) -> float:
        return self.t0_ms + n * 1000.0 / self.fps

    def _frame(self, pixels: np.ndarray, bpp: int, profile, n: int):
        frame = rs.software_video_frame()
        frame.pixels = pixels
        frame.stride, frame.bpp = self.w * bpp, bpp
        frame.timestamp, frame.domain, frame.frame_number = self.stamp_ms(n), self.domain, n
        frame.profile = profile.as_video_stream_profile()
        return frame

    def push(self, n: int) -> None:
        color = np.empty((self.h, self.w, 3), np.uint8)
        color[..., 0], color[..., 1], color[..., 2] = n % 256, (2 * n) % 256, (3 * n) % 256
        self._keep = self._keep[-8:] + [color]
        self.color.on_video_frame(self._frame(color, 3, self.color_profile, n))
        if self.depth_sensor is not None:
            depth = np.full((self.h, self.w), 500 + n, np.uint16)
            self._keep.append(depth)
            self.depth_sensor.on_video_frame(self._frame(depth, 2, self.depth_profile, n))

    def start(self) -> "SyntheticRealSense":
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        n = 1
        while self._running:
            try:
                self.push(n)
                self.sent = n
                n += 1
            except RuntimeError:
                pass  # sensors not started yet
            time.sleep(1.0 / self.fps)

    def stop(self) -> None:
        self._running = False
        if self._thread is not None:
            self._thread.join()
