"""``cameras.<name>.hardware`` of a RealSense camera (``backend: realsense``); imports no hardware library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from robot_rl.config.loader import param


@dataclass
class RealSenseSettings:
    """An Intel RealSense (D4xx) camera, opened by serial number.

    ``exposure``, ``gain`` and ``white_balance`` are written to the sensor that delivers
    colour as the raw values of librealsense's ``exposure``, ``gain`` and
    ``white_balance`` options (their units and ranges are the device's: see
    ``rs-enumerate-devices -o``); ``null`` leaves the automatic control on. A value
    outside the device's range is a DeviceError at start, naming the camera.
    """

    serial: Union[str, int] = param(doc="serial number in quotes (rs-enumerate-devices -s)")
    exposure: Optional[float] = param(None, min=0.0, max=1_000_000.0, doc="manual exposure; null = auto exposure")
    gain: Optional[float] = param(None, min=0.0, max=10_000.0,
                                  doc="manual gain (only with a manual exposure); null = device default")
    white_balance: Optional[float] = param(None, min=0.0, max=20_000.0, doc="Kelvin; null = auto white balance")
    depth: bool = param(False, doc="also stream depth (Frame.depth, uint16 millimetres)")
    align_depth: bool = param(True, doc="resample depth into the colour camera's pixels")
    depth_width: Optional[int] = param(None, min=8, max=4096, doc="null = the colour width (or 640 when aligned)")
    depth_height: Optional[int] = param(None, min=8, max=4096, doc="null = the colour height (or 480 when aligned)")
    frame_timeout_s: float = param(1.0, min=0.05, max=30.0, doc="no frame for this long means the camera is gone")
    global_time: bool = param(True, doc="ask the device to stamp frames in host time (librealsense global time)")

    def __post_init__(self) -> None:
        if not isinstance(self.serial, str):
            raise ValueError(f"write the serial in quotes, e.g. serial: \"{self.serial}\" "
                             "(YAML reads bare digits as a number and drops leading zeros)")
        if not self.serial.strip():
            raise ValueError("serial must name the camera (rs-enumerate-devices -s lists them)")
        if self.gain is not None and self.exposure is None:
            raise ValueError("gain needs a manual exposure (set exposure too, or leave gain null)")
        if (self.depth_width is None) != (self.depth_height is None):
            raise ValueError("set both depth_width and depth_height, or neither")
