"""The Franka Hand behind robot_rl's gripper convention (opening fraction, 0 closed, 1 open).

libfranka's Gripper calls block for the whole finger motion (up to a second or two),
while ``Robot.command`` must return at once. So a worker thread executes the newest
request, and a second thread reads the finger width at ``state_hz``; repeated requests
for the same opening (a policy sends one every step) cost nothing. A request that
arrives during a motion runs when that motion ends.

Mapping (see :class:`~robot_rl.config.hardware.FrankaGripperSettings`):
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
import threading
from typing import Any, Optional

from robot_rl.config.hardware import FrankaGripperSettings
from robot_rl.errors import DeviceError

log = logging.getLogger("robot_rl_drivers.robots.franka_gripper")


class FrankaGripper:
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
        self.failures = 0
        self.commands = 0
        self._requested: Optional[float] = None  # target fraction not yet executed
        self._last: Optional[float] = None  # last fraction sent to the hand
        self._cond = threading.Condition()
        self._running = True
        self._worker = threading.Thread(target=self._run_commands, name="franka-gripper", daemon=True)
        self._reader = threading.Thread(target=self._run_reader, name="franka-gripper-state", daemon=True)
        self._worker.start()
        self._reader.start()

    @property
    def fraction(self) -> float:
        return min(1.0, max(0.0, self.width / self.max_width))

    def command(self, fraction: float) -> None:
        """Ask for an opening fraction; returns at once."""
        fraction = min(1.0, max(0.0, float(fraction)))
        if self.settings.mode == "binary":
            fraction = 0.0 if fraction < self.settings.threshold else 1.0
        with self._cond:
            reference = self._requested if self._requested is not None else self._last
            if reference is not None and abs(fraction - reference) <= (
                    self.settings.deadband if self.settings.mode == "continuous" else 0.0):
                return
            self._requested = fraction
            self._cond.notify_all()

    def _run_commands(self) -> None:
        s = self.settings
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._requested is not None or not self._running)
                if not self._running:
                    return
                fraction, self._requested = self._requested, None
                self._last = fraction
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

    def _run_reader(self) -> None:
        period = 1.0 / self.settings.state_hz
        stop = threading.Event()
        while self._running:
            try:
                self.width = float(self._gripper.read_once().width)
            except Exception as err:  # noqa: BLE001
                log.warning("gripper state read failed: %s", err)
            stop.wait(period)

    def close(self) -> None:
        """Stop the threads; the fingers stay as they are (a held object stays held)."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        self._worker.join(timeout=5.0)
        self._reader.join(timeout=2.0)
