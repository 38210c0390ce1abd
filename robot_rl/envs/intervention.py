"""Human in the loop: a person (or the simulated intervener) takes over from the policy.

:class:`HumanIntervention` is the outermost wrapper of an actor's env. Each step it
reads the :class:`~robot_rl.interfaces.InputDevice` once:

* while the device says ``intervene``, its twist and gripper request replace the
  policy's action; the step's ``info`` carries ``intervened=True`` and
  ``intervene_action`` (the executed action, in the policy's action space), so the
  transition goes to both the online and the demonstration buffers;
* the gripper button toggles (or sets) the gripper; pause holds the arm until pause is
  pressed again; success and failure end the episode with that label; stop ends it
  and sets ``info["stop"]`` so the actor loop shuts down;
* with ``intervention.penalty > 0`` (RLIF), the step on which the human takes over
  costs that much reward.

At the end of each episode ``info`` holds ``episode_interventions`` (takeovers),
``episode_intervention_steps`` and ``intervention_rate``.

A device that disappears mid-episode (``DeviceError``) ends the intervention: the
policy resumes, one warning is logged, and the episode and its data carry on
(:class:`~robot_rl.envs.inputs.FailSafeInput`).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.envs.inputs import FailSafeInput
from robot_rl.envs.wrappers import outer_action
from robot_rl.interfaces import InputCommand, InputDevice

log = logging.getLogger("robot_rl.intervention")


def command_gripper(cmd: InputCommand, current_target: float) -> float:
    """The gripper action value (+1 close, -1 open, 0 keep) an input command asks for."""
    if cmd.close_gripper is not None:
        return 1.0 if cmd.close_gripper else -1.0
    if cmd.gripper_toggle_pressed:
        return 1.0 if current_target > 0.5 else -1.0
    return 0.0


class HumanIntervention(gym.Wrapper):
    """Replace the policy's action with the human's while they intervene (see module doc)."""

    def __init__(self, env: gym.Env, device: InputDevice, penalty: float = 0.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(env)
        self.device = device if isinstance(device, FailSafeInput) else FailSafeInput(device)
        self.penalty = float(penalty)
        self._sleep = sleep
        self._last_obs: dict[str, np.ndarray] | None = None
        self._was_intervening = False
        self._reset_counts()

    def _reset_counts(self) -> None:
        self.episode_interventions = 0
        self.episode_intervention_steps = 0
        self.episode_steps = 0

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        self._was_intervening = False
        self._reset_counts()
        info["intervened"] = False
        return obs, info

    def step(self, action: np.ndarray):
        cmd = self.device.read()
        if cmd.pause_pressed:
            cmd = self._pause()
        if cmd.stop_pressed:
            return self._stop()
        base = self.env.unwrapped
        grip = command_gripper(cmd, base.gripper_command)
        # Touching the gripper control is taking over too: that step's action is the human's.
        intervening = cmd.intervene or cmd.close_gripper is not None or cmd.gripper_toggle_pressed
        if intervening:
            full = np.concatenate([np.clip(cmd.twist, -1.0, 1.0), [grip]])
            action = outer_action(self.env, full)
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._last_obs = obs
        self.episode_steps += 1
        info["intervened"] = bool(intervening)
        if intervening:
            info["intervene_action"] = np.asarray(action, dtype=np.float32)
            self.episode_intervention_steps += 1
            if not self._was_intervening:
                self.episode_interventions += 1
                reward -= self.penalty
        self._was_intervening = bool(intervening)
        if cmd.success_pressed:
            terminated, reward = True, 1.0
            info["success"], info["human_label"] = True, "success"
        elif cmd.failure_pressed:
            truncated = True
            info["success"], info["human_label"] = False, "failure"
        if self.device.lost:
            info["input_device_lost"] = self.device.error
        if terminated or truncated:
            self._episode_summary(info)
        return obs, reward, terminated, truncated, info

    def _episode_summary(self, info: dict) -> None:
        info["episode_interventions"] = self.episode_interventions
        info["episode_intervention_steps"] = self.episode_intervention_steps
        info["intervention_rate"] = self.episode_intervention_steps / max(1, self.episode_steps)

    def _pause(self) -> InputCommand:
        """Hold the arm until pause (or stop) is pressed again; return that command."""
        log.info("paused: the arm holds its pose; press pause again to resume")
        robot = self.env.unwrapped.robot
        while True:
            robot.hold()
            self._sleep(0.05)
            cmd = self.device.read()
            if cmd.stop_pressed or self.device.lost:
                return cmd
            if cmd.pause_pressed:
                log.info("resumed")
                return InputCommand()

    def _stop(self):
        """End the episode where it is: the arm holds, and ``info["stop"]`` tells the loop."""
        self.env.unwrapped.robot.hold()
        info = {"stop": True, "success": False, "intervened": False, "human_label": "stop"}
        self._episode_summary(info)
        return self._last_obs, 0.0, False, True, info

    def close(self) -> None:
        self.device.close()
        super().close()
