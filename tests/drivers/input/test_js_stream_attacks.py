"""Attacks on the ``js_event`` decoder from a byte stream: stray, lost and random bytes.

A stream (a FIFO, a relay) can gain or lose bytes; after that every record is read across
a record boundary. The promise (robot_rl_drivers/input/js_events.py): a misaligned stream
never turns into a button press or a stick deflection that was not sent; while out of step
the pad reads at rest; real events after the stream realigned are seen.

The pad here is the kernel's side in miniature: records stamped with a millisecond clock
(an uptime drawn at random per trial, wrapping at 32 bits), read on a clock that runs with
it plus a delivery delay, fed in chunks of random sizes as a pipe would deliver them.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from robot_rl_drivers.input.js_events import (
    EVENT_SIZE,
    JS_EVENT_AXIS,
    JS_EVENT_BUTTON,
    JS_EVENT_INIT,
    QUIET_MS,
    SYNC_RUN,
    JoystickState,
    pack_event,
)

AXES, BUTTONS = 8, 11  # an Xbox 360 pad under xpad
TRIGGERS = (2, 5)
FULL = 32767
REST = {a: (-FULL if a in TRIGGERS else 0) for a in range(AXES)}
MARKER = 9  # a button pressed only after the stream realigned


class Pad:
    """The sender: records on its own millisecond clock, and what was really sent."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.t_ms = int(rng.integers(0, 2**32))  # any uptime, wrap included
        self.presses: Counter[int] = Counter()  # button -> times it went down
        self.axis_values = {a: {v} for a, v in REST.items()}  # axis -> every value sent
        self.down: set[int] = set()
        self.ever_down: set[int] = set()

    def record(self, kind: int, number: int, value: int, dt_ms: int = 1) -> bytes:
        self.t_ms += dt_ms
        base = kind & ~JS_EVENT_INIT
        if base == JS_EVENT_AXIS:
            self.axis_values[number].add(value)
        elif value and number not in self.down:
            self.presses[number] += 1
            self.ever_down.add(number)
        if base == JS_EVENT_BUTTON:
            (self.down.add if value else self.down.discard)(number)
        return pack_event(kind, number, value, self.t_ms)

    def init_burst(self) -> bytes:
        return b"".join([self.record(JS_EVENT_AXIS | JS_EVENT_INIT, a, v, 0) for a, v in REST.items()]
                        + [self.record(JS_EVENT_BUTTON | JS_EVENT_INIT, b, 0, 0) for b in range(BUTTONS)])

    def rest(self) -> bytes:
        """The pad at rest, as a relay that re-sends the state would send it (live records)."""
        return b"".join([self.record(JS_EVENT_AXIS, a, v) for a, v in REST.items()]
                        + [self.record(JS_EVENT_BUTTON, b, 0) for b in range(BUTTONS)])

    def random_events(self, n: int, buttons: tuple[int, ...] = tuple(b for b in range(BUTTONS) if b != MARKER)
                      ) -> bytes:
        palette = (-FULL, -12000, 0, 5000, FULL)
        out = []
        for _ in range(n):
            dt = int(self.rng.integers(1, 40))
            if self.rng.random() < 0.6:
                out.append(self.record(JS_EVENT_AXIS, int(self.rng.integers(0, AXES)),
                                       int(self.rng.choice(palette)), dt))
            else:
                button = int(self.rng.choice(buttons))
                out.append(self.record(JS_EVENT_BUTTON, button, 0 if button in self.down else 1, dt))
        return b"".join(out)


class Reader:
    """The decoder on a clock that runs with the pad's (plus a delivery delay), and what it reported."""

    def __init__(self, pad: Pad, aligned: bool = False) -> None:
        self.pad = pad
        self.delay_s = 0.005
        self.now = 1000.0 + pad.t_ms / 1000.0  # the reader's clock is unrelated to the pad's uptime
        self._offset = self.now - pad.t_ms / 1000.0
        self.state = JoystickState(TRIGGERS, axes=AXES, buttons=BUTTONS, aligned=aligned, clock=lambda: self.now)
        self.presses: Counter[int] = Counter()
        self.reads = 0

    def feed(self, data: bytes, max_chunk: int = 64) -> None:
        """``data`` in chunks of random sizes, each read a little after the pad sent its last record."""
        pos = 0
        while pos < len(data):
            size = int(self.pad.rng.integers(1, max_chunk + 1))
            self.now = max(self.now, self.pad.t_ms / 1000.0 + self._offset + self.delay_s)
            self.state.feed(data[pos:pos + size])
            pos += size
            self.read()
        self.now += QUIET_MS / 1000.0 * 2  # then the stream is quiet for a moment
        self.read()

    def read(self) -> None:
        """What ``Gamepad.read`` sees, checked against what the pad sent."""
        self.state.settle()
        self.reads += 1
        pressed = self.state.take_pressed()
        for b in range(256):
            if pressed >> b & 1:
                self.presses[b] += 1
        for b in range(256):
            if self.state.buttons >> b & 1:
                assert b in self.pad.ever_down, f"button {b} reads down but was never pressed"
        for a in range(256):
            value = int(self.state.axes[a])
            assert a < AXES and value in self.pad.axis_values[a] or value == 0, \
                f"axis {a} reads {value}, which the pad never sent"
        for b, count in self.presses.items():
            assert count <= self.pad.presses[b], f"button {b}: {count} presses read, {self.pad.presses[b]} sent"

    def at_rest(self) -> bool:
        return (self.state.buttons == 0 and self.state.pressed == 0
                and all(int(self.state.axes[a]) == REST.get(a, 0) for a in range(256)))


def test_seven_stray_bytes_then_a_pad_at_rest_reads_at_rest_30_times():
    """The hole: 7 stray bytes, and a pad at rest read as "intervene" on 24 of 30 reads."""
    pad = Pad(np.random.default_rng(1))
    reader = Reader(pad)
    reader.feed(pad.init_burst())
    reader.feed(bytes([0x01, 0x02, 0x81, 0x82, 0x00, 0x01, 0xFF]))  # stray bytes that look like types
    for _ in range(30):
        reader.feed(pad.rest())
        assert reader.at_rest()
    assert sum(reader.presses.values()) == 0 and reader.state.resyncs == 1 and reader.state.synced
    reader.feed(pad.record(JS_EVENT_BUTTON, MARKER, 1) + pad.record(JS_EVENT_BUTTON, MARKER, 0))
    assert reader.presses[MARKER] == 1  # a real press after realignment is seen


@pytest.mark.parametrize("aligned", [False, True])
def test_random_garbage_never_presses_nor_deflects(aligned):
    rng = np.random.default_rng(7 + aligned)
    for _ in range(20):
        pad = Pad(rng)
        reader = Reader(pad, aligned=aligned)
        if aligned:  # a node that starts aligned, then turns to garbage
            reader.feed(pad.init_burst())
        garbage = rng.integers(0, 256, size=int(rng.integers(1, 4000)), dtype=np.uint8).tobytes()
        reader.feed(garbage)
        assert reader.at_rest() and sum(reader.presses.values()) == 0
        assert reader.state.events == (len(REST) + BUTTONS if aligned else 0)  # nothing of the garbage counted


@pytest.mark.parametrize("k", range(1, EVENT_SIZE))
@pytest.mark.parametrize("how", ["insert", "delete"])
def test_bytes_gained_or_lost_at_every_offset_never_press_and_realign(k, how):
    rng = np.random.default_rng(100 * k + (how == "delete"))
    resynced = 0
    for _ in range(60):
        pad = Pad(rng)
        reader = Reader(pad)
        before = pad.init_burst() + pad.random_events(int(rng.integers(5, 60)))
        after = pad.random_events(int(rng.integers(0, 30)))
        stream = before + after
        cut = int(rng.integers(len(pad.init_burst()) // 2, len(stream) - k))
        if how == "insert":
            stream = stream[:cut] + rng.integers(0, 256, size=k, dtype=np.uint8).tobytes() + stream[cut:]
        else:
            stream = stream[:cut] + stream[cut + k:]
        reader.feed(stream)
        # the stick moves (a run of records), then a press only sent now
        moves = (5000, -12000, FULL, 0, 5000, 0)
        assert len(moves) > SYNC_RUN
        reader.feed(b"".join(pad.record(JS_EVENT_AXIS, 0, v, 8) for v in moves))
        reader.feed(pad.record(JS_EVENT_BUTTON, MARKER, 1, 30) + pad.record(JS_EVENT_BUTTON, MARKER, 0, 80))
        assert reader.presses[MARKER] == 1, "a real press after the stream realigned was not seen"
        assert reader.state.synced
        resynced += reader.state.resyncs > 0
    assert resynced >= 50  # the corruption was noticed (a cut inside the last record may go unnoticed)


def test_fast_alternating_presses_and_axes_still_decode():
    pad = Pad(np.random.default_rng(3))
    reader = Reader(pad)
    reader.feed(pad.init_burst())
    for _ in range(200):  # a button tapped every 2 ms, read after each tap
        reader.feed(pad.record(JS_EVENT_BUTTON, 0, 1, 1) + pad.record(JS_EVENT_BUTTON, 0, 0, 1))
    assert reader.presses[0] == 200 and reader.state.resyncs == 0
    flips = b"".join(pad.record(JS_EVENT_AXIS, a, FULL if i % 2 else -FULL, 1) for i in range(2000) for a in (0, 1))
    reader.feed(flips + pad.record(JS_EVENT_AXIS, 1, 5000, 1))
    assert int(reader.state.axes[0]) == FULL and int(reader.state.axes[1]) == 5000 and reader.state.resyncs == 0
