"""The actor half of training: step one env with a policy and hand out Steps.

Used by single-process training, demo recording and evaluation here, and by the actor
process of the learning plane. Contract:

* ``policy`` is any object with ``act(obs) -> action`` (an action in the env's action
  space); if it has ``reset()``, that is called after every ``env.reset`` (scripted
  experts and human sources keep per-episode state).
* :meth:`ActorLoop.step` resets the env when no episode is running, takes one step and
  returns a :class:`~robot_rl.data.transition.Step`. Episode ids count up from
  ``first_episode_id``; ``step`` counts from 0 in each episode. ``next_obs`` is always
  filled in (consumers keep it only for the last step).
* When the env reports a human intervention (``info["intervene_action"]``), the Step's
  action is that executed action and ``intervened`` is true. An action wrapper that sent
  something other than the policy's action (the residual wrapper holding the arm) reports
  the action the step stands for in ``info["agent_action"]`` (:data:`AGENT_ACTION_KEY`),
  and the Step keeps that one.
* After a step that ended an episode, :attr:`ActorLoop.last_episode` holds its
  :class:`EpisodeStats` (intervened steps, takeovers, and the ground-truth success
  ``info["gt_success"]`` when a reward classifier decides success); it is ``None``
  after any other step.
* The first reset uses ``seed``; later resets continue the env's own RNG, so a run is
  reproducible from its seed, and :meth:`state_dict` (taken between episodes) carries
  that RNG so a resumed run resets into the same initial states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from robot_rl.data.transition import Obs, Step

#: The info key of the agent's action a step stands for, when a wrapper changed it (see above).
AGENT_ACTION_KEY = "agent_action"


class ActingPolicy(Protocol):
    def act(self, obs: Obs) -> np.ndarray: ...


class Deterministic:
    """A learned policy acting on its mean (evaluation, and a trained policy on a robot).

    ``keys``: the observation keys the policy was trained on, when the env observes
    more (e.g. cameras added to record reward frames).
    """

    def __init__(self, policy: Any, keys: list[str] | None = None) -> None:
        self.policy = policy
        self.keys = keys

    def act(self, obs: Obs) -> np.ndarray:
        if self.keys is not None:
            obs = {k: obs[k] for k in self.keys}
        return self.policy.act(obs, deterministic=True)

    def reset(self) -> None:
        """A new episode: a policy that keeps per-episode state (action chunks) starts over."""
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset()


@dataclass
class EpisodeStats:
    episode_id: int
    length: int
    ret: float
    success: bool
    interventions: int  # intervened steps
    takeovers: int = 0  # times a person (or the simulated intervener) took over, as HumanIntervention counts them
    gt_success: bool | None = None  # the task's own verdict when a reward classifier decides success

    @property
    def intervention_rate(self) -> float:
        return self.interventions / max(self.length, 1)


class ActorLoop:
    def __init__(self, env: gym.Env, policy: ActingPolicy, seed: int | None = None, first_episode_id: int = 0) -> None:
        self.env = env
        self.policy = policy
        self.seed = seed
        self.episode_id = first_episode_id - 1
        self.obs: Obs | None = None
        self.t = 0
        self._ret = 0.0
        self._interventions = 0
        self._seeded = False
        self.last_episode: EpisodeStats | None = None

    @property
    def in_episode(self) -> bool:
        return self.obs is not None

    def reset(self, seed: int | None = None) -> Obs:
        """Start a new episode (the current one, if any, is abandoned)."""
        if seed is None and not self._seeded:
            seed = self.seed
        self._seeded = True
        obs, _ = self.env.reset(seed=seed)
        reset_hook = getattr(self.policy, "reset", None)
        if callable(reset_hook):
            reset_hook()
        self.episode_id += 1
        self.obs, self.t, self._ret, self._interventions = obs, 0, 0.0, 0
        return obs

    def step(self, action: np.ndarray | None = None) -> Step:
        """One env step with the policy's action (or ``action``, e.g. a random warm-up one)."""
        if self.obs is None:
            self.reset()
        obs = self.obs
        if action is None:
            action = self.policy.act(obs)
        next_obs, reward, terminated, truncated, info = self.env.step(action)
        intervened = "intervene_action" in info
        if intervened:
            action = info["intervene_action"]
        elif AGENT_ACTION_KEY in info:
            action = info[AGENT_ACTION_KEY]
        step = Step(episode_id=self.episode_id, step=self.t, obs=obs,
                    action=np.asarray(action, dtype=np.float32), reward=float(reward),
                    terminated=bool(terminated), truncated=bool(truncated), next_obs=next_obs,
                    intervened=bool(intervened or info.get("intervened", False)),
                    success=bool(info.get("success", False)),
                    grasp_penalty=float(info.get("grasp_penalty", 0.0)))
        self.t += 1
        self._ret += step.reward
        self._interventions += int(step.intervened)
        self.last_episode = None
        if step.last:
            gt = info.get("gt_success")
            self.last_episode = EpisodeStats(self.episode_id, self.t, self._ret, step.success, self._interventions,
                                             int(info.get("episode_interventions", 0)),
                                             None if gt is None else bool(gt))
            self.obs = None
        else:
            self.obs = next_obs
        return step

    def run_episode(self, seed: int | None = None) -> list[Step]:
        """Reset (with ``seed`` if given) and step until the episode ends."""
        self.reset(seed)
        steps = [self.step()]
        while not steps[-1].last:
            steps.append(self.step())
        return steps

    # --- checkpoints (between episodes) ----------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        if self.in_episode:
            raise RuntimeError("ActorLoop state is saved between episodes only")
        return {"episode_id": self.episode_id, "seeded": self._seeded,
                "env_rng": self.env.np_random.bit_generator.state if self._seeded else None}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.episode_id = int(state["episode_id"])
        self._seeded = bool(state["seeded"])
        if state["env_rng"] is not None:
            rng = np.random.Generator(getattr(np.random, state["env_rng"]["bit_generator"])())
            rng.bit_generator.state = state["env_rng"]
            self.env.np_random = rng
        self.obs = None
