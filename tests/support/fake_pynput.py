"""pynput's keyboard shapes, for ``KeyboardInput(listener_factory=...)``.

``FakeListener`` has ``pynput.keyboard.Listener``'s shape (keyword callbacks ``on_press``
/ ``on_release``, ``start`` / ``stop`` / ``is_alive`` / ``wait``); the test calls its
callbacks with pynput-shaped key events (:func:`pynput_key`). Setting ``alive = False``
plays the listener thread dying (the X server went away).

Used by tests/drivers/input/test_keyboard.py and the ``keyboard`` contract rig.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Callable, Optional


class FakeListener:
    """pynput.keyboard.Listener's shape: keyword callbacks, start/stop/is_alive/wait."""

    def __init__(self, on_press, on_release):
        self.on_press, self.on_release = on_press, on_release
        self.alive = False

    def start(self):
        self.alive = True

    def wait(self):
        pass

    def stop(self):
        self.alive = False

    def is_alive(self):
        return self.alive


def listener_factory() -> tuple[list[FakeListener], Callable[..., FakeListener]]:
    """A ``listener_factory`` for KeyboardInput, and the list the listeners it made go into."""
    listeners: list[FakeListener] = []

    def factory(**kw) -> FakeListener:
        listeners.append(FakeListener(**kw))
        return listeners[-1]

    return listeners, factory


def pynput_key(name: Optional[str] = None, char: Optional[str] = None):
    """A pynput key event: a named key (``Key.enter``: ``name``) or a character key (``char``)."""
    return SimpleNamespace(name=name) if name else SimpleNamespace(char=char)
