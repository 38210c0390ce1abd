"""The record every producer of experience hands on: one env step.

Actors (in-process or over gRPC), demo recorders and intervention handling all produce
:class:`Step` objects; replay buffers and demo files consume them.

Contract:
* ``obs`` is the observation the action was taken in; ``next_obs`` the one after it.
  Inside one episode, ``next_obs`` of step ``t`` *is* ``obs`` of step ``t + 1``, so stores
  and the wire keep ``next_obs`` only for the last step of an episode
  (``terminated or truncated``) and rebuild it from the following step otherwise.
* ``action`` is the action that was executed, in the env's (normalised) action space:
  the human's command when ``intervened`` is true, the policy's otherwise.
* ``terminated`` means a true end (success or failure the MDP knows of; no bootstrap);
  ``truncated`` means the episode was cut (time limit, human stop), bootstrap applies.
* ``episode_id`` is unique per producer; ``step`` counts from 0 within the episode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Obs = dict[str, np.ndarray]


@dataclass
class Step:
    episode_id: int
    step: int
    obs: Obs
    action: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    next_obs: Obs
    intervened: bool = False
    success: bool = False
    grasp_penalty: float = 0.0

    @property
    def last(self) -> bool:
        """True for the final step of an episode."""
        return self.terminated or self.truncated
