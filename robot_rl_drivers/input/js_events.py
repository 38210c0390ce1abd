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

The decoder takes whatever bytes it gets, and never raises: a record cut in two by a pipe
is joined with the rest of it. A joydev node only ever returns whole records, but a byte
stream (a FIFO or a relay that forwards a pad's records) can lose or gain bytes, and then
every later record is read across a record boundary: a pad at rest decodes as buttons
pressed and sticks pushed. So every record is checked before it counts, and a stream that
fails the check is realigned, never believed:

* a record is valid when its type is ``JS_EVENT_BUTTON`` or ``JS_EVENT_AXIS`` (with or
  without ``JS_EVENT_INIT``) and nothing else, its number is below the pad's axis or
  button count, a button's value is 0 or 1, and its time (milliseconds, wrapping at
  2**32) neither goes back nor runs ahead of the reader's own clock by more than
  :data:`TIME_SLACK_MS` (the pad's clock and ours advance together; bytes read across a
  boundary give a time that is anywhere in 32 bits, so this check alone refuses all but
  about one in a million of them);
* the first invalid record loses the alignment (counted in ``resyncs``): the state drops
  to a pad at rest (sticks centred, triggers released, no button down, no press pending),
  and the decoder discards bytes (counted in ``discarded``) until :data:`SYNC_RUN`
  consecutive valid records start at one offset; only then does anything count again;
* a source that is not known to be aligned from its first byte (anything but a joydev
  node: ``aligned=False``) starts in that search, so a stream that begins with stray bytes
  cannot press anything either;
* on such a source a record counts only once the record after it has checked out too, or
  once the stream has been quiet for :data:`QUIET_MS` with no partial record waiting
  (:meth:`JoystickState.settle`): a record read across a lost or extra byte is followed by
  more of the same, which fail, so it never counts even when it happens to pass the check
  itself (a deleted ``number`` byte, say, whose place the next record's time filled).

While unaligned the pad reads at rest, so a misaligned stream never becomes a button
press or a stick deflection; the cost is that after a lost alignment the pad reads at rest
until it sends :data:`SYNC_RUN` records in a row (move a stick).
"""

from __future__ import annotations

import struct
import time
from typing import Callable, Optional

import numpy as np

JS_EVENT_BUTTON = 0x01
JS_EVENT_AXIS = 0x02
JS_EVENT_INIT = 0x80
EVENT = struct.Struct("=IhBB")  # time, value, type, number: native byte order, no padding
EVENT_SIZE = EVENT.size  # 8
AXIS_MAX = 32767.0  # joydev's calibrated full deflection
NUMBERS = 256  # __u8 axis and button numbers
#: Consecutive valid records at one offset that (re)establish the alignment of a stream.
SYNC_RUN = 4
#: How far a record's time may run ahead of the reader's clock (ms): delivery jitter, a relay's
#: clock drifting from ours. Late records (a reader starved under load) are always fine.
TIME_SLACK_MS = 2000
#: A stream's last record counts once nothing more arrived for this long (ms) and no partial
#: record waits: a lone button press on a quiet pad is late by about this much.
QUIET_MS = 20.0
_WRAP = 1 << 32


def pack_event(kind: int, number: int, value: int, time_ms: int = 0) -> bytes:
    """One ``js_event`` record, as the kernel writes it (tests and the fake pad use it)."""
    return EVENT.pack(time_ms & 0xFFFFFFFF, value, kind, number)


def kernel_time_ms() -> int:
    """The time joydev stamps an event with now, as far as a process can tell (monotonic ms, 32 bits)."""
    return int(time.monotonic() * 1000.0) & 0xFFFFFFFF


class JoystickState:
    """The state the events describe; feed it every byte read from the node, in order.

    ``rest_low`` names the axes that rest at their negative end (analog triggers): they
    start there instead of at 0, so a trigger whose init event has not come yet reads
    released. ``axes`` and ``buttons`` are the pad's counts where known (joydev's ioctls):
    a record numbering one past them is invalid. ``aligned``: the source delivers whole
    records from its first byte (a joydev node); otherwise nothing counts until the
    alignment is found (module docstring). ``clock`` returns the reader's time in seconds
    (tests pass their own). Not thread-safe: the caller serialises :meth:`feed` and the reads.
    """

    def __init__(self, rest_low: tuple[int, ...] | list[int] = (), *, axes: Optional[int] = None,
                 buttons: Optional[int] = None, aligned: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._rest = np.zeros(NUMBERS, dtype=np.int64)
        for axis in rest_low:
            self._rest[axis] = -int(AXIS_MAX)
        self.axes = self._rest.copy()
        self.axis_count = NUMBERS if axes is None else max(0, min(int(axes), NUMBERS))
        self.button_count = NUMBERS if buttons is None else max(0, min(int(buttons), NUMBERS))
        self.buttons = 0  # bit i set while button i is down
        self.pressed = 0  # buttons that went down since take_pressed()
        self.events = 0  # valid records applied
        self.refused = 0  # invalid records met at an aligned offset (each one loses the alignment)
        self.resyncs = 0  # times the alignment was lost
        self.discarded = 0  # bytes dropped while looking for the alignment
        self.highest_button = -1  # the highest button number seen, for the button count of unknown pads
        self.synced = aligned  # whether records at the current offset are believed
        self._clock = clock
        self._buffer = b""
        self._lookahead = not aligned  # a stream's record waits for the next one (or for quiet)
        self._pending: Optional[tuple[int, int, int, int]] = None
        self._data_at = 0.0  # our clock (ms) when bytes last arrived
        self._live = False  # a non-init event has arrived: init events after it are a re-sync
        # the time anchor: the last applied record's time (raw and unwrapped) and the least
        # (our clock - its time) seen, i.e. our clock's reading for a record time
        self._last_raw: Optional[int] = None
        self._last_ms = 0
        self._offset_ms: Optional[float] = None

    # --- checking ---------------------------------------------------------------------------

    def _valid(self, record: tuple[int, int, int, int], previous: Optional[int], ahead_ms: float) -> bool:
        """Whether one record is what joydev could send, ``ahead_ms`` after time ``previous`` at most."""
        stamp, value, kind, number = record
        base = kind & ~JS_EVENT_INIT
        if base == JS_EVENT_AXIS:
            if number >= self.axis_count:
                return False
        elif base == JS_EVENT_BUTTON:
            if number >= self.button_count or value not in (0, 1):
                return False
        else:
            return False
        return previous is None or (stamp - previous) % _WRAP <= ahead_ms

    def _ahead_ms(self, now_ms: float) -> float:
        """How far past the anchor a record's time may be now (unbounded without an anchor)."""
        if self._offset_ms is None:
            return float("inf")
        return max(0.0, now_ms - (self._last_ms + self._offset_ms)) + TIME_SLACK_MS

    def _run_at(self, data: bytes, start: int, now_ms: float) -> bool:
        """Whether :data:`SYNC_RUN` valid records, each in time after the one before, start at ``start``."""
        previous, ahead = self._last_raw, self._ahead_ms(now_ms)
        for i in range(SYNC_RUN):
            record = EVENT.unpack_from(data, start + i * EVENT_SIZE)
            if not self._valid(record, previous, ahead):
                return False
            previous, ahead = record[0], TIME_SLACK_MS if previous is None else ahead
        return True

    # --- feeding ----------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray) -> int:
        """Apply the valid records in ``data`` (plus what is left from the last call); returns how many."""
        now_ms = self._clock() * 1000.0
        if data:
            self._data_at = now_ms
        data = self._buffer + bytes(data)
        pos, count = 0, 0
        while True:
            if not self.synced:
                pos = self._search(data, pos, now_ms)
                if not self.synced:
                    break
            if len(data) - pos < EVENT_SIZE:
                break
            record = EVENT.unpack_from(data, pos)
            previous = self._last_raw if self._pending is None else self._pending[0]
            if not self._valid(record, previous, self._ahead_ms(now_ms)):
                self.refused += 1
                self._lose_alignment()
                continue  # search again from this record's first byte on
            pos += EVENT_SIZE
            if not self._lookahead:
                self._apply(record, now_ms)
                count += 1
                continue
            if self._pending is not None:  # the record after it checked out: it counts
                self._apply(self._pending, now_ms)
                count += 1
            self._pending = record
        self._buffer = data[pos:]
        self.events += count
        return count + self.settle()

    def settle(self) -> int:
        """Apply a stream's last record once the stream has been quiet for :data:`QUIET_MS` and no
        partial record waits (the reader calls this when nothing arrives; so does a read). Returns 1 or 0."""
        now_ms = self._clock() * 1000.0
        if self._pending is None or self._buffer or now_ms - self._data_at < QUIET_MS:
            return 0
        self._apply(self._pending, now_ms)
        self._pending = None
        self.events += 1
        return 1

    def _search(self, data: bytes, pos: int, now_ms: float) -> int:
        """Find the first offset from ``pos`` where a run of valid records starts; drop the bytes before it.

        Returns the offset found (``synced`` set), or the first offset not yet ruled out
        when ``data`` ends before a run could be checked there."""
        need = SYNC_RUN * EVENT_SIZE
        while len(data) - pos >= need:
            if self._run_at(data, pos, now_ms):
                self.synced = True
                return pos
            pos += 1
            self.discarded += 1
        return pos

    def _lose_alignment(self) -> None:
        """Forget what the misaligned stream may have said: a pad at rest, nothing pressed."""
        self.synced = False
        self.resyncs += 1
        self._pending = None
        self.axes = self._rest.copy()
        self.buttons = 0
        self.pressed = 0

    def _apply(self, record: tuple[int, int, int, int], now_ms: float) -> None:
        stamp, value, kind, number = record
        if self._last_raw is None:
            self._last_ms = stamp
        else:
            self._last_ms += (stamp - self._last_raw) % _WRAP
        self._last_raw = stamp
        offset = now_ms - self._last_ms
        self._offset_ms = offset if self._offset_ms is None else min(self._offset_ms, offset)
        init = bool(kind & JS_EVENT_INIT)
        if kind & ~JS_EVENT_INIT == JS_EVENT_AXIS:
            self.axes[number] = value
        else:
            bit = 1 << number
            down = value != 0
            if down and not self.buttons & bit and (self._live or not init):
                self.pressed |= bit
            self.buttons = self.buttons | bit if down else self.buttons & ~bit
            self.highest_button = max(self.highest_button, number)
        if not init:
            self._live = True

    # --- reading ----------------------------------------------------------------------------

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
