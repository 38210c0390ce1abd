"""SAC with the RLPD choices (LayerNorm critic ensemble, random-subset min target), DrQ for images.

One call of :meth:`SACAgent.update` is one critic update on one batch; every
``critic_actor_ratio``-th call also updates the actor and the temperature, on the same
batch and its already-computed features. The update-to-data ratio is the caller's
business (the :class:`robot_rl.training.learner.Learner` samples a fresh batch per
critic update; that is RLPD's scheme of splitting one large batch into UTD minibatches).

The observation encoder is shared: the critic loss trains it, while the actor, the
temperature and the gripper critic see its output detached (as in DrQ). So each batch
is encoded once, and a frozen backbone runs once per batch at most (not at all when
its features are cached in replay).

Batch contract (what replay sampling returns, as torch tensors on the agent's device):
``obs``/``next_obs``: dicts like the stored observation (uint8 images or cached float16
maps, float32 vectors) with leading dim B; ``action`` (B, action_dim) float32;
``reward``, ``terminated``, ``grasp_penalty``: (B,) float32; optional ``steps`` (B,): how
many env steps each row spans (n-step rows, rewards already summed with
``agent.discount``), so the bootstrap factor is ``discount**steps``; 1 when absent.
``terminated`` stops the bootstrap; truncation does not.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from robot_rl.agents.ensemble import CriticEnsemble, subsample_min
from robot_rl.agents.gripper import gripper_td_loss
from robot_rl.agents.policy import Policy
from robot_rl.agents.temperature import Temperature
from robot_rl.config.agent import AgentConfig

Batch = dict[str, Any]


@torch.no_grad()
def polyak_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    for t, s in zip(target.parameters(), source.parameters()):
        t.lerp_(s, tau)


class SACAgent:
    def __init__(self, cfg: AgentConfig, obs_space: gym.spaces.Dict, action_space: gym.Space,
                 device: str | torch.device = "cpu", seed: int = 0) -> None:
        self.cfg = cfg
        self.device = torch.device(device)
        with torch.random.fork_rng(devices=[]):  # init depends on the seed only, and leaves the global RNG alone
            torch.manual_seed(seed)
            self.policy = Policy(cfg, obs_space, action_space).to(self.device)
            feature_dim = self.policy.encoder.feature_dim
            cont_dim = self.policy.continuous_dim
            self.critic = CriticEnsemble(feature_dim, cont_dim, cfg.hidden_dims, cfg.num_critics,
                                         cfg.critic_layer_norm).to(self.device)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.gripper_target = (copy.deepcopy(self.policy.gripper).requires_grad_(False)
                               if self.policy.gripper is not None else None)
        self.temperature = Temperature(cfg.init_temperature).to(self.device)
        self.target_entropy = (cfg.target_entropy if cfg.target_entropy is not None else -cont_dim / 2.0)

        encoder_params = [p for p in self.policy.encoder.parameters() if p.requires_grad]
        actor_params = list(self.policy.actor_trunk.parameters()) + list(self.policy.actor_head.parameters())
        self.critic_opt = torch.optim.Adam(list(self.critic.parameters()) + encoder_params, lr=cfg.critic_lr)
        self.actor_opt = torch.optim.Adam(actor_params, lr=cfg.actor_lr)
        self.temperature_opt = torch.optim.Adam(self.temperature.parameters(), lr=cfg.temperature_lr)
        self.gripper_opt = (torch.optim.Adam(self.policy.gripper.parameters(), lr=cfg.critic_lr)
                            if self.policy.gripper is not None else None)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed + 1)
        self.critic_updates = 0
        self.actor_updates = 0

    # --- acting ----------------------------------------------------------------------

    def act(self, obs: Mapping[str, np.ndarray], deterministic: bool = False,
            generator: torch.Generator | None = None) -> np.ndarray:
        return self.policy.act(obs, deterministic, generator)

    @property
    def alpha(self) -> float:
        return float(self.temperature().item())

    # --- learning --------------------------------------------------------------------

    def update(self, batch: Batch) -> dict[str, float]:
        """One critic (and gripper critic) update; every ``critic_actor_ratio``-th also actor + alpha."""
        cfg = self.cfg
        policy, gen = self.policy, self.generator
        policy.train()
        action = batch["action"]
        cont_action = action[:, :policy.continuous_dim]
        reward = batch["reward"]
        not_done = 1.0 - batch["terminated"]
        discount = cfg.discount ** batch["steps"] if "steps" in batch else cfg.discount
        alpha = self.temperature().detach()

        features = policy.encoder(batch["obs"], augment=True, generator=gen)
        with torch.no_grad():
            next_features = policy.encoder(batch["next_obs"], augment=True, generator=gen)
            next_dist = policy.distribution(next_features)
            next_action, next_log_prob = next_dist.rsample_with_log_prob(gen)
            next_q = subsample_min(self.critic_target(next_features, next_action), cfg.num_min_qs, gen)
            if cfg.backup_entropy:
                next_q = next_q - alpha * next_log_prob
            target_q = reward + discount * not_done * next_q

        q_values = self.critic(features, cont_action)  # (num_critics, B)
        critic_loss = (q_values - target_q).pow(2).mean(dim=1).sum()
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_opt.step()
        polyak_update(self.critic_target, self.critic, cfg.tau)
        self.critic_updates += 1
        metrics = {"critic_loss": critic_loss.item(), "q_mean": q_values.mean().item(),
                   "target_q_mean": target_q.mean().item()}

        features = features.detach()
        if policy.gripper is not None:
            gripper_loss, gripper_q = gripper_td_loss(
                policy.gripper, self.gripper_target, features, next_features, action[:, -1], reward,
                batch["grasp_penalty"], not_done, discount)
            self.gripper_opt.zero_grad(set_to_none=True)
            gripper_loss.backward()
            self.gripper_opt.step()
            polyak_update(self.gripper_target, policy.gripper, cfg.tau)
            metrics.update(gripper_loss=gripper_loss.item(), gripper_q_mean=gripper_q.item())

        if self.critic_updates % cfg.critic_actor_ratio == 0:
            metrics.update(self._update_actor(features))
        return metrics

    def _update_actor(self, features: torch.Tensor) -> dict[str, float]:
        dist = self.policy.distribution(features)
        action, log_prob = dist.rsample_with_log_prob(self.generator)
        self.critic.requires_grad_(False)  # the actor loss needs dQ/da, not dQ/dtheta
        try:
            q = self.critic(features, action).mean(dim=0)
        finally:
            self.critic.requires_grad_(True)
        alpha = self.temperature().detach()
        actor_loss = (alpha * log_prob - q).mean()
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_opt.step()

        entropy = -log_prob.detach()
        temperature_loss = self.temperature.loss(entropy, self.target_entropy)
        self.temperature_opt.zero_grad(set_to_none=True)
        temperature_loss.backward()
        self.temperature_opt.step()
        self.actor_updates += 1
        return {"actor_loss": actor_loss.item(), "entropy": entropy.mean().item(),
                "temperature": self.alpha, "temperature_loss": temperature_loss.item()}

    @torch.no_grad()
    def td_losses(self, batch: Batch) -> dict[str, float]:
        """TD losses on ``batch`` without learning: no augmentation, mean next action,
        min over all target critics. A diagnostic (and what tests watch fall)."""
        policy, cfg = self.policy, self.cfg
        not_done = 1.0 - batch["terminated"]
        features = policy.encoder(batch["obs"])
        next_features = policy.encoder(batch["next_obs"])
        next_action = policy.distribution(next_features).mode()
        discount = cfg.discount ** batch["steps"] if "steps" in batch else cfg.discount
        next_q = self.critic_target(next_features, next_action).min(dim=0).values
        target_q = batch["reward"] + discount * not_done * next_q
        q_values = self.critic(features, batch["action"][:, :policy.continuous_dim])
        losses = {"critic_loss": (q_values - target_q).pow(2).mean(dim=1).sum().item()}
        if policy.gripper is not None:
            loss, _ = gripper_td_loss(policy.gripper, self.gripper_target, features, next_features,
                                      batch["action"][:, -1], batch["reward"], batch["grasp_penalty"], not_done,
                                      discount)
            losses["gripper_loss"] = loss.item()
        return losses

    # --- checkpoints -----------------------------------------------------------------

    def _modules(self) -> dict[str, nn.Module]:
        mods = {"policy": self.policy, "critic": self.critic, "critic_target": self.critic_target,
                "temperature": self.temperature}
        if self.gripper_target is not None:
            mods["gripper_target"] = self.gripper_target
        return mods

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        opts = {"critic_opt": self.critic_opt, "actor_opt": self.actor_opt, "temperature_opt": self.temperature_opt}
        if self.gripper_opt is not None:
            opts["gripper_opt"] = self.gripper_opt
        return opts

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {k: m.state_dict() for k, m in self._modules().items()}
        state.update({k: o.state_dict() for k, o in self._optimizers().items()})
        state["generator"] = self.generator.get_state()
        state["critic_updates"] = self.critic_updates
        state["actor_updates"] = self.actor_updates
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for k, m in self._modules().items():
            m.load_state_dict(state[k])
        for k, o in self._optimizers().items():
            o.load_state_dict(state[k])
        self.generator.set_state(state["generator"])
        self.critic_updates = int(state["critic_updates"])
        self.actor_updates = int(state["actor_updates"])
