"""A fake ``/dev/input/js*``: FIFOs in a temporary directory that play a kernel joystick node.

:class:`FakeJoystickNodes` is a :class:`robot_rl_drivers.input.gamepad.JoystickNodes`
over ``<root>/dev`` (one FIFO per pad, ``js0``, ``js1``, ...) and ``<root>/sys`` (the
sysfs ``jsN/device/name`` files). The driver opens, selects on and reads the FIFOs with
its own code; the fake only adds what a FIFO cannot do by itself:

* on open, the pad's state as ``JS_EVENT_INIT`` events, as joydev sends it;
* ``query`` answers name and axis/button counts as joydev's ioctls would (a FIFO has no
  ioctls; :meth:`FakeJoystickNodes.real_query` keeps the driver's own fallback);
* :meth:`FakePad.unplug`: ``enodev`` (the node vanishes and reads fail with ENODEV, as
  joydev's do after an unplug) or ``eof`` (the node vanishes and reads see end of file);
* ``open_error``: opening fails with that errno (``EACCES`` for a missing permission);
* ``on_open(pad)``: called after each open (a test unplugs the pad a while later).

Events are stamped as joydev stamps them: milliseconds of a monotonic clock, 32 bits
(:func:`robot_rl_drivers.input.js_events.kernel_time_ms`). A FIFO is a byte stream, not a
joystick node, so the fake sets :attr:`JoystickNodes.streams` (the driver then starts
unaligned and checks every record, which the tests of stray bytes attack).

The writer keeps its end open read-write, so the FIFO never reads as end of file while
the pad is "plugged in". Used by tests/drivers/input/test_gamepad.py, the ``gamepad``
contract rig (tests/support/gamepad_rig.py) and the gamepad tests of the node and
recording paths.
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import Callable, Optional

from robot_rl_drivers.input.gamepad import JoystickInfo, JoystickNodes
from robot_rl_drivers.input.js_events import (
    AXIS_MAX,
    JS_EVENT_AXIS,
    JS_EVENT_BUTTON,
    JS_EVENT_INIT,
    kernel_time_ms,
    pack_event,
)

XBOX = "Microsoft X-Box 360 pad"
FULL = int(AXIS_MAX)
#: The Xbox layout under xpad: A B X Y LB RB Back Start Guide LS RS.
BUTTON = {"a": 0, "b": 1, "x": 2, "y": 3, "lb": 4, "rb": 5, "back": 6, "start": 7, "guide": 8, "ls": 9, "rs": 10}
AXIS = {"lx": 0, "ly": 1, "lt": 2, "rx": 3, "ry": 4, "rt": 5, "dpad_x": 6, "dpad_y": 7}


class UnpluggedFile:
    """The driver's open node: the real FIFO file, whose reads fail with ENODEV once unplugged."""

    def __init__(self, file, pad: "FakePad") -> None:
        self._file = file
        self._pad = pad

    def fileno(self) -> int:
        return self._file.fileno()

    def read(self, size: int = -1):
        if self._pad.unplugged == "enodev":
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
        return self._file.read(size)

    def close(self) -> None:
        self._pad.closed_files += 1
        self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed


class FakePad:
    """One pad: a FIFO node, its name, and the state joydev would report at open."""

    def __init__(self, root: Path, number: int, name: Optional[str], axes: int, buttons: int,
                 triggers: tuple[int, ...]) -> None:
        self.path = str(root / "dev" / f"js{number}")
        self.name = name
        self.axes, self.buttons = axes, buttons
        self.state = {("axis", a): (-FULL if a in triggers else 0) for a in range(axes)}
        self.state.update({("button", b): 0 for b in range(buttons)})
        os.mkfifo(self.path)
        if name is not None:
            sys_dir = root / "sys" / f"js{number}" / "device"
            sys_dir.mkdir(parents=True)
            (sys_dir / "name").write_text(name + "\n")
        self._writer: Optional[int] = os.open(self.path, os.O_RDWR)  # a writer that never blocks the open
        self._lock = threading.Lock()
        self.unplugged: Optional[str] = None
        self.written = 0  # events written, init events included
        self.closed_files = 0
        self.opens = 0

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._writer is None:
                raise RuntimeError("the pad is unplugged")
            view = memoryview(data)
            while view:
                view = view[os.write(self._writer, view):]

    def events(self, *events: tuple[str, int, int], init: bool = False) -> None:
        """Write ``(kind, number, value)`` events, kind ``axis`` or ``button``."""
        flag = JS_EVENT_INIT if init else 0
        records = []
        for kind, number, value in events:
            records.append(pack_event((JS_EVENT_AXIS if kind == "axis" else JS_EVENT_BUTTON) | flag, number, value,
                                      kernel_time_ms()))
            if not init:
                self.state[(kind, number)] = value
            self.written += 1
        self.write(b"".join(records))

    def axis(self, number: int, value: int) -> None:
        self.events(("axis", number, value))

    def button(self, number: int, down: bool) -> None:
        self.events(("button", number, 1 if down else 0))

    def send_init(self) -> None:
        """The state as init events, as joydev sends on open and after its queue overflowed."""
        self.events(*[(kind, number, value) for (kind, number), value in sorted(self.state.items())], init=True)

    def unplug(self, how: str = "enodev") -> None:
        """Pull the pad out: its node vanishes; reads fail with ENODEV (``enodev``) or see end of file (``eof``)."""
        assert how in ("enodev", "eof")
        with self._lock:
            self.unplugged = how
            if self._writer is not None:
                os.close(self._writer)  # wakes a reader in select()
                self._writer = None
        if os.path.exists(self.path):
            os.unlink(self.path)

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                os.close(self._writer)
                self._writer = None


class FakeJoystickNodes(JoystickNodes):
    """Joystick nodes under ``root`` (a temporary directory); add pads with :meth:`add`."""

    streams = True  # the nodes are FIFOs

    def __init__(self, root: Path) -> None:
        root = Path(root)
        (root / "dev").mkdir(parents=True, exist_ok=True)
        (root / "sys").mkdir(parents=True, exist_ok=True)
        super().__init__(dev_dir=str(root / "dev"), sys_dir=str(root / "sys"))
        self.root = root
        self.pads: dict[str, FakePad] = {}
        self.open_error: Optional[int] = None
        self.answer_queries = True
        self.on_open: Optional[Callable[[FakePad], None]] = None  # called after each open (e.g. to unplug later)

    def add(self, name: Optional[str] = XBOX, *, number: Optional[int] = None, axes: int = 8, buttons: int = 11,
            triggers: tuple[int, ...] = (2, 5)) -> FakePad:
        number = len(self.pads) if number is None else number
        pad = FakePad(self.root, number, name, axes, buttons, triggers)
        self.pads[pad.path] = pad
        return pad

    def open(self, path: str):
        if self.open_error is not None:
            raise OSError(self.open_error, os.strerror(self.open_error), path) if self.open_error != errno.EACCES \
                else PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        file = super().open(path)  # the driver's own open, on the FIFO
        pad = self.pads[path]
        pad.opens += 1
        pad.send_init()
        if self.on_open is not None:
            self.on_open(pad)
        return UnpluggedFile(file, pad)

    def query(self, file) -> JoystickInfo:
        if not self.answer_queries:
            return self.real_query(file)
        pad = file._pad  # an UnpluggedFile from open()
        return JoystickInfo(pad.name, pad.axes, pad.buttons)

    def real_query(self, file) -> JoystickInfo:
        """The driver's ioctl path (on a FIFO every ioctl fails: nothing is known)."""
        return JoystickNodes.query(self, file)

    def close(self) -> None:
        for pad in self.pads.values():
            pad.close()
