"""Decoding the Linux joystick API's event records (``/dev/input/js*``, ``linux/joystick.h``).

A read of a joystick node returns whole ``struct js_event`` records, 8 bytes each, in
the machine's byte order::

    __u32 time;    /* event timestamp, milliseconds */
    __s16 value;   /* axis position -32767 .. 32767, or button 0 / 1 */
    __u8  type;    /* JS_EVENT_BUTTON 0x01 or JS_EVENT_AXIS 0x02, | JS_EVENT_INIT 0x80 */
    __u8  number;  /* axis or button number */

Events carry absolute values (an axis reports where it is, a button whether it is down),
so the latest event of each axis and button is the state. Right after a node is opened
the kernel's joydev driver sends the state of every axis and button as events flagged
``JS_EVENT_INIT``; it sends them again when a reader fell behind and its 64-event queue
overflowed. Those are levels, not presses: a button held while the pad is opened is not
a press (a stuck "stop" must not end a session at start), while a button found down by
a later re-sync is (its press was in the events the queue dropped).

The decoder takes whatever bytes it gets: a record cut in two by a pipe is joined with
the rest of it, unknown event types are counted and skipped, and axis and button
numbers cover the whole ``__u8`` range, so no input can make it raise.
"""

from __future__ import annotations

import struct

import numpy as np

JS_EVENT_BUTTON = 0x01
JS_EVENT_AXIS = 0x02
JS_EVENT_INIT = 0x80
EVENT = struct.Struct("=IhBB")  # time, value, type, number: native byte order, no padding
EVENT_SIZE = EVENT.size  # 8
AXIS_MAX = 32767.0  # joydev's calibrated full deflection
NUMBERS = 256  # __u8 axis and button numbers


def pack_event(kind: int, number: int, value: int, time_ms: int = 0) -> bytes:
    """One ``js_event`` record, as the kernel writes it (tests and the fake pad use it)."""
    return EVENT.pack(time_ms & 0xFFFFFFFF, value, kind, number)


class JoystickState:
    """The state the events describe; feed it every byte read from the node, in order.

    ``rest_low`` names the axes that rest at their negative end (analog triggers): they
    start there instead of at 0, so a trigger whose init event has not come yet reads
    released. Not thread-safe: the caller serialises :meth:`feed` and the reads.
    """

    def __init__(self, rest_low: tuple[int, ...] | list[int] = ()) -> None:
        self.axes = np.zeros(NUMBERS, dtype=np.int64)
        for axis in rest_low:
            self.axes[axis] = -int(AXIS_MAX)
        self.buttons = 0  # bit i set while button i is down
        self.pressed = 0  # buttons that went down since take_pressed()
        self.events = 0  # records decoded
        self.ignored = 0  # records of an unknown type
        self.highest_button = -1  # the highest button number seen, for the button count of unknown pads
        self._partial = b""
        self._live = False  # a non-init event has arrived: init events after it are a re-sync

    def feed(self, data: bytes | bytearray) -> int:
        """Apply the records in ``data`` (plus a partial one left from the last call); returns how many."""
        data = self._partial + bytes(data)
        whole = len(data) - len(data) % EVENT_SIZE
        self._partial = data[whole:]
        count = 0
        for _time, value, kind, number in EVENT.iter_unpack(data[:whole]):
            count += 1
            init = bool(kind & JS_EVENT_INIT)
            kind &= ~JS_EVENT_INIT
            if kind == JS_EVENT_AXIS:
                self.axes[number] = value
            elif kind == JS_EVENT_BUTTON:
                bit = 1 << number
                down = value != 0
                if down and not self.buttons & bit and (self._live or not init):
                    self.pressed |= bit
                self.buttons = self.buttons | bit if down else self.buttons & ~bit
                self.highest_button = max(self.highest_button, number)
            else:
                self.ignored += 1
                continue
            if not init:
                self._live = True
        self.events += count
        return count

    def take_pressed(self) -> int:
        """The buttons pressed since the last call (a bitmask), and forget them."""
        pressed, self.pressed = self.pressed, 0
        return pressed

    def normalized(self, axes: list[int] | tuple[int, ...], triggers: frozenset[int] = frozenset()) -> np.ndarray:
        """The values of ``axes`` in [-1, 1]; those in ``triggers`` as 0 (at rest) .. 1 (pulled)."""
        values = np.clip(self.axes[list(axes)].astype(float) / AXIS_MAX, -1.0, 1.0)
        for i, axis in enumerate(axes):
            if axis in triggers:
                values[i] = (values[i] + 1.0) / 2.0
        return values
