"""Typed config for human intervention: which input device, and how it maps to the robot.

The ``intervention:`` section of a session YAML. Every device first produces a command in
the *operator frame*, the way the person at the device sees it:

* ``x`` to the operator's right, ``y`` forward (away from the operator), ``z`` up;
* rotations ``rx, ry, rz`` about those axes, right-handed.

``axis_map`` then says where those axes point in the robot base frame, once for every
device, because it depends on where the person stands, not on what they hold. It names,
for robot ``x``, ``y`` and ``z`` in turn, the operator axis (with an optional ``-``) that
drives it; rotations follow the same map, so turning the puck always turns the gripper
the way the hand turns. Two common placements:

* ``["-y", "x", "z"]`` (default): the operator faces the robot from the far side of the
  table, looking at its base (the robot's ``+x`` points at the operator), as in HIL-SERL.
* ``["y", "-x", "z"]``: the operator stands behind the base, looking along the robot's
  ``+x``.

A map that mirrors space (a left-handed one) is refused: rotations could not follow it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal, Optional

import numpy as np

from robot_rl.config.loader import param

#: What a button or key can ask for, besides moving.
INPUT_ACTIONS = ("intervene", "gripper_toggle", "close_gripper", "open_gripper",
                 "success", "failure", "pause", "stop")
#: Names a device may take in ``intervention.device`` (several joined by ``+``).
DEVICE_NAMES = ("none", "spacemouse", "keyboard", "gamepad", "simulated")
#: The devices a person holds: in the node graph the intervention node reads them and
#: the actor gets their input over the /spacenav topics.
HELD_DEVICES = ("spacemouse", "keyboard", "gamepad")
OPERATOR_AXES = ("x", "y", "z")
#: The six motions of an operator-frame twist, in InputCommand.twist order.
MOTIONS = ("x", "y", "z", "rx", "ry", "rz")

#: Keys named by word (pynput's ``Key`` names); any single printable character also works.
NAMED_KEYS = frozenset(
    ["alt", "alt_r", "alt_gr", "backspace", "caps_lock", "cmd", "cmd_r", "ctrl", "ctrl_r",
     "delete", "down", "end", "enter", "esc", "home", "insert", "left", "menu", "num_lock",
     "page_down", "page_up", "pause", "print_screen", "right", "scroll_lock", "shift",
     "shift_r", "space", "tab", "up"] + [f"f{i}" for i in range(1, 21)])

Vec6 = tuple[float, float, float, float, float, float]


def normalize_key_name(name: str) -> str:
    """One spelling per key: ``W`` -> ``w``, ``shift_l`` -> ``shift``, ``Enter`` -> ``enter``."""
    if len(name) == 1:
        return name.lower()
    name = name.lower()
    return name[:-2] if name.endswith("_l") and name[:-2] in NAMED_KEYS else name


def axis_map_matrix(axis_map: tuple[str, str, str]) -> np.ndarray:
    """The 3x3 signed permutation ``R`` with ``robot = R @ operator`` for ``axis_map``.

    Raises ValueError when an entry is not ``[-]x|y|z``, an operator axis is used twice,
    or the map mirrors space (determinant -1).
    """
    matrix = np.zeros((3, 3))
    for row, entry in enumerate(axis_map):
        sign = -1.0 if entry.startswith("-") else 1.0
        name = entry.lstrip("+-")
        if name not in OPERATOR_AXES or len(entry) - len(name) > 1:
            raise ValueError(f"axis_map entry {entry!r} must be one of x, y, z with an optional '-'")
        matrix[row, OPERATOR_AXES.index(name)] = sign
    if sorted(np.flatnonzero(matrix) % 3) != [0, 1, 2]:
        raise ValueError(f"axis_map {list(axis_map)} must use each of x, y, z exactly once")
    if np.linalg.det(matrix) < 0:
        raise ValueError(f"axis_map {list(axis_map)} mirrors space (left-handed); flip the sign of one entry")
    return matrix


@dataclass
class SpaceMouseConfig:
    """A 3Dconnexion SpaceMouse read through hidapi.

    ``backend: auto`` uses the kernel's hidraw devices on Linux (``/dev/hidraw*``; the
    kernel driver stays attached, so spacenavd can run alongside) and hidapi's native
    backend elsewhere; ``libusb`` forces hidapi's libusb backend. ``buttons`` maps an
    action (see :data:`INPUT_ACTIONS`) to a button index: on the two-button models
    (Compact, Wireless) ``0`` is the left button and ``1`` the right one. By default they
    close and open the gripper, as in HIL-SERL; labels, pause and stop then come from the
    keyboard (``device: spacemouse+keyboard``).
    """

    backend: Literal["auto", "hidraw", "libusb"] = "auto"
    vendor_ids: list[int] = param(default_factory=lambda: [0x046D, 0x256F], min=0, max=0xFFFF, doc="USB vendor ids")
    product_id: Optional[int] = param(None, min=0, max=0xFFFF, doc="pick one model; null takes any 3D mouse")
    path: Optional[str] = None  # pick one device by its hidapi path, e.g. /dev/hidraw3
    full_scale: float = param(350.0, min=1.0, max=32767.0, doc="raw count at full deflection (350 on current models)")
    deadband: float = param(0.1, min=0.0, max=0.9, doc="fraction of full scale read as zero, per axis")
    scale: Vec6 = param((1.0, 1.0, 1.0, 1.0, 1.0, 1.0), min=0.0, max=10.0,
                        doc="gain per robot axis after mapping; 0 disables an axis")
    buttons: dict[str, int] = param(default_factory=lambda: {"close_gripper": 0, "open_gripper": 1}, min=0, max=255,
                                    doc="action -> button index")
    button_count: Optional[int] = param(None, min=1, max=256, doc="length of InputCommand.buttons; null: by model")
    intervene_on_motion: bool = True
    read_timeout_ms: int = param(20, min=1, max=1000, doc="reader thread poll; bounds close() latency")

    def __post_init__(self) -> None:
        for action, index in self.buttons.items():
            if action not in INPUT_ACTIONS:
                raise ValueError(f"buttons: unknown action '{action}' (choose from {', '.join(INPUT_ACTIONS)})")
            if not 0 <= index < 256:
                raise ValueError(f"buttons.{action}: button index {index} is out of range [0, 255]")
        if not self.vendor_ids:
            raise ValueError("vendor_ids must name at least one vendor id")


@dataclass
class KeyBindings:
    """Which key does what; ``null`` unbinds. Axes are in the operator frame.

    Keys are single characters (``w``) or pynput key names (``space``, ``enter``, ``esc``,
    ``up``, ``shift``, ``f1``, ...). The defaults: ``w``/``s`` forward and back, ``a``/``d``
    left and right, ``r``/``f`` up and down; ``i``/``k`` tilt forward and back (``rx``),
    ``j``/``l`` roll left and right (``ry``), ``u``/``o`` turn left and right (``rz``).
    """

    forward: Optional[str] = "w"
    back: Optional[str] = "s"
    left: Optional[str] = "a"
    right: Optional[str] = "d"
    up: Optional[str] = "r"
    down: Optional[str] = "f"
    tilt_forward: Optional[str] = "i"
    tilt_back: Optional[str] = "k"
    roll_left: Optional[str] = "j"
    roll_right: Optional[str] = "l"
    turn_left: Optional[str] = "u"
    turn_right: Optional[str] = "o"
    intervene: Optional[str] = "space"
    gripper_toggle: Optional[str] = "g"
    close_gripper: Optional[str] = None
    open_gripper: Optional[str] = None
    success: Optional[str] = "enter"
    failure: Optional[str] = "backspace"
    pause: Optional[str] = "p"
    stop: Optional[str] = "esc"

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for f in fields(self):
            key = getattr(self, f.name)
            if key is None:
                continue
            norm = normalize_key_name(key)
            if not (len(norm) == 1 and norm.isprintable()) and norm not in NAMED_KEYS:
                raise ValueError(f"{f.name}: unknown key {key!r} (a single character, or a pynput key "
                                 "name such as space, enter, esc, backspace, tab, up, shift, f1)")
            if norm in seen:
                raise ValueError(f"key {key!r} is bound to both '{seen[norm]}' and '{f.name}'")
            seen[norm] = f.name
            setattr(self, f.name, norm)


@dataclass
class KeyboardConfig:
    """A keyboard read through pynput (needs an X display, or pynput's uinput backend as root)."""

    keys: KeyBindings = field(default_factory=KeyBindings)
    linear_speed: float = param(0.5, min=0.0, max=1.0, doc="twist while a move key is held")
    angular_speed: float = param(0.5, min=0.0, max=1.0, doc="twist while a rotate key is held")
    intervene_on_motion: bool = True


def _bound_numbers(section: object, names: tuple[str, ...], where: str, unit: str, link: str) -> dict[str, int]:
    """name -> number for the names ``section`` binds (``None`` unbinds one); a number outside
    [0, 255], or one bound to two names, is a ValueError naming the key (a gamepad's axes
    and buttons both follow this rule)."""
    bound: dict[str, int] = {}
    owner: dict[int, str] = {}
    for name in names:
        number = getattr(section, name)
        if number is None:
            continue
        if not 0 <= number < 256:
            raise ValueError(f"{where}.{name}: {unit} number {number} is out of range [0, 255]")
        if number in owner:
            raise ValueError(f"{where}: {unit} {number} {link} both '{owner[number]}' and '{name}'")
        owner[number] = name
        bound[name] = number
    return bound


@dataclass
class GamepadAxes:
    """Which joystick axis drives each operator-frame motion; ``null`` leaves a motion unbound.

    Axis numbers are the Linux joystick API's (``/dev/input/js*``). The defaults are an
    Xbox-layout pad under the kernel's xpad driver (PlayStation pads under
    hid-playstation number their sticks and D-pad the same way): ``0``/``1`` left stick
    x/y, ``3``/``4`` right stick x/y, ``6``/``7`` D-pad x/y (``2``/``5`` are the analog
    triggers). So the left stick moves in the table plane (``x``, ``y``), the right stick
    up/down is ``z`` and left/right turns (``rz``), and the D-pad tilts (up/down, ``rx``)
    and rolls (left/right, ``ry``). Stick axes read positive right and *down*; ``invert``
    turns the ones that must read positive forward or up.
    """

    x: Optional[int] = param(0, min=0, max=255, doc="left stick x: right")
    y: Optional[int] = param(1, min=0, max=255, doc="left stick y: forward (inverted)")
    z: Optional[int] = param(4, min=0, max=255, doc="right stick y: up (inverted)")
    rx: Optional[int] = param(7, min=0, max=255, doc="D-pad y: up tilts forward")
    ry: Optional[int] = param(6, min=0, max=255, doc="D-pad x: right rolls right")
    rz: Optional[int] = param(3, min=0, max=255, doc="right stick x: right turns right (inverted)")

    def __post_init__(self) -> None:
        self.bound()

    def bound(self) -> dict[str, int]:
        """motion -> axis number, for the motions that have one."""
        return _bound_numbers(self, MOTIONS, "axes", "axis", "drives")


@dataclass
class GamepadButtons:
    """Which joystick button does each action (:data:`INPUT_ACTIONS`); ``null`` unbinds it.

    Numbers are the Linux joystick API's. The defaults are an Xbox-layout pad under xpad:
    ``0`` A, ``1`` B, ``2`` X, ``3`` Y, ``4`` LB, ``5`` RB, ``6`` Back/View, ``7``
    Start/Menu, ``8`` Guide, ``9``/``10`` stick clicks. A PlayStation pad under
    hid-playstation has ``6``/``7`` on its L2/R2 triggers and Share/Options on ``8``/``9``:
    set ``pause: 9`` and ``stop: 8`` there.
    """

    intervene: Optional[int] = param(2, min=0, max=255, doc="X: take over (toggle, or hold in hold mode)")
    gripper_toggle: Optional[int] = param(3, min=0, max=255, doc="Y: toggle the gripper")
    close_gripper: Optional[int] = param(4, min=0, max=255, doc="LB: close the gripper")
    open_gripper: Optional[int] = param(5, min=0, max=255, doc="RB: open the gripper")
    success: Optional[int] = param(0, min=0, max=255, doc="A: end the episode as a success")
    failure: Optional[int] = param(1, min=0, max=255, doc="B: end the episode as a failure")
    pause: Optional[int] = param(7, min=0, max=255, doc="Start: hold the arm until pressed again")
    stop: Optional[int] = param(6, min=0, max=255, doc="Back: end the episode and the session")

    def __post_init__(self) -> None:
        self.bound()

    def bound(self) -> dict[str, int]:
        """action -> button number, for the actions that have one."""
        return _bound_numbers(self, INPUT_ACTIONS, "buttons", "button", "is bound to")


@dataclass
class GamepadConfig:
    """A gamepad read through the Linux joystick API (``/dev/input/js*``, no extra package).

    ``path`` opens one node; without it the first joystick whose name contains ``name``
    (any case) is taken, or with no ``name`` the first joystick that is not a 3D mouse
    (a SpaceMouse has a js node too). Each mapped axis is scaled to [-1, 1] (axes in
    ``triggers`` rest at their negative end and read 0 released .. 1 pulled), flipped
    if its motion is in ``invert``, and ``deadband`` is cut per axis, so a stick that
    does not centre exactly reads zero. ``scale`` is the gain per robot axis after
    ``intervention.axis_map``, as the SpaceMouse's; the rotations default to half, as
    the D-pad is all or nothing.
    """

    path: Optional[str] = None  # e.g. /dev/input/js0; null: discover
    name: Optional[str] = None  # pick the joystick whose name contains this (case-insensitive)
    axes: GamepadAxes = field(default_factory=GamepadAxes)
    invert: list[str] = field(default_factory=lambda: ["y", "z", "rz"])
    triggers: list[int] = param(default_factory=lambda: [2, 5], min=0, max=255,
                                doc="axes that rest at -1 (analog triggers): read as 0 .. 1")
    deadband: float = param(0.15, min=0.0, max=0.9, doc="fraction of full deflection read as zero, per axis")
    scale: Vec6 = param((1.0, 1.0, 1.0, 0.5, 0.5, 0.5), min=0.0, max=10.0,
                        doc="gain per robot axis after mapping; 0 disables an axis")
    buttons: GamepadButtons = field(default_factory=GamepadButtons)
    button_count: Optional[int] = param(None, min=1, max=256,
                                        doc="length of InputCommand.buttons; null: as many as the pad reports")
    intervene_on_motion: bool = True
    read_timeout_ms: int = param(20, min=1, max=1000, doc="reader thread poll; bounds close() latency")
    stream: bool = param(False, doc="accept a path that is not a joystick node (a FIFO or relay carrying js_event "
                                    "records): its records are checked and realigned, never believed unchecked")

    def __post_init__(self) -> None:
        for motion in self.invert:
            if motion not in MOTIONS:
                raise ValueError(f"invert: unknown motion {motion!r} (choose from {', '.join(MOTIONS)})")
        if len(set(self.invert)) != len(self.invert):
            raise ValueError(f"invert: {self.invert} names a motion twice")
        if len(set(self.triggers)) != len(self.triggers):
            raise ValueError(f"triggers: {self.triggers} names an axis twice")
        if self.path is not None and not self.path.strip():
            raise ValueError("path: empty; give a joystick node such as /dev/input/js0, or null to discover one")
        if self.name is not None and not self.name.strip():
            raise ValueError("name: empty; give part of the gamepad's name, or null for the first gamepad")


@dataclass
class SimulatedInterventionConfig:
    """The simulated intervener: the scripted expert takes over when the policy goes wrong.

    A takeover starts when the policy *stalls* (the TCP moved less than
    ``stall_distance`` over the last ``stall_steps`` steps) or *drifts* (the TCP is more
    than ``drift_distance`` from the task's object or hole), or at random with
    ``probability`` per step. It lasts ``takeover_steps`` steps (or until success), at
    most ``max_per_episode`` times per episode, never in the first ``grace_steps`` steps.
    """

    stall_steps: int = param(8, min=2, max=1000)
    stall_distance: float = param(0.005, min=0.0, max=0.5, doc="metres")
    drift_distance: float = param(0.25, min=0.01, max=2.0, doc="metres")
    probability: float = param(0.0, min=0.0, max=1.0)
    takeover_steps: int = param(12, min=1, max=1000)
    max_per_episode: int = param(2, min=0, max=1000)
    grace_steps: int = param(5, min=0, max=1000)
    noise: float = param(0.0, min=0.0, max=1.0, doc="expert action noise (std)")
    seed: int = param(0, min=0, max=2**32 - 1)


@dataclass
class InterventionConfig:
    """Who may take over, and how their device maps onto the robot.

    ``device`` is ``none``, ``spacemouse``, ``keyboard``, ``gamepad``, ``simulated`` (the
    scripted intervener, for sim and CI), or several joined by ``+`` (``spacemouse+keyboard``:
    the SpaceMouse moves, the keyboard labels, pauses and stops).
    ``intervene_mode`` says whether the intervene button or key must be held
    (``hold``) or switches taking over on and off (``toggle``); moving the device also
    takes over when the device's ``intervene_on_motion`` is set.
    """

    device: str = "none"
    axis_map: tuple[str, str, str] = ("-y", "x", "z")
    intervene_mode: Literal["hold", "toggle"] = "toggle"
    spacemouse: SpaceMouseConfig = field(default_factory=SpaceMouseConfig)
    keyboard: KeyboardConfig = field(default_factory=KeyboardConfig)
    gamepad: GamepadConfig = field(default_factory=GamepadConfig)
    simulated: SimulatedInterventionConfig = field(default_factory=SimulatedInterventionConfig)
    penalty: float = param(0.0, min=0.0, max=10.0,
                           doc="RLIF: reward penalty on the step a human takes over (0 = off)")

    def __post_init__(self) -> None:
        parts = self.device.split("+")
        for part in parts:
            if part not in DEVICE_NAMES:
                raise ValueError(f"device: unknown input device '{part}' (choose from {', '.join(DEVICE_NAMES)}, "
                                 "or several joined by '+')")
        if len(parts) > 1 and "none" in parts:
            raise ValueError(f"device: 'none' cannot be combined with others ({self.device!r})")
        if len(set(parts)) != len(parts):
            raise ValueError(f"device: {self.device!r} names a device twice")
        axis_map_matrix(self.axis_map)
