"""An Intel RealSense (D4xx) camera through pyrealsense2: ``cameras.<name>.backend: realsense``.

The camera is :mod:`.camera` (pyrealsense2 imported only when one is opened); its
``hardware`` block is :mod:`.settings`.
"""

from __future__ import annotations

from robot_rl_drivers.cameras.realsense.settings import RealSenseSettings
from robot_rl_drivers.spec import CameraSpec

SPEC = CameraSpec(name="realsense", folder="realsense", settings=RealSenseSettings,
                  factory="robot_rl_drivers.cameras.realsense.camera:RealSenseCamera",
                  probe="robot_rl_drivers.cameras.realsense.camera:list_devices")
