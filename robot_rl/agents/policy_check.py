"""What a loaded policy must pass before it acts, and what an actor does with a bad action.

A checkpoint whose every number is finite can still hold a policy that cannot act: a
state normalizer with a variance of -1 (the square root is NaN), weights scaled by 1e38
(the first matmul overflows), a bias of 1e30 (the action sits at the box edge whatever
it sees). Checking the numbers one by one misses these, so a loaded policy is *run*:

* :func:`policy_problem` takes any callable policy (``obs -> action``, or ``obs ->``
  :class:`Forward` when it can also show what it computed on the way), the task's
  observation space and its action space. It runs the policy on :data:`SAMPLES`
  observations sampled from the space (seeded, so the verdict is reproducible) and on
  up to :data:`RECORDED` recorded ones the caller has (demos, the run's replay, a
  reset's first observation). Every action must have the space's shape, be finite and
  lie in the space's bounds (up to :data:`ACTION_SLACK` of its range: float rounding,
  nothing more). A :class:`Forward` also gives values from inside the forward pass,
  which must all be finite, and the action before its final squash (``tanh``), which
  must stay within :data:`MAX_PRE_SQUASH`: a trained SAC mean sits within a few units of
  zero (``tanh(10)`` is already 1 in float32), so a mean beyond 1000 is weights or
  statistics no training produced, however clean the squashed action looks.
* :func:`network_problem` checks a :class:`~robot_rl.agents.policy.Policy` network:
  first its state normalizer's statistics directly (count finite and >= 0, mean finite,
  variance finite and >= 0, and not 0 in every dimension at once, which no recorded
  data gives: a single constant dimension is normal and the ``min_std`` floor covers
  it), then :func:`policy_problem` through :func:`network_forward`.

Both return the problem in words (None when the policy passes); the caller names the
file. A later base policy loaded from an entry point is checked by the same
:func:`policy_problem`, given its callable.

At run time a policy can still meet an observation that makes it give NaN.
:class:`ActionGuard` stands between the policy and the env: an action that
:func:`action_problem` refuses is replaced by the hold action (zero motion, the gripper
kept: the target is sent again unchanged), counted and logged, and the episode goes on.
"""

from __future__ import annotations

import copy
import logging
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

import gymnasium as gym
import numpy as np

from robot_rl.errors import one_line

log = logging.getLogger(__name__)

#: Observations sampled from the observation space per check.
SAMPLES = 8
#: At most this many recorded observations are run per check (the rest are not read).
RECORDED = 8
#: How far past its bounds an action may lie, as a fraction of the space's range (float rounding).
ACTION_SLACK = 1e-3
#: The largest magnitude allowed for an action before its final squash.
MAX_PRE_SQUASH = 1e3

Obs = Mapping[str, np.ndarray]


@dataclass
class Forward:
    """One observation's pass through a policy: the action and, when known, what led to it."""

    action: Any
    pre_squash: Any = None  # the action before the final tanh, bounded by MAX_PRE_SQUASH
    inside: dict[str, Any] = field(default_factory=dict)  # named values of the pass, each must be finite


ActFn = Callable[[Obs], Any]  # an action, or a Forward


def _number(value: float) -> str:
    return f"{value:.6g}"


def action_problem(action: Any, action_space: gym.spaces.Box) -> str | None:
    """Why ``action`` cannot be sent for ``action_space``, in words; None when it can."""
    try:
        a = np.asarray(action)
    except Exception as err:  # noqa: BLE001 - whatever the policy returned, it is not an action
        return f"an action that is not an array ({one_line(err)})"
    if a.dtype.kind not in "fiu":
        return f"an action of dtype {a.dtype} (not real numbers)"
    if a.shape != action_space.shape:
        return f"an action of shape {a.shape} (the action space's is {action_space.shape})"
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        return f"non-finite actions ({_values(a)})"
    low, high = np.asarray(action_space.low, np.float64), np.asarray(action_space.high, np.float64)
    slack = ACTION_SLACK * np.where(np.isfinite(high - low), high - low, 0.0)
    outside = (a < low - slack) | (a > high + slack)
    if outside.any():
        i = int(np.flatnonzero(outside.reshape(-1))[0])
        return (f"an action outside the action space ({_values(a)}: dimension {i} is "
                f"{_number(a.reshape(-1)[i])}, the space is [{_number(low.reshape(-1)[i])}, "
                f"{_number(high.reshape(-1)[i])}])")
    return None


def _values(a: np.ndarray, limit: int = 8) -> str:
    flat = a.reshape(-1)
    shown = ", ".join(_number(float(v)) for v in flat[:limit])
    return f"[{shown}{', ...' if flat.size > limit else ''}]"


def sample_observations(obs_space: gym.spaces.Dict, count: int = SAMPLES, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``count`` observations drawn from ``obs_space`` with their own seeded RNG (the space's is untouched).

    Bounded boxes are sampled uniformly (every pixel value of an image), unbounded
    dimensions from a standard normal, the scale of a normalised or metric state.
    """
    rng = np.random.default_rng(seed)
    out: list[dict[str, np.ndarray]] = []
    for _ in range(count):
        obs = {}
        for key, space in obs_space.spaces.items():
            if isinstance(space, gym.spaces.Box):
                obs[key] = _sample_box(space, rng)
            else:  # another kind of space: its own sampler, on a copy seeded from ours
                other = copy.deepcopy(space)
                other.seed(int(rng.integers(2**31)))
                obs[key] = other.sample()
        out.append(obs)
    return out


def _sample_box(space: gym.spaces.Box, rng: np.random.Generator) -> np.ndarray:
    low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    bounded = np.isfinite(low) & np.isfinite(high)
    if np.issubdtype(space.dtype, np.integer):
        low = np.where(bounded, low, 0.0)
        high = np.where(bounded, high, 255.0)
        return rng.integers(low.astype(np.int64), high.astype(np.int64) + 1, size=space.shape).astype(space.dtype)
    normal = rng.standard_normal(space.shape)
    uniform = rng.uniform(np.where(bounded, low, 0.0), np.where(bounded, high, 1.0), size=space.shape)
    value = np.where(bounded, uniform, normal)
    value = np.where(np.isfinite(low) & ~bounded, low + np.abs(normal), value)
    value = np.where(np.isfinite(high) & ~bounded, high - np.abs(normal), value)
    return value.astype(space.dtype)


def _fits(obs: Any, obs_space: gym.spaces.Dict) -> dict[str, np.ndarray] | None:
    """The keys of ``obs_space`` from a recorded observation, or None when it does not fit the space."""
    if not isinstance(obs, Mapping):
        return None
    out = {}
    for key, space in obs_space.spaces.items():
        value = obs.get(key)
        if value is None:
            return None
        value = np.asarray(value)
        if isinstance(space, gym.spaces.Box) and value.shape != space.shape:
            return None
        out[key] = value
    return out


def policy_problem(act: ActFn, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                   recorded: Iterable[Obs] = (), samples: int = SAMPLES, seed: int = 0) -> str | None:
    """Why the policy ``act`` must not act on this task, in words; None when it passes (see the module docstring).

    ``recorded``: observations seen on the task (read lazily, at most :data:`RECORDED`
    that fit the space); ``samples`` observations are sampled from ``obs_space`` with ``seed``.
    """
    fitting = (obs for obs in map(lambda o: _fits(o, obs_space), recorded) if obs is not None)
    batches: list[tuple[str, Iterable[Obs]]] = [("sampled observations", sample_observations(obs_space, samples, seed)),
                                                ("recorded observations", _first(fitting, RECORDED))]
    for label, observations in batches:
        for obs in observations:
            problem = _forward_problem(act, obs, action_space)
            if problem:
                return problem.format(on=label)
    return None


def _first(items: Iterable[Any], n: int) -> Iterable[Any]:
    for i, item in enumerate(items):
        if i >= n:
            return
        yield item


def _forward_problem(act: ActFn, obs: Obs, action_space: gym.spaces.Box) -> str | None:
    """One observation through ``act``; the problem with ``{on}`` left for the observations' label."""
    try:
        out = act(obs)
    except Exception as err:  # noqa: BLE001 - a policy that raises on a valid observation cannot act
        return f"the policy fails on {{on}} ({_braces(one_line(err))})"
    forward = out if isinstance(out, Forward) else Forward(out)
    for name, value in forward.inside.items():
        values = np.asarray(value, dtype=np.float64)
        if not np.isfinite(values).all():
            return f"the policy computes non-finite values on {{on}} ({name}: {_values(values)})"
    if forward.pre_squash is not None:
        pre = np.asarray(forward.pre_squash, dtype=np.float64)
        if not np.isfinite(pre).all():
            return f"the policy gives non-finite actions on {{on}} (before the squash: {_values(pre)})"
        if np.abs(pre).max(initial=0.0) > MAX_PRE_SQUASH:
            return (f"the policy's actions are far outside the action space before the squash on {{on}} "
                    f"({_values(pre)}; at most {MAX_PRE_SQUASH:g} is accepted)")
    problem = action_problem(forward.action, action_space)
    return f"the policy gives {_braces(problem)} on {{on}}" if problem else None


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


# --- the project's own network ------------------------------------------------------------


def normalizer_problem(policy: Any, obs_space: gym.spaces.Dict) -> str | None:
    """What is wrong with a Policy's state-normalizer statistics, in words; None when they can be used."""
    encoder = getattr(policy, "encoder", None)
    norm = getattr(encoder, "normalizer", None)
    if norm is None:
        return None
    count = float(norm.count.detach().cpu().double())
    mean = norm.mean.detach().cpu().double().numpy()
    m2 = norm.m2.detach().cpu().double().numpy()
    names = _dimension_names(encoder.vector_keys, obs_space)
    if not np.isfinite(count) or count < 0:
        return f"its state normalizer's count is {_number(count)}"
    bad = np.flatnonzero(~np.isfinite(mean))
    if bad.size:
        return f"normalizer mean of {names[bad[0]]} is {_number(mean[bad[0]])}"
    var = m2 / max(count - 1.0, 1.0)
    bad = np.flatnonzero(~np.isfinite(var) | (var < 0))
    if bad.size:
        return f"normalizer variance of {names[bad[0]]} is {_number(var[bad[0]])}"
    if count >= 2 and var.size and not var.any():
        return f"normalizer variance is 0 in every dimension after {count:.0f} observations"
    return None


def _dimension_names(keys: list[str], obs_space: gym.spaces.Dict) -> list[str]:
    """``'state'`` for a 1-D key, ``'state'[i]`` for one dimension of a longer one, in normalizer order."""
    names = []
    for key in keys:
        dims = int(np.prod(obs_space.spaces[key].shape)) if key in obs_space.spaces else 1
        names.extend([f"'{key}'"] if dims == 1 else [f"'{key}'[{i}]" for i in range(dims)])
    return names


@contextmanager
def eval_batch(network: Any, obs: Obs) -> Iterator[dict[str, Any]]:
    """``obs`` as a batch of one on ``network``'s device, with ``network`` in eval mode for the block.

    The check looks inside a network that may be training (the learner checks its actor on
    resume), so its training mode is put back however the block ends.
    """
    from robot_rl.agents.policy import obs_to_torch

    device = next(network.parameters()).device
    batch = {k: v.unsqueeze(0) for k, v in obs_to_torch(obs, device).items()}
    was_training = network.training
    network.eval()
    try:
        yield batch
    finally:
        network.train(was_training)


def network_forward(policy: Any) -> ActFn:
    """A Policy as an :data:`ActFn`: its deterministic action, its pre-tanh mean and its inner values."""
    import torch

    @torch.no_grad()
    def forward(obs: Obs) -> Forward:
        with eval_batch(policy, obs) as batch:
            features = policy.encoder(batch)
            hidden = policy.actor_trunk(features)
            dist = policy.actor_head(hidden)
            inside = {"features": features, "actor trunk": hidden, "log-std": dist.log_std}
            if getattr(policy, "gripper", None) is not None:
                inside["gripper Q"] = policy.gripper(features)
            action = policy.act_batch(batch, deterministic=True)[0]
        return Forward(action.cpu().numpy(), dist.mean[0].cpu().numpy(),
                       {k: v.float().cpu().numpy() for k, v in inside.items()})

    return forward


def network_problem(policy: Any, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                    recorded: Iterable[Obs] = (), seed: int = 0) -> str | None:
    """Why a :class:`~robot_rl.agents.policy.Policy` must not act, in words; None when it passes."""
    problem = normalizer_problem(policy, obs_space)
    if problem:
        return f"the policy cannot act: {problem}"
    return policy_problem(network_forward(policy), obs_space, action_space, recorded=recorded, seed=seed)


# --- at run time --------------------------------------------------------------------------


class ActionGuard:
    """A policy's actions, checked before the env gets them; a refused one becomes the hold action.

    ``policy``: anything with ``act(obs, ...)`` (its extra arguments are passed on, so the
    guard stands wherever the policy did); None when the owner calls :meth:`checked`
    itself. ``env``: the env the actions go to; the hold action is zero motion with the
    gripper kept, expressed in its action space (``hold`` overrides it). Counts go into
    :meth:`status` (the actor node's ``~/status`` and ``/diagnostics``).
    """

    def __init__(self, env: gym.Env, policy: Any = None, *, hold: Callable[[], np.ndarray] | None = None) -> None:
        self.env = env
        self.policy = policy
        self.action_space = env.action_space
        self._hold = hold or self._zero_motion
        self.refused = 0  # actions refused since the start
        self.episode_refused = 0  # in the episode in flight
        self.holding = False  # the last action was refused
        self.last_problem: str | None = None

    def _zero_motion(self) -> np.ndarray:
        """RobotEnv's zero motion with the gripper kept, in the env's action space; zeros for any other env."""
        from robot_rl.envs.wrappers import outer_action

        zeros = np.zeros(self.action_space.shape, dtype=np.float32)
        if not hasattr(self.env.unwrapped, "apply_action"):  # not a RobotEnv: zero is its no-motion
            return zeros
        hold = outer_action(self.env, np.zeros(7))
        return hold if hold.shape == zeros.shape else zeros

    def reset(self) -> None:
        """A new episode: per-episode counts start over; the policy's own reset is called."""
        if self.episode_refused:
            log.warning("the policy gave %d refused actions in the last episode (the arm held instead)",
                        self.episode_refused)
        self.episode_refused = 0
        self.holding = False
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset()

    def act(self, obs: Obs, *args: Any, **kwargs: Any) -> np.ndarray:
        return self.checked(self.policy.act(obs, *args, **kwargs))

    def checked(self, action: Any) -> np.ndarray:
        """``action`` when it can be sent, else the hold action (counted)."""
        problem = action_problem(action, self.action_space)
        if problem is None:
            self.holding = False
            return action
        return self._refuse(problem)

    def _refuse(self, problem: str) -> np.ndarray:
        self.refused += 1
        self.episode_refused += 1
        self.holding = True
        self.last_problem = problem
        if self.episode_refused == 1:
            log.warning("refused the policy's action, holding the arm: %s", problem)
        return self._hold()

    def status(self) -> dict[str, Any]:
        return {"refused_actions": self.refused, "holding": self.holding, "last_refused_action": self.last_problem}


class EndOnRefusal(gym.Wrapper):
    """Ends an episode as failed at the step where ``guard`` refused the policy's action (evaluation).

    The arm held at that step (the guard sent the hold action); ``info["policy_fault"]``
    says why, and :attr:`faults` keeps ``{episode, step, reason}`` of each such episode.
    A score over episodes where the policy could not act would say nothing about it.
    """

    def __init__(self, env: gym.Env, guard: ActionGuard) -> None:
        super().__init__(env)
        self.guard = guard
        self.faults: list[dict[str, Any]] = []
        self._episode, self._t = -1, 0

    def reset(self, **kwargs: Any):
        self._episode, self._t = self._episode + 1, 0
        return self.env.reset(**kwargs)

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._t += 1
        if self.guard.holding:
            reason = self.guard.last_problem
            self.faults.append({"episode": self._episode, "step": self._t - 1, "reason": reason})
            return obs, 0.0, False, True, {**info, "success": False, "policy_fault": reason}
        return obs, reward, terminated, truncated, info
