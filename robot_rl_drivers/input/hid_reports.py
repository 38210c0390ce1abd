"""Decoding 3Dconnexion HID input reports into axes and buttons.

What the devices send (first byte is the report id, as hidapi returns it):

* ``01 xl xh yl yh zl zh``: translation, three little-endian int16. Older and wired
  devices (SpaceNavigator, SpaceMouse Compact, SpaceMouse Pro) send this and then
* ``02 al ah bl bh cl ch``: rotation ``rx, ry, rz``, three int16.
* ``01`` followed by six int16 (13 bytes): translation and rotation in one report,
  sent by the wireless models, the Pro Wireless, the Enterprise and the universal
  receiver.
* ``03 b0 b1 ...``: buttons, a little-endian bitmask; bit ``i`` is button ``i``
  (HID usage ``Button i+1``). Two-button models send one payload byte, the Pro and
  Enterprise four.
* ``1c u0l u0h ... u5l u5h``: the Enterprise's extra keys, up to six little-endian
  uint16 button usages held now (``0`` = empty slot); usage ``n`` is button ``n-1``.
  (Taken from its report descriptor; not checked on a device.)

Other reports (LED state, battery level ``0x17``) are ignored. Values are raw counts in
the device's HID frame: ``x`` right, ``y`` toward the operator, ``z`` down, rotations
right-handed about those axes. Full deflection is about +-350 counts, a little more on
some units. :func:`hid_to_operator` turns the axes into the operator frame (x right,
y forward, z up) that :mod:`robot_rl.config.input` describes.
"""

from __future__ import annotations

import struct
from typing import Iterable

import numpy as np

TRANSLATION_REPORT = 0x01
ROTATION_REPORT = 0x02
BUTTON_REPORT = 0x03
EXTRA_BUTTON_REPORT = 0x1C

#: HID frame -> operator frame: a half turn about x (y and z flip, for both halves).
_HID_TO_OPERATOR = np.array([1, -1, -1, 1, -1, -1], dtype=float)


def hid_to_operator(raw_axes: np.ndarray, full_scale: float) -> np.ndarray:
    """Raw HID counts ``(x, y, z, rx, ry, rz)`` -> operator-frame values, clipped to [-1, 1]."""
    return np.clip(np.asarray(raw_axes, dtype=float) * _HID_TO_OPERATOR / full_scale, -1.0, 1.0)


class ReportDecoder:
    """Holds the device state the reports describe; feed it every report, in order.

    Axis reports carry absolute values (the device sends a report when they change and a
    zero report when the puck is released), so the latest report of each kind is the
    state. Not thread-safe: the caller serialises ``feed`` and the reads of the state.
    """

    def __init__(self) -> None:
        self.axes = np.zeros(6, dtype=np.int64)  # x, y, z, rx, ry, rz in HID counts
        self._bitmask_buttons = 0
        self._extra_buttons = 0
        self.reports = 0  # reports decoded, for diagnostics ("the device reads all zeros")

    @property
    def buttons(self) -> int:
        """Held buttons as a bitmask: bit ``i`` set while button ``i`` is down."""
        return self._bitmask_buttons | self._extra_buttons

    def feed(self, report: bytes | bytearray | Iterable[int]) -> str | None:
        """Apply one report; returns ``"axes"``, ``"buttons"`` or ``None`` (ignored)."""
        data = bytes(report)
        if not data:
            return None
        kind = data[0]
        if kind == TRANSLATION_REPORT and len(data) >= 13:
            self.axes[:] = struct.unpack_from("<6h", data, 1)
        elif kind == TRANSLATION_REPORT and len(data) >= 7:
            self.axes[:3] = struct.unpack_from("<3h", data, 1)
        elif kind == ROTATION_REPORT and len(data) >= 7:
            self.axes[3:] = struct.unpack_from("<3h", data, 1)
        elif kind == BUTTON_REPORT and len(data) >= 2:
            self._bitmask_buttons = int.from_bytes(data[1:], "little")
            self.reports += 1
            return "buttons"
        elif kind == EXTRA_BUTTON_REPORT and len(data) >= 3:
            mask = 0
            for (usage,) in struct.iter_unpack("<H", data[1:1 + 2 * ((len(data) - 1) // 2)]):
                if usage:
                    mask |= 1 << (usage - 1)
            self._extra_buttons = mask
            self.reports += 1
            return "buttons"
        else:
            return None
        self.reports += 1
        return "axes"


def button_levels(mask: int, count: int) -> tuple[int, ...]:
    """A bitmask as ``count`` 0/1 levels, button 0 first (the ``sensor_msgs/Joy`` layout)."""
    return tuple((mask >> i) & 1 for i in range(count))
