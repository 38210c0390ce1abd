"""Decoding Linux joystick ``js_event`` records: layout, levels and presses, and garbage."""

from __future__ import annotations

import struct

import numpy as np

from robot_rl_drivers.input.js_events import (
    EVENT_SIZE,
    JS_EVENT_AXIS,
    JS_EVENT_BUTTON,
    JS_EVENT_INIT,
    JoystickState,
    pack_event,
)

AXIS, BUTTON, INIT = JS_EVENT_AXIS, JS_EVENT_BUTTON, JS_EVENT_INIT


def test_a_record_is_the_kernels_struct_js_event():
    # struct js_event { __u32 time; __s16 value; __u8 type; __u8 number; }, native order, 8 bytes
    record = pack_event(AXIS, 3, -1234, time_ms=0x01020304)
    assert EVENT_SIZE == 8 and len(record) == 8
    assert struct.unpack("=IhBB", record) == (0x01020304, -1234, AXIS, 3)
    state = JoystickState()
    assert state.feed(record) == 1
    assert state.axes[3] == -1234 and state.events == 1


def test_axes_and_buttons_are_levels_and_presses_are_edges():
    state = JoystickState()
    state.feed(pack_event(BUTTON, 4, 1) + pack_event(AXIS, 0, 16384))
    assert state.buttons == 1 << 4 and state.take_pressed() == 1 << 4
    assert state.take_pressed() == 0  # a press is reported once
    state.feed(pack_event(BUTTON, 4, 1))  # the same level again (no release in between) is no press
    assert state.take_pressed() == 0
    state.feed(pack_event(BUTTON, 4, 0) + pack_event(BUTTON, 4, 1) + pack_event(BUTTON, 4, 0))  # a quick tap
    assert state.buttons == 0 and state.take_pressed() == 1 << 4  # released now, but the tap counts
    np.testing.assert_allclose(state.normalized([0]), [16384 / 32767])


def test_init_events_at_open_are_levels_but_a_later_resync_counts_a_press():
    state = JoystickState()
    # joydev's state at open: button 6 (say "stop") already held
    state.feed(pack_event(BUTTON | INIT, 6, 1) + pack_event(AXIS | INIT, 1, 0))
    assert state.buttons == 1 << 6 and state.take_pressed() == 0  # held at open: no press
    state.feed(pack_event(AXIS, 0, 100))  # live events follow
    state.feed(pack_event(BUTTON | INIT, 0, 1))  # a re-sync after the kernel queue overflowed: 0 went down
    assert state.take_pressed() == 1 << 0


def test_a_record_split_across_reads_is_joined():
    state = JoystickState()
    record = pack_event(AXIS, 2, 777)
    assert state.feed(record[:3]) == 0 and state.axes[2] == 0
    assert state.feed(record[3:] + pack_event(BUTTON, 1, 1)[:5]) == 1 and state.axes[2] == 777
    assert state.feed(pack_event(BUTTON, 1, 1)[5:]) == 1 and state.buttons == 1 << 1


def test_unknown_types_and_numbers_past_the_pad_are_refused_and_lose_the_alignment():
    state = JoystickState(axes=8, buttons=11)
    state.feed(pack_event(AXIS, 0, 9000) + pack_event(0x04, 9, 5))  # not a button, not an axis
    assert (state.refused, state.resyncs, state.synced) == (1, 1, False)
    assert state.buttons == 0 and not state.axes.any()  # out of step: a pad at rest, the stick forgotten
    state = JoystickState()  # counts unknown: every __u8 number is one the pad may have
    state.feed(pack_event(AXIS, 255, 32767) + pack_event(BUTTON, 255, 1))  # the largest __u8 numbers
    assert state.axes[255] == 32767 and state.buttons == 1 << 255 and state.highest_button == 255
    for bad in (pack_event(AXIS, 8, 1), pack_event(BUTTON, 11, 1), pack_event(BUTTON, 0, 2),
                pack_event(AXIS | BUTTON, 0, 0), pack_event(0x7F, 0, 1), pack_event(BUTTON | 0x40, 0, 1)):
        state = JoystickState(axes=8, buttons=11)
        assert state.feed(bad) == 0 and state.refused == 1


def test_normalized_values_stay_in_range_and_triggers_read_from_rest():
    state = JoystickState(rest_low=[5])
    np.testing.assert_allclose(state.normalized([0, 5], frozenset({5})), [0.0, 0.0])  # no event yet: released
    state.feed(pack_event(AXIS, 0, -32768) + pack_event(AXIS, 5, 32767))  # int16's minimum is past -32767
    np.testing.assert_allclose(state.normalized([0, 5], frozenset({5})), [-1.0, 1.0])
    state.feed(pack_event(AXIS, 5, 0))
    np.testing.assert_allclose(state.normalized([5], frozenset({5})), [0.5])


def test_random_bytes_never_raise_and_never_leave_range():
    rng = np.random.default_rng(0)
    state = JoystickState(rest_low=[2, 5])
    for _ in range(500):
        chunk = rng.integers(0, 256, size=int(rng.integers(0, 40)), dtype=np.uint8).tobytes()
        state.feed(chunk)
        values = state.normalized(list(range(256)), frozenset({2, 5}))
        assert np.all(np.isfinite(values)) and np.all(np.abs(values) <= 1.0)
    assert state.resyncs > 0 and state.discarded > 0 and state.take_pressed() >= 0
