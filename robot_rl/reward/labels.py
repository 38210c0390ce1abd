"""Where a recorded frame's label comes from: sim ground truth, or a person's keys.

Contract: ``start_episode()`` after each reset; then ``read(env)`` once per frame returns
a :class:`Label`. ``Label.success`` is ``None`` for a frame that must not be recorded
(paused); ``Label.stop`` ends the recording. The recorder does not know which source it
has, so the key path on hardware is the same code the sim tests run.

On a robot the person's device is also the one that moves the arm: the actor node's
:class:`~robot_rl.envs.intervention.HumanIntervention` reads it every step, and a
device hands each press out once. :class:`LabelKeyTap` lets both read it (see there).
"""

from __future__ import annotations

import abc
import dataclasses
import logging
from dataclasses import dataclass

import gymnasium as gym

from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputCommand, InputDevice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Label:
    success: bool | None
    stop: bool = False


class LabelSource(abc.ABC):
    name: str = ""

    def start_episode(self) -> None:
        """A new episode begins (its first frame is read next)."""

    @abc.abstractmethod
    def read(self, env: gym.Env) -> Label:
        """The label of the frame just observed."""

    def close(self) -> None:
        """Release what the source holds."""


class GroundTruthLabels(LabelSource):
    """Sim only: the task's own success test on the current physics state."""

    name = "ground_truth"

    def read(self, env: gym.Env) -> Label:
        return Label(bool(env.unwrapped.task.success()))


class KeyLabels(LabelSource):
    """Labels from an input device's success/failure/pause/stop presses.

    Every episode starts labelled *failure*. Pressing the success key labels this frame
    and the following ones *success*, until the failure key is pressed (or the next
    episode starts). Pause toggles recording off and on; stop ends the session. Presses
    are edges (``*_pressed``), so a tap between two frames is not lost.
    """

    name = "keys"

    def __init__(self, device: InputDevice) -> None:
        self.device = device
        self.success = False
        self.paused = False

    def start_episode(self) -> None:
        self.success = False

    def read(self, env: gym.Env) -> Label:
        cmd = self.device.read()
        if cmd.stop_pressed:
            return Label(None, stop=True)
        if cmd.pause_pressed:
            self.paused = not self.paused
            log.info("reward recording %s", "paused" if self.paused else "resumed")
        if cmd.success_pressed:
            self.success = True
        if cmd.failure_pressed:
            self.success = False
        return Label(None if self.paused else self.success)

    def close(self) -> None:
        self.device.close()


class LabelKeyTap(InputDevice):
    """One device, two readers: the arm's intervention wrapper, and a :class:`KeyLabels`.

    The tap stands where the device stood (``HumanIntervention(env, tap)``). Each
    :meth:`read` reads the device once and passes the command on *without* its success,
    failure and pause presses; those are kept for :attr:`labels`, the device to hand
    :class:`KeyLabels`, whose ``read()`` returns the label presses (and stop) that the
    intervention's reads saw since its own last read. So every press is seen once by
    each reader and by nobody twice, and while frames are recorded the label keys only
    label: success no longer ends the episode (the frames after it are the positives),
    and pause skips frames instead of holding the arm. Motion, the gripper, takeover
    and stop reach the intervention as before (stop still ends the session).

    A :class:`~robot_rl.errors.DeviceError` from the device passes through (the
    intervention's fail-safe turns it into "nobody intervenes"); from then on
    :attr:`labels` raises DeviceError too, as labels can no longer change.
    """

    def __init__(self, device: InputDevice) -> None:
        self.device = device
        self.name = getattr(device, "name", type(device).__name__)
        self.error: str | None = None
        self._success = self._failure = self._stop = False
        self._pauses = 0
        self.labels: InputDevice = _TappedLabels(self)

    def read(self) -> InputCommand:
        try:
            cmd = self.device.read()
        except DeviceError as err:
            self.error = str(err)
            raise
        self._success |= cmd.success_pressed
        self._failure |= cmd.failure_pressed
        self._stop |= cmd.stop_pressed
        self._pauses += int(cmd.pause_pressed)
        return dataclasses.replace(cmd, success_pressed=False, failure_pressed=False, pause_pressed=False)

    def take_labels(self) -> InputCommand:
        """The label presses since the last call (two pauses in between cancel out)."""
        if self.error is not None:
            raise DeviceError(f"input device lost, labels cannot change: {self.error}")
        cmd = InputCommand(success_pressed=self._success, failure_pressed=self._failure,
                           pause_pressed=self._pauses % 2 == 1, stop_pressed=self._stop)
        self._success = self._failure = self._stop = False
        self._pauses = 0
        return cmd

    def close(self) -> None:
        self.device.close()


class _TappedLabels(InputDevice):
    """The label side of a :class:`LabelKeyTap`; closing it leaves the device to the intervention."""

    def __init__(self, tap: LabelKeyTap) -> None:
        self.tap = tap

    def read(self) -> InputCommand:
        return self.tap.take_labels()
