"""The gamepad driver over a fake ``/dev/input/js*`` (FIFOs fed with ``js_event`` records).

The driver opens, selects on and reads the FIFO with its own code; the fake adds joydev's
init events on open, its ioctl answers and the unplug (tests/support/fake_gamepad.py).
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from fake_gamepad import AXIS, BUTTON, FULL, FakeJoystickNodes  # tests/support

from robot_rl.config.input import GamepadAxes, GamepadButtons, GamepadConfig, InterventionConfig
from robot_rl.envs.inputs import FailSafeInput
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.tasks import config_from_dict, load_config
from robot_rl_drivers.input import make_input_device
from robot_rl_drivers.input.gamepad import Gamepad, JoystickInfo, source_kind
from robot_rl_drivers.input.js_events import JS_EVENT_AXIS, JS_EVENT_BUTTON, kernel_time_ms, pack_event
from robot_rl_drivers.input.keyboard import MOTION_BINDINGS

IDENTITY = ("x", "y", "z")
RAW = GamepadConfig(deadband=0.0, scale=(1.0,) * 6)  # no deadband, unit gains: the mapping alone


def wait_for(predicate, timeout: float = 2.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting for the gamepad reader"
        time.sleep(0.002)


def settle(pad_device: Gamepad, pad) -> None:
    """Wait until the reader has decoded every event written so far."""
    wait_for(lambda: pad_device.events_received >= pad.written)


@pytest.fixture
def nodes(tmp_path):
    fake = FakeJoystickNodes(tmp_path)
    yield fake
    fake.close()


@pytest.fixture
def pad(nodes):
    return nodes.add()


def open_pad(nodes, **cfg) -> Gamepad:
    device = Gamepad(InterventionConfig(device="gamepad", **cfg), nodes=nodes)
    return device


@pytest.fixture
def gamepad(nodes, pad):
    device = open_pad(nodes)
    settle(device, pad)
    yield device
    device.close()


# --- finding and opening ------------------------------------------------------------------------


def test_opens_the_first_pad_skipping_a_spacemouse(nodes):
    nodes.add("3Dconnexion SpaceMouse Compact")
    pad = nodes.add("Logitech Gamepad F310")
    device = open_pad(nodes)
    try:
        assert device.path == pad.path and device.name == "Logitech Gamepad F310"
        assert device.where == f"gamepad 'Logitech Gamepad F310' at {pad.path}" and device.connected
        assert device.button_count == 11  # what the pad reports
    finally:
        device.close()


def test_name_and_path_pick_one_pad(nodes):
    first = nodes.add("Microsoft X-Box 360 pad")
    second = nodes.add("Sony Interactive Entertainment DualSense Wireless Controller")
    device = open_pad(nodes, gamepad=GamepadConfig(name="dualsense"))
    device.close()
    assert device.path == second.path
    device = open_pad(nodes, gamepad=GamepadConfig(path=first.path))
    device.close()
    assert device.path == first.path


def test_no_joystick_node_is_one_line_naming_joydev(nodes):
    with pytest.raises(DeviceError) as err:
        open_pad(nodes)
    msg = str(err.value)
    assert msg.startswith("no gamepad found:") and "no js* joystick nodes" in msg and "modprobe joydev" in msg
    assert "\n" not in msg


def test_a_missing_path_and_an_unmatched_name_list_what_is_there(nodes):
    nodes.add("Microsoft X-Box 360 pad")
    with pytest.raises(DeviceError) as err:
        open_pad(nodes, gamepad=GamepadConfig(path="/dev/input/js7"))
    msg = str(err.value)
    assert "no gamepad at /dev/input/js7 (intervention.gamepad.path)" in msg and "js0 (Microsoft X-Box 360 pad)" in msg
    with pytest.raises(DeviceError) as err:
        open_pad(nodes, gamepad=GamepadConfig(name="8bitdo"))
    msg = str(err.value)
    assert "no gamepad named like '8bitdo' (intervention.gamepad.name)" in msg and "js0 (Microsoft" in msg
    assert "\n" not in msg


def test_only_3d_mice_is_no_gamepad(nodes):
    nodes.add("3Dconnexion SpaceNavigator")
    with pytest.raises(DeviceError, match=r"are 3D mice \(js0 \(3Dconnexion SpaceNavigator\)\)"):
        open_pad(nodes)
    device = open_pad(nodes, gamepad=GamepadConfig(name="spacenavigator"))  # asked for by name: taken
    device.close()


def test_permission_denied_says_how_to_get_access(nodes, pad):
    nodes.open_error = errno.EACCES
    with pytest.raises(DeviceError) as err:
        open_pad(nodes)
    msg = str(err.value)
    assert f"cannot open the gamepad at {pad.path}: permission denied" in msg and "usermod -aG input" in msg
    assert "\n" not in msg
    nodes.open_error = errno.EBUSY
    with pytest.raises(DeviceError, match="Device or resource busy"):
        open_pad(nodes)


def test_a_mapping_the_pad_does_not_have_is_one_line_naming_the_key(nodes):
    nodes.add("Tiny Pad", axes=4, buttons=6)
    with pytest.raises(DeviceError) as err:
        open_pad(nodes)  # the default z is axis 4, rx 7, ry 6
    msg = str(err.value)
    assert msg.startswith("intervention.gamepad.axes.z is axis 4, but the gamepad 'Tiny Pad'") and "4 axes" in msg
    small = GamepadConfig(axes=GamepadAxes(z=3, rx=None, ry=None, rz=None))
    with pytest.raises(DeviceError, match=r"intervention.gamepad.buttons.pause is button 7, .* has 6 buttons"):
        open_pad(nodes, gamepad=small)
    fitted = replace(small, buttons=GamepadButtons(pause=None, stop=None))
    device = open_pad(nodes, gamepad=fitted)
    device.close()
    assert all(p.closed_files == p.opens for p in nodes.pads.values())  # the refused opens closed their node


def test_without_ioctl_answers_the_name_comes_from_sysfs(nodes, pad):
    nodes.answer_queries = False  # the driver's own ioctls, which a FIFO refuses
    device = open_pad(nodes)
    try:
        assert device.name == "Microsoft X-Box 360 pad" and device.axis_count is None
        settle(device, pad)
        assert len(device.read().buttons) == 11  # the buttons seen in the init events
    finally:
        device.close()


# --- the mapping --------------------------------------------------------------------------------

#: The default mapping, control by control: (axis, raw value) -> the operator motion it is.
DEFAULT_MOTIONS = [
    ((AXIS["lx"], FULL), "right"), ((AXIS["lx"], -FULL), "left"),
    ((AXIS["ly"], -FULL), "forward"), ((AXIS["ly"], FULL), "back"),  # stick y reads positive down
    ((AXIS["ry"], -FULL), "up"), ((AXIS["ry"], FULL), "down"),
    ((AXIS["rx"], FULL), "turn_right"), ((AXIS["rx"], -FULL), "turn_left"),
    ((AXIS["dpad_y"], -FULL), "tilt_forward"), ((AXIS["dpad_y"], FULL), "tilt_back"),
    ((AXIS["dpad_x"], FULL), "roll_right"), ((AXIS["dpad_x"], -FULL), "roll_left"),
]


@pytest.mark.parametrize("event, motion", DEFAULT_MOTIONS, ids=[m for _, m in DEFAULT_MOTIONS])
def test_each_control_moves_the_way_the_keyboard_key_of_that_name_does(nodes, pad, event, motion):
    device = open_pad(nodes, axis_map=IDENTITY, gamepad=RAW)
    try:
        pad.axis(*event)
        settle(device, pad)
        cmd = device.read()
        axis, direction = MOTION_BINDINGS[motion]
        expected = np.zeros(6)
        expected[axis] = direction
        np.testing.assert_allclose(cmd.twist, expected, atol=1e-12)
        assert cmd.intervene  # moving a stick takes over
    finally:
        device.close()


def test_axis_map_and_scale_apply_as_for_the_spacemouse(nodes, pad):
    cfg = GamepadConfig(deadband=0.0, scale=(0.5, 1.0, 1.0, 1.0, 1.0, 1.0))
    device = open_pad(nodes, axis_map=("-y", "x", "z"), gamepad=cfg)
    try:
        pad.events(("axis", AXIS["lx"], FULL // 2), ("axis", AXIS["ly"], -FULL))  # right half way, forward full
        settle(device, pad)
        # robot x = -operator y (forward) -> -1, gain 0.5; robot y = operator x (right) -> 0.5
        np.testing.assert_allclose(device.read().twist, [-0.5, FULL // 2 / FULL, 0, 0, 0, 0], atol=1e-9)
    finally:
        device.close()


def test_deadband_keeps_a_drifting_stick_silent_and_is_continuous(nodes, pad):
    device = open_pad(nodes, axis_map=IDENTITY, gamepad=GamepadConfig(deadband=0.15, scale=(1.0,) * 6))
    try:
        pad.events(("axis", AXIS["lx"], int(0.12 * FULL)), ("axis", AXIS["ry"], int(-0.1 * FULL)))  # worn sticks
        settle(device, pad)
        cmd = device.read()
        assert not np.any(cmd.twist) and not cmd.intervene
        pad.axis(AXIS["lx"], int(0.575 * FULL))
        settle(device, pad)
        np.testing.assert_allclose(device.read().twist[0], (0.575 - 0.15) / 0.85, atol=1e-4)
    finally:
        device.close()


def test_a_trigger_mapped_to_a_motion_reads_released_at_rest(nodes, pad):
    cfg = GamepadConfig(deadband=0.0, scale=(1.0,) * 6, invert=[], axes=GamepadAxes(z=AXIS["rt"], rz=None))
    device = open_pad(nodes, axis_map=IDENTITY, gamepad=cfg)
    try:
        cmd = device.read()  # at rest the trigger reads -32767: released, not "half pulled"
        assert cmd.twist[2] == 0.0 and not cmd.intervene
        pad.axis(AXIS["rt"], FULL)
        settle(device, pad)
        assert device.read().twist[2] == pytest.approx(1.0)
    finally:
        device.close()


def test_buttons_do_the_documented_actions(nodes, pad):
    device = open_pad(nodes, intervene_mode="toggle")
    try:
        pad.button(BUTTON["lb"], True)
        settle(device, pad)
        cmd = device.read()
        assert cmd.close_gripper is True and cmd.buttons[BUTTON["lb"]] == 1 and len(cmd.buttons) == 11
        assert device.read().close_gripper is True  # held: still asking
        pad.events(("button", BUTTON["lb"], 0), ("button", BUTTON["rb"], 1), ("button", BUTTON["rb"], 0))
        settle(device, pad)
        assert device.read().close_gripper is False  # RB tapped between two reads: opens
        assert device.read().close_gripper is None
        pad.events(("button", BUTTON["y"], 1), ("button", BUTTON["y"], 0))
        settle(device, pad)
        assert device.read().gripper_toggle_pressed
        pad.events(("button", BUTTON["x"], 1), ("button", BUTTON["x"], 0))  # X toggles taking over on
        settle(device, pad)
        assert device.read().intervene and device.read().intervene
        presses = {"a": "success_pressed", "b": "failure_pressed", "start": "pause_pressed", "back": "stop_pressed"}
        for button, flag in presses.items():
            pad.events(("button", BUTTON[button], 1), ("button", BUTTON[button], 0))
            settle(device, pad)
            cmd = device.read()
            assert getattr(cmd, flag) and all(not getattr(cmd, f) for f in presses.values() if f != flag), button
            assert not getattr(device.read(), flag), f"{button}: a press is reported once"
        pad.button(BUTTON["guide"], True)  # unmapped: a level, no action
        settle(device, pad)
        cmd = device.read()
        assert cmd.buttons[BUTTON["guide"]] == 1 and not any(getattr(cmd, f) for f in presses.values())
    finally:
        device.close()


def test_a_button_held_when_the_pad_is_opened_is_not_a_press(nodes, pad):
    pad.state[("button", BUTTON["back"])] = 1  # "stop" held (or stuck) while the session starts
    device = open_pad(nodes)
    try:
        settle(device, pad)
        cmd = device.read()
        assert cmd.buttons[BUTTON["back"]] == 1 and not cmd.stop_pressed
        pad.events(("button", BUTTON["back"], 0), ("button", BUTTON["back"], 1))  # released and pressed again
        settle(device, pad)
        assert device.read().stop_pressed
    finally:
        device.close()


def test_read_never_blocks_on_a_silent_pad(nodes, pad):
    device = open_pad(nodes, gamepad=GamepadConfig(read_timeout_ms=1000))
    try:
        settle(device, pad)
        start = time.perf_counter()
        for _ in range(100):
            device.read()
        assert time.perf_counter() - start < 5.0  # a blocking read would wait read_timeout_ms each: 100 s
    finally:
        device.close()


# --- garbage ------------------------------------------------------------------------------------


def test_garbage_events_never_crash_and_read_at_rest_until_realigned(nodes, pad):
    crashes = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: crashes.append(args)
    device = open_pad(nodes, gamepad=GamepadConfig(deadband=0.0, scale=(10.0,) * 6))  # gains at their maximum
    try:
        settle(device, pad)
        record = pack_event(JS_EVENT_AXIS, AXIS["lx"], -32768, kernel_time_ms())  # one past joydev's full scale
        pad.write(record[:5])  # a record cut short ...
        pad.write(record[5:])  # ... is joined with its rest
        pad.written += 1
        settle(device, pad)
        cmd = device.read()
        assert np.all(np.abs(cmd.twist) <= 1.0) and cmd.twist[1] == -1.0  # operator left is robot -y
        now = kernel_time_ms()
        for bad in (pack_event(JS_EVENT_AXIS, 200, 32767, now),  # an axis the pad does not have (8)
                    pack_event(0x40, 3, 99, now), pack_event(JS_EVENT_AXIS | JS_EVENT_BUTTON, 0, 1, now),  # types
                    pack_event(JS_EVENT_BUTTON, 0, 99, now),  # a button is 0 or 1
                    pack_event(JS_EVENT_AXIS, 0, 5000, now - 60_000),  # a minute in the past
                    pack_event(JS_EVENT_AXIS, 0, 5000, now + 3_600_000)):  # an hour in the future
            resyncs = device.resyncs + 1
            pad.write(bad)
            wait_for(lambda expected=resyncs: device.resyncs == expected)
            cmd = device.read()  # out of step: a pad at rest, whatever was pushed before
            assert not np.any(cmd.twist) and not cmd.intervene and not device.synced
            pad.events(*[("axis", AXIS["lx"], FULL)] * 4)  # a run of valid records realigns
            wait_for(lambda: device.synced and device.read().twist[1] == 1.0)
        assert device.resyncs == 6 and device.discarded_bytes >= 6 * 8 and device.connected
    finally:
        device.close()
        threading.excepthook = old_hook
    assert not crashes


def test_a_flood_of_full_scale_flips_stays_in_range_and_ends_on_the_last_value(nodes, pad):
    device = open_pad(nodes, axis_map=IDENTITY, gamepad=GamepadConfig(deadband=0.0))
    seen = []
    done = threading.Event()

    def reader():
        while not done.is_set():
            seen.append(device.read().twist.copy())

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(1000):  # all six mapped axes flipping between the ends of int16 (48 KB: within a pipe)
            value = 32767 if i % 2 else -32768
            pad.events(*[("axis", a, value) for a in (0, 1, 3, 4, 6, 7)])
        pad.events(*[("axis", a, 0) for a in (0, 1, 3, 4, 6)], ("axis", 7, -FULL))  # then: D-pad up only
        settle(device, pad)
    finally:
        done.set()
        thread.join()
    twists = np.array(seen)
    assert len(twists) > 0 and np.all(np.isfinite(twists)) and np.all(np.abs(twists) <= 1.0)
    cmd = device.read()
    np.testing.assert_allclose(cmd.twist, [0, 0, 0, -0.5, 0, 0], atol=1e-12)  # tilt forward at the 0.5 gain
    assert device.connected
    device.close()


# --- unplugged ----------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["enodev", "eof"])
def test_unplug_mid_use_raises_once_naming_the_pad_then_reads_neutral(nodes, pad, how, caplog):
    crashes = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: crashes.append(args)
    device = open_pad(nodes, intervene_mode="hold")
    try:
        with caplog.at_level(logging.DEBUG):
            pad.events(("axis", AXIS["lx"], FULL), ("button", BUTTON["x"], 1))  # taking over, stick pushed
            settle(device, pad)
            assert device.read().intervene
            pad.unplug(how)  # the node vanishes as well
            wait_for(lambda: not device.connected)
            wait_for(lambda: not device._thread.is_alive())  # the reader ends: no spinning on a dead node
            with pytest.raises(DeviceError) as err:
                device.read()
            msg = str(err.value)
            assert msg.startswith(f"gamepad 'Microsoft X-Box 360 pad' at {pad.path} went away")
            assert "plug the pad back in and restart" in msg and "\n" not in msg
            if how == "enodev":
                assert "No such device" in msg
            for _ in range(3):
                cmd = device.read()
                assert not cmd.intervene and not np.any(cmd.twist) and cmd.close_gripper is None
            device.close()  # works after an unplug
            device.close()
    finally:
        threading.excepthook = old_hook
    assert not crashes
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # the caller warns, once
    assert pad.closed_files == 1


def test_failsafe_wrapper_logs_one_warning_and_keeps_going(nodes, pad, caplog):
    guarded = FailSafeInput(open_pad(nodes))
    pad.axis(AXIS["ly"], -FULL)
    settle(guarded.device, pad)
    assert guarded.read().intervene
    pad.unplug()
    wait_for(lambda: not guarded.device.connected)
    with caplog.at_level(logging.WARNING):
        commands = [guarded.read() for _ in range(5)]
    assert not any(c.intervene or np.any(c.twist) for c in commands)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "went away" in warnings[0].getMessage()
    assert guarded.lost and "Microsoft X-Box 360 pad" in guarded.error
    guarded.close()


def test_close_stops_the_reader_and_closes_the_node(nodes, pad):
    device = open_pad(nodes)
    thread = device._thread
    device.close()
    assert not thread.is_alive() and pad.closed_files == 1
    with pytest.raises(DeviceError, match="closed"):
        device.read()


def test_factory_builds_the_gamepad_with_injected_nodes(nodes, pad):
    device = make_input_device(InterventionConfig(device="gamepad"), joystick_nodes=nodes)
    try:
        assert isinstance(device, Gamepad) and device.path == pad.path
    finally:
        device.close()


# --- config -------------------------------------------------------------------------------------


@pytest.mark.parametrize("section, needle", [
    ({"deadband": float("nan")}, "'intervention.gamepad.deadband' must be a finite number"),
    ({"deadband": 0.95}, "'intervention.gamepad.deadband' = 0.95 is out of range [0.0, 0.9]"),
    ({"scale": [1, 1, 1, 1, 1, float("inf")]}, "'intervention.gamepad.scale[5]' must be a finite number"),
    ({"scale": [1, 1, 1]}, "'intervention.gamepad.scale' must have 6 items"),
    ({"axes": {"z": 256}}, "'intervention.gamepad.axes.z' = 256 is out of range [0, 255]"),
    ({"axes": {"z": -1}}, "'intervention.gamepad.axes.z' = -1 is out of range"),
    ({"axes": {"z": 1e300}}, "'intervention.gamepad.axes.z' must be an integer, got 1e+300"),
    ({"axes": {"z": "4"}}, "'intervention.gamepad.axes.z' must be an integer, got '4'"),
    ({"axes": {"up": 4}}, "unknown key 'intervention.gamepad.axes.up'"),
    ({"axes": {"z": 0}}, "axes: axis 0 drives both 'x' and 'z'"),
    ({"buttons": {"success": 1}}, "buttons: button 1 is bound to both 'success' and 'failure'"),
    ({"buttons": {"succes": 3}}, "unknown key 'intervention.gamepad.buttons.succes' (did you mean 'success'?)"),
    ({"buttons": {"stop": 2**40}}, "'intervention.gamepad.buttons.stop' = 1099511627776 is out of range"),
    ({"buttons": [0, 1]}, "'intervention.gamepad.buttons' must be a mapping"),
    ({"invert": ["up"]}, "invert: unknown motion 'up'"),
    ({"invert": ["y", "y"]}, "names a motion twice"),
    ({"invert": "y"}, "'intervention.gamepad.invert' must be a list"),
    ({"triggers": [2, 300]}, "'intervention.gamepad.triggers[1]' = 300 is out of range"),
    ({"button_count": 0}, "'intervention.gamepad.button_count' = 0 is out of range"),
    ({"read_timeout_ms": 10**6}, "'intervention.gamepad.read_timeout_ms' = 1000000 is out of range"),
    ({"path": ""}, "path: empty"),
    ({"name": " "}, "name: empty"),
    ({"nmae": "xbox"}, "unknown key 'intervention.gamepad.nmae' (did you mean 'name'?)"),
])
def test_config_errors_are_one_line_naming_file_and_key(section, needle):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"intervention": {"device": "gamepad", "gamepad": section}}, file="pad.yaml")
    msg = str(err.value)
    assert msg.startswith("pad.yaml: ") and needle in msg and "\n" not in msg


def test_a_set_override_changes_one_binding_and_keeps_the_rest():
    cfg = load_config("configs/pick_cube.yaml", ["intervention.device=gamepad", "intervention.gamepad.axes.z=2",
                                                 "intervention.gamepad.triggers=[5]",
                                                 "intervention.gamepad.buttons.stop=null"]).intervention
    assert cfg.device == "gamepad" and cfg.gamepad.axes.z == 2 and cfg.gamepad.axes.x == 0
    assert cfg.gamepad.buttons.stop is None and cfg.gamepad.buttons.pause == 7 and cfg.gamepad.triggers == [5]
    with pytest.raises(ConfigError, match=r"^--set intervention.gamepad.deadband=.nan: .* must be a finite number"):
        load_config("configs/pick_cube.yaml", ["intervention.gamepad.deadband=.nan"])  # YAML's NaN


# --- byte streams: refused unless asked for, realigned when asked for ----------------------------

ACTION_FLAGS = ("intervene", "stop_pressed", "success_pressed", "failure_pressed", "pause_pressed",
                "gripper_toggle_pressed")


def test_seven_stray_bytes_then_a_pad_at_rest_never_reads_as_a_person(nodes, pad):
    """The hole: after 7 stray bytes a pad at rest read as "intervene" on 24 of 30 reads."""
    device = open_pad(nodes)
    try:
        settle(device, pad)
        pad.write(bytes([0x01, 0x02, 0x81, 0x82, 0x00, 0x01, 0xFF]))
        seen = Counter()
        for _ in range(30):  # a relay re-sending the state of a pad at rest
            pad.events(*[("axis", a, -FULL if a in (2, 5) else 0) for a in range(8)],
                       *[("button", b, 0) for b in range(11)])
            time.sleep(0.03)
            cmd = device.read()
            seen.update(flag for flag in ACTION_FLAGS if getattr(cmd, flag))
            seen["gripper"] += cmd.close_gripper is not None
            seen["moved"] += bool(np.any(cmd.twist))
        assert sum(seen.values()) == 0, seen
        wait_for(lambda: device.synced)
        assert device.resyncs == 1 and 7 <= device.discarded_bytes
        pad.events(("button", BUTTON["back"], 1), ("button", BUTTON["back"], 0))  # a real press, realigned
        wait_for(lambda: device.read().stop_pressed)
    finally:
        device.close()


def test_a_stream_is_refused_unless_asked_for(nodes, pad):
    nodes.streams = False  # a FIFO, as a relay would offer it
    with pytest.raises(DeviceError) as err:
        open_pad(nodes)
    msg = str(err.value)
    assert msg.startswith(f"gamepad 'Microsoft X-Box 360 pad' at {pad.path} is a FIFO, not a joystick node")
    assert "intervention.gamepad.stream: true" in msg and "\n" not in msg
    assert pad.closed_files == pad.opens == 1  # the refused node was closed
    device = open_pad(nodes, gamepad=GamepadConfig(stream=True))  # asked for in the config
    try:
        settle(device, pad)
        assert device.source == "FIFO" and device.synced
    finally:
        device.close()


def test_what_is_not_a_joystick_node_is_named():
    info = JoystickInfo("pad", 8, 11)
    with open(os.devnull, "rb") as null:  # a character device, but not an input one
        assert source_kind(null, info) == "character device of major 1 (not an input device)"
    with open(__file__, "rb") as regular:
        assert source_kind(regular, info) == "regular file"
