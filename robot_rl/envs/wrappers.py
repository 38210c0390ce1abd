"""Composable wrappers around RobotEnv, chosen from the config by :func:`wrap_env`.

Order, inside out: RelativeFrame → ProprioKeys → GripperPenalty → CropResize → ActiveDims → TimeLimit.
Wrappers that change the action space implement ``action_to_outer(action)``, the inverse
of their ``action`` mapping, so that code producing full 7-D actions (scripted experts,
reset routines, human input) can express them in the policy's action space with
:func:`outer_action`.
"""

from __future__ import annotations

from typing import Any

import cv2
import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.control.transforms import quat_conj, quat_mul, quat_to_mat
from robot_rl.envs.robot_env import ACTION_DIMS, PROPRIO_DIM, PROPRIO_LAYOUT


class RelativeFrame(gym.Wrapper):
    """Proprioception and actions in the frame of the episode's reset pose.

    The TCP pose becomes the offset from the reset pose, expressed in the reset pose's
    frame; twists and wrenches are rotated into that frame; actions are rotated back.
    A policy then sees the same numbers whatever the (perturbed) reset pose, as in
    HIL-SERL's relative-frame wrapper. The task's privileged state is left as it is.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._p0 = np.zeros(3)
        self._q0 = np.array([1.0, 0.0, 0.0, 0.0])
        self._r0 = np.eye(3)

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._p0, self._q0 = self.env.unwrapped.reset_pose
        self._r0 = quat_to_mat(self._q0)
        return self._transform(obs), info

    def step(self, action: np.ndarray):
        obs, reward, terminated, truncated, info = self.env.step(self.action(action))
        return self._transform(obs), reward, terminated, truncated, info

    def action(self, action: np.ndarray) -> np.ndarray:
        a = np.array(action, dtype=np.float64)
        a[0:3] = self._r0 @ a[0:3]
        a[3:6] = self._r0 @ a[3:6]
        return a

    def action_to_outer(self, action: np.ndarray) -> np.ndarray:
        a = np.array(action, dtype=np.float64)
        a[0:3] = self._r0.T @ a[0:3]
        a[3:6] = self._r0.T @ a[3:6]
        return a

    def _transform(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        s = obs["state"].astype(np.float64)
        rt = self._r0.T

        def sl(name: str) -> slice:
            return slice(*PROPRIO_LAYOUT[name])

        s[sl("tcp_pos")] = rt @ (s[sl("tcp_pos")] - self._p0)
        q = quat_mul(quat_conj(self._q0), s[sl("tcp_quat")])
        s[sl("tcp_quat")] = q if q[0] >= 0 else -q
        tw, wr = sl("tcp_twist"), sl("tcp_wrench")
        s[tw.start:tw.start + 3] = rt @ s[tw.start:tw.start + 3]
        s[tw.start + 3:tw.stop] = rt @ s[tw.start + 3:tw.stop]
        s[wr.start:wr.start + 3] = rt @ s[wr.start:wr.start + 3]
        s[wr.start + 3:wr.stop] = rt @ s[wr.start + 3:wr.stop]
        return {**obs, "state": s.astype(np.float32)}


class ProprioKeys(gym.ObservationWrapper):
    """Only the named proprioception entries of ``state`` (a real-only task's ``task.params.proprio``).

    The kept entries are concatenated in the order named; the task's privileged state
    after the proprioception (none on a real cell) is kept as it is.
    """

    def __init__(self, env: gym.Env, keys: list[str]) -> None:
        super().__init__(env)
        self.keys = list(keys)
        self.index = np.concatenate([np.arange(*PROPRIO_LAYOUT[k]) for k in self.keys])
        total = env.observation_space["state"].shape[0]
        self.index = np.concatenate([self.index, np.arange(PROPRIO_DIM, total)]).astype(np.int64)
        spaces = dict(env.observation_space.spaces)
        spaces["state"] = gym.spaces.Box(-np.inf, np.inf, (len(self.index),), dtype=np.float32)
        self.observation_space = gym.spaces.Dict(spaces)

    def observation(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {**obs, "state": np.asarray(obs["state"])[self.index]}


class GripperPenalty(gym.Wrapper):
    """``info["grasp_penalty"]``: ``-penalty`` on steps whose action toggles the gripper.

    It goes only into the discrete gripper critic's reward, so the policy learns not to
    chatter the gripper without shaping the task reward. Always present (0.0 otherwise).
    """

    def __init__(self, env: gym.Env, penalty: float) -> None:
        super().__init__(env)
        self.penalty = float(penalty)
        self._gripper = 1.0

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._gripper = self.env.unwrapped.task.start_gripper()
        info["grasp_penalty"] = 0.0
        return obs, info

    def step(self, action: np.ndarray):
        obs, reward, terminated, truncated, info = self.env.step(action)
        target = info.get("gripper_target", self._gripper)
        info["grasp_penalty"] = -self.penalty if target != self._gripper else 0.0
        self._gripper = target
        return obs, reward, terminated, truncated, info


class CropResize(gym.ObservationWrapper):
    """Per-camera crop (x0, y0, x1, y1 in native pixels) then resize to (width, height)."""

    def __init__(self, env: gym.Env,
                 crops: dict[str, tuple[tuple[int, int, int, int] | None, tuple[int, int] | None]]) -> None:
        super().__init__(env)
        self.crops = crops
        spaces = dict(env.observation_space.spaces)
        for name, (crop, size) in crops.items():
            h, w = spaces[name].shape[:2]
            if crop is not None:
                w, h = crop[2] - crop[0], crop[3] - crop[1]
            if size is not None:
                w, h = size
            spaces[name] = gym.spaces.Box(0, 255, (h, w, 3), dtype=np.uint8)
        self.observation_space = gym.spaces.Dict(spaces)

    def observation(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = dict(obs)
        for name, (crop, size) in self.crops.items():
            image = obs[name]
            if crop is not None:
                x0, y0, x1, y1 = crop
                image = image[y0:y1, x0:x1]
            if size is not None and (image.shape[1], image.shape[0]) != tuple(size):
                image = cv2.resize(image, tuple(size), interpolation=cv2.INTER_AREA)
            out[name] = np.ascontiguousarray(image)
        return out


class ActiveDims(gym.ActionWrapper):
    """Expose only some action dimensions (e.g. x y z gripper); the rest are held at 0.

    A 0 rotation keeps the orientation, a 0 gripper keeps the gripper as it is.
    """

    def __init__(self, env: gym.Env, active: list[str]) -> None:
        super().__init__(env)
        self.index = np.array([ACTION_DIMS.index(d) for d in ACTION_DIMS if d in active])
        self.names = [ACTION_DIMS[i] for i in self.index]
        self.action_space = gym.spaces.Box(-1.0, 1.0, (len(self.index),), dtype=np.float32)

    def action(self, action: np.ndarray) -> np.ndarray:
        full = np.zeros(len(ACTION_DIMS))
        full[self.index] = np.asarray(action, dtype=np.float64).reshape(-1)
        return full

    def action_to_outer(self, action: np.ndarray) -> np.ndarray:
        return np.asarray(action, dtype=np.float64)[self.index]


def wrap_env(env: gym.Env, cfg: Config) -> gym.Env:
    """Apply the wrappers the config asks for, in the documented order."""
    if cfg.env.relative_pose:
        env = RelativeFrame(env)
    proprio = getattr(cfg.task.params, "proprio", None)  # a real-only task names what the policy sees
    if proprio:
        env = ProprioKeys(env, list(proprio))
    env = GripperPenalty(env, cfg.env.gripper_penalty)
    cams = env.unwrapped.camera_names
    crops = {n: (cfg.cameras[n].crop, cfg.cameras[n].resize) for n in cams
             if cfg.cameras[n].crop is not None or cfg.cameras[n].resize is not None}
    if crops:
        env = CropResize(env, crops)
    if list(cfg.env.active_dims) != list(ACTION_DIMS):
        env = ActiveDims(env, list(cfg.env.active_dims))
    return gym.wrappers.TimeLimit(env, max_episode_steps=cfg.env.max_episode_steps)


def wrapped_in(env: gym.Env, cls: type) -> bool:
    """Whether ``env`` or any wrapper inside it is a ``cls`` (the outermost one may be a viewer)."""
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, cls):
            return True
        layer = layer.env
    return isinstance(layer, cls)


def outer_action(env: gym.Env, full_action: np.ndarray) -> np.ndarray:
    """Express a 7-D base-frame RobotEnv action in ``env``'s (outermost) action space."""
    chain = []
    layer = env
    while isinstance(layer, gym.Wrapper):
        chain.append(layer)
        layer = layer.env
    a = np.asarray(full_action, dtype=np.float64)
    for wrapper in reversed(chain):
        to_outer = getattr(wrapper, "action_to_outer", None)
        if to_outer is not None:
            a = to_outer(a)
    return np.clip(a, -1.0, 1.0).astype(np.float32)
