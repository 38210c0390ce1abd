"""The image path at small resolution: small conv encoder, frozen ResNet-10 backbone, DrQ shifts."""

import numpy as np
import pytest
import torch

from robot_rl.agents import make_agent
from robot_rl.agents.encoders import ResNet10
from robot_rl.config.agent import AgentConfig, EncoderConfig, TrainConfig
from robot_rl.data.rollout import ActorLoop
from robot_rl.errors import ConfigError
from robot_rl.training.learner import Learner, batch_to_torch

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

IMAGE = 32


class _Mixed:
    """Expert actions with random ones mixed in, so the data holds failures too."""

    def __init__(self, expert, env, seed=0):
        self.expert, self.env, self.rng = expert, env, np.random.default_rng(seed)

    def act(self, obs):
        if self.rng.random() < 0.3:
            return self.rng.uniform(-1, 1, 3).astype(np.float32)
        return self.expert.act(obs)


def small_cfg(**encoder) -> AgentConfig:
    enc = dict(channels=(8, 8), strides=(2, 2), latent_dim=16)
    enc.update(encoder)
    return AgentConfig(hidden_dims=(32, 32), gripper_critic=True, encoder=EncoderConfig(**enc))


def fill(learner, env, expert, steps=150):
    loop = ActorLoop(env, _Mixed(expert, env), seed=0)
    for _ in range(steps):
        learner.ingest(loop.step())


def grads(module):
    return {n: p.grad for n, p in module.named_parameters()}


def test_small_encoder_trains_losses_fall_and_every_trainable_part_gets_gradients(point_env_fn, point_expert_cls):
    torch.manual_seed(0)
    env = point_env_fn(image_size=IMAGE)
    learner = Learner(small_cfg(), TrainConfig(batch_size=32), env.observation_space, env.action_space, seed=0)
    fill(learner, env, point_expert_cls(env))
    agent = learner.agent
    assert agent.policy.encoder.image_keys == ["front"]
    held_out = batch_to_torch(learner.sample(), agent.device)  # a fixed batch to watch the losses on
    before = agent.td_losses(held_out)
    metrics = [learner.update() for _ in range(300)]
    after = agent.td_losses(held_out)
    for key in ("critic_loss", "gripper_loss", "actor_loss", "temperature_loss"):
        assert all(np.isfinite(float(m[key])) for m in metrics if key in m), key
    assert after["critic_loss"] < 0.6 * before["critic_loss"], (before, after)
    assert after["gripper_loss"] < 0.6 * before["gripper_loss"], (before, after)

    for name, g in grads(agent.policy.encoder).items():  # the critic loss trains the encoder
        assert g is not None and g.abs().sum() > 0, name
    for module in (agent.policy.actor_trunk, agent.policy.actor_head, agent.critic, agent.policy.gripper):
        for name, g in grads(module).items():
            assert g is not None and g.abs().sum() > 0, name
    assert agent.temperature.log_alpha.grad is not None


def test_frozen_backbone_gets_no_gradient_and_heads_do(point_env_fn, point_expert_cls, tmp_path):
    env = point_env_fn(image_size=IMAGE)
    backbone = ResNet10()
    with torch.no_grad():
        for p in backbone.parameters():
            p.normal_(0, 0.05)
    torch.save({"state_dict": backbone.state_dict(), "fc.weight": torch.zeros(3)}, tmp_path / "r10.pt")
    cfg = small_cfg(kind="resnet10", pretrained_path=str(tmp_path / "r10.pt"), cache_features=False)
    learner = Learner(cfg, TrainConfig(batch_size=16), env.observation_space, env.action_space, seed=0)
    encoder = learner.agent.policy.encoder
    loaded = encoder.backbones["front"].state_dict()
    for k, v in backbone.state_dict().items():  # the file's weights, not a fresh init
        assert torch.equal(loaded[k], v), k
    before = {k: v.clone() for k, v in loaded.items()}
    fill(learner, env, point_expert_cls(env), steps=60)
    metrics = [learner.update() for _ in range(5)]
    assert all(np.isfinite(float(m["critic_loss"])) for m in metrics)
    for name, p in encoder.backbones["front"].named_parameters():
        assert not p.requires_grad and p.grad is None, name
    for k, v in encoder.backbones["front"].state_dict().items():  # BatchNorm statistics too
        assert torch.equal(v, before[k]), k
    for name, g in grads(encoder.heads).items():
        assert g is not None and g.abs().sum() > 0, name
    # an actor does not get the frozen backbone shipped: it loads the same file
    assert not any(k.startswith("encoder.backbones") for k in learner.agent.policy.weights())


def test_cached_backbone_features_encode_like_the_images(point_env_fn, point_expert_cls):
    env = point_env_fn(image_size=IMAGE)
    cfg = small_cfg(kind="resnet10", cache_features=True)
    learner = Learner(cfg, TrainConfig(batch_size=16), env.observation_space, env.action_space, seed=0)
    encoder = learner.agent.policy.encoder
    assert encoder.caches_features
    assert learner.online.frames["front"].dtype == np.float16
    assert learner.online.frames["front"].shape[1:] == (512, 1, 1)
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    steps = [loop.step() for _ in range(5)]
    for s in steps:
        learner.ingest(s)
    raw = {k: torch.as_tensor(np.stack([s.obs[k] for s in steps[:4]])) for k in steps[0].obs}
    stored = learner.online.gather(np.arange(4))["obs"]
    with torch.no_grad():
        from_images = encoder(raw)
        from_cache = encoder({k: torch.as_tensor(v) for k, v in stored.items()})
    assert torch.allclose(from_images, from_cache, atol=2e-2)
    assert np.isfinite(float(learner.update()["critic_loss"]))


def test_augmentation_changes_inputs_and_acting_does_not_augment(point_env_fn, point_expert_cls):
    env = point_env_fn(image_size=IMAGE)
    agent = make_agent(small_cfg(shift_pad=4), env.observation_space, env.action_space, seed=0)
    encoder = agent.policy.encoder
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    obs = [loop.step().obs for _ in range(8)]
    batch = {k: torch.as_tensor(np.stack([o[k] for o in obs])) for k in obs[0]}
    raw_copy = batch["front"].clone()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        plain = encoder.feature_maps(batch)["front"]
        shifted = encoder.feature_maps(batch, augment=True, generator=g)["front"]
        shifted_again = encoder.feature_maps(batch, augment=True, generator=g)["front"]
    assert torch.equal(batch["front"], raw_copy)  # the stored images are never modified
    assert not torch.allclose(plain, shifted) and not torch.allclose(shifted, shifted_again)
    off = make_agent(small_cfg(augment="none"), env.observation_space, env.action_space, seed=0).policy.encoder
    with torch.no_grad():
        assert torch.equal(off.feature_maps(batch, augment=True, generator=g)["front"],
                           off.feature_maps(batch)["front"])
    # eval: the same observation always gives the same action
    first = agent.act(obs[0], deterministic=True)
    for _ in range(3):
        np.testing.assert_array_equal(agent.act(obs[0], deterministic=True), first)


def test_missing_or_mismatched_backbone_file_is_a_config_error(point_env_fn, tmp_path):
    env = point_env_fn(image_size=IMAGE)
    with pytest.raises(ConfigError, match="weights file not found"):
        make_agent(small_cfg(kind="resnet10", pretrained_path=str(tmp_path / "none.pt")),
                   env.observation_space, env.action_space)
    state = ResNet10().state_dict()
    state["conv1.weight"] = torch.zeros(32, 3, 7, 7)
    torch.save(state, tmp_path / "bad.pt")
    with pytest.raises(ConfigError, match=r"'conv1.weight' has shape \(32, 3, 7, 7\)"):
        make_agent(small_cfg(kind="resnet10", pretrained_path=str(tmp_path / "bad.pt")),
                   env.observation_space, env.action_space)
    del state["conv1.weight"]
    torch.save(state, tmp_path / "short.pt")
    with pytest.raises(ConfigError, match=r"'conv1.weight' is missing \(1/60 backbone tensors absent"):
        make_agent(small_cfg(kind="resnet10", pretrained_path=str(tmp_path / "short.pt")),
                   env.observation_space, env.action_space)
