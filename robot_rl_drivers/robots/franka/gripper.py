"""The Franka Hand behind robot_rl's gripper convention (opening fraction, 0 closed, 1 open).

libfranka's Gripper calls block for the whole finger motion (up to a second or two),
while ``Robot.command`` must return at once. So a worker thread executes the newest
request, and a second thread reads the finger width at ``state_hz``; repeated requests
for the same opening (a policy sends one every step) cost nothing. A request that
arrives during a motion runs when that motion ends. The threads and the mapping of a
fraction to a request are :class:`~robot_rl_drivers.robots.gripper.ThreadedGripper`'s.

Mapping (see :class:`~robot_rl_drivers.robots.franka.settings.FrankaGripperSettings`):
* ``binary``: fraction < threshold -> ``grasp`` (close with force until the fingers stop;
  any final width counts as held), otherwise ``move`` to the full width;
* ``continuous``: ``move`` to ``fraction * max_width``.
The reported fraction is ``width / max_width``, with ``max_width`` from the hand after
homing, else ``robot.gripper_max_width``.

A failed grasp or move is logged and counted, not raised: a missed grasp is an outcome
the policy must learn from, not a robot fault.
"""

from __future__ import annotations

import logging
from typing import Any

from robot_rl.errors import DeviceError
from robot_rl_drivers.robots.franka.settings import FrankaGripperSettings
from robot_rl_drivers.robots.gripper import ThreadedGripper

log = logging.getLogger("robot_rl_drivers.robots.franka.gripper")


class FrankaGripper(ThreadedGripper):
    def __init__(self, lib: Any, ip: str, settings: FrankaGripperSettings, max_width: float) -> None:
        self.settings = settings
        try:
            self._gripper = lib.Gripper(ip)
            if settings.homing:
                self._gripper.homing()
            first = self._gripper.read_once()
        except Exception as err:  # noqa: BLE001 - any libfranka failure here is one line
            raise DeviceError(f"Franka gripper at {ip}: {type(err).__name__}: {err}") from None
        self.max_width = float(first.max_width) if float(first.max_width) > 1e-3 else float(max_width)
        self.width = float(first.width)
        self._start_threads("franka-gripper")

    @property
    def fraction(self) -> float:
        return min(1.0, max(0.0, self.width / self.max_width))

    def _execute(self, fraction: float) -> None:
        s = self.settings
        try:
            if s.mode == "binary" and fraction == 0.0:
                ok = self._gripper.grasp(0.0, s.speed, s.force, s.epsilon_inner, s.epsilon_outer)
            else:
                ok = self._gripper.move(fraction * self.max_width, s.speed)
            self.commands += 1
            if not ok:
                self.failures += 1
                log.warning("gripper: %s to fraction %.2f did not succeed",
                            "grasp" if fraction == 0.0 and s.mode == "binary" else "move", fraction)
        except Exception as err:  # noqa: BLE001
            self.failures += 1
            log.warning("gripper command failed: %s: %s", type(err).__name__, err)

    def _read(self) -> None:
        try:
            self.width = float(self._gripper.read_once().width)
        except Exception as err:  # noqa: BLE001
            log.warning("gripper state read failed: %s", err)
