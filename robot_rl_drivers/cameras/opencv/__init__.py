"""A V4L2 camera (webcam, capture card) or a video file through OpenCV: ``cameras.<name>.backend: opencv``.

The camera is :mod:`.camera`; its ``hardware`` block is :mod:`.settings`.
"""

from __future__ import annotations

from robot_rl_drivers.cameras.opencv.settings import OpenCVSettings
from robot_rl_drivers.spec import CameraSpec

SPEC = CameraSpec(name="opencv", folder="opencv", settings=OpenCVSettings,
                  factory="robot_rl_drivers.cameras.opencv.camera:OpenCVCamera",
                  probe="robot_rl_drivers.cameras.opencv.camera:list_devices")
