"""A fake ``hid`` module (hidapi's Python binding) for the SpaceMouse driver.

It has hidapi's API: ``enumerate()``, ``device()`` with ``open_path``,
``set_nonblocking``, ``read(size, timeout_ms)``, ``error`` and ``close``, and plays back
byte-exact reports queued with :meth:`FakeHid.push`. Putting :data:`UNPLUG` in the
report queue makes that read and every later one fail, as hidapi's do when the device
is pulled out. ``open_error`` makes ``open_path`` fail with that hidapi error text.

Used by tests/drivers/input/test_spacemouse.py and the ``spacemouse`` contract rig.
"""

from __future__ import annotations

import queue
from typing import Optional

# What hidapi enumerates for a SpaceMouse Compact on USB.
COMPACT = {"path": b"/dev/hidraw7", "vendor_id": 0x256F, "product_id": 0xC635, "serial_number": "",
           "release_number": 0x0437, "manufacturer_string": "3Dconnexion", "product_string": "SpaceMouse Compact",
           "usage_page": 1, "usage": 8, "interface_number": 0}
UNPLUG = object()  # in the report queue: the device went away


class FakeHidDevice:
    """hidapi's ``hid.device`` with a report queue; ``UNPLUG`` in the queue fails reads."""

    def __init__(self, hid: "FakeHid") -> None:
        self.hid = hid
        self.path = None
        self.closed = False
        self.nonblocking = None
        self.reads = 0
        self.unplugged = False
        self._error = ""

    def open_path(self, path: bytes) -> None:
        if self.hid.open_error is not None:
            self._error = self.hid.open_error
            raise OSError("open failed")
        self.path = path
        self.hid.opened.append(self)

    def error(self) -> str:
        return self._error

    def set_nonblocking(self, flag) -> int:
        self.nonblocking = flag
        return 0

    def read(self, max_length: int, timeout_ms: int = 0) -> list[int]:
        if self.path is None or self.closed:
            raise ValueError("not open")
        self.reads += 1
        if self.unplugged:
            raise OSError("read error")
        try:
            item = self.hid.reports.get(timeout=timeout_ms / 1000.0)
        except queue.Empty:
            return []
        if item is UNPLUG:
            self.unplugged = True
            raise OSError("read error")
        return list(item)[:max_length]

    def close(self) -> None:
        self.closed = True


class FakeHid:
    """A stand-in for the ``hid`` module with ``devices`` attached (one SpaceMouse Compact
    unless told otherwise); ``opened`` lists the devices opened, in order."""

    def __init__(self, devices: Optional[list[dict]] = None) -> None:
        self.devices = [COMPACT] if devices is None else devices
        self.reports: queue.Queue = queue.Queue()
        self.opened: list[FakeHidDevice] = []
        self.open_error: Optional[str] = None

    def enumerate(self, vendor_id: int = 0, product_id: int = 0) -> list[dict]:
        return [dict(d) for d in self.devices]

    def device(self) -> FakeHidDevice:
        return FakeHidDevice(self)

    def push(self, *hex_reports: str) -> None:
        for r in hex_reports:
            self.reports.put(bytes.fromhex(r))
