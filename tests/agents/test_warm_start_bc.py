"""The warm start's behaviour-cloning term: the learner marks demo rows when the term reads them, the
term holds the actor near the BC policy (or the demos' actions) against a critic that pulls elsewhere,
its weight fades, and a resumed agent holds to the same BC policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from robot_rl.config.agent import AgentConfig, TrainConfig
from robot_rl.data.rollout import ActorLoop
from robot_rl.training.checkpoint import read_tree, write_tree
from robot_rl.training.learner import Learner, batch_to_torch

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def warm_cfg(bc_weight: float, decay: int = 0, target: str = "demos") -> AgentConfig:
    cfg = AgentConfig(hidden_dims=(32, 32))
    cfg.base.mode, cfg.base.source = "warm_start", "unused:factory"  # the agent alone never loads the base
    cfg.warm_start.critic_steps = 0
    cfg.warm_start.bc_weight, cfg.warm_start.bc_decay_updates = bc_weight, decay
    cfg.warm_start.bc_target = target  # type: ignore[assignment]
    return cfg


def filled_learner(env, expert, cfg: AgentConfig) -> Learner:
    """A learner with expert steps in its online buffer and a copy of some in its demo buffer."""
    learner = Learner(cfg, TrainConfig(batch_size=64, learning_starts=0, demo_fraction=0.25),
                      env.observation_space, env.action_space)
    loop = ActorLoop(env, expert, seed=0)
    for episode in range(4):
        for step in loop.run_episode():
            step.intervened = episode == 0  # interventions go to the demo buffer too
            learner.ingest(step)
    return learner


def test_the_learner_marks_demo_rows_only_when_the_agent_reads_them(point_env_fn, point_expert_cls):
    env = point_env_fn()
    learner = filled_learner(env, point_expert_cls(env), warm_cfg(0.4))
    batch = learner.sample()
    assert batch["demo"].dtype == np.float32 and batch["demo"].shape == (64,)
    np.testing.assert_array_equal(batch["demo"], np.r_[np.zeros(48), np.ones(16)])  # online rows first
    plain = filled_learner(env, point_expert_cls(env), warm_cfg(0.0))
    assert "demo" not in plain.sample()
    assert "demo" not in filled_learner(env, point_expert_cls(env), warm_cfg(0.4, target="bc_policy")).sample()
    assert "demo" not in filled_learner(env, point_expert_cls(env), AgentConfig(hidden_dims=(32, 32))).sample()


def drift_on_demo_rows(env, expert, bc_weight: float, target: str = "demos", updates: int = 150,
                       bc_filter: str = "none", demos_best: bool = False) -> float:
    """Mean squared distance between the actor's mode and the demo actions after ``updates`` actor
    updates against a critic rigged to reward one far-off corner of the action space (and, with
    ``demos_best``, to value each row's own stored action above every other, a bump with no gradient)."""
    learner = filled_learner(env, expert, warm_cfg(0.4))  # a batch with its demo rows marked
    agent = learner.agent
    batch = batch_to_torch(learner.sample(), agent.device)
    agent.bc_weight = bc_weight
    agent.cfg.warm_start.bc_target = target  # type: ignore[assignment]
    agent.cfg.warm_start.bc_filter = bc_filter  # type: ignore[assignment]
    corner = torch.ones(agent.policy.continuous_dim)
    stored = batch["action"][:, :agent.policy.continuous_dim]

    def rigged(features: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        q = -(action - corner).pow(2).sum(-1) * 10.0
        if demos_best:
            q = q + 100.0 * (action == stored).all(-1).float()
        return q.unsqueeze(0).expand(2, -1)

    agent.critic.forward = rigged  # type: ignore[method-assign]
    demo_rows = batch["demo"] > 0
    features = agent.policy.encoder(batch["obs"]).detach()
    target = batch["action"][demo_rows, :agent.policy.continuous_dim]
    # first fit the actor to the demo actions (the warm start begins at the BC policy)
    opt = torch.optim.Adam(list(agent.policy.actor_trunk.parameters()) + list(agent.policy.actor_head.parameters()),
                           lr=3e-3)
    for _ in range(300):
        mode = agent.policy.actor_head(agent.policy.actor_trunk(features)).mode()
        loss = (mode[demo_rows] - target).pow(2).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    start = float(loss.detach())
    for _ in range(updates):
        eps = torch.randn(batch["action"].shape[0], agent.policy.continuous_dim, generator=agent.generator)
        agent._update_actor(features, eps, None, agent._bc_target(batch, {}))
    with torch.no_grad():
        mode = agent.policy.actor_head(agent.policy.actor_trunk(features)).mode()
    assert start < 0.05, start  # the fit worked: both arms start at the demos
    return float((mode[demo_rows] - target).pow(2).sum(-1).mean())


def test_the_bc_term_holds_the_actor_at_the_demos_against_a_critic_that_pulls_away(point_env_fn,
                                                                                    point_expert_cls):
    env = point_env_fn()
    free = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.0)
    held = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.4)
    anchored = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.4, target="bc_policy")
    print(f"squared distance to the demo actions: without the BC term {free:.3f}, held to the demos "
          f"{held:.3f}, held to the BC policy {anchored:.3f}")
    assert free > 0.5, free  # the rigged critic drags an unheld actor well away
    assert held < free / 3, (held, free)
    assert anchored < free / 3, (anchored, free)  # the actor as it started acted like the demos


def test_the_q_filter_lets_the_actor_go_where_the_critic_prefers_its_own_action(point_env_fn, point_expert_cls):
    """Nair et al.'s Q-filter: the term pulls only on rows where the critic values the BC target above
    the actor's own action. A critic that prefers the actor's new actions frees it; one that values the
    demos' actions most keeps it held."""
    env = point_env_fn()
    free = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.0)
    held = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.4)
    freed = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.4, bc_filter="q")
    kept = drift_on_demo_rows(env, point_expert_cls(env), bc_weight=0.4, bc_filter="q", demos_best=True)
    print(f"squared distance to the demo actions: free {free:.3f}, held {held:.3f}, Q-filtered with the "
          f"critic preferring the actor's move {freed:.3f}, with the critic preferring the demos {kept:.3f}")
    assert freed > free / 2 and freed > 3 * held, (freed, free, held)
    assert kept < free / 3, (kept, free)


def test_the_q_filter_reports_the_share_it_kept(point_env_fn, point_expert_cls):
    env = point_env_fn()
    cfg = warm_cfg(0.4, target="bc_policy")
    cfg.warm_start.bc_filter = "q"
    learner = filled_learner(env, point_expert_cls(env), cfg)
    agent = learner.agent
    for _ in range(5):
        metrics = agent.update(batch_to_torch(learner.sample(), agent.device))
    assert 0.0 <= float(metrics["bc_kept"]) <= 1.0 and np.isfinite(float(metrics["bc_loss"]))
    assert "bc_kept" not in filled_learner(env, point_expert_cls(env), warm_cfg(0.4)).agent.update(
        batch_to_torch(learner.sample(), agent.device))


def test_the_bc_weight_fades_linearly_and_then_the_term_is_off(point_env_fn, point_expert_cls):
    env = point_env_fn()
    learner = filled_learner(env, point_expert_cls(env), warm_cfg(0.4, decay=10))
    agent = learner.agent
    assert agent.bc_weight_now() == pytest.approx(0.4)
    metrics = agent.update(batch_to_torch(learner.sample(), agent.device))
    assert "bc_loss" in metrics and float(metrics["bc_loss"]) >= 0.0
    agent.actor_updates = 5
    assert agent.bc_weight_now() == pytest.approx(0.2)
    agent.actor_updates = 10
    assert agent.bc_weight_now() == 0.0
    assert "bc_loss" not in agent.update(batch_to_torch(learner.sample(), agent.device))
    never = filled_learner(env, point_expert_cls(env), warm_cfg(0.4, decay=0)).agent
    never.actor_updates = 10**6
    assert never.bc_weight_now() == pytest.approx(0.4)


def test_a_resumed_agent_holds_to_the_bc_policy_it_started_from(tmp_path, point_env_fn, point_expert_cls):
    env = point_env_fn()
    learner = filled_learner(env, point_expert_cls(env), warm_cfg(0.4, target="bc_policy"))
    agent = learner.agent
    started = {k: v.clone() for k, v in agent.policy.state_dict().items()}
    for _ in range(20):
        agent.update(batch_to_torch(learner.sample(), agent.device))
    assert agent.anchor is not None and agent.actor_updates == 20
    for key, value in agent.anchor.state_dict().items():
        assert torch.equal(value, started[key]), key  # the anchor is the actor before its first update
    assert any(not torch.equal(v, started[k]) for k, v in agent.policy.state_dict().items())
    resumed = filled_learner(env, point_expert_cls(env), warm_cfg(0.4, target="bc_policy")).agent
    with open(tmp_path / "agent_state", "wb") as f:  # through the checkpoint's own file format
        write_tree(f, agent.state_dict())
    resumed.load_state_dict(read_tree(tmp_path / "agent_state"))
    assert resumed.anchor is not None and not any(p.requires_grad for p in resumed.anchor.parameters())
    for key, value in resumed.anchor.state_dict().items():
        assert torch.equal(value, started[key]), key
