"""``make_input_device(cfg)``: the input device a session's ``intervention:`` section names.

Devices are built through a registry of ``name -> builder(cfg, **context)``, so a device
that lives elsewhere (the simulated intervener, which needs the env and the scripted
expert) plugs in with :func:`register_input_device` instead of an edit here::

    register_input_device("simulated", lambda cfg, *, env, **_: SimulatedIntervener(cfg, env))
    device = make_input_device(cfg.intervention, env=env)

``context`` is handed to every builder; each takes what it needs and ignores the rest
(the hardware builders accept ``hid_module`` and ``listener_factory`` so tests can put
a fake library under the real code). Several devices joined by ``+`` are read together
by :class:`MergedInput`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import numpy as np

from robot_rl.config.input import InterventionConfig
from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputCommand, InputDevice

Builder = Callable[..., InputDevice]


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


def _spacemouse(cfg: InterventionConfig, *, hid_module: Any = None, **_: Any) -> InputDevice:
    from .spacemouse import SpaceMouse

    return SpaceMouse(cfg, hid_module=hid_module)


def _keyboard(cfg: InterventionConfig, *, listener_factory: Any = None, **_: Any) -> InputDevice:
    from .keyboard import KeyboardInput

    return KeyboardInput(cfg, listener_factory=listener_factory)


#: name -> builder(cfg, **context). "simulated" is added by the module that provides it.
INPUT_DEVICES: dict[str, Builder] = {
    "none": lambda cfg, **_: NullInput(),
    "spacemouse": _spacemouse,
    "keyboard": _keyboard,
}


def register_input_device(name: str, builder: Builder) -> None:
    """Make ``intervention.device: <name>`` build ``builder(cfg, **context)``."""
    if not name or "+" in name:
        raise ValueError(f"input device name {name!r} must be non-empty and contain no '+'")
    INPUT_DEVICES[name] = builder


def make_input_device(cfg: InterventionConfig, registry: Mapping[str, Builder] | None = None,
                      **context: Any) -> InputDevice:
    """The device(s) ``cfg.device`` names; an unknown name is a one-line DeviceError.

    Hardware problems (no SpaceMouse, no permission, no display) are DeviceErrors from the
    device itself, raised here. If one of several devices fails, those already opened are
    closed first.
    """
    registry = INPUT_DEVICES if registry is None else registry
    names = cfg.device.split("+")
    for name in names:
        if name not in registry:
            raise DeviceError(f"unknown input device '{name}' (intervention.device); available: "
                              f"{', '.join(sorted(registry))}")
    devices: list[InputDevice] = []
    try:
        for name in names:
            devices.append(registry[name](cfg, **context))
    except BaseException:
        for device in devices:
            device.close()
        raise
    return devices[0] if len(devices) == 1 else MergedInput(devices)
