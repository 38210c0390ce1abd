"""The keyboard as an :class:`~robot_rl.interfaces.InputDevice`, through pynput.

Two parts, so that the mapping is testable without a display:

* :class:`KeyMapper` is plain logic: it takes key events by name (``"w"``, ``"space"``,
  ``"esc"``) and turns the bindings of :class:`robot_rl.config.input.KeyBindings` into
  commands, through the same :class:`.commands.CommandBuilder` as the SpaceMouse.
* :class:`KeyboardInput` feeds it from a ``pynput.keyboard.Listener``, which watches the
  whole X display (not one focused window), on its own thread.

``import pynput`` fails outright when there is no X display, so pynput is imported only
when a KeyboardInput is made, and the failure becomes a one-line DeviceError naming the
cause (no DISPLAY, an X server that refuses the connection, or pynput not installed).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from dataclasses import fields
from typing import Any, Callable

import numpy as np

from robot_rl.config.input import InterventionConfig, KeyboardConfig, normalize_key_name
from robot_rl.errors import DeviceError, install_extra
from robot_rl.interfaces import InputCommand, InputDevice

from .commands import AxisMap, CommandBuilder

log = logging.getLogger(__name__)

#: Binding name -> (operator-frame axis index, direction).
MOTION_BINDINGS = {
    "forward": (1, 1.0), "back": (1, -1.0), "right": (0, 1.0), "left": (0, -1.0),
    "up": (2, 1.0), "down": (2, -1.0),
    "tilt_forward": (3, -1.0), "tilt_back": (3, 1.0), "roll_right": (4, 1.0), "roll_left": (4, -1.0),
    "turn_left": (5, 1.0), "turn_right": (5, -1.0),
}


class KeyMapper:
    """Key events by name -> ``InputCommand``; thread-safe (events come from pynput's thread).

    A key held now moves the arm at ``linear_speed``/``angular_speed``; opposite keys held
    together cancel. A key pressed and released between two reads still counts for that
    read (it moves for one step, or toggles once), so a quick tap is never lost.
    """

    def __init__(self, cfg: InterventionConfig) -> None:
        kb: KeyboardConfig = cfg.keyboard
        self.key_to_binding: dict[str, str] = {}
        for f in fields(kb.keys):
            key = getattr(kb.keys, f.name)
            if key is not None:
                self.key_to_binding[normalize_key_name(key)] = f.name
        self._speeds = np.array([kb.linear_speed] * 3 + [kb.angular_speed] * 3)
        self._builder = CommandBuilder(AxisMap(cfg.axis_map), intervene_mode=cfg.intervene_mode,
                                       intervene_on_motion=kb.intervene_on_motion)
        self._held: set[str] = set()
        self._pressed: set[str] = set()
        self._lock = threading.Lock()

    def press(self, key: str) -> None:
        binding = self.key_to_binding.get(normalize_key_name(key))
        if binding is None:
            return
        with self._lock:
            if binding not in self._held:  # auto-repeat sends more presses; only the first counts
                self._pressed.add(binding)
            self._held.add(binding)

    def release(self, key: str) -> None:
        binding = self.key_to_binding.get(normalize_key_name(key))
        if binding is None:
            return
        with self._lock:
            self._held.discard(binding)

    def command(self) -> InputCommand:
        """The command now; clears the presses seen since the previous call."""
        with self._lock:
            held, pressed = set(self._held), set(self._pressed)
            self._pressed.clear()
        twist = np.zeros(6)
        for binding in held | pressed:
            if binding in MOTION_BINDINGS:
                axis, direction = MOTION_BINDINGS[binding]
                twist[axis] += direction
        twist = np.clip(twist, -1.0, 1.0) * self._speeds
        actions = lambda names: {n for n in names if n not in MOTION_BINDINGS}  # noqa: E731
        return self._builder.build(twist, actions(held), actions(pressed))


def pynput_key_name(key: Any) -> str | None:
    """A pynput ``Key`` or ``KeyCode`` as the name the bindings use, or None (e.g. a bare vk)."""
    name = getattr(key, "name", None)
    if name:
        return normalize_key_name(name)
    char = getattr(key, "char", None)
    return normalize_key_name(char) if char else None


def import_pynput_keyboard() -> Any:
    """``pynput.keyboard``, or a one-line DeviceError saying why it cannot work here."""
    backend = os.environ.get("PYNPUT_BACKEND_KEYBOARD") or os.environ.get("PYNPUT_BACKEND")
    if backend in (None, "xorg") and sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        raise DeviceError("keyboard input needs an X display and DISPLAY is not set: run it in the desktop "
                          "session (or ssh -X, or Xvfb for tests), or set PYNPUT_BACKEND=uinput and run as root")
    try:
        from pynput import keyboard
    except ImportError as err:
        cause = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "pynput" in cause and "No module named" in cause:
            raise DeviceError(f"keyboard input needs the pynput package: {install_extra('real')}") from None
        refused = re.search(r"failed to acquire X connection: (.*?)['\"],", cause)
        if refused:
            raise DeviceError(f"keyboard input cannot connect to the X display "
                              f"{os.environ.get('DISPLAY', '')!r}: {refused.group(1).replace(chr(92), '')}") from None
        raise DeviceError(f"keyboard input has no usable backend (DISPLAY={os.environ.get('DISPLAY', '')!r}, "
                          f"PYNPUT_BACKEND={backend or 'default'}): {cause}") from None
    except Exception as err:  # noqa: BLE001 - Xlib raises its own errors for a refused display
        raise DeviceError(f"keyboard input cannot reach the X display "
                          f"{os.environ.get('DISPLAY', '')!r}: {type(err).__name__}: {err}") from None
    return keyboard


class KeyboardInput(InputDevice):
    """Keys from a pynput listener, mapped by :class:`KeyMapper`.

    ``listener_factory`` is ``pynput.keyboard.Listener`` unless a test hands in another
    callable with the same shape (``on_press``/``on_release`` keyword callbacks, then
    ``start()``, ``stop()``, ``is_alive()``). If the listener thread dies (the X
    server went away), ``read()`` raises DeviceError once and then returns neutral
    commands, like an unplugged SpaceMouse.
    """

    name = "keyboard"

    def __init__(self, cfg: InterventionConfig, *, listener_factory: Callable[..., Any] | None = None) -> None:
        self.mapper = KeyMapper(cfg)
        if listener_factory is None:
            listener_factory = import_pynput_keyboard().Listener
        self._listener = listener_factory(on_press=self._on_press, on_release=self._on_release)
        self._failed = False
        self._closed = False
        try:
            self._listener.start()
            wait = getattr(self._listener, "wait", None)
            if wait is not None:
                wait()  # pynput: returns once the listener is receiving events
        except Exception as err:  # noqa: BLE001 - display errors surface here with pynput's own types
            raise DeviceError(f"keyboard listener failed to start: {type(err).__name__}: {err}") from None
        log.info("keyboard input listening (intervene: %s)", cfg.keyboard.keys.intervene)

    def _on_press(self, key: Any) -> None:
        name = pynput_key_name(key)
        if name is not None:
            self.mapper.press(name)

    def _on_release(self, key: Any) -> None:
        name = pynput_key_name(key)
        if name is not None:
            self.mapper.release(name)

    def read(self) -> InputCommand:
        if self._closed:
            raise DeviceError("keyboard input was closed; read() after close()")
        if not self._listener.is_alive():
            if not self._failed:
                self._failed = True
                raise DeviceError("keyboard listener stopped (X display gone?)")
            return InputCommand()
        return self.mapper.command()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._listener.stop()
            join = getattr(self._listener, "join", None)
            if join is not None:
                # On X11, pynput's listener thread often ends only at the next key event
                # after stop() (a known pynput issue); it is a daemon thread, so do not wait long.
                join(0.2)
        except Exception as err:  # noqa: BLE001 - stopping a dead listener must not raise
            log.debug("stopping keyboard listener: %s", err)
