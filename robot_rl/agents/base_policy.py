"""Base policies: a policy someone already has, which RL is to improve, behind one interface.

A :class:`BasePolicy` has ``act(obs) -> action`` (one action in the task's action space,
on its mean: a base policy is not sampled), ``reset()`` at each episode start, and the
``observation_space`` and ``action_space`` it acts in; ``source`` names where it came
from (a checkpoint file or an entry point) for every message about it.

Two kinds here, and the loaders that make them:

* :class:`ChunkedPolicy`: a predictor of ``(L, n)`` action chunks, executed with ACT's
  temporal ensembling (:class:`TemporalEnsemble`). A BC network with ``bc.chunk: 1`` is
  the special case L = 1 (the ensemble of one chunk is its action).
* :class:`CallablePolicy`: anything with ``act(obs)`` (an RL checkpoint's actor on its
  mean, an adapter around another stack's policy).
* :func:`load_entry_point` (``module:factory``): the factory is called with the
  observation and action spaces and returns an object with ``act(obs) -> action`` or
  ``act_chunk(obs) -> (L, n)`` (and optionally ``reset()``, ``observation_space``,
  ``action_space``). This is the hook an adapter for a LeRobot policy plugs into.
  Checkpoints are loaded by :mod:`robot_rl.training.base_loader`.

A base policy is refused at load, in one :class:`BasePolicyError` line naming its source,
when it declares other spaces, or when :func:`check_base` (the project's policy check,
:func:`robot_rl.agents.policy_check.policy_problem`, on observations sampled from the
space and recorded ones) sees it fail, give non-finite actions or actions outside the
action space. At run time the actor puts :class:`~robot_rl.agents.policy_check.ActionGuard`
in front of it (:meth:`BasePolicy.guarded`): a refused action becomes the hold action and
is counted, and the episode goes on.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable, Iterable, Mapping

import gymnasium as gym
import numpy as np

from robot_rl.agents.policy_check import ActionGuard, action_problem, policy_problem
from robot_rl.data.spaces import spaces_spec, spec_mismatch
from robot_rl.errors import RobotRLError, one_line

Obs = Mapping[str, np.ndarray]

#: ``package.module:factory`` (the factory may be an attribute path, ``module:Class.build``).
ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class BasePolicyError(RobotRLError):
    """A base policy cannot be loaded or must not act (one line naming its source)."""


class TemporalEnsemble:
    """ACT's temporal ensembling of overlapping action chunks.

    Each step a new chunk is predicted; row ``k`` of the chunk predicted at step ``s`` is
    that prediction's action for step ``s + k``. The action executed at step ``t`` is
    the weighted mean of every live prediction for ``t``, with weight ``exp(-decay * i)``
    where ``i = 0`` is the oldest (ACT, Zhao et al. 2023, eq. in sec. 3.3: the older
    plans count most, which keeps the motion smooth; ``decay = 0`` is a plain average).
    A chunk holding NaN or inf poisons the action of the step it arrives in (so the
    actor's guard holds and counts it) and is then dropped, so it costs that one step.
    """

    def __init__(self, decay: float) -> None:
        if not np.isfinite(decay) or decay < 0:
            raise ValueError(f"ensemble decay must be finite and >= 0, got {decay}")
        self.decay = float(decay)
        self._live: list[tuple[np.ndarray, int]] = []  # (chunk, its age in steps), oldest first

    def reset(self) -> None:
        self._live = []

    def __len__(self) -> int:
        return len(self._live)

    def step(self, chunk: np.ndarray) -> np.ndarray:
        """Add the chunk predicted now; the action to execute now."""
        chunk = np.asarray(chunk, np.float64)
        self._live.append((chunk, 0))
        rows = np.stack([c[age] for c, age in self._live])
        weights = np.exp(-self.decay * np.arange(len(rows)))
        action = (weights[:, None] * rows).sum(0) / weights.sum()
        self._live = [(c, age + 1) for c, age in self._live if age + 1 < len(c) and np.isfinite(c).all()]
        return action.astype(np.float32)


class BasePolicy:
    """The interface (see the module docstring); subclasses implement :meth:`act`."""

    def __init__(self, source: str, observation_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> None:
        self.source = source
        self.observation_space = observation_space
        self.action_space = action_space

    def act(self, obs: Obs, deterministic: bool = True) -> np.ndarray:
        """One action for ``obs``. ``deterministic`` is accepted so that a base policy stands
        wherever a learned one does (evaluation asks for the mean); a base policy always acts on it."""
        raise NotImplementedError

    def reset(self) -> None:
        """A new episode starts."""

    def check_output(self, obs: Obs) -> Any:
        """What :func:`check_base` runs on one observation, from a fresh episode."""
        self.reset()
        return self.act(obs)

    def guarded(self, env: gym.Env) -> ActionGuard:
        """This policy behind the actor's guard: a refused action holds the arm and is counted."""
        return ActionGuard(env, self)

    def status(self) -> dict[str, Any]:
        """What the base reports about itself, for the actor's status and ``/diagnostics``: empty for
        one in the actor's process; a base in its own process (a LeRobot policy) gives its calls,
        failures and the round trip's latency, the figures a person watching a cell needs."""
        return {}


class CallablePolicy(BasePolicy):
    """A base policy from an ``act(obs)`` callable (and an optional ``reset``)."""

    def __init__(self, act: Callable[[Obs], Any], source: str, observation_space: gym.spaces.Dict,
                 action_space: gym.spaces.Box, reset: Callable[[], Any] | None = None) -> None:
        super().__init__(source, observation_space, action_space)
        self._act = act
        self._reset = reset

    def act(self, obs: Obs, deterministic: bool = True) -> np.ndarray:
        return self._act(obs)

    def reset(self) -> None:
        if self._reset is not None:
            self._reset()


class ChunkedPolicy(BasePolicy):
    """A base policy from a chunk predictor ``obs -> (L, n)``, executed through :class:`TemporalEnsemble`."""

    def __init__(self, predict: Callable[[Obs], Any], source: str, observation_space: gym.spaces.Dict,
                 action_space: gym.spaces.Box, decay: float, reset: Callable[[], Any] | None = None) -> None:
        super().__init__(source, observation_space, action_space)
        self.predict = predict
        self.ensemble = TemporalEnsemble(decay)
        self._reset = reset

    def _chunk_problem(self, chunk: np.ndarray) -> bool:
        return chunk.ndim != len(self.action_space.shape) + 1 or chunk.shape[1:] != self.action_space.shape \
            or chunk.shape[0] < 1 or chunk.dtype.kind not in "fiu"

    def act(self, obs: Obs, deterministic: bool = True) -> np.ndarray:
        chunk = np.asarray(self.predict(obs))
        if self._chunk_problem(chunk):
            return chunk  # not a chunk of this space's actions: the guard refuses it and names its shape
        return self.ensemble.step(chunk)

    def reset(self) -> None:
        self.ensemble.reset()
        if self._reset is not None:
            self._reset()

    def check_output(self, obs: Obs) -> Any:
        """The first of the chunk's actions that cannot be sent, else its first: every row is
        checked (a bad row would reach the arm a few steps later)."""
        self.reset()
        chunk = np.asarray(self.predict(obs))
        if self._chunk_problem(chunk):
            return chunk
        return next((row for row in chunk if action_problem(row, self.action_space)), chunk[0])


def check_base(base: BasePolicy, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
               recorded: Iterable[Obs] = ()) -> None:
    """Refuse ``base`` for these spaces (one BasePolicyError line naming its source), or return.

    Spaces the policy declares must be the task's; then the policy is run on sampled and
    ``recorded`` observations (:func:`~robot_rl.agents.policy_check.policy_problem`).
    """
    mismatch = spec_mismatch(spaces_spec(base.observation_space, base.action_space),
                             spaces_spec(obs_space, action_space))
    if mismatch:
        raise BasePolicyError(f"base policy {base.source} was built for other spaces: {mismatch}")
    try:
        problem = policy_problem(base.check_output, obs_space, action_space, recorded=recorded)
    finally:
        base.reset()
    if problem:
        raise BasePolicyError(f"base policy {base.source}: {problem}")


def is_entry_point(text: str) -> bool:
    """Whether ``text`` reads as ``module:factory`` (a path that exists is never one)."""
    from pathlib import Path

    return bool(ENTRY_POINT.match(text)) and not Path(text).exists()


def load_entry_point(spec: str, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                     ensemble_decay: float = 0.01, recorded: Iterable[Obs] = ()) -> BasePolicy:
    """The base policy a ``module:factory`` entry point makes for these spaces, checked (see the module docstring)."""
    if not ENTRY_POINT.match(spec):
        raise BasePolicyError(f"base policy {spec!r}: not an entry point (write module:factory, "
                              "e.g. my_policies.act:make)")
    module_name, attr = spec.split(":")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as err:  # noqa: BLE001 - whatever the import raised, the entry point cannot be used
        raise BasePolicyError(f"base policy {spec}: cannot import {module_name} ({one_line(err)})") from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise BasePolicyError(f"base policy {spec}: {module_name} has no '{attr}'")
        target = getattr(target, part)
    if not callable(target):
        raise BasePolicyError(f"base policy {spec}: '{attr}' is not callable (a factory taking the observation "
                              "and action spaces)")
    try:
        made = target(obs_space, action_space)
    except Exception as err:  # noqa: BLE001 - a factory that fails gives no policy
        raise BasePolicyError(f"base policy {spec}: its factory raised {one_line(err)}") from None
    declared_obs = getattr(made, "observation_space", None)
    declared_act = getattr(made, "action_space", None)
    declared_obs = declared_obs if isinstance(declared_obs, gym.spaces.Dict) else obs_space
    declared_act = declared_act if isinstance(declared_act, gym.spaces.Box) else action_space
    reset = getattr(made, "reset", None)
    reset = reset if callable(reset) else None
    base: BasePolicy
    if callable(getattr(made, "act_chunk", None)):
        base = ChunkedPolicy(made.act_chunk, spec, declared_obs, declared_act, ensemble_decay, reset)
    elif callable(getattr(made, "act", None)):
        base = CallablePolicy(made.act, spec, declared_obs, declared_act, reset)
    else:
        raise BasePolicyError(f"base policy {spec}: its factory returned a {type(made).__name__}, which has no "
                              "act(obs) or act_chunk(obs)")
    check_base(base, obs_space, action_space, recorded)
    return base
