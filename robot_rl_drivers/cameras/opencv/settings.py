"""``cameras.<name>.hardware`` of a V4L2 / OpenCV camera (``backend: opencv``); imports no hardware library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Union

from robot_rl.config.loader import param


@dataclass
class OpenCVSettings:
    """A V4L2 camera (webcam, capture card) read through ``cv2.VideoCapture``.

    ``device`` is an index (``0`` is ``/dev/video0``) or a path; a path that is not a
    ``/dev`` node is opened as a video file, through the same code (useful to replay).
    """

    device: Union[int, str] = param(0, min=0, max=1023,
                                    doc="index or path, e.g. 0 or /dev/v4l/by-id/usb-...-video-index0")
    api: Literal["auto", "v4l2", "any"] = param("auto", doc="auto: V4L2 for indices and /dev nodes, else any")
    fourcc: Optional[str] = param(None, doc="pixel format to ask for, e.g. MJPG (most webcams need it for 1080p30)")
    frame_timeout_s: float = param(1.0, min=0.05, max=30.0, doc="no frame for this long means the camera is gone")

    def __post_init__(self) -> None:
        if isinstance(self.device, int) and self.device < 0:
            raise ValueError(f"device index must be >= 0, got {self.device}")
        if self.fourcc is not None and len(self.fourcc) != 4:
            raise ValueError(f"fourcc must have 4 characters, got {self.fourcc!r}")
