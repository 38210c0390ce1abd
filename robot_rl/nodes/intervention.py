"""How a human's input travels on ``/spacenav/twist`` and ``/spacenav/joy``, both ways.

The actor rebuilds an :class:`~robot_rl.interfaces.InputCommand` from these two topics
with :class:`TopicInput`, one way, whoever publishes them: robot_rl's intervention node
or the standard ``spacenav_node`` (ros-drivers/joystick_drivers, with spacenavd). So
the topics carry what spacenav_node carries, raw, and all interpretation (deadband,
``intervention.axis_map``, gains, which button does what, hold or toggle) happens once,
in the actor, with the session's ``intervention:`` settings:

``/spacenav/twist`` (``geometry_msgs/Twist``)
    The puck's deflection, about -1..1 per axis at full deflection, in spacenav's frame:
    ``x`` forward (away from the operator), ``y`` left, ``z`` up, rotations right-handed
    about those. (robot_rl's operator frame is x right, y forward, z up: a quarter turn
    about z, :func:`spacenav_to_operator`.) No deadband applied. With spacenav_node, set
    its ``full_scale`` to ``intervention.spacemouse.full_scale`` (350) for the same gain,
    and ``zero_when_static: true``.

``/spacenav/joy`` (``sensor_msgs/Joy``)
    ``axes``: the same six values (not used by the actor). ``buttons``: levels, 1 while
    held. A message with an empty ``buttons`` list says nothing about buttons; a list of
    length ``n`` gives the levels of buttons ``0 .. n-1`` and leaves higher ones as they
    were. (spacenav_node sends a button event as a list ending at that button, zeros
    before it, and motion with an empty list; both read right under this rule, except
    that a press of one button while a lower-numbered one is held reads as releasing
    the lower one.) A 0 -> 1 change is a press and counts even if the button is released
    before the actor's next step. Indices:

    * ``0 .. 31``: the device's own buttons (a SpaceMouse's: 0 left, 1 right on the
      two-button models). The actor gives them meaning through
      ``intervention.spacemouse.buttons`` (default: 0 closes, 1 opens the gripper), as
      it does for a SpaceMouse plugged into the actor's machine.
    * ``32 .. 39``: robot_rl's actions for devices whose controls the intervention node
      interprets itself (the keyboard's keys, the gamepad's buttons), in the order of
      :data:`robot_rl.config.input.INPUT_ACTIONS`:
      ``32`` intervene, ``33`` gripper_toggle, ``34`` close_gripper, ``35``
      open_gripper, ``36`` success, ``37`` failure, ``38`` pause, ``39`` stop. 1 while
      the key is held, and for at least one message after a tap.

robot_rl's intervention node opens its device with :func:`raw_device_config` (no
deadband, identity axis map, no button meanings, hold-mode intervene), so what it reads
is exactly the raw input, and publishes it with :func:`encode` at ``ros.input_hz``.
A gamepad travels like the keyboard: the node maps its axes to the operator-frame twist
(``gamepad.axes``, ``invert``, ``triggers``) and its buttons to the action buttons
(``gamepad.buttons``); the actor applies its deadband and gains (``gamepad.deadband``,
``gamepad.scale``, unless a SpaceMouse is named too: then the SpaceMouse's apply).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable, Optional

import numpy as np

from robot_rl.config.input import HELD_DEVICES, INPUT_ACTIONS, InterventionConfig
from robot_rl.interfaces import InputCommand, InputDevice
from robot_rl.nodes.latest import Latest

DEVICE_BUTTONS = 32
ACTION_BUTTONS: dict[str, int] = {action: DEVICE_BUTTONS + i for i, action in enumerate(INPUT_ACTIONS)}
JOY_BUTTONS = DEVICE_BUTTONS + len(INPUT_ACTIONS)

# spacenav = R @ operator for both halves of a twist: x_sp = y_op, y_sp = -x_op, z_sp = z_op
_OPERATOR_TO_SPACENAV = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def operator_to_spacenav(twist: np.ndarray) -> np.ndarray:
    t = np.asarray(twist, dtype=float).reshape(6)
    return np.concatenate([_OPERATOR_TO_SPACENAV @ t[:3], _OPERATOR_TO_SPACENAV @ t[3:]])


def spacenav_to_operator(twist: np.ndarray) -> np.ndarray:
    t = np.asarray(twist, dtype=float).reshape(6)
    return np.concatenate([_OPERATOR_TO_SPACENAV.T @ t[:3], _OPERATOR_TO_SPACENAV.T @ t[3:]])


def topic_devices(cfg: InterventionConfig) -> list[str]:
    """The devices of ``intervention.device`` whose input comes over /spacenav topics."""
    return [d for d in cfg.device.split("+") if d in HELD_DEVICES]


# --- publisher side: robot_rl's intervention node ---------------------------------------


def raw_device_config(cfg: InterventionConfig) -> InterventionConfig:
    """The settings the intervention node opens its device(s) with: input as raw as it comes.

    Operator-frame twist (identity ``axis_map``, no deadband, unit gains), the
    SpaceMouse's buttons as plain levels (no meanings), the keyboard's action keys and
    the gamepad's action buttons as held levels and presses (``hold`` mode, no
    intervene-on-motion).
    """
    sm = dataclasses.replace(cfg.spacemouse, deadband=0.0, scale=(1.0,) * 6, buttons={},
                             intervene_on_motion=False)
    kb = dataclasses.replace(cfg.keyboard, intervene_on_motion=False)
    gp = dataclasses.replace(cfg.gamepad, deadband=0.0, scale=(1.0,) * 6, intervene_on_motion=False)
    return dataclasses.replace(cfg, axis_map=("x", "y", "z"), intervene_mode="hold", spacemouse=sm, keyboard=kb,
                               gamepad=gp)


def encode(cmd: InputCommand) -> tuple[np.ndarray, list[int]]:
    """A raw command (from a device opened with :func:`raw_device_config`) -> (spacenav twist, Joy buttons)."""
    buttons = [0] * JOY_BUTTONS
    for i, level in enumerate(cmd.buttons[:DEVICE_BUTTONS]):
        buttons[i] = 1 if level else 0
    actions = {
        "intervene": cmd.intervene, "gripper_toggle": cmd.gripper_toggle_pressed,
        "close_gripper": cmd.close_gripper is True, "open_gripper": cmd.close_gripper is False,
        "success": cmd.success_pressed, "failure": cmd.failure_pressed, "pause": cmd.pause_pressed,
        "stop": cmd.stop_pressed,
    }
    for action, on in actions.items():
        buttons[ACTION_BUTTONS[action]] = 1 if on else 0
    return operator_to_spacenav(np.clip(cmd.twist, -1.0, 1.0)), buttons


# --- actor side ------------------------------------------------------------------------


class TopicInput(InputDevice):
    """An ``InputDevice`` fed by /spacenav/twist and /spacenav/joy (see the module docstring).

    ``on_twist`` / ``on_joy`` come from the node's subscriptions (any thread); ``read()``
    is the actor's. A twist older than ``timeout_s`` reads as zero, so a publisher that
    dies mid-motion cannot keep the arm moving.
    """

    name = "topics"

    def __init__(self, cfg: InterventionConfig, *, timeout_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from robot_rl_drivers.input.commands import AxisMap, CommandBuilder, apply_deadband

        devices = topic_devices(cfg)
        spacemouse = "spacemouse" in devices
        self._deadband_fn = apply_deadband
        # The deadband, gains and intervene-on-motion of the device that moves: the SpaceMouse,
        # else the gamepad, else the keyboard (whose keys have no deadband).
        if spacemouse:
            self.deadband, scale = cfg.spacemouse.deadband, cfg.spacemouse.scale
            on_motion = cfg.spacemouse.intervene_on_motion
        elif "gamepad" in devices:
            self.deadband, scale = cfg.gamepad.deadband, cfg.gamepad.scale
            on_motion = cfg.gamepad.intervene_on_motion
        else:
            self.deadband, scale = 0.0, (1.0,) * 6
            on_motion = cfg.keyboard.intervene_on_motion
        self.button_map = dict(cfg.spacemouse.buttons) if spacemouse else {}
        self.builder = CommandBuilder(AxisMap(cfg.axis_map, scale), intervene_mode=cfg.intervene_mode,
                                      intervene_on_motion=on_motion)
        self.timeout_s = timeout_s
        self._twist: Latest[np.ndarray] = Latest(clock)
        self._lock = threading.Lock()
        self._levels: dict[int, bool] = {}
        self._pressed: set[int] = set()
        self._device_buttons = 0
        self.joy_messages = 0

    def on_twist(self, twist: np.ndarray) -> None:
        self._twist.put(np.asarray(twist, dtype=float).reshape(6))

    def on_joy(self, buttons: tuple[int, ...]) -> None:
        with self._lock:
            self.joy_messages += 1
            for i, value in enumerate(buttons):
                level = value != 0
                if level and not self._levels.get(i, False):
                    self._pressed.add(i)
                self._levels[i] = level
            self._device_buttons = max(self._device_buttons, min(len(buttons), DEVICE_BUTTONS))

    def read(self) -> InputCommand:
        twist: Optional[np.ndarray] = self._twist.value
        if twist is None or self._twist.age() > self.timeout_s:
            operator = np.zeros(6)
        else:
            operator = self._deadband_fn(np.clip(spacenav_to_operator(twist), -1.0, 1.0), self.deadband)
        with self._lock:
            held = {i for i, level in self._levels.items() if level}
            pressed, self._pressed = self._pressed, set()
            device = tuple(int(self._levels.get(i, False)) for i in range(self._device_buttons))
        return self.builder.build(operator, self._actions(held), self._actions(pressed), device)

    def _actions(self, indices: set[int]) -> set[str]:
        named = {a for a, i in self.button_map.items() if i in indices}
        return named | {a for a, i in ACTION_BUTTONS.items() if i in indices}
