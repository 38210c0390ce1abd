"""What ``RobotEnv`` asks of a task, whether sim ground truth or a real-robot setup.

Contract:
* ``reset(rng)`` brings the scene to a new initial state and leaves the arm at rest at
  its start pose with the controller holding that pose (no jump on the first step).
  In sim that may be a teleport (the sim shortcut) or a scripted reset through the
  controller; on hardware it is a scripted reset plus, where needed, a human.
* ``task_state()`` is the privileged observation appended to proprioception in the
  ``state`` and ``both`` observation modes; its length ``state_dim`` never changes.
  Real tasks have none (``state_dim == 0``).
* ``success()`` says whether the current state counts as success: sim ground truth, or
  a learned reward classifier on hardware.
"""

from __future__ import annotations

import abc

import numpy as np


class EpisodeTask(abc.ABC):
    state_dim: int = 0

    @abc.abstractmethod
    def reset(self, rng: np.random.Generator) -> None:
        """Prepare a new episode."""

    def task_state(self) -> np.ndarray:
        """Privileged task observation (empty when the task has none)."""
        return np.zeros(0, dtype=np.float32)

    def start_gripper(self) -> float:
        """The gripper opening the task starts with (and reset leaves the gripper at)."""
        return 1.0

    @abc.abstractmethod
    def success(self) -> bool:
        """Whether the task is accomplished now."""
