"""The SpaceMouse driver, with a fake ``hid`` module at the hidapi boundary.

The fake has hidapi's API (``enumerate()``, ``device()`` with ``open_path``,
``set_nonblocking``, ``read(size, timeout_ms)``, ``error``, ``close``) and plays back
byte-exact reports, so everything above the library runs as it does with a device.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from fake_hid import COMPACT, UNPLUG, FakeHid  # tests/support
from fake_pynput import listener_factory, pynput_key  # tests/support

from robot_rl.config.input import InterventionConfig, SpaceMouseConfig
from robot_rl.envs.inputs import FailSafeInput
from robot_rl.errors import DeviceError
from robot_rl_drivers.input import make_input_device
from robot_rl_drivers.input.spacemouse import SpaceMouse, import_hid

RECEIVER_KEYBOARD = {**COMPACT, "path": b"/dev/hidraw3", "product_id": 0xC652, "usage_page": 1, "usage": 6,
                     "product_string": "Universal Receiver"}
RECEIVER_3D = {**RECEIVER_KEYBOARD, "path": b"/dev/hidraw4", "usage": 8}
LOGITECH_MOUSE = {**COMPACT, "path": b"/dev/hidraw0", "vendor_id": 0x046D, "product_id": 0xC52B,
                  "product_string": "USB Receiver", "usage": 2}


def wait_for(predicate, timeout: float = 2.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting for the reader thread"
        time.sleep(0.002)


def settle(mouse: SpaceMouse, hid: FakeHid, reports: int) -> None:
    """Wait until the reader thread has decoded ``reports`` reports."""
    wait_for(lambda: mouse.reports_received >= reports and hid.reports.empty())


@pytest.fixture
def hid():
    return FakeHid([LOGITECH_MOUSE, COMPACT])


@pytest.fixture
def cfg():
    return InterventionConfig(device="spacemouse")


@pytest.fixture
def mouse(hid, cfg):
    m = SpaceMouse(cfg, hid_module=hid)
    yield m
    m.close()


def test_opens_the_3d_mouse_not_the_logitech_mouse(hid, mouse):
    assert hid.opened[0].path == b"/dev/hidraw7"
    assert mouse.name == "SpaceMouse Compact (256f:c635)"
    assert mouse.button_count == 2
    assert mouse.connected


def test_three_report_stream_gives_mapped_twist(hid, mouse):
    cmd = mouse.read()
    np.testing.assert_array_equal(cmd.twist, np.zeros(6))
    assert not cmd.intervene
    hid.push("01 af 00 a2 fe ba ff", "02 23 00 51 ff 5e 01")
    settle(mouse, hid, 2)
    cmd = mouse.read()
    np.testing.assert_allclose(cmd.twist, [-1.0, 4 / 9, 1 / 9, -4 / 9, 0.0, -1.0], atol=1e-12)
    assert cmd.intervene  # moving the puck takes over
    assert cmd.buttons == (0, 0)
    hid.push("01 00 00 00 00 00 00", "02 00 00 00 00 00 00")  # released
    settle(mouse, hid, 4)
    cmd = mouse.read()
    np.testing.assert_array_equal(cmd.twist, np.zeros(6))
    assert not cmd.intervene


def test_single_report_stream_and_config_scale_and_map():
    hid = FakeHid([{**COMPACT, "product_id": 0xC62F, "product_string": "SpaceMouse Wireless Receiver"}])
    cfg = InterventionConfig(device="spacemouse", axis_map=("y", "-x", "z"),
                             spacemouse=SpaceMouseConfig(deadband=0.0, scale=(0.5, 1, 1, 1, 1, 0)))
    mouse = SpaceMouse(cfg, hid_module=hid)
    try:
        hid.push("01 af 00 a2 fe ba ff 23 00 51 ff 5e 01")
        settle(mouse, hid, 1)
        cmd = mouse.read()
        # operator (0.5, 1, 0.2 | 0.1, 0.5, -1); robot = (y, -x, z) with gains (0.5, 1, 1, 1, 1, 0)
        np.testing.assert_allclose(cmd.twist, [0.5, -0.5, 0.2, 0.5, -0.1, 0.0], atol=1e-12)
    finally:
        mouse.close()


def test_deadband_keeps_a_resting_puck_silent(hid, mouse):
    hid.push("01 05 00 fb ff 10 00 03 00 00 00 f6 ff")  # sensor noise, a few counts
    settle(mouse, hid, 1)
    cmd = mouse.read()
    np.testing.assert_array_equal(cmd.twist, np.zeros(6))
    assert not cmd.intervene


def test_buttons_map_to_gripper_requests_and_taps_are_not_lost(hid, mouse):
    hid.push("03 01 00")  # left held
    settle(mouse, hid, 1)
    cmd = mouse.read()
    assert cmd.close_gripper is True and cmd.buttons == (1, 0)
    hid.push("03 00 00")
    settle(mouse, hid, 2)
    assert mouse.read().close_gripper is None
    hid.push("03 02 00", "03 00 00")  # right tapped and released between two reads
    settle(mouse, hid, 4)
    cmd = mouse.read()
    assert cmd.close_gripper is False and cmd.buttons == (0, 0)
    assert mouse.read().close_gripper is None  # the tap counts once


def test_button_actions_from_config_toggle_intervention():
    hid = FakeHid([COMPACT])
    cfg = InterventionConfig(device="spacemouse", intervene_mode="toggle",
                             spacemouse=SpaceMouseConfig(buttons={"intervene": 0, "gripper_toggle": 1}))
    mouse = SpaceMouse(cfg, hid_module=hid)
    try:
        hid.push("03 01 00", "03 00 00")
        settle(mouse, hid, 2)
        assert mouse.read().intervene
        assert mouse.read().intervene  # still on: toggle mode
        hid.push("03 02 00")
        settle(mouse, hid, 3)
        cmd = mouse.read()
        assert cmd.gripper_toggle_pressed and cmd.intervene
        assert not mouse.read().gripper_toggle_pressed  # an edge, reported once
        hid.push("03 00 00", "03 01 00", "03 00 00")
        settle(mouse, hid, 6)
        assert not mouse.read().intervene
    finally:
        mouse.close()


def test_read_never_blocks_on_a_silent_device(hid, cfg):
    mouse = SpaceMouse(replace(cfg, spacemouse=SpaceMouseConfig(read_timeout_ms=1000)), hid_module=hid)
    try:
        wait_for(lambda: hid.opened[0].reads >= 1)  # the reader is inside a 1 s hidapi read
        start = time.perf_counter()
        for _ in range(100):
            mouse.read()
        assert time.perf_counter() - start < 0.1
    finally:
        mouse.close()


def test_latest_state_wins_when_reports_pile_up(hid, mouse):
    hid.push(*[f"01 {v:02x} 00 00 00 00 00" for v in range(100, 200, 10)], "01 5e 01 00 00 00 00")
    settle(mouse, hid, 11)
    np.testing.assert_allclose(mouse.read().twist[:3], [0.0, 1.0, 0.0])  # x=350 -> robot +y, full


def test_enumerate_empty_is_a_clear_error():
    with pytest.raises(DeviceError) as err:
        SpaceMouse(InterventionConfig(device="spacemouse"), hid_module=FakeHid([]))
    msg = str(err.value)
    assert "no SpaceMouse found" in msg and "saw no HID devices" in msg and "046d, 256f" in msg
    assert "\n" not in msg


def test_no_3d_mouse_lists_what_enumerate_saw():
    with pytest.raises(DeviceError) as err:
        SpaceMouse(InterventionConfig(device="spacemouse"), hid_module=FakeHid([LOGITECH_MOUSE]))
    msg = str(err.value)
    assert "USB Receiver (046d:c52b)" in msg and "046d, 256f" in msg and "\n" not in msg


def test_receiver_opens_its_multi_axis_interface():
    hid = FakeHid([RECEIVER_KEYBOARD, RECEIVER_3D])
    mouse = SpaceMouse(InterventionConfig(device="spacemouse"), hid_module=hid)
    try:
        assert hid.opened[0].path == b"/dev/hidraw4"
        assert mouse.button_count == 32
    finally:
        mouse.close()


def test_receiver_without_multi_axis_interface_says_so():
    with pytest.raises(DeviceError, match="no multi-axis interface"):
        SpaceMouse(InterventionConfig(device="spacemouse"), hid_module=FakeHid([RECEIVER_KEYBOARD]))


def test_product_id_and_path_select_one_device():
    other = {**COMPACT, "path": b"/dev/hidraw9", "product_id": 0xC62E}
    hid = FakeHid([COMPACT, other])
    mouse = SpaceMouse(InterventionConfig(spacemouse=SpaceMouseConfig(product_id=0xC62E)), hid_module=hid)
    mouse.close()
    assert hid.opened[-1].path == b"/dev/hidraw9"
    mouse = SpaceMouse(InterventionConfig(spacemouse=SpaceMouseConfig(path="/dev/hidraw7")), hid_module=hid)
    mouse.close()
    assert hid.opened[-1].path == b"/dev/hidraw7"
    with pytest.raises(DeviceError, match="product id c631"):
        SpaceMouse(InterventionConfig(spacemouse=SpaceMouseConfig(product_id=0xC631)), hid_module=hid)


def test_permission_denied_names_the_udev_rule(hid):
    hid.open_error = "Failed to open a device with path '/dev/hidraw7': Permission denied"
    with pytest.raises(DeviceError) as err:
        SpaceMouse(InterventionConfig(device="spacemouse"), hid_module=hid)
    msg = str(err.value)
    assert "permission denied" in msg and "/dev/hidraw7" in msg
    assert "/etc/udev/rules.d/99-spacemouse.rules" in msg and "\n" not in msg


def test_other_open_failure_passes_hidapi_text(hid):
    hid.open_error = "Failed to open a device with path '/dev/hidraw7': Device or resource busy"
    with pytest.raises(DeviceError, match="resource busy; another program may hold it"):
        SpaceMouse(InterventionConfig(device="spacemouse"), hid_module=hid)


def test_unplug_mid_read_raises_once_then_neutral(hid, mouse, caplog):
    crashes = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: crashes.append(args)
    try:
        with caplog.at_level(logging.DEBUG):
            hid.push("01 af 00 a2 fe ba ff 23 00 51 ff 5e 01")
            settle(mouse, hid, 1)
            assert mouse.read().intervene
            hid.reports.put(UNPLUG)
            wait_for(lambda: not mouse.connected)
            reads_at_unplug = hid.opened[0].reads
            time.sleep(0.1)
            assert hid.opened[0].reads == reads_at_unplug  # the reader stopped, no spinning on a dead device
            with pytest.raises(DeviceError) as err:
                mouse.read()
            assert "SpaceMouse Compact (256f:c635) at /dev/hidraw7 stopped responding" in str(err.value)
            for _ in range(3):  # after the one error: neutral, so the policy or hold resumes
                cmd = mouse.read()
                assert not cmd.intervene and not np.any(cmd.twist) and cmd.close_gripper is None
            mouse.close()  # works after an unplug
            mouse.close()
    finally:
        threading.excepthook = old_hook
    assert not crashes
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # the caller warns, once
    assert hid.opened[0].closed


def test_failsafe_wrapper_logs_one_warning_and_keeps_going(hid, mouse, caplog):
    guarded = FailSafeInput(mouse)
    hid.push("01 af 00 a2 fe ba ff 23 00 51 ff 5e 01")
    settle(mouse, hid, 1)
    assert guarded.read().intervene
    hid.reports.put(UNPLUG)
    wait_for(lambda: not mouse.connected)
    with caplog.at_level(logging.WARNING):
        commands = [guarded.read() for _ in range(5)]
    assert not any(c.intervene for c in commands)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "stopped responding" in warnings[0].getMessage()
    assert guarded.lost and "unplugged" in guarded.error
    guarded.close()


def test_close_stops_the_reader_and_closes_the_device(hid, cfg):
    mouse = SpaceMouse(cfg, hid_module=hid)
    thread = mouse._thread
    mouse.close()
    assert not thread.is_alive()
    assert hid.opened[0].closed
    with pytest.raises(DeviceError, match="closed"):
        mouse.read()


def test_factory_builds_spacemouse_with_injected_library(hid):
    device = make_input_device(InterventionConfig(device="spacemouse"), hid_module=hid)
    try:
        assert isinstance(device, SpaceMouse)
    finally:
        device.close()


def test_missing_hidapi_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "hid", None)  # import hid -> ImportError
    monkeypatch.setitem(sys.modules, "hidraw", None)
    with pytest.raises(DeviceError) as err:
        import_hid("auto")
    assert "scripts/setup.sh real" in str(err.value) and "\n" not in str(err.value)


def test_a_foreign_hid_module_is_named(monkeypatch):
    import types

    monkeypatch.setitem(sys.modules, "hid", types.ModuleType("hid"))  # e.g. the unrelated 'hid' package
    with pytest.raises(DeviceError, match="is not hidapi's"):
        import_hid("libusb")


def test_spacemouse_plus_keyboard_moves_with_one_and_labels_with_the_other(hid):
    listeners, factory = listener_factory()
    device = make_input_device(InterventionConfig(device="spacemouse+keyboard"), hid_module=hid,
                               listener_factory=factory)
    try:
        hid.push("01 00 00 a2 fe 00 00 00 00 00 00 00 00")  # puck pushed fully away from the operator
        settle(device.devices[0], hid, 1)
        listeners[0].on_press(pynput_key(name="enter"))
        cmd = device.read()
        np.testing.assert_allclose(cmd.twist, [-1, 0, 0, 0, 0, 0])
        assert cmd.intervene and cmd.success_pressed
        assert cmd.buttons == (0, 0)
    finally:
        device.close()
    assert hid.opened[0].closed
