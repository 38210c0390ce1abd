"""The ``gamepad`` InputDevice contract rig: :class:`Gamepad` over a fake ``/dev/input/js0``.

Registered in tests/support/contract_rigs.py (``INPUTS``, ``make_input_rig``). The pad is
a FIFO fed with ``js_event`` records (tests/support/fake_gamepad.py); unplugging it makes
the node vanish and reads fail with ENODEV, as joydev's do.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from contract_rigs import InputRig, wait_until
from fake_gamepad import FakeJoystickNodes


class GamepadRig(InputRig):
    """``Gamepad`` on an Xbox-layout fake pad, hold-mode intervene, default mapping."""

    name = "gamepad"

    def __init__(self) -> None:
        from robot_rl.config.input import InterventionConfig
        from robot_rl_drivers.input.gamepad import Gamepad

        self._dir = Path(tempfile.mkdtemp(prefix="gamepad-rig-"))
        self.nodes = FakeJoystickNodes(self._dir)
        self.pad = self.nodes.add()
        cfg = InterventionConfig(device="gamepad", intervene_mode="hold")
        self.buttons = cfg.gamepad.buttons
        self.axes = cfg.gamepad.axes.bound()
        self.triggers = cfg.gamepad.triggers
        self.device = Gamepad(cfg, nodes=self.nodes)
        self.go_away = self._go_away
        self.settle()

    def settle(self) -> None:
        wait_until(lambda: self.device.events_received >= self.pad.written, 2.0, "the gamepad reader thread")

    def deflect(self) -> None:
        # Every mapped axis to the end of int16's range (one count past joydev's -32767 on the low side).
        self.pad.events(*[("axis", axis, -32768 if i % 2 else 32767) for i, axis in enumerate(self.axes.values())])

    def press(self, action: str) -> None:
        self.pad.button(getattr(self.buttons, action), True)

    def release(self, action: str) -> None:
        self.pad.button(getattr(self.buttons, action), False)

    def _go_away(self) -> None:
        self.pad.unplug("enodev")
        wait_until(lambda: not self.device.connected, 2.0, "the reader to see the unplug")
        time.sleep(0.01)

    def teardown(self) -> None:
        try:
            self.device.close()
        finally:
            self.nodes.close()
            shutil.rmtree(self._dir, ignore_errors=True)
