"""``make_input_device(cfg)``: the input device a session's ``intervention:`` section names.

Devices are built through a registry of ``name -> builder(cfg, **context)``, so a device
that lives elsewhere (the simulated intervener, which needs the env and the scripted
expert) plugs in with :func:`register_input_device` instead of an edit here::

    register_input_device("simulated", lambda cfg, *, env, task, **_: SimulatedIntervener(
        cfg, env, get_task(task).make_expert))
    device = make_input_device(cfg.intervention, env=env)

``context`` is handed to every builder; each takes what it needs and ignores the rest
(the hardware builders accept ``hid_module``, ``listener_factory`` and
``joystick_nodes`` so tests can put a fake library under the real code). Several devices
joined by ``+`` are read together by :class:`MergedInput`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from robot_rl.config.input import InterventionConfig
from robot_rl.envs.inputs import MergedInput, NullInput
from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputDevice

Builder = Callable[..., InputDevice]


def _spacemouse(cfg: InterventionConfig, *, hid_module: Any = None, **_: Any) -> InputDevice:
    from .spacemouse import SpaceMouse

    return SpaceMouse(cfg, hid_module=hid_module)


def _keyboard(cfg: InterventionConfig, *, listener_factory: Any = None, **_: Any) -> InputDevice:
    from .keyboard import KeyboardInput

    return KeyboardInput(cfg, listener_factory=listener_factory)


def _gamepad(cfg: InterventionConfig, *, joystick_nodes: Any = None, **_: Any) -> InputDevice:
    from .gamepad import Gamepad

    return Gamepad(cfg, nodes=joystick_nodes)


#: name -> builder(cfg, **context). "simulated" is added by the module that provides it.
INPUT_DEVICES: dict[str, Builder] = {
    "none": lambda cfg, **_: NullInput(),
    "spacemouse": _spacemouse,
    "keyboard": _keyboard,
    "gamepad": _gamepad,
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
