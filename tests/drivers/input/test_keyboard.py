"""Keyboard input: key events map to the right commands.

Most tests drive the key mapping with synthetic events by name, or a fake pynput-shaped
listener; one test runs real pynput under Xvfb with keys typed by xdotool (skipped, with
the reason, when those programs are not installed: apt-get install xvfb xdotool).
"""

from __future__ import annotations

import importlib.util
import os
import select
import shutil
import subprocess
import time
from types import SimpleNamespace

import numpy as np
import pytest
from fake_pynput import listener_factory, pynput_key  # tests/support

from robot_rl.config.input import InterventionConfig, KeyBindings, KeyboardConfig
from robot_rl.errors import DeviceError
from robot_rl.tasks import config_from_dict
from robot_rl_drivers.input import make_input_device
from robot_rl_drivers.input.keyboard import KeyboardInput, KeyMapper, import_pynput_keyboard


def mapper(**kw) -> KeyMapper:
    return KeyMapper(InterventionConfig(device="keyboard", **kw))


def test_translation_keys_in_robot_frame_default_map():
    # default axis_map ("-y", "x", "z"): the operator faces the robot, so "forward"
    # (away from the operator) is robot -x, "right" is robot +y, "up" is +z
    m = mapper()
    for key, expected in [("w", [-0.5, 0, 0]), ("s", [0.5, 0, 0]), ("d", [0, 0.5, 0]),
                          ("a", [0, -0.5, 0]), ("r", [0, 0, 0.5]), ("f", [0, 0, -0.5])]:
        m.press(key)
        cmd = m.command()
        np.testing.assert_allclose(cmd.twist, expected + [0, 0, 0], err_msg=key)
        assert cmd.intervene, key  # moving takes over
        m.release(key)
        cmd = m.command()
        np.testing.assert_array_equal(cmd.twist, np.zeros(6))
        assert not cmd.intervene


def test_rotation_keys():
    m = mapper(axis_map=("x", "y", "z"))  # identity: operator frame = robot frame
    expected = {"i": [-0.5, 0, 0], "k": [0.5, 0, 0], "l": [0, 0.5, 0], "j": [0, -0.5, 0],
                "u": [0, 0, 0.5], "o": [0, 0, -0.5]}
    for key, rot in expected.items():
        m.press(key)
        np.testing.assert_allclose(m.command().twist, [0, 0, 0] + rot, err_msg=key)
        m.release(key)


def test_keys_combine_and_opposites_cancel():
    m = mapper(axis_map=("x", "y", "z"))
    m.press("w"), m.press("d"), m.press("u")
    np.testing.assert_allclose(m.command().twist, [0.5, 0.5, 0, 0, 0, 0.5])
    m.press("s")
    np.testing.assert_allclose(m.command().twist, [0.5, 0, 0, 0, 0, 0.5])


def test_speeds_from_config():
    cfg = InterventionConfig(axis_map=("x", "y", "z"), keyboard=KeyboardConfig(linear_speed=1.0, angular_speed=0.2))
    m = KeyMapper(cfg)
    m.press("w"), m.press("o")
    np.testing.assert_allclose(m.command().twist, [0, 1.0, 0, 0, 0, -0.2])


def test_a_tap_between_reads_moves_for_one_read():
    m = mapper()
    m.press("r"), m.release("r")
    np.testing.assert_allclose(m.command().twist, [0, 0, 0.5, 0, 0, 0])
    np.testing.assert_array_equal(m.command().twist, np.zeros(6))


def test_labels_pause_stop_gripper_are_edges():
    m = mapper()
    for key, flag in [("enter", "success_pressed"), ("backspace", "failure_pressed"),
                      ("p", "pause_pressed"), ("esc", "stop_pressed"), ("g", "gripper_toggle_pressed")]:
        m.press(key)
        cmd = m.command()
        assert getattr(cmd, flag), key
        assert not any(getattr(cmd, f) for f in ("success_pressed", "failure_pressed", "pause_pressed",
                                                 "stop_pressed", "gripper_toggle_pressed") if f != flag)
        assert not getattr(m.command(), flag), f"{key} still reported while held"
        m.press(key)  # auto-repeat while held: not a new press
        assert not getattr(m.command(), flag)
        m.release(key)


def test_intervene_toggle_mode():
    m = mapper(intervene_mode="toggle")
    assert not m.command().intervene
    m.press("space"), m.release("space")
    assert m.command().intervene
    assert m.command().intervene  # stays on
    m.press("space"), m.release("space")
    assert not m.command().intervene


def test_intervene_hold_mode():
    m = mapper(intervene_mode="hold")
    m.press("space")
    assert m.command().intervene and m.command().intervene
    m.release("space")
    assert not m.command().intervene
    m.press("space"), m.release("space")  # a tap counts for one read
    assert m.command().intervene
    assert not m.command().intervene


def test_motion_without_takeover_when_configured():
    m = KeyMapper(InterventionConfig(keyboard=KeyboardConfig(intervene_on_motion=False)))
    m.press("w")
    cmd = m.command()
    assert np.any(cmd.twist) and not cmd.intervene


def test_absolute_gripper_keys_and_key_spelling():
    cfg = InterventionConfig(keyboard=KeyboardConfig(keys=KeyBindings(close_gripper="C", open_gripper="shift_l")))
    m = KeyMapper(cfg)
    m.press("c")
    assert m.command().close_gripper is True
    m.release("C")
    assert m.command().close_gripper is None
    m.press("shift")  # pynput reports left shift as "shift"
    assert m.command().close_gripper is False
    m.press("W")  # shift + w
    assert np.any(m.command().twist)


def test_bindings_from_yaml_config():
    keys = {"forward": "up", "intervene": "Tab", "stop": None}
    cfg = config_from_dict({"intervention": {"device": "keyboard", "axis_map": ["x", "y", "z"],
                                             "keyboard": {"keys": keys}}})
    m = KeyMapper(cfg.intervention)
    m.press("up")
    np.testing.assert_allclose(m.command().twist, [0, 0.5, 0, 0, 0, 0])
    m.press("w")  # unbound now that forward is the arrow key
    np.testing.assert_allclose(m.command().twist, [0, 0.5, 0, 0, 0, 0])
    m.press("tab"), m.release("tab")
    assert m.command().intervene
    m.press("esc")
    assert not m.command().stop_pressed


def test_keyboard_input_with_pynput_shaped_events():
    listeners, factory = listener_factory()
    device = make_input_device(InterventionConfig(device="keyboard"), listener_factory=factory)
    assert isinstance(device, KeyboardInput)
    lst = listeners[0]
    lst.on_press(pynput_key(char="W"))
    lst.on_press(pynput_key(name="enter"))
    lst.on_press(SimpleNamespace(char=None, vk=65437))  # a key with no name or char: ignored
    cmd = device.read()
    np.testing.assert_allclose(cmd.twist, [-0.5, 0, 0, 0, 0, 0])
    assert cmd.success_pressed and cmd.intervene
    lst.on_release(pynput_key(char="w"))
    assert not np.any(device.read().twist)
    lst.alive = False  # the listener thread died (X server gone)
    with pytest.raises(DeviceError, match="keyboard listener stopped"):
        device.read()
    assert not device.read().intervene
    device.close()
    with pytest.raises(DeviceError, match="closed"):
        device.read()


def test_no_display_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("PYNPUT_BACKEND", raising=False)
    monkeypatch.delenv("PYNPUT_BACKEND_KEYBOARD", raising=False)
    with pytest.raises(DeviceError) as err:
        make_input_device(InterventionConfig(device="keyboard"))
    msg = str(err.value)
    assert "DISPLAY is not set" in msg and "\n" not in msg


def test_refused_display_is_a_clear_error(monkeypatch):
    pytest.importorskip("Xlib", reason="pynput (with python-xlib) is not installed")
    monkeypatch.setenv("DISPLAY", ":4999")  # no X server there
    monkeypatch.delenv("PYNPUT_BACKEND", raising=False)
    monkeypatch.delenv("PYNPUT_BACKEND_KEYBOARD", raising=False)
    try:
        import_pynput_keyboard()
    except DeviceError as err:
        assert ":4999" in str(err) and "\n" not in str(err)
    else:  # pynput was already imported by an earlier test on a live display
        pytest.skip("pynput already imported in this process; the refused display is not checked again")


@pytest.fixture
def xvfb_display():
    missing = [p for p in ("Xvfb", "xdotool") if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install xvfb xdotool)")
    if importlib.util.find_spec("pynput") is None:  # importing it needs a display, so only look
        pytest.skip("pynput not installed (scripts/setup.sh real)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-nolisten", "tcp", "-screen", "0", "640x480x24"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 10.0)
        if not ready:
            pytest.skip("Xvfb did not start within 10 s")
        display = ":" + os.read(read_fd, 32).decode().strip()
        yield display
    finally:
        os.close(read_fd)
        proc.terminate()
        proc.wait(timeout=10)


def xdotool(display: str, *args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, env={**os.environ, "DISPLAY": display}, timeout=10)


def wait_for_command(device, predicate, timeout=3.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        cmd = device.read()
        if predicate(cmd):
            return cmd
        time.sleep(0.01)
    raise AssertionError("the keyboard never produced the expected command")


def test_real_pynput_under_xvfb(xvfb_display, monkeypatch):
    monkeypatch.setenv("DISPLAY", xvfb_display)
    monkeypatch.delenv("PYNPUT_BACKEND", raising=False)
    device = make_input_device(InterventionConfig(device="keyboard"))
    try:
        xdotool(xvfb_display, "keydown", "w")
        cmd = wait_for_command(device, lambda c: np.any(c.twist))
        np.testing.assert_allclose(cmd.twist, [-0.5, 0, 0, 0, 0, 0])
        assert cmd.intervene
        xdotool(xvfb_display, "keyup", "w")
        wait_for_command(device, lambda c: not np.any(c.twist))
        xdotool(xvfb_display, "key", "space")
        wait_for_command(device, lambda c: c.intervene)
        xdotool(xvfb_display, "key", "Return")
        wait_for_command(device, lambda c: c.success_pressed)
        xdotool(xvfb_display, "key", "Escape")
        wait_for_command(device, lambda c: c.stop_pressed)
    finally:
        device.close()
        xdotool(xvfb_display, "key", "shift")  # pynput's X11 listener ends at the next event after stop()
        listener = device._listener
        listener.join(5.0)
    assert not listener.is_alive()
