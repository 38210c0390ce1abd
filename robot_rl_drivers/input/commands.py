"""From what a person does with a device to an :class:`~robot_rl.interfaces.InputCommand`.

Both hardware devices reduce to the same three things at each ``read()``: a twist in the
operator frame (x right, y forward, z up, see :mod:`robot_rl.config.input`), the set of
actions whose button or key is held, and the set of actions pressed since the previous
read. :class:`CommandBuilder` turns those into the robot-frame command, so the SpaceMouse
and the keyboard cannot disagree on what "intervene" or "toggle the gripper" means.

Why "pressed since the previous read": the actor reads at 10 Hz, and a button tapped for
50 ms between two reads must still toggle the gripper or end the episode.
"""

from __future__ import annotations

from typing import AbstractSet, Sequence

import numpy as np

from robot_rl.config.input import axis_map_matrix
from robot_rl.interfaces import InputCommand


def apply_deadband(values: np.ndarray, deadband: float) -> np.ndarray:
    """Zero ``|v| <= deadband`` and rescale the rest so the output is continuous.

    ``values`` are normalised to ``[-1, 1]``; a value just past the deadband gives a small
    command, not a jump to ``deadband``.
    """
    values = np.clip(np.asarray(values, dtype=float), -1.0, 1.0)
    if deadband <= 0.0:
        return values
    magnitude = np.maximum(np.abs(values) - deadband, 0.0) / (1.0 - deadband)
    return np.sign(values) * magnitude


class AxisMap:
    """Operator-frame twist -> robot base-frame twist, with a gain per robot axis.

    Translation and rotation go through the same 3x3 signed permutation (a proper
    rotation), so rotations stay consistent with translations.
    """

    def __init__(self, axis_map: Sequence[str], scale: Sequence[float] = (1.0,) * 6) -> None:
        self.matrix = axis_map_matrix(tuple(axis_map))
        self.scale = np.asarray(scale, dtype=float)
        if self.scale.shape != (6,):
            raise ValueError(f"scale must have 6 entries, got {len(self.scale)}")

    def __call__(self, operator_twist: np.ndarray) -> np.ndarray:
        twist = np.asarray(operator_twist, dtype=float)
        robot = np.concatenate([self.matrix @ twist[:3], self.matrix @ twist[3:]])
        return np.clip(robot * self.scale, -1.0, 1.0)


class CommandBuilder:
    """Turns (operator twist, held actions, pressed actions) into an ``InputCommand``.

    ``intervene`` is true while the human acts: the intervene control is held (``hold``
    mode) or toggled on (``toggle`` mode), or, with ``intervene_on_motion``, whenever the
    twist after deadband is non-zero. ``close_gripper`` is an absolute request: ``True``
    while the close control is held or was pressed since the last read, ``False`` likewise
    for open, ``None`` when neither (the gripper keeps its state).
    """

    def __init__(self, axis_map: AxisMap, *, intervene_mode: str = "toggle",
                 intervene_on_motion: bool = True) -> None:
        if intervene_mode not in ("hold", "toggle"):
            raise ValueError(f"intervene_mode must be 'hold' or 'toggle', got {intervene_mode!r}")
        self.axis_map = axis_map
        self.intervene_mode = intervene_mode
        self.intervene_on_motion = intervene_on_motion
        self.intervene_toggled = False

    def build(self, operator_twist: np.ndarray, held: AbstractSet[str], pressed: AbstractSet[str],
              buttons: tuple[int, ...] = ()) -> InputCommand:
        twist = self.axis_map(operator_twist)
        active = set(held) | set(pressed)  # a tap between two reads counts for one read
        if "intervene" in pressed and self.intervene_mode == "toggle":
            self.intervene_toggled = not self.intervene_toggled
        if self.intervene_mode == "toggle":
            intervene = self.intervene_toggled
        else:
            intervene = "intervene" in active
        if self.intervene_on_motion and np.any(twist != 0.0):
            intervene = True
        close_gripper: bool | None = None
        if "close_gripper" in active:
            close_gripper = True
        elif "open_gripper" in active:
            close_gripper = False
        return InputCommand(
            twist=twist,
            buttons=tuple(buttons),
            intervene=intervene,
            gripper_toggle_pressed="gripper_toggle" in pressed,
            close_gripper=close_gripper,
            success_pressed="success" in pressed,
            failure_pressed="failure" in pressed,
            pause_pressed="pause" in pressed,
            stop_pressed="stop" in pressed,
        )
