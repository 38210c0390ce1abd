"""SAC/RLPD agent on the point-mass env: acting, weights for actors, gripper critic, learning."""

import numpy as np
import pytest
import torch

from robot_rl.agents import Policy, make_agent
from robot_rl.config.agent import AgentConfig, TrainConfig
from robot_rl.data.replay import ReplayBuffer
from robot_rl.data.rollout import ActorLoop
from robot_rl.training.learner import Learner, batch_to_torch

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

SMALL = dict(hidden_dims=(32, 32))


def filled_buffer(env, expert, episodes=6, seed=0):
    buf = ReplayBuffer(env.observation_space, env.action_space.shape[0], 2000)
    loop = ActorLoop(env, expert, seed=seed)
    for _ in range(episodes):
        buf.add_episode(loop.run_episode())
    return buf


def test_eval_is_deterministic_and_sampling_is_not(point_env_fn):
    env = point_env_fn()
    agent = make_agent(AgentConfig(**SMALL), env.observation_space, env.action_space, seed=0)
    obs, _ = env.reset(seed=0)
    a1, a2 = agent.act(obs, deterministic=True), agent.act(obs, deterministic=True)
    np.testing.assert_array_equal(a1, a2)
    g = torch.Generator().manual_seed(0)
    s1, s2 = agent.act(obs, generator=g), agent.act(obs, generator=g)
    assert not np.allclose(s1, s2)
    assert env.action_space.contains(a1) and env.action_space.contains(s1)


def test_actor_weights_round_trip_into_a_fresh_policy(point_env_fn):
    env = point_env_fn(image_size=16)
    cfg = AgentConfig(**SMALL, gripper_critic=True)
    cfg.encoder.channels, cfg.encoder.strides, cfg.encoder.latent_dim = (4, 4), (2, 2), 8
    agent = make_agent(cfg, env.observation_space, env.action_space, seed=0)
    weights = agent.policy.weights()
    assert all(isinstance(v, np.ndarray) for v in weights.values())
    assert any(k.startswith("encoder.") for k in weights) and any(k.startswith("gripper.") for k in weights)
    assert not any("critic" in k for k in weights)  # only what the actor needs
    torch.manual_seed(123)
    actor_side = Policy(cfg, env.observation_space, env.action_space)
    obs, _ = env.reset(seed=1)
    assert not np.allclose(actor_side.act(obs, True), agent.act(obs, True))
    actor_side.load_weights(weights)
    np.testing.assert_array_equal(actor_side.act(obs, True), agent.act(obs, True))
    with pytest.raises(ValueError, match="lack 'actor_head.mean.weight'"):
        actor_side.load_weights({k: v for k, v in weights.items() if k != "actor_head.mean.weight"})
    with pytest.raises(ValueError, match="has shape"):
        actor_side.load_weights({**weights, "actor_head.mean.bias": np.zeros(7, np.float32)})
    with pytest.raises(ValueError, match="unknown key 'bogus'"):
        actor_side.load_weights({**weights, "bogus": np.zeros(1)})


def test_gripper_critic_drives_the_last_dim_and_alone_sees_the_penalty(point_env_fn, point_expert_cls):
    env = point_env_fn()
    cfg = AgentConfig(**SMALL, gripper_critic=True)
    agent = make_agent(cfg, env.observation_space, env.action_space, seed=0)
    assert agent.policy.continuous_dim == 2
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        assert agent.act(obs)[-1] in (-1.0, 0.0, 1.0)
    batch = batch_to_torch(filled_buffer(env, point_expert_cls(env)).sample(64, np.random.default_rng(0)), "cpu")

    def losses(penalty):
        a = make_agent(cfg, env.observation_space, env.action_space, seed=0)
        m = a.update({**batch, "grasp_penalty": torch.full_like(batch["reward"], penalty)})
        return float(m["critic_loss"]), float(m["gripper_loss"])

    critic0, gripper0 = losses(0.0)
    critic1, gripper1 = losses(-5.0)
    assert critic0 == critic1  # SAC's critics never see the penalty
    assert gripper1 > gripper0 + 1.0  # the gripper critic does


def test_ten_critics_with_a_random_pair_for_the_target(point_env_fn, point_expert_cls):
    env = point_env_fn()
    agent = make_agent(AgentConfig(**SMALL, num_critics=10, num_min_qs=2), env.observation_space, env.action_space)
    batch = batch_to_torch(filled_buffer(env, point_expert_cls(env)).sample(32, np.random.default_rng(0)), "cpu")
    q = agent.critic(agent.policy.encoder(batch["obs"]), batch["action"])
    assert q.shape == (10, 32)
    metrics = agent.update(batch)
    assert np.isfinite(float(metrics["critic_loss"])) and agent.critic_updates == 1


def test_critic_actor_ratio_and_utd_are_counted(point_env_fn, point_expert_cls):
    env = point_env_fn()
    train_cfg = TrainConfig(utd_ratio=3, learning_starts=10, batch_size=16)
    learner = Learner(AgentConfig(**SMALL, critic_actor_ratio=2), train_cfg, env.observation_space,
                      env.action_space)
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    for _ in range(10):
        learner.ingest(loop.step())
        assert learner.train() == 0  # before learning_starts
    for n in range(1, 8):
        learner.ingest(loop.step())
        assert learner.train() == 3
        assert learner.updates_done == 3 * n
    assert learner.agent.actor_updates == learner.updates_done // 2
    version, weights = learner.weights()
    assert version == learner.updates_done and "actor_head.mean.weight" in weights


def test_interventions_also_go_to_the_demo_buffer(point_env_fn, point_expert_cls):
    env = point_env_fn()
    learner = Learner(AgentConfig(**SMALL), TrainConfig(), env.observation_space, env.action_space)
    steps = ActorLoop(env, point_expert_cls(env), seed=0).run_episode()
    for i, s in enumerate(steps):
        s.intervened = i < 3 or i == len(steps) - 1
        learner.ingest(s)
    assert len(learner.online) == len(steps)
    assert len(learner.demo) == 4  # steps 0-2 (step 2's next frame is step 3's obs) and the last step
    assert learner.demo.fields["intervened"][learner.demo.valid].all()
    batch = learner.demo.sample(64, np.random.default_rng(0))
    first_three = batch["action"][:, 0] != steps[-1].action[0]
    for row in np.flatnonzero(first_three):  # each next_obs is the obs of the step that followed
        t = next(i for i in range(3) if np.array_equal(steps[i].obs["state"], batch["obs"]["state"][row]))
        np.testing.assert_array_equal(batch["next_obs"]["state"][row], steps[t + 1].obs["state"])


def test_sampling_with_given_noise_is_the_distributions_own_sampling():
    """The update draws its noise first (for torch.compile) and must still sample exactly as
    TanhNormal does: same values, same gradients, to the last bit."""
    from robot_rl.agents.distributions import TanhNormal
    from robot_rl.agents.sac import rsample_with_noise

    torch.manual_seed(0)
    mean, log_std = torch.randn(64, 3, requires_grad=True), (0.3 * torch.randn(64, 3)).requires_grad_()
    own = TanhNormal(mean, log_std).rsample_with_log_prob(torch.Generator().manual_seed(9))
    eps = torch.randn(mean.shape, generator=torch.Generator().manual_seed(9))
    given = rsample_with_noise(TanhNormal(mean, log_std), eps)
    for a, b in zip(own, given):
        assert torch.equal(a, b)
    grads_own = torch.autograd.grad((own[0].sum() + own[1].sum()), (mean, log_std))
    grads_given = torch.autograd.grad((given[0].sum() + given[1].sum()), (mean, log_std))
    for a, b in zip(grads_own, grads_given):
        assert torch.equal(a, b)
