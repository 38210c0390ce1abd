"""V4L2 cameras (webcams, HDMI capture cards) through OpenCV's ``VideoCapture``.

OpenCV delivers BGR; the backend converts to RGB, the colour order of every image in
robot_rl. Frames are stamped with the host wall clock when ``read`` returns them to the
grab thread: V4L2 buffer stamps come through OpenCV with a clock that differs between
versions, so they are not used.

A path that is not a ``/dev`` node is opened as a video file through the same code, which
is how the tests run this backend without a camera (and a way to replay a recording).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Optional

import numpy as np

from robot_rl.config.sections import CameraConfig
from robot_rl.errors import DeviceError
from robot_rl.interfaces import Camera, Frame
from robot_rl_drivers.cameras.grabber import FrameGrabber
from robot_rl_drivers.cameras.opencv.settings import OpenCVSettings

log = logging.getLogger("robot_rl_drivers.cameras.opencv.camera")


class OpenCVCamera(Camera):
    """One ``cv2.VideoCapture`` device, at the size and rate the config asks for.

    The device must deliver exactly ``cfg.width x cfg.height``: a camera that picks
    another size is an error at start (the image size is fixed for a camera's life).
    """

    def __init__(self, name: str, cfg: CameraConfig, settings: OpenCVSettings) -> None:
        import cv2

        self._cv2 = cv2
        self.name = name
        self.cfg = cfg
        self.settings = settings
        device = settings.device
        self._where = f"camera '{name}' ({device})"
        self._cap = cv2.VideoCapture(device, self._api(device))
        if not self._cap.isOpened():
            self._cap.release()
            present = ", ".join(video_nodes()) or "none"
            raise DeviceError(f"{self._where}: cannot open the video device (video nodes present: {present}; "
                              "is another program using it? is the user in the 'video' group?)")
        if settings.fourcc is not None:
            self._cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*settings.fourcc))
        self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, cfg.width)
        self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, cfg.height)
        self._cap.set(cv2.CAP_PROP_FPS, cfg.fps)
        self._cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # V4L2: keep the newest frame, not a queue
        self._grabber: FrameGrabber | None = FrameGrabber(name, self._grab, settings.frame_timeout_s).start()
        try:
            self._grabber.read()  # the first frame: proves the device streams, at the right size
        except DeviceError:
            self.close()
            raise
        log.info("camera '%s': OpenCV device %s streaming %dx%d", name, device, cfg.width, cfg.height)

    def _api(self, device: int | str) -> int:
        cv2 = self._cv2
        api = self.settings.api
        if api == "auto":
            is_node = isinstance(device, int) or str(device).startswith("/dev/")
            api = "v4l2" if is_node else "any"
        return cv2.CAP_V4L2 if api == "v4l2" else cv2.CAP_ANY

    def _grab(self) -> Optional[Frame]:
        ok, bgr = self._cap.read()
        stamp = time.time()
        if not ok or bgr is None:
            time.sleep(0.005)  # end of a file, or a dropped frame: the grabber's timeout decides
            return None
        if bgr.shape[:2] != (self.cfg.height, self.cfg.width):
            raise DeviceError(f"delivers {bgr.shape[1]}x{bgr.shape[0]} frames, the config asks for "
                              f"{self.cfg.width}x{self.cfg.height} (set cameras.{self.name}.width/height "
                              "to a mode the device offers: v4l2-ctl --list-formats-ext)")
        if bgr.ndim == 2:
            rgb = self._cv2.cvtColor(bgr, self._cv2.COLOR_GRAY2RGB)
        else:
            rgb = self._cv2.cvtColor(bgr, self._cv2.COLOR_BGR2RGB)
        return Frame(image=np.ascontiguousarray(rgb, dtype=np.uint8), stamp=stamp)

    def read(self) -> Frame:
        if self._grabber is None:
            raise DeviceError(f"{self._where} is closed")
        return self._grabber.read()

    def close(self) -> None:
        grabber, self._grabber = self._grabber, None
        if grabber is not None:
            grabber.stop()
            if grabber.alive:
                log.warning("%s: the grab thread is stuck in the driver; not releasing the device", self._where)
                return
        self._cap.release()


def video_nodes() -> list[str]:
    """The V4L2 video nodes present on this machine, for error messages."""
    return sorted(str(p) for p in Path("/dev").glob("video*"))


def list_devices() -> list[str]:
    """The V4L2 device nodes, one line, for ``robot-rl cameras list`` (the SPEC's probe)."""
    nodes = video_nodes()
    return ["v4l2: " + (", ".join(nodes) if nodes else "no /dev/video* nodes")]
