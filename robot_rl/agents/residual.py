"""Residual RL on the actor's side: the base policy's action plus a bounded learned residual.

The executed action is ``clip(base + scale * u, low, high)`` where ``u`` is the SAC actor's
tanh-squashed output in ``[-1, 1]`` and ``scale`` the largest residual per action dimension
(``agent.residual.scale``, in the action's own units). The actor sees the base action as
the observation key :data:`BASE_ACTION_KEY` (added by :class:`ResidualEnv`), so the replay
buffers store it beside the observation and the critic sees it too; the agent's action,
stored in the buffers, is ``u``, and the critic is trained on the executed action it
stands for (:func:`combine_torch`, in :class:`~robot_rl.agents.sac.SACAgent`).

Everything the actor does lives here, in :class:`ResidualActor`, so that the single-process
trainer, an actor process and the actor node can all run it the same way:

* the base acts behind the project's :class:`~robot_rl.agents.policy_check.ActionGuard`: a
  non-finite or out-of-space base action holds the arm (zero motion, gripper kept), is
  counted, and the residual is not added to it;
* a residual that is not finite holds the arm too (a second guard counts it); a finite one
  beyond ``[-1, 1]`` is clipped, so the executed action never leaves ``base +- scale`` nor
  the action space;
* whenever the executed action is not ``combine(base, u)`` (a person took over, or the arm
  held), the stored ``u`` is what the residual would have had to be, clipped to the scale:
  ``clip(executed - base, -scale, scale) / scale`` (0 where the scale is 0). So a person's
  corrections teach the residual, and the critic is never told an action that was not taken
  when one within reach was.

The base runs where the actor runs, never on the learner: the learner needs only
``scale`` (from the config) and the stored base action.
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.base_policy import BasePolicy
from robot_rl.agents.policy_check import ActionGuard
from robot_rl.data.rollout import AGENT_ACTION_KEY

#: The observation key that carries the base policy's action to the actor and the critic.
BASE_ACTION_KEY = "base_action"


Obs = Mapping[str, np.ndarray]


def scale_vector(scale: float | tuple[float, ...] | list[float] | np.ndarray, action_dim: int) -> np.ndarray:
    """``agent.residual.scale`` as one float32 value per action dimension (ValueError when it cannot be)."""
    value = np.asarray(scale, np.float64)
    if value.ndim == 0:
        value = np.full(action_dim, float(value))
    if value.shape != (action_dim,):
        raise ValueError(f"residual scale has {value.size} values for {action_dim} action dimensions")
    if not np.isfinite(value).all() or (value < 0).any() or (value > 1).any():
        raise ValueError(f"residual scale must be finite and within [0, 1], got {value.tolist()}")
    return value.astype(np.float32)


def combine(base: np.ndarray, u: np.ndarray, scale: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``clip(clip(base) + scale * clip(u, -1, 1), low, high)`` for finite ``u`` (float32)."""
    base = np.clip(np.asarray(base, np.float64), low, high)
    residual = scale * np.clip(np.asarray(u, np.float64), -1.0, 1.0)
    return np.clip(base + residual, low, high).astype(np.float32)


def residual_target(base: np.ndarray, executed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The ``u`` closest to ``executed``: ``clip(executed - base, -scale, scale) / scale`` (0 where the scale is 0)."""
    delta = np.clip(np.asarray(executed, np.float64) - np.asarray(base, np.float64), -scale, scale)
    u = np.divide(delta, scale, out=np.zeros_like(delta), where=scale > 0)
    return np.clip(u, -1.0, 1.0).astype(np.float32)


def combine_torch(base: torch.Tensor, u: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """:func:`combine` on torch tensors, for the agent's ``[-1, 1]`` action box (differentiable in ``u``)."""
    return (base.clamp(-1.0, 1.0) + scale * u.clamp(-1.0, 1.0)).clamp(-1.0, 1.0)


@torch.no_grad()
def zero_residual(policy: torch.nn.Module) -> None:
    """A residual actor starts at no residual: its mean layer is zero, so its mode acts as the base."""
    policy.actor_head.mean.weight.zero_()
    policy.actor_head.mean.bias.zero_()


class ResidualActor:
    """The actor-side combination of a base policy and a residual (see the module docstring).

    ``env`` is the env the executed actions go to (for the hold action and the bounds).
    Per step: :meth:`base_action` on the observation, then :meth:`execute` with the agent's
    ``u``, then :meth:`stored` with what was actually executed.
    """

    def __init__(self, base: BasePolicy, env: gym.Env, scale: np.ndarray) -> None:
        self.base = base
        self.env = env
        space = env.action_space
        self.low = np.asarray(space.low, np.float64)
        self.high = np.asarray(space.high, np.float64)
        self.scale = scale_vector(scale, int(np.prod(space.shape)))
        self.base_guard = ActionGuard(env, base)  # a refused base action holds the arm, counted
        self.residual_guard = ActionGuard(env)  # a non-finite residual holds the arm, counted
        self.base_held = False  # the last base action was refused

    def reset(self) -> None:
        """A new episode: the base (a chunked one clears its ensemble) and the guards' episode counts."""
        self.base_guard.reset()
        self.residual_guard.reset()

    def base_action(self, obs: Obs) -> np.ndarray:
        """The base's action for ``obs`` (the hold action when the guard refuses it), float32."""
        action = self.base_guard.act(obs)
        self.base_held = self.base_guard.holding
        return np.asarray(action, np.float32)

    def execute(self, base_action: np.ndarray, u: Any) -> np.ndarray:
        """The action to send: the hold action when the base was refused or ``u`` is not finite,
        else :func:`combine`."""
        if self.base_held:
            return np.asarray(base_action, np.float32)  # the hold action: nothing is added to it
        try:
            raw = np.asarray(u, np.float64)
        except (TypeError, ValueError):
            raw = np.full(self.scale.shape, np.nan)
        if raw.shape == self.scale.shape:
            raw = np.where(np.isfinite(raw), np.clip(raw, -1.0, 1.0), raw)  # huge: clipped; NaN/inf: refused
        checked = self.residual_guard.checked(raw)
        if self.residual_guard.holding:
            return np.asarray(checked, np.float32)
        return combine(base_action, checked, self.scale, self.low, self.high)

    def stored(self, base_action: np.ndarray, executed: np.ndarray) -> np.ndarray:
        """The agent's action to store for a step that executed ``executed`` (see :func:`residual_target`)."""
        return residual_target(base_action, executed, self.scale)

    def status(self) -> dict[str, Any]:
        """The refusals of both guards, and the base's own report (``base_policy``) where it gives one."""
        own = self.base.status()
        return {"base_refused": self.base_guard.refused, "residual_refused": self.residual_guard.refused,
                "holding": self.base_guard.holding or self.residual_guard.holding,
                "last_refused_base_action": self.base_guard.last_problem,
                **({"base_policy": own} if own else {})}


def with_base_action(obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> gym.spaces.Dict:
    """``obs_space`` with :data:`BASE_ACTION_KEY`, a box like the action space."""
    if BASE_ACTION_KEY in obs_space.spaces:
        raise ValueError(f"the observation already has a '{BASE_ACTION_KEY}' key")
    box = gym.spaces.Box(np.asarray(action_space.low, np.float32), np.asarray(action_space.high, np.float32),
                         action_space.shape, np.float32)
    return gym.spaces.Dict({**obs_space.spaces, BASE_ACTION_KEY: box})


class ResidualEnv(gym.Wrapper):
    """The env as the residual agent sees it: observations carry the base action, actions are ``u``.

    Outermost (outside :class:`~robot_rl.envs.intervention.HumanIntervention`): a person's
    action comes back in ``info["intervene_action"]`` and is replaced there by its stored
    ``u`` (:meth:`ResidualActor.stored`), as is any step that held (``info["agent_action"]``).
    ``info["residual"]`` holds :meth:`ResidualActor.status` at each episode's end.
    """

    def __init__(self, env: gym.Env, actor: ResidualActor) -> None:
        super().__init__(env)
        self.actor = actor
        self.observation_space = with_base_action(env.observation_space, env.action_space)
        self._base: np.ndarray | None = None

    def _observe(self, obs: Obs) -> dict[str, np.ndarray]:
        self._base = self.actor.base_action(obs)
        return {**obs, BASE_ACTION_KEY: self._base}

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self.actor.reset()
        return self._observe(obs), info

    def step(self, action: Any):
        if self._base is None:
            raise RuntimeError("ResidualEnv.step before reset")
        base = self._base
        executed = self.actor.execute(base, action)
        obs, reward, terminated, truncated, info = self.env.step(executed)
        info = dict(info)
        if "intervene_action" in info:
            info["intervene_action"] = self.actor.stored(base, info["intervene_action"])
        elif self.actor.base_held or self.actor.residual_guard.holding:
            info[AGENT_ACTION_KEY] = self.actor.stored(base, executed)
        if terminated or truncated:
            info["residual"] = self.actor.status()
        return self._observe(obs), reward, terminated, truncated, info
