"""Any registered gymnasium env as the env robot_rl learns in (``env.gym_id``).

robot_rl's agents see a dict of observations (vectors and uint8 HxWx3 camera images) and act
in a Box in ``[-1, 1]``. :class:`GymEnv` makes a registered env look like that:

* **observations**, by ``env.gym_obs``: robot_rl's key -> the paths in the env's observation
  it is made of (``agent_pos``, ``pixels/front``; ``""`` for a Box observation as a whole).
  A camera key takes one uint8 HxWx3 leaf as it is; a vector key concatenates its leaves,
  flattened, as float32. Without ``env.gym_obs``: each uint8 HxWx3 leaf is a camera named
  by its last path part, every other leaf goes into ``state`` (in path order).
* **actions**: ``[-1, 1]`` scaled linearly to the env's finite Box bounds (larger values
  clipped first; a non-finite action or one of another shape is a ValueError, as in RobotEnv).
* **success**: ``info["success"]`` is the env's ``success``, else its ``is_success``
  (gymnasium-robotics), else its ``succeed`` (gym-hil), else false (robot_rl's evaluation counts it).
* **episode length**: ``env.max_episode_steps``, passed to ``gymnasium.make``.

``env.gym_kwargs`` go to ``gymnasium.make``. An id that is not registered, an env that does
not build, spaces that cannot be mapped (a Discrete action, a path that is not there, an
image mixed into a vector): one :class:`~robot_rl.errors.ConfigError` line naming the key.
"""

from __future__ import annotations

import difflib
from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl.errors import ConfigError, one_line

#: The info keys envs report success under, in the order they are looked for.
SUCCESS_KEYS = ("success", "is_success", "succeed")


def _leaves(space: gym.Space, prefix: str = "") -> dict[str, gym.Space]:
    """Every non-Dict part of ``space`` by its ``a/b`` path (``""`` for a space that is not a Dict)."""
    if not isinstance(space, gym.spaces.Dict):
        return {prefix: space}
    out: dict[str, gym.Space] = {}
    for name, sub in space.spaces.items():
        out.update(_leaves(sub, f"{prefix}/{name}" if prefix else str(name)))
    return out


def _is_image(space: gym.Space) -> bool:
    return isinstance(space, gym.spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3 \
        and space.shape[2] == 3


def default_map(space: gym.Space) -> dict[str, list[str]]:
    """Cameras by their last path part, everything else into ``state``."""
    out: dict[str, list[str]] = {}
    for path, leaf in _leaves(space).items():
        if _is_image(leaf):
            name = path.rsplit("/", 1)[-1] or "front"
            out[name if name not in out and name != "state" else path.replace("/", "_")] = [path]
        else:
            out.setdefault("state", []).append(path)
    return out


def observation_space(space: gym.Space, mapping: dict[str, list[str]], where: str) -> gym.spaces.Dict:
    """robot_rl's observation space for ``mapping``; one-line errors naming ``where.<key>``."""
    leaves = _leaves(space)
    out: dict[str, gym.Space] = {}
    for key, paths in mapping.items():
        if not paths:
            raise ConfigError(f"{where}.{key}: names no part of the observation")
        for path in paths:
            if path not in leaves:
                raise ConfigError(f"{where}.{key}: '{path}' is not in the env's observation (it has "
                                  f"{sorted(leaves)})")
            leaf = leaves[path]
            if not isinstance(leaf, gym.spaces.Box) or not np.issubdtype(leaf.dtype, np.number):
                raise ConfigError(f"{where}.{key}: '{path}' is {leaf}, not a Box of numbers")
        parts = [leaves[p] for p in paths]
        if any(_is_image(p) for p in parts):
            if len(parts) != 1:
                raise ConfigError(f"{where}.{key}: a camera image ('{paths[0]}') takes a key of its own")
            out[key] = gym.spaces.Box(0, 255, parts[0].shape, np.uint8)
            continue
        size = sum(int(np.prod(p.shape)) for p in parts)
        low = np.concatenate([np.asarray(p.low, np.float64).ravel() for p in parts]).astype(np.float32)
        high = np.concatenate([np.asarray(p.high, np.float64).ravel() for p in parts]).astype(np.float32)
        out[key] = gym.spaces.Box(low, high, (size,), np.float32)
    if not out:
        raise ConfigError(f"{where}: maps no observation key")
    return gym.spaces.Dict(out)


def _get(obs: Any, path: str) -> np.ndarray:
    for part in path.split("/") if path else []:
        obs = obs[part]
    return np.asarray(obs)


class GymEnv(gym.Wrapper):
    """A registered gymnasium env with robot_rl's observation, action and success (module docstring)."""

    def __init__(self, env: gym.Env, mapping: dict[str, list[str]], where: str = "env.gym_obs") -> None:
        super().__init__(env)
        action = env.action_space
        if not isinstance(action, gym.spaces.Box) or len(action.shape) != 1 \
                or not (np.isfinite(action.low).all() and np.isfinite(action.high).all()):
            raise ConfigError(f"env.gym_id: the env's action space {action} cannot be mapped: robot_rl acts in a "
                              "1-D Box with finite bounds")
        self.mapping = {k: list(v) for k, v in mapping.items()}
        self.observation_space = observation_space(env.observation_space, self.mapping, where)
        self.action_space = gym.spaces.Box(-1.0, 1.0, action.shape, np.float32)
        self._low = np.asarray(action.low, np.float64)
        self._high = np.asarray(action.high, np.float64)
        self._action_dtype = action.dtype

    def observation(self, obs: Any) -> dict[str, np.ndarray]:
        out = {}
        for key, space in self.observation_space.spaces.items():
            paths = self.mapping[key]
            if space.dtype == np.uint8:
                out[key] = np.ascontiguousarray(_get(obs, paths[0]), dtype=np.uint8)
            else:
                out[key] = np.concatenate([_get(obs, p).astype(np.float32).ravel() for p in paths])
        return out

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        return self.observation(obs), info

    def step(self, action: Any):
        a = np.asarray(action, np.float64)
        if a.shape != self.action_space.shape or not np.all(np.isfinite(a)):  # as RobotEnv refuses them
            raise ValueError(f"action {a.tolist()} is not {self.action_space.shape[0]} finite numbers")
        a = np.clip(a, -1.0, 1.0)
        scaled = self._low + (a + 1.0) * 0.5 * (self._high - self._low)
        obs, reward, terminated, truncated, info = self.env.step(scaled.astype(self._action_dtype))
        info = dict(info)
        info["success"] = bool(next((info[k] for k in SUCCESS_KEYS if k in info), False))
        return self.observation(obs), float(reward), bool(terminated), bool(truncated), info


def make_gym_env(gym_id: str, *, kwargs: dict[str, Any], obs_map: dict[str, list[str]] | None,
                 max_episode_steps: int, render_mode: str | None = None) -> GymEnv:
    """``gymnasium.make(gym_id)`` wrapped in :class:`GymEnv`; one-line errors naming ``env.gym_id``."""
    if gym_id not in gym.registry:
        near = difflib.get_close_matches(gym_id, list(gym.registry), n=3)
        hint = f" (did you mean {', '.join(near)}?)" if near else " (import the package that registers it first)"
        raise ConfigError(f"env.gym_id: '{gym_id}' is not a registered gymnasium env{hint}")
    try:
        env = gym.make(gym_id, render_mode=render_mode, max_episode_steps=max_episode_steps, **kwargs)
    except Exception as err:  # whatever the env's own constructor raises, in one line naming the key
        raise ConfigError(f"env.gym_id: '{gym_id}' did not build with env.gym_kwargs {kwargs} "
                          f"({one_line(err)})") from None
    mapping = obs_map if obs_map is not None else default_map(env.observation_space)
    try:
        return GymEnv(env, mapping)
    except ConfigError:
        env.close()
        raise
