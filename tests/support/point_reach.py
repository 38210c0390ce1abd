"""A small point-mass env shaped like RobotEnv, for learner tests that must not wait for MuJoCo.

Observation: Dict with ``state`` (float32: position xy, goal xy, gripper closed flag)
and, when ``image_size`` is set, one uint8 camera ``front`` that draws the point and the
goal. Action: Box[-1, 1]^3 = (dx, dy, gripper) with the gripper as the last dim,
``> 0.5`` close, ``< -0.5`` open, else stay. Reward 1.0 and ``terminated`` when the point
is within 0.1 of the goal with the gripper closed; truncated after ``max_steps``.
``info["grasp_penalty"]`` is ``-penalty`` on steps that change the gripper.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class PointReach(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, image_size: int | None = None, max_steps: int = 30, penalty: float = 0.1,
                 goal_range: float = 0.6) -> None:
        spaces = {"state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)}
        if image_size:
            spaces["front"] = gym.spaces.Box(0, 255, (image_size, image_size, 3), np.uint8)
        self.observation_space = gym.spaces.Dict(spaces)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        self.image_size = image_size
        self.max_steps = max_steps
        self.penalty = penalty
        self.goal_range = goal_range

    def _obs(self) -> dict[str, np.ndarray]:
        obs = {"state": np.array([*self.pos, *self.goal, float(self.closed)], dtype=np.float32)}
        if self.image_size:
            img = np.zeros((self.image_size, self.image_size, 3), np.uint8)
            for xy, ch in ((self.goal, 1), (self.pos, 0)):
                r, c = ((np.clip(xy, -1, 1) + 1) / 2 * (self.image_size - 1)).round().astype(int)
                img[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2, ch] = 255
            obs["front"] = img
        return obs

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-0.8, 0.8, 2)
        self.goal = self.np_random.uniform(-self.goal_range, self.goal_range, 2)
        self.closed = False
        self.t = 0
        return self._obs(), {"success": False, "grasp_penalty": 0.0}

    def step(self, action):
        action = np.clip(np.asarray(action, dtype=np.float64), -1, 1)
        self.pos = np.clip(self.pos + 0.15 * action[:2], -1, 1)
        was = self.closed
        if action[2] > 0.5:
            self.closed = True
        elif action[2] < -0.5:
            self.closed = False
        self.t += 1
        success = bool(np.linalg.norm(self.pos - self.goal) < 0.1 and self.closed)
        info = {"success": success, "grasp_penalty": -self.penalty if was != self.closed else 0.0}
        return self._obs(), float(success), success, self.t >= self.max_steps and not success, info


class PointExpert:
    """Moves straight to the goal, closes the gripper when near it."""

    def __init__(self, env: gym.Env) -> None:
        self.env = env

    def act(self, obs):
        s = obs["state"]
        delta = (s[2:4] - s[0:2]) / 0.15
        near = np.linalg.norm(s[2:4] - s[0:2]) < 0.2
        return np.array([*np.clip(delta, -1, 1), 1.0 if near else -1.0], dtype=np.float32)


def make_point_env(cfg=None, image_size: int | None = None, max_steps: int = 30) -> gym.Env:
    return gym.wrappers.TimeLimit(PointReach(image_size=image_size, max_steps=max_steps), max_steps)
