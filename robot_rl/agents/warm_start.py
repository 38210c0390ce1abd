"""Warm start: the SAC actor begins as the behaviour-cloned policy.

A :class:`~robot_rl.agents.bc.BCNetwork` and the SAC :class:`~robot_rl.agents.policy.Policy`
are built from the same pieces (the learner's observation encoder, an MLP of
``agent.hidden_dims`` ending in a ReLU, a linear layer), so the BC weights map one to one:

* ``encoder.*`` -> ``encoder.*`` (its state-normalizer statistics included);
* ``trunk.*`` -> ``actor_trunk.*``;
* the first action of ``head`` (rows ``0 .. n-1`` of its ``chunk * n`` outputs) ->
  ``actor_head.mean``.

The SAC mode ``tanh(mean)`` is then exactly the BC action (a chunked BC policy's first
action, before temporal ensembling). The log-std layer is set to give ``init_log_std``
everywhere (weights 0), so the first rollouts are the BC policy's, barely perturbed; the
critic then learns alone for ``agent.warm_start.critic_steps`` updates
(:class:`~robot_rl.agents.sac.SACAgent`), before the actor moves.
"""

from __future__ import annotations

import math

import torch

from robot_rl.agents.bc import BCNetwork
from robot_rl.agents.policy import Policy


class WarmStartError(ValueError):
    """The BC network does not fit the SAC actor (the caller names the checkpoint)."""


def log_std_bias(value: float, low: float, high: float) -> float:
    """The pre-squash value that :class:`~robot_rl.agents.distributions.TanhNormalHead` maps to ``value``."""
    if not low < value < high:
        raise WarmStartError(f"the initial log-std {value:g} must lie strictly between {low:g} and {high:g}")
    return math.atanh(2.0 * (value - low) / (high - low) - 1.0)


@torch.no_grad()
def warm_start_actor(policy: Policy, bc: BCNetwork, init_log_std: float) -> None:
    """Copy ``bc`` into ``policy``'s encoder and actor (see the module docstring), in place.

    In place, parameter by parameter, so an optimizer built over ``policy`` keeps working.
    """
    if policy.gripper is not None:
        raise WarmStartError("a warm start needs agent.gripper_critic: false (the BC head drives every action "
                             "dimension)")
    n = policy.continuous_dim
    if bc.action_dim != n:
        raise WarmStartError(f"the BC policy has {bc.action_dim} action dimensions, the agent {n}")
    pairs = [(f"encoder.{k}", f"encoder.{k}") for k in bc.encoder.state_dict()]
    pairs += [(f"trunk.{k}", f"actor_trunk.{k}") for k in bc.trunk.state_dict()]
    source, target = bc.state_dict(), policy.state_dict()
    for src, dst in pairs:
        if dst not in target:
            raise WarmStartError(f"the BC network's '{src}' has no counterpart '{dst}' in the SAC actor "
                                 "(another agent.encoder or agent.hidden_dims?)")
        if tuple(source[src].shape) != tuple(target[dst].shape):
            raise WarmStartError(f"the BC network's '{src}' has shape {tuple(source[src].shape)}, the SAC actor's "
                                 f"'{dst}' {tuple(target[dst].shape)} (another agent.encoder or agent.hidden_dims?)")
    mean = policy.actor_head.mean
    head_w, head_b = bc.head.weight[:n], bc.head.bias[:n]
    if tuple(head_w.shape) != tuple(mean.weight.shape):
        raise WarmStartError(f"the BC head's first action has weights of shape {tuple(head_w.shape)}, the SAC "
                             f"actor's mean {tuple(mean.weight.shape)} (another agent.hidden_dims?)")
    for src, dst in pairs:
        target[dst].copy_(source[src])
    mean.weight.copy_(head_w)
    mean.bias.copy_(head_b)
    log_std = policy.actor_head.log_std
    log_std.weight.zero_()
    log_std.bias.fill_(log_std_bias(init_log_std, policy.actor_head.log_std_min, policy.actor_head.log_std_max))
