"""Where a recorded frame's label comes from: sim ground truth, or a person's keys.

Contract: ``start_episode()`` after each reset; then ``read(env)`` once per frame returns
a :class:`Label`. ``Label.success`` is ``None`` for a frame that must not be recorded
(paused); ``Label.stop`` ends the recording. The recorder does not know which source it
has, so the key path on hardware is the same code the sim tests run.
"""

from __future__ import annotations

import abc
import logging
from dataclasses import dataclass

import gymnasium as gym

from robot_rl.interfaces import InputDevice

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
