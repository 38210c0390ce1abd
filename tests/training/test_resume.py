"""Train, stop, resume: the resumed run continues exactly where the stopped one left off."""

import numpy as np
import pytest
import torch

from robot_rl.config import Config, to_dict
from robot_rl.config.agent import TrainConfig
from robot_rl.errors import RobotRLError
from robot_rl.tasks import load_config
from robot_rl.training.checkpoint import CheckpointError, config_difference
from robot_rl.training.trainer import Trainer

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread


def make_cfg(run_dir, total) -> Config:
    cfg = Config()
    cfg.agent.hidden_dims = (32, 32)
    cfg.agent.gripper_critic = True
    cfg.agent.critic_actor_ratio = 2
    cfg.train = TrainConfig(total_env_steps=total, utd_ratio=1.5, batch_size=32, learning_starts=40,
                            random_steps=60, scripted_demos=3, eval_every=100, eval_episodes=2,
                            checkpoint_every=0, progress=False, run_dir=str(run_dir), replay_capacity=5000,
                            demo_capacity=500)
    return cfg


@pytest.fixture
def make_trainer(point_env_fn, point_expert_cls):
    def build(cfg, **kw):
        return Trainer(cfg, env_fn=lambda c: point_env_fn(), source_fn=lambda env, c: point_expert_cls(env),
                       tensorboard=False, **kw)
    return build


def peek_batch(trainer):
    """The next training batch, without consuming the learner's sampling RNG."""
    rng_state = trainer.learner.rng.bit_generator.state
    batch = trainer.learner.sample()
    trainer.learner.rng.bit_generator.state = rng_state
    return batch


def assert_same_state(a, b):
    sa, sb = a.learner.agent.state_dict(), b.learner.agent.state_dict()
    for name in ("policy", "critic", "critic_target", "temperature", "gripper_target"):
        for k in sa[name]:
            assert torch.equal(sa[name][k], sb[name][k]), f"{name}.{k}"
    for name in ("critic_opt", "actor_opt", "temperature_opt", "gripper_opt"):
        for pid, st in sa[name]["state"].items():
            for k, v in st.items():
                assert torch.equal(v, sb[name]["state"][pid][k]), f"{name}.{pid}.{k}"
    assert torch.equal(sa["generator"], sb["generator"])
    for buf in ("online", "demo"):
        ba, bb = getattr(a.learner, buf), getattr(b.learner, buf)
        assert ba.frames_written == bb.frames_written and ba.ptr == bb.ptr
        np.testing.assert_array_equal(ba.valid, bb.valid)
        for k in ba.frames:
            np.testing.assert_array_equal(ba.frames[k], bb.frames[k])
        np.testing.assert_array_equal(ba.action, bb.action)
        for k in ba.fields:
            np.testing.assert_array_equal(ba.fields[k], bb.fields[k])


def test_resume_continues_exactly(tmp_path, make_trainer):
    # the uninterrupted run, paused in memory at the same point as the stopped one
    straight = make_trainer(make_cfg(tmp_path / "straight", 200))
    straight.run()
    stop_steps = straight.learner.env_steps
    batch_straight = peek_batch(straight)

    stopped = make_trainer(make_cfg(tmp_path / "stopped", 200))
    result = stopped.run()
    assert result.env_steps == stop_steps >= 200 and not stopped.actor.in_episode
    saved_alpha = stopped.learner.agent.alpha
    saved_episode = stopped.actor.episode_id

    resumed = make_trainer(make_cfg(tmp_path / "stopped", 400), resume=True)
    assert resumed.learner.env_steps == stop_steps  # counters continue
    assert resumed.learner.updates_done == stopped.learner.updates_done
    assert resumed.actor.episode_id == saved_episode and resumed.episodes == stopped.episodes
    assert resumed.learner.agent.alpha == saved_alpha
    assert_same_state(resumed, stopped)  # buffers, networks, optimizer moments, agent RNG
    batch_resumed = peek_batch(resumed)
    for key in ("action", "reward", "terminated"):
        np.testing.assert_array_equal(batch_resumed[key], batch_straight[key])
    np.testing.assert_array_equal(batch_resumed["obs"]["state"], batch_straight["obs"]["state"])

    straight.cfg.train.total_env_steps = 400
    straight.run()
    resumed.run()
    assert resumed.learner.env_steps == straight.learner.env_steps > 400 - 1
    assert_same_state(resumed, straight)  # the rest of the run is the same run
    evals_straight = [e for e in straight.metrics.evals if e["env_steps"] > stop_steps]
    evals_resumed = [e for e in resumed.metrics.evals]
    assert evals_resumed == evals_straight


def test_a_checkpoint_from_another_config_is_refused_naming_the_key(tmp_path, make_trainer):
    make_trainer(make_cfg(tmp_path / "run", 50)).run()
    other = make_cfg(tmp_path / "run", 100)
    other.agent.hidden_dims = (64, 64)
    with pytest.raises(CheckpointError, match=r"'agent.hidden_dims' is \[32, 32\] in the checkpoint, \[64, 64\] here"):
        make_trainer(other, resume=True)
    other = make_cfg(tmp_path / "run", 100)
    other.train.utd_ratio = 4.0
    with pytest.raises(CheckpointError, match="'train.utd_ratio'"):
        make_trainer(other, resume=True)
    # how long to run and how often to evaluate may change
    longer = make_cfg(tmp_path / "run", 100)
    longer.train.eval_every = 0
    make_trainer(longer, resume=True)


def test_an_existing_run_needs_resume_or_force(tmp_path, make_trainer):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        make_trainer(make_cfg(tmp_path / "empty", 50), resume=True)
    make_trainer(make_cfg(tmp_path / "run", 50)).run()
    with pytest.raises(RobotRLError, match=r"choose another folder with --run-dir DIR, continue it with --resume, "
                       r"or delete it with --force \(removes its checkpoint, replay log"):
        make_trainer(make_cfg(tmp_path / "run", 50))
    fresh = make_trainer(make_cfg(tmp_path / "run", 50), force=True)
    assert fresh.learner.env_steps == 0


def test_a_run_made_before_a_config_key_existed_resumes_while_the_key_is_at_its_default():
    defaults = to_dict(Config())
    current = to_dict(load_config("configs/pick_cube.yaml"))
    saved = to_dict(load_config("configs/pick_cube.yaml"))
    del saved["robot"]["controller"]["max_posture_speed"]  # as written before the key existed
    assert config_difference(saved, current, defaults=defaults) is None
    assert "not in the checkpoint's config" in config_difference(saved, current)
    current["robot"]["controller"]["max_posture_speed"] = 0.5  # not the default: a real change
    assert "max_posture_speed" in config_difference(saved, current, defaults=defaults)
