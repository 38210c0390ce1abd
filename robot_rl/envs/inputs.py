"""Input devices made of other devices, with no hardware in them.

* :class:`FailSafeInput`: a device whose loss (``DeviceError``) turns into "nobody
  intervenes" plus one warning, so an unplugged SpaceMouse never stops a control loop;
* :class:`NullInput`: no human (``intervention.device: none``);
* :class:`MergedInput`: several devices read as one (``spacemouse+keyboard``, or a
  person over topics plus the simulated intervener).

They sit in the core, beside the intervention wrapper that uses them; the hardware
devices (``robot_rl_drivers.input``) build on them, never the other way round.
"""

from __future__ import annotations

import logging
from typing import Iterable

import numpy as np

from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputCommand, InputDevice

log = logging.getLogger("robot_rl.intervention")


class FailSafeInput(InputDevice):
    """An input device whose loss turns into "nobody intervenes" plus one warning.

    After the first DeviceError, ``read()`` returns a neutral command (zero twist, no
    intervention, no button presses) forever; ``lost`` is True and ``error`` holds the
    message, e.g. for the episode's info dict.
    """

    def __init__(self, device: InputDevice, logger: logging.Logger | None = None) -> None:
        self.device = device
        self.error: str | None = None
        self._log = logger or log

    @property
    def lost(self) -> bool:
        return self.error is not None

    def read(self) -> InputCommand:
        if self.error is not None:
            return InputCommand()
        try:
            return self.device.read()
        except DeviceError as err:
            self.error = str(err)
            self._log.warning("input device lost, intervention ended, the policy resumes: %s", err)
            return InputCommand()

    def close(self) -> None:
        self.device.close()


class NullInput(InputDevice):
    """No human: every read is the neutral command. ``device: none``."""

    name = "none"

    def read(self) -> InputCommand:
        return InputCommand()


class MergedInput(InputDevice):
    """Several devices read as one (e.g. SpaceMouse to move, keyboard to label).

    Twists add (then clip to [-1, 1]); flags and presses combine with "or"; the gripper
    request comes from the first device that makes one; ``buttons`` are concatenated in
    device order. A DeviceError from one device propagates once; as each device turns
    neutral after its own error, the others keep working.
    """

    def __init__(self, devices: Iterable[InputDevice]) -> None:
        self.devices = list(devices)
        self.name = "+".join(getattr(d, "name", type(d).__name__) for d in self.devices)

    def read(self) -> InputCommand:
        commands = [d.read() for d in self.devices]
        twist = np.clip(np.sum([c.twist for c in commands], axis=0), -1.0, 1.0)
        flag = lambda attr: any(getattr(c, attr) for c in commands)  # noqa: E731
        requests = [c.close_gripper for c in commands if c.close_gripper is not None]
        return InputCommand(
            twist=twist,
            buttons=tuple(b for c in commands for b in c.buttons),
            intervene=flag("intervene"),
            gripper_toggle_pressed=flag("gripper_toggle_pressed"),
            close_gripper=requests[0] if requests else None,
            success_pressed=flag("success_pressed"),
            failure_pressed=flag("failure_pressed"),
            pause_pressed=flag("pause_pressed"),
            stop_pressed=flag("stop_pressed"),
        )

    def close(self) -> None:
        for device in self.devices:
            device.close()
