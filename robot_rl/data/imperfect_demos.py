"""Demos as imperfect as a person's: the scripted expert with action noise, failed and hesitant episodes.

The scripted experts of the sim tasks are better demonstrators than any person: every
episode succeeds on a short, smooth path, so behaviour cloning on them is close to
perfect and a comparison of what RL adds to a base policy shows nothing. A person's
demos are noisy, some hesitate, some fail. :class:`DemoFlaws` states exactly how a
recording is spoiled, and :func:`record_imperfect` records demos that way:

* **noise**: every step, Gaussian noise of std ``noise`` is added to each motion
  component of the expert's action (position and rotation, in the agent's ``[-1, 1]``
  units, then clipped to them; the gripper command is left alone). The expert corrects
  it on the next step, as a person corrects a shaky hand.
* **failed**: exactly ``round(failed * count)`` of the ``count`` recorded episodes are
  failures kept in the folder: the expert aims ``miss`` metres off the object (in a
  random horizontal direction per episode) for the whole episode, which runs to the time
  limit. An attempt of that kind that succeeds anyway is recorded again.
* **hesitant**: exactly ``round(hesitant * count)`` episodes hesitate: ``pauses`` times
  in the first half of the episode the expert holds still (zero motion, gripper kept)
  for ``pause_steps`` steps. These, like the clean ones, are kept only when they succeed.

Which episode is which kind is a seeded shuffle, and the noise, the miss directions and
the pause times come from the same seed, so a recording is reproducible from its seed.
The expert is duck-typed: ``reset()``, ``full_action()`` (a 7-D base-frame action) and
an ``aim_offset`` attribute, as :class:`robot_rl.sim.experts.ScriptedExpert` has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.data.demos import DemoWriter
from robot_rl.data.rollout import ActorLoop
from robot_rl.data.transition import Step
from robot_rl.errors import ConfigError, RobotRLError

CLEAN, HESITANT, FAILED = "clean", "hesitant", "failed"
#: Motion components of the 7-D base-frame action (x y z rx ry rz); index 6 is the gripper.
MOTION = slice(0, 6)

#: Each field's allowed range (inclusive) and whether it must be a whole number.
_LIMITS: dict[str, tuple[float, float, bool]] = {
    "noise": (0.0, 1.0, False), "failed": (0.0, 1.0, False), "hesitant": (0.0, 1.0, False),
    "pauses": (1, 10, True), "pause_steps": (1, 50, True), "miss": (0.005, 0.2, False),
}


@dataclass(frozen=True)
class DemoFlaws:
    """How a scripted recording is spoiled (see the module docstring); all zero: the expert as it is."""

    noise: float = 0.0  # std of the Gaussian noise on each motion component, in [-1, 1] action units
    failed: float = 0.0  # fraction of the recorded episodes that are failures
    hesitant: float = 0.0  # fraction of the recorded episodes that pause
    pauses: int = 2  # pauses per hesitant episode
    pause_steps: int = 4  # steps each pause holds still
    miss: float = 0.03  # metres a failed episode aims off
    names: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # field -> name in errors

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name == "names":
                continue
            value, (low, high, whole) = getattr(self, f.name), _LIMITS[f.name]
            name = self.names.get(f.name, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and value != int(value)):
                kind = "a whole number" if whole else "a number"
                raise ConfigError(f"{name} = {value!r} must be {kind} in [{low:g}, {high:g}]")
            if not math.isfinite(value) or not low <= value <= high:
                raise ConfigError(f"{name} = {value!r} must lie in [{low:g}, {high:g}]")
        if self.failed + self.hesitant > 1.0:
            raise ConfigError(f"{self.names.get('failed', 'failed')} + {self.names.get('hesitant', 'hesitant')} = "
                              f"{self.failed + self.hesitant:g}: at most 1 (an episode is one kind)")

    def counts(self, count: int) -> dict[str, int]:
        """How many of ``count`` episodes are of each kind."""
        failed, hesitant = round(self.failed * count), round(self.hesitant * count)
        hesitant = min(hesitant, count - failed)  # both rounded up past the count
        return {FAILED: failed, HESITANT: hesitant, CLEAN: count - failed - hesitant}

    def describe(self) -> str:
        return (f"action noise std {self.noise:g}, {self.failed:.0%} failed (aiming {self.miss * 100:g} cm off), "
                f"{self.hesitant:.0%} hesitant ({self.pauses} pauses of {self.pause_steps} steps)")

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "names"}


def episode_kinds(count: int, flaws: DemoFlaws, rng: np.random.Generator) -> list[str]:
    """The kind of each of ``count`` episodes: the stated numbers of each, in a seeded order."""
    kinds = [kind for kind, n in flaws.counts(count).items() for _ in range(n)]
    return [kinds[i] for i in rng.permutation(len(kinds))]


def perturb(action: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """``action`` (7-D) with Gaussian noise of std ``noise`` on its motion components, clipped to [-1, 1]."""
    out = np.array(action, dtype=np.float64)
    if noise > 0:
        out[MOTION] = np.clip(out[MOTION] + rng.normal(0.0, noise, out[MOTION].shape), -1.0, 1.0)
    return out


class ImperfectDemonstrator:
    """The expert, spoiled as :class:`DemoFlaws` says, for one episode kind at a time (:attr:`kind`)."""

    def __init__(self, env: gym.Env, expert: Any, flaws: DemoFlaws, seed: int,
                 outer: Callable[[gym.Env, np.ndarray], np.ndarray] | None = None) -> None:
        from robot_rl.envs.wrappers import outer_action

        self.env, self.expert, self.flaws = env, expert, flaws
        self.rng = np.random.default_rng(seed)
        self.outer = outer or outer_action
        self.kind = CLEAN
        self.horizon = int(env.unwrapped.cfg.env.max_episode_steps)
        self.t = 0
        self.paused: set[int] = set()  # the steps of this episode that hold still

    def reset(self) -> None:
        self.expert.reset()
        self.t = 0
        self.paused = set()
        offset = np.zeros(3)
        if self.kind == FAILED:
            angle = self.rng.uniform(0.0, 2 * np.pi)
            offset[:2] = self.flaws.miss * np.array([np.cos(angle), np.sin(angle)])
        self.expert.aim_offset = offset
        if self.kind == HESITANT:
            first_half = max(1, self.horizon // 2 - self.flaws.pause_steps)
            for start in self.rng.choice(first_half, size=min(self.flaws.pauses, first_half), replace=False):
                self.paused.update(range(int(start), int(start) + self.flaws.pause_steps))

    def full_action(self) -> np.ndarray:
        """The 7-D base-frame action of this step."""
        step, self.t = self.t, self.t + 1
        if step in self.paused:
            return np.zeros(7)  # hold: no motion, gripper kept
        return perturb(self.expert.full_action(), self.flaws.noise, self.rng)

    def act(self, obs: Any = None) -> np.ndarray:
        return self.outer(self.env, self.full_action())


@dataclass
class ImperfectSummary:
    kinds: list[str]  # of the saved episodes, in order
    successes: list[bool]  # of the saved episodes
    attempted: int
    steps: int  # of the saved episodes


def record_imperfect(env: gym.Env, expert: Any, writer: DemoWriter, count: int, flaws: DemoFlaws, *, seed: int = 0,
                     max_attempts: int | None = None) -> ImperfectSummary:
    """Record ``count`` episodes into ``writer``, spoiled as ``flaws`` states (see the module docstring).

    A clean or hesitant attempt that fails, or a failed-kind attempt that succeeds, is
    dropped and its episode recorded again; past ``max_attempts`` (default ``3 * count +
    5``) one RobotRLError line says how many of each kind were recorded.
    """
    rng = np.random.default_rng(seed)
    kinds = episode_kinds(count, flaws, rng)
    demonstrator = ImperfectDemonstrator(env, expert, flaws, int(rng.integers(2**31)))
    loop = ActorLoop(env, demonstrator, seed=seed)
    limit = max_attempts if max_attempts is not None else 3 * count + 5
    summary = ImperfectSummary([], [], 0, 0)
    for kind in kinds:
        while True:
            if summary.attempted >= limit:
                done = {k: summary.kinds.count(k) for k in (CLEAN, HESITANT, FAILED)}
                raise RobotRLError(f"recording {count} imperfect demos ({flaws.describe()}): only {len(summary.kinds)} "
                                   f"recorded in {summary.attempted} attempts ({done}); the expert cannot do "
                                   "this task reliably enough")
            demonstrator.kind = kind
            episode: list[Step] = loop.run_episode()
            summary.attempted += 1
            success = bool(episode[-1].success)
            if success == (kind != FAILED):
                writer.write_episode(episode)
                summary.kinds.append(kind)
                summary.successes.append(success)
                summary.steps += len(episode)
                break
    return summary
