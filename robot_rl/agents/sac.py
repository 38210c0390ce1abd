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

Made to run ahead of a GPU: :meth:`SACAgent.update` never reads a value back to the
host (its metrics are returned as 0-d device tensors, for the learner to average over a
logging window), draws all its randomness up front (:class:`Noise`) from the agent's own
generator on the agent's device, shifts the ``uint8`` images there (DrQ) before the
encoder converts them, and updates the target networks with one multi-tensor ``lerp``.
Two execution options leave the math alone: ``compile`` runs the two loss functions
(encoders, target, critic loss; actor loss) through ``torch.compile``, each one graph,
with the backward passes and optimizer steps eager; and ``precision="bf16"`` autocasts
the encoder and the hidden layers to bfloat16 while the Q outputs, the policy's
log-probabilities, the gripper critic, the losses, gradients and optimizer state stay
float32 (:mod:`robot_rl.agents.execution`).

On top of a base policy (``agent.base.mode``, :mod:`robot_rl.config.base_rl`): in
``residual`` mode the stored action is the residual ``u`` and the critic is given the
executed action ``clip(base + scale * u)`` everywhere (the data's, the target's next
action, the actor's), with the base action read from the observation key ``base_action``
(:mod:`robot_rl.agents.residual`); the actor's mean layer starts at zero. In
``warm_start`` mode the first ``agent.warm_start.critic_steps`` updates are critic-only:
the actor, the temperature, the shared encoder and the state statistics hold, so the
BC-initialised actor (:mod:`robot_rl.agents.warm_start`) acts as it did. After that the
actor loss adds a behaviour-cloning term in TD3+BC's form, ``w * mean|Q| * |mode(s) -
a*|^2`` (so its weight is relative to the Q scale whatever the reward), with ``w``
falling linearly from ``agent.warm_start.bc_weight`` to 0 over ``bc_decay_updates``
actor updates. ``a*`` (``agent.warm_start.bc_target``) is either the BC policy's own
action on every row (``bc_policy``: a frozen copy of the whole policy, encoder included,
taken at the first actor update, before anything moved it; a behaviour-regularised
actor-critic with the BC policy as the behaviour) or the demos' actions on the batch's
demo rows (``demos``, the ``demo`` mask the learner adds); with ``bc_filter: q`` the term
covers only the rows where the critic values ``a*`` above the actor's own mean action
(Nair et al., 2018). Without it the actor follows a
critic that has seen only the BC policy's own actions, and eval success collapses in the
first online steps before it recovers.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable, Mapping, NamedTuple

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from robot_rl.agents.augment import apply_shifts, draw_shifts
from robot_rl.agents.distributions import TanhNormal
from robot_rl.agents.ensemble import CriticEnsemble, subsample_min
from robot_rl.agents.execution import autocast, check_precision, full_precision
from robot_rl.agents.gripper import gripper_td_loss
from robot_rl.agents.policy import Policy
from robot_rl.agents.residual import BASE_ACTION_KEY, combine_torch, scale_vector, zero_residual
from robot_rl.agents.temperature import Temperature
from robot_rl.config.agent import AgentConfig
from robot_rl.errors import ConfigError

Batch = dict[str, Any]
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class Noise(NamedTuple):
    """Every random number one update uses, drawn before it runs.

    Drawn from the agent's generator in the order the update consumes them (DrQ shifts
    of obs then next obs, the next action's noise, the target subset, the actor's
    noise), so the sequence is the one drawing them on the spot would give; drawn
    outside the loss functions because ``torch.compile`` cannot trace an explicit
    generator (it would split the graph at every draw).
    """

    obs_shifts: dict[str, torch.Tensor]
    next_shifts: dict[str, torch.Tensor]
    next_eps: torch.Tensor
    subset_keys: torch.Tensor | None
    actor_eps: torch.Tensor | None


def rsample_with_noise(dist: TanhNormal, eps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``dist.rsample_with_log_prob`` with its standard-normal noise given.

    The same operations in the same order (the order decides how autograd sums the
    gradients reaching ``pre_tanh``, so a reordering would change results in the last bit).
    """
    pre_tanh = dist.mean + dist.log_std.exp() * eps
    action = torch.tanh(pre_tanh)
    gaussian_log_prob = (-0.5 * eps.pow(2) - dist.log_std - _LOG_SQRT_2PI).sum(-1)
    log_det = (2.0 * (math.log(2.0) - pre_tanh - F.softplus(-2.0 * pre_tanh))).sum(-1)
    return action, gaussian_log_prob - log_det


@torch.no_grad()
def polyak_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """``target += tau * (source - target)`` for every parameter, as one multi-tensor kernel."""
    torch._foreach_lerp_(list(target.parameters()), list(source.parameters()), tau)


class SACAgent:
    """The learner's networks, optimizers and update.

    ``precision`` (``float32`` or ``bf16``) and ``compile`` (False, True for the default
    backend, or a ``torch.compile`` backend name such as ``aot_eager``) choose how the
    update runs, not what it computes; see the module docstring.
    """

    def __init__(self, cfg: AgentConfig, obs_space: gym.spaces.Dict, action_space: gym.Space,
                 device: str | torch.device = "cpu", seed: int = 0, *, precision: str = "float32",
                 compile: bool | str = False) -> None:
        self.cfg = cfg
        self.device = torch.device(device)
        check_precision(precision, self.device)
        self.precision = precision
        self._autocast = autocast(self.device, precision)
        with torch.random.fork_rng(devices=[]):  # init depends on the seed only, and leaves the global RNG alone
            torch.manual_seed(seed)
            self.policy = Policy(cfg, obs_space, action_space).to(self.device)
            feature_dim = self.policy.encoder.feature_dim
            cont_dim = self.policy.continuous_dim
            self.critic = CriticEnsemble(feature_dim, cont_dim, cfg.hidden_dims, cfg.num_critics,
                                         cfg.critic_layer_norm).to(self.device)
        # RL on top of a base policy (robot_rl.config.base_rl): the critic's action, the actor's first updates
        self.residual_scale = self._residual_scale(obs_space)
        if self.residual_scale is not None:
            zero_residual(self.policy)
        self.actor_delay = cfg.warm_start.critic_steps if cfg.base.mode == "warm_start" else 0
        self.bc_weight = cfg.warm_start.bc_weight if cfg.base.mode == "warm_start" else 0.0
        self.anchor: Policy | None = None  # bc_target "bc_policy": the actor as the warm start began
        # a warm-started actor keeps the BC policy's state statistics: new ones would change what it does
        self.policy.encoder.hold_statistics = cfg.base.mode == "warm_start"
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.gripper_target = (copy.deepcopy(self.policy.gripper).requires_grad_(False)
                               if self.policy.gripper is not None else None)
        self.temperature = Temperature(cfg.init_temperature).to(self.device)
        self.target_entropy = (cfg.target_entropy if cfg.target_entropy is not None else -cont_dim / 2.0)

        encoder_params = [p for p in self.policy.encoder.parameters() if p.requires_grad]
        self._encoder_params = encoder_params
        actor_params = list(self.policy.actor_trunk.parameters()) + list(self.policy.actor_head.parameters())
        # Adam's fused kernel: one pass per step instead of several per parameter (on the 2-core CPU
        # the optimizer steps took about 3x less time, 5-8% of a state update).
        self._fused = True if self.device.type in ("cuda", "cpu") else None
        adam_kw: dict[str, Any] = {"fused": self._fused}
        self.critic_opt = torch.optim.Adam(list(self.critic.parameters()) + encoder_params, lr=cfg.critic_lr,
                                           **adam_kw)
        self.actor_opt = torch.optim.Adam(actor_params, lr=cfg.actor_lr, **adam_kw)
        self.temperature_opt = torch.optim.Adam(self.temperature.parameters(), lr=cfg.temperature_lr, **adam_kw)
        self.gripper_opt = (torch.optim.Adam(self.policy.gripper.parameters(), lr=cfg.critic_lr, **adam_kw)
                            if self.policy.gripper is not None else None)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed + 1)
        self.critic_updates = 0
        self.actor_updates = 0
        self.compiled = compile is not False
        self._critic_losses: Callable[..., tuple[torch.Tensor, ...]] = self._critic_losses_eager
        self._actor_losses: Callable[..., tuple[torch.Tensor, ...]] = self._actor_losses_eager
        if self.compiled:
            backend = "inductor" if compile is True else str(compile)
            self._critic_losses = torch.compile(self._critic_losses_eager, backend=backend, dynamic=False)
            self._actor_losses = torch.compile(self._actor_losses_eager, backend=backend, dynamic=False)

    def _residual_scale(self, obs_space: gym.spaces.Dict) -> torch.Tensor | None:
        """``agent.residual.scale`` on the device in residual mode, else None."""
        if self.cfg.base.mode != "residual":
            return None
        if BASE_ACTION_KEY not in obs_space.spaces:
            raise ConfigError(f"agent.base.mode is 'residual' but the observation has no '{BASE_ACTION_KEY}' "
                              "(the actor side adds it: robot_rl.agents.residual.ResidualEnv)")
        try:
            scale = scale_vector(self.cfg.residual.scale, self.policy.continuous_dim)
        except ValueError as err:
            raise ConfigError(f"agent.residual.scale: {err}") from None
        return torch.as_tensor(scale, device=self.device)

    def critic_action(self, obs: Mapping[str, torch.Tensor], action: torch.Tensor) -> torch.Tensor:
        """What the critic is given for the agent's ``action`` on ``obs``: the action itself, or in
        residual mode the executed action ``clip(base + scale * action)`` (robot_rl.agents.residual)."""
        if self.residual_scale is None:
            return action
        return combine_torch(obs[BASE_ACTION_KEY].float(), action, self.residual_scale)

    @property
    def wants_demo_mask(self) -> bool:
        """Whether batches should carry ``demo`` (1.0 on demo rows): the warm start's BC term reads it."""
        return self.bc_weight > 0.0 and self.cfg.warm_start.bc_target == "demos"

    def bc_weight_now(self) -> float:
        """The BC term's weight for the next actor update (``agent.warm_start.bc_decay_updates``)."""
        decay = self.cfg.warm_start.bc_decay_updates
        if decay <= 0:
            return self.bc_weight
        return self.bc_weight * max(0.0, 1.0 - self.actor_updates / decay)

    @property
    def warming_up(self) -> bool:
        """Whether the next update is critic-only (``agent.warm_start.critic_steps``)."""
        return self.critic_updates < self.actor_delay

    # --- acting ----------------------------------------------------------------------

    def act(self, obs: Mapping[str, np.ndarray], deterministic: bool = False,
            generator: torch.Generator | None = None) -> np.ndarray:
        return self.policy.act(obs, deterministic, generator)

    @property
    def alpha(self) -> float:
        return float(self.temperature().item())

    # --- learning --------------------------------------------------------------------

    def update(self, batch: Batch) -> dict[str, torch.Tensor]:
        """One critic (and gripper critic) update; every ``critic_actor_ratio``-th also actor + alpha.

        Returns the update's metrics as detached 0-d tensors on the agent's device;
        reading one (``float(m["critic_loss"])``) waits for the update to finish.
        """
        cfg, policy = self.cfg, self.policy
        if not policy.training:
            policy.train()
        noise = self._draw_noise(batch)
        critic_loss, q_mean, target_q_mean, features, next_features = self._critic_losses(
            batch, noise.obs_shifts, noise.next_shifts, noise.next_eps, noise.subset_keys)
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        if self.warming_up:  # the actor's shared encoder holds too, so the warm-started actor acts as it did
            for param in self._encoder_params:
                param.grad = None
        self.critic_opt.step()
        polyak_update(self.critic_target, self.critic, cfg.tau)
        self.critic_updates += 1
        metrics = {"critic_loss": critic_loss.detach(), "q_mean": q_mean, "target_q_mean": target_q_mean}

        features = features.detach()
        if policy.gripper is not None:
            with full_precision(self.device):  # a small MLP over three actions: no gain from bf16
                not_done = 1.0 - batch["terminated"]
                discount = cfg.discount ** batch["steps"] if "steps" in batch else cfg.discount
                gripper_loss, gripper_q = gripper_td_loss(
                    policy.gripper, self.gripper_target, features.float(), next_features.float(),
                    batch["action"][:, -1], batch["reward"], batch["grasp_penalty"], not_done, discount)
            self.gripper_opt.zero_grad(set_to_none=True)  # type: ignore[union-attr]
            gripper_loss.backward()
            self.gripper_opt.step()  # type: ignore[union-attr]
            polyak_update(self.gripper_target, policy.gripper, cfg.tau)  # type: ignore[arg-type]
            metrics.update(gripper_loss=gripper_loss.detach(), gripper_q_mean=gripper_q.detach())

        if noise.actor_eps is not None:
            base = batch["obs"][BASE_ACTION_KEY].float() if self.residual_scale is not None else None
            metrics.update(self._update_actor(features, noise.actor_eps, base,
                                              self._bc_target(batch, noise.obs_shifts)))
        return metrics

    def _bc_target(self, batch: Batch, obs_shifts: Mapping[str, torch.Tensor],
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """``(target actions, row mask, weight)`` for the warm start's BC term, or None when it is off."""
        weight = self.bc_weight_now()
        if weight <= 0.0:
            return None
        rows = batch["action"].shape[0]
        if self.cfg.warm_start.bc_target == "demos":
            if "demo" not in batch:
                return None
            action = batch["action"][:, :self.policy.continuous_dim].float()
            return action, batch["demo"].float(), torch.tensor(weight, device=self.device)
        if self.anchor is None:  # the first actor update: nothing has moved the actor yet
            self.anchor = copy.deepcopy(self.policy).requires_grad_(False)
        with torch.no_grad():
            with self._autocast():
                hidden = self.anchor.actor_trunk(self.anchor.encoder(self._shifted(batch["obs"], obs_shifts)))
            with full_precision(self.device):
                action = self.anchor.actor_head(hidden.float()).mode()
        return action, torch.ones(rows, device=self.device), torch.tensor(weight, device=self.device)

    def _draw_noise(self, batch: Batch) -> Noise:
        gen, cfg, rows = self.generator, self.cfg, batch["action"].shape[0]
        obs_shifts, next_shifts = self._draw_shifts(batch["obs"]), self._draw_shifts(batch["next_obs"])
        eps_shape = (rows, self.policy.continuous_dim)
        next_eps = torch.randn(eps_shape, generator=gen, device=self.device)
        subset_keys = (torch.randn(cfg.num_critics, generator=gen, device=self.device)
                       if cfg.num_min_qs < cfg.num_critics else None)
        actor_turn = (self.critic_updates + 1) % cfg.critic_actor_ratio == 0 and not self.warming_up
        actor_eps = torch.randn(eps_shape, generator=gen, device=self.device) if actor_turn else None
        return Noise(obs_shifts, next_shifts, next_eps, subset_keys, actor_eps)

    def _distribution(self, features: torch.Tensor) -> TanhNormal:
        """The actor's distribution; under bf16 only its trunk is autocast, the head and log-probs are float32."""
        with self._autocast():
            hidden = self.policy.actor_trunk(features)
        with full_precision(self.device):
            return self.policy.actor_head(hidden.float())

    def _draw_shifts(self, obs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """DrQ offsets for each raw camera image of ``obs`` (cached feature maps are not shifted)."""
        enc = self.policy.encoder.cfg
        if enc.augment != "shift" or enc.shift_pad <= 0:
            return {}
        return {k: draw_shifts(obs[k].shape[0], enc.shift_pad, self.generator, self.device)
                for k in self.policy.encoder.image_keys if obs[k].dtype == torch.uint8}

    def _shifted(self, obs: Mapping[str, torch.Tensor], shifts: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``obs`` with its uint8 ``(B, H, W, 3)`` images shifted, still uint8, on the device."""
        pad = self.policy.encoder.cfg.shift_pad
        return {k: apply_shifts(v, shifts[k], pad, channels_last=True) if k in shifts else v for k, v in obs.items()}

    def _critic_losses_eager(self, batch: Batch, obs_shifts: Mapping[str, torch.Tensor],
                             next_shifts: Mapping[str, torch.Tensor], next_eps: torch.Tensor,
                             subset_keys: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        """Encode the batch, build the TD target, and the critic loss; ``torch.compile`` wraps this.

        Returns ``(critic_loss, q_mean, target_q_mean, features, next_features)``.
        """
        cfg, policy = self.cfg, self.policy
        cont_action = self.critic_action(batch["obs"], batch["action"][:, :policy.continuous_dim])
        not_done = 1.0 - batch["terminated"]
        discount = cfg.discount ** batch["steps"] if "steps" in batch else cfg.discount
        alpha = self.temperature().detach()

        with self._autocast():
            features = policy.encoder(self._shifted(batch["obs"], obs_shifts))
        with torch.no_grad():
            with self._autocast():
                next_features = policy.encoder(self._shifted(batch["next_obs"], next_shifts))
            next_action, next_log_prob = rsample_with_noise(self._distribution(next_features), next_eps)
            next_action = self.critic_action(batch["next_obs"], next_action)
            with self._autocast():
                next_q_all = self.critic_target(next_features, next_action)
            next_q = subsample_min(next_q_all, cfg.num_min_qs, keys=subset_keys)
            if cfg.backup_entropy:
                next_q = next_q - alpha * next_log_prob
            target_q = batch["reward"] + discount * not_done * next_q

        with self._autocast():
            q_values = self.critic(features, cont_action)  # (num_critics, B), float32 (see networks)
        critic_loss = (q_values - target_q).pow(2).mean(dim=1).sum()
        return critic_loss, q_values.detach().mean(), target_q.mean(), features, next_features

    def _actor_losses_eager(self, features: torch.Tensor, eps: torch.Tensor,
                            base: torch.Tensor | None = None,
                            demo: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
                            ) -> tuple[torch.Tensor, ...]:
        """``(actor_loss, log_prob, bc_loss, bc_kept)`` on detached features; the critic must not require grad.
        ``base``: the batch's base actions in residual mode (the critic sees the combined action);
        ``demo``: ``(target actions, row mask, weight)`` for the warm start's BC term (module docstring);
        ``bc_kept``: the share of its rows the Q-filter kept (``agent.warm_start.bc_filter``)."""
        dist = self._distribution(features)
        action, log_prob = rsample_with_noise(dist, eps)
        if base is not None:
            action = combine_torch(base, action, self.residual_scale)
        with self._autocast():
            q = self.critic(features, action).mean(dim=0)
        alpha = self.temperature().detach()
        loss = (alpha * log_prob - q).mean()
        if demo is None:
            zero = torch.zeros((), device=q.device)
            return loss, log_prob, zero, zero
        demo_action, mask, weight = demo
        mean_action = dist.mode()
        covered = mask.sum().clamp(min=1.0)
        if self.cfg.warm_start.bc_filter == "q":
            mask = mask * self._q_prefers(features, demo_action, mean_action.detach())
        per_row = (mean_action - demo_action).pow(2).sum(dim=-1)
        bc_loss = (per_row * mask).sum() / covered
        return loss + weight * q.detach().abs().mean() * bc_loss, log_prob, bc_loss, mask.sum() / covered

    @torch.no_grad()
    def _q_prefers(self, features: torch.Tensor, target: torch.Tensor, own: torch.Tensor) -> torch.Tensor:
        """1.0 on the rows where the critic (mean over its ensemble) values ``target`` above ``own``.

        The Q-filter of Nair et al. (2018): the BC term pulls only where the BC action still
        looks better than the actor's, and fades by itself where the critic has learned that
        the actor's is better. The loss is divided by the rows the term covers before the
        filter, so it weakens as fewer rows pass instead of putting a batch's weight on a few.
        """
        with self._autocast():
            q_target = self.critic(features, target).mean(dim=0)
            q_own = self.critic(features, own).mean(dim=0)
        return (q_target.float() > q_own.float()).float()

    def _update_actor(self, features: torch.Tensor, eps: torch.Tensor, base: torch.Tensor | None = None,
                      demo: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
                      ) -> dict[str, torch.Tensor]:
        self.critic.requires_grad_(False)  # the actor loss needs dQ/da, not dQ/dtheta
        try:
            actor_loss, log_prob, bc_loss, bc_kept = self._actor_losses(features, eps, base, demo)
        finally:
            self.critic.requires_grad_(True)
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_opt.step()

        entropy = -log_prob.detach()
        temperature_loss = self.temperature.loss(entropy, self.target_entropy)
        self.temperature_opt.zero_grad(set_to_none=True)
        temperature_loss.backward()
        self.temperature_opt.step()
        self.actor_updates += 1
        metrics = {"actor_loss": actor_loss.detach(), "entropy": entropy.mean(),
                   "temperature": self.temperature().detach(), "temperature_loss": temperature_loss.detach()}
        if demo is not None:
            metrics["bc_loss"] = bc_loss.detach()
            if self.cfg.warm_start.bc_filter == "q":
                metrics["bc_kept"] = bc_kept.detach()
        return metrics

    @torch.no_grad()
    def td_losses(self, batch: Batch) -> dict[str, float]:
        """TD losses on ``batch`` without learning: no augmentation, mean next action,
        min over all target critics. A diagnostic (and what tests watch fall)."""
        policy, cfg = self.policy, self.cfg
        not_done = 1.0 - batch["terminated"]
        features = policy.encoder(batch["obs"])
        next_features = policy.encoder(batch["next_obs"])
        next_action = self.critic_action(batch["next_obs"], policy.distribution(next_features).mode())
        discount = cfg.discount ** batch["steps"] if "steps" in batch else cfg.discount
        next_q = self.critic_target(next_features, next_action).min(dim=0).values
        target_q = batch["reward"] + discount * not_done * next_q
        q_values = self.critic(features, self.critic_action(batch["obs"], batch["action"][:, :policy.continuous_dim]))
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
        if self.anchor is not None:  # a resumed warm start holds the actor to the same BC policy
            state["anchor"] = self.anchor.state_dict()
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for k, m in self._modules().items():
            m.load_state_dict(state[k])
        for k, o in self._optimizers().items():
            o.load_state_dict(state[k])
            for group in o.param_groups:  # a saved optimizer brings its kernel choice: keep this device's
                group["fused"] = self._fused
        self.generator.set_state(state["generator"])
        self.critic_updates = int(state["critic_updates"])
        self.actor_updates = int(state["actor_updates"])
        if "anchor" in state:
            self.anchor = copy.deepcopy(self.policy).requires_grad_(False)
            self.anchor.load_state_dict(state["anchor"])
