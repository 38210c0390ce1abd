"""Prefetching batches on background threads changes nothing but speed.

On the CPU the prefetcher runs the same code as on a GPU except for pinned memory and
the side CUDA stream (there is nothing to copy to): the same draws on the main thread,
the same gathers on worker threads, the same discards when data arrives.
"""

import copy
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from robot_rl.config.agent import AgentConfig, EncoderConfig, TrainConfig
from robot_rl.config.loader import build
from robot_rl.data.rollout import ActorLoop
from robot_rl.errors import ConfigError
from robot_rl.training import learner as learner_module
from robot_rl.training.learner import Learner, batch_to_torch
from robot_rl.training.trainer import Trainer

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

ROOT = Path(__file__).resolve().parents[2]
AGENT = dict(hidden_dims=(32, 32), gripper_critic=True,
             encoder=EncoderConfig(channels=(4, 4), strides=(2, 2), latent_dim=8))


def make_learner(env, prefetch="off", depth=2, **train):
    cfg = TrainConfig(batch_size=16, utd_ratio=1.5, learning_starts=20, prefetch=prefetch, prefetch_depth=depth,
                      **train)
    return Learner(AgentConfig(**AGENT), cfg, env.observation_space, env.action_space, seed=1)


def assert_same(a: Learner, b: Learner) -> None:
    sa, sb = a.agent.state_dict(), b.agent.state_dict()
    for name in ("policy", "critic", "critic_target", "gripper_target"):
        for k in sa[name]:
            assert torch.equal(sa[name][k], sb[name][k]), f"{name}.{k}"
    assert torch.equal(sa["generator"], sb["generator"])
    assert sa["critic_updates"] == sb["critic_updates"]
    assert a.state_dict()["rng"] == b.state_dict()["rng"]


def drive(learner: Learner, env, expert, steps: int, extra_every: int = 7) -> None:
    """Steps in, UTD updates after each; every few steps also a run of plain update() calls,
    which leave speculative batches pending for the next step's ingest to drop."""
    loop = ActorLoop(env, expert, seed=0)
    for i in range(steps):
        learner.ingest(loop.step())
        learner.train()
        if i % extra_every == 0 and learner.updates_due() == 0 and len(learner.online):
            for _ in range(3):
                learner.update()


@pytest.mark.parametrize("depth", [1, 3])
def test_prefetching_gives_the_same_run_with_data_arriving_between_updates(point_env_fn, point_expert_cls, depth):
    runs = {}
    for prefetch in ("off", "on"):
        env = point_env_fn(image_size=16)
        runs[prefetch] = make_learner(env, prefetch, depth)
        drive(runs[prefetch], env, point_expert_cls(env), steps=70)
    off, on = runs["off"], runs["on"]
    assert off.prefetcher is None and on.prefetcher is not None
    assert on.updates_done == off.updates_done > 60
    assert on.prefetcher.discarded > 0  # speculative batches were dropped and drawn again
    assert_same(off, on)
    on.close()


def test_prefetched_batches_are_the_sampled_ones(point_env_fn, point_expert_cls):
    env = point_env_fn(image_size=16)
    off, on = make_learner(env), make_learner(env, "on", depth=2)
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    for _ in range(40):
        step = loop.step()
        off.ingest(step)
        on.ingest(step)
    for _ in range(4):
        expected = batch_to_torch(off.sample(), off.agent.device)
        got = on.prefetcher.next()
        assert got["obs"]["front"].dtype == torch.uint8  # images stay uint8 until the encoder
        for key, value in expected.items():
            if isinstance(value, dict):
                for k in value:
                    assert torch.equal(got[key][k], value[k]), (key, k)
            else:
                assert torch.equal(got[key], value), key
    assert on.prefetcher.pending == 2
    # whoever reads the RNG directly (the learner process's checkpoint does) sees no draw ahead
    assert on.rng.bit_generator.state == off.rng.bit_generator.state
    assert on.prefetcher.pending == 0
    on.close()


def test_a_checkpoint_taken_with_batches_pending_resumes_exactly(point_env_fn, point_expert_cls):
    env = point_env_fn(image_size=16)
    straight, stopped = make_learner(env, "on"), make_learner(env, "on")
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    for _ in range(40):
        step = loop.step()
        straight.ingest(step)
        stopped.ingest(step)
    for learner in (straight, stopped):
        for _ in range(5):
            learner.update()
        assert learner.prefetcher.pending == 2
    # drops the pending batches and rewinds the sampling RNG; a copy, as if read back from disk
    state = copy.deepcopy(stopped.state_dict())
    assert stopped.prefetcher.pending == 0
    resumed = make_learner(env, "on")
    resumed.load_state_dict(copy.deepcopy(state))  # optimizers keep what they load: one copy each
    assert_same(resumed, straight)
    for learner in (straight, resumed):
        for _ in range(5):
            learner.update()
    assert_same(resumed, straight)
    no_prefetch = make_learner(env)  # and all of it is the run without prefetching
    no_prefetch.load_state_dict(copy.deepcopy(state))
    for _ in range(5):
        no_prefetch.update()
    assert_same(no_prefetch, straight)
    for learner in (straight, stopped, resumed):
        learner.close()


def test_trainer_with_prefetch_resumes_exactly_and_matches_no_prefetch(tmp_path, point_env_fn, point_expert_cls):
    def cfg(name, total, prefetch):
        from robot_rl.config import Config

        c = Config()
        c.agent.hidden_dims, c.agent.gripper_critic = (32, 32), True
        c.train = TrainConfig(total_env_steps=total, utd_ratio=1.5, batch_size=32, learning_starts=40,
                              random_steps=60, scripted_demos=3, eval_every=0, eval_episodes=0, checkpoint_every=0,
                              progress=False, run_dir=str(tmp_path / name), replay_capacity=5000, demo_capacity=500,
                              prefetch=prefetch)
        return c

    def trainer(c, **kw):
        return Trainer(c, env_fn=lambda _: point_env_fn(), source_fn=lambda env, _: point_expert_cls(env),
                       tensorboard=False, **kw)

    plain = trainer(cfg("plain", 300, "off"))
    plain.run()
    trainer(cfg("stopped", 150, "on")).run()
    resumed = trainer(cfg("stopped", 300, "on"), resume=True)
    resumed.run()
    assert resumed.learner.env_steps == plain.learner.env_steps
    assert_same(resumed.learner, plain.learner)


def test_a_failing_gather_reaches_the_update_that_wanted_the_batch(point_env_fn, point_expert_cls, monkeypatch):
    env = point_env_fn()
    learner = make_learner(env, "on")
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    for _ in range(30):
        learner.ingest(loop.step())

    def broken(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(learner_module, "gather_mixed", broken)
    with pytest.raises(OSError, match="disk gone"):
        learner.update()
    monkeypatch.undo()
    learner.ingest(loop.step())  # drops the failed batches still queued; training goes on
    assert np.isfinite(float(learner.update()["critic_loss"]))
    learner.close()


def test_the_threads_stop_on_close_and_never_hold_up_exit(point_env_fn, point_expert_cls):
    env = point_env_fn()
    before = set(threading.enumerate())
    learner = make_learner(env, "on", depth=3)
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    for _ in range(30):
        learner.ingest(loop.step())
    learner.update()
    started = [t for t in threading.enumerate() if t not in before]
    assert started and all(t.name.startswith("robot-rl-prefetch") for t in started)
    learner.close()
    learner.close()  # idempotent
    assert not any(t.is_alive() for t in started)
    with pytest.raises(RuntimeError, match="closed"):
        learner.prefetcher.next()
    # a process that never closes its learner, batches in flight, still exits
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import gymnasium as gym, numpy as np
        from point_reach import make_point_env, PointExpert
        from robot_rl.config.agent import AgentConfig, TrainConfig
        from robot_rl.data.rollout import ActorLoop
        from robot_rl.training.learner import Learner
        env = make_point_env()
        learner = Learner(AgentConfig(hidden_dims=(16, 16)), TrainConfig(batch_size=8, prefetch="on",
                          prefetch_depth=4), env.observation_space, env.action_space)
        loop = ActorLoop(env, PointExpert(env), seed=0)
        for _ in range(30):
            learner.ingest(loop.step())
        for _ in range(3):
            learner.update()
        assert learner.prefetcher.pending == 4
        print("done")
    """)
    done = subprocess.run([sys.executable, "-c", script, str(ROOT / "tests" / "support")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"


def test_prefetch_settings_are_checked_on_load():
    assert build(TrainConfig, {"prefetch": "on", "prefetch_depth": 4}, file="t.yaml").prefetch_depth == 4
    with pytest.raises(ConfigError, match="prefetch"):
        build(TrainConfig, {"prefetch": "sometimes"}, file="t.yaml")
    with pytest.raises(ConfigError, match="prefetch_depth"):
        build(TrainConfig, {"prefetch_depth": 0}, file="t.yaml")
    with pytest.raises(ConfigError, match="prefetch_depth"):
        build(TrainConfig, {"prefetch_depth": float("nan")}, file="t.yaml")
    assert learner_module.prefetch_enabled(TrainConfig(), torch.device("cpu")) is False  # auto: off on a CPU
    assert learner_module.prefetch_enabled(TrainConfig(), torch.device("cuda")) is True


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_prefetched_updates_never_wait_for_the_host(point_env_fn, point_expert_cls):
    """Pinned memory, a side stream and device-side metrics: no host synchronisation in an update."""
    env = point_env_fn(image_size=64)
    cfg = TrainConfig(batch_size=64, device="cuda", prefetch="on")
    learner = Learner(AgentConfig(hidden_dims=(64, 64)), cfg, env.observation_space, env.action_space)
    off = Learner(AgentConfig(hidden_dims=(64, 64)), TrainConfig(batch_size=64, device="cuda", prefetch="off"),
                  env.observation_space, env.action_space)
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    for _ in range(60):
        step = loop.step()
        learner.ingest(step)
        off.ingest(step)
    learner.update()  # warm-up: allocator, cuDNN choice
    off.update()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(5):
            learner.update()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    for _ in range(5):
        off.update()
    assert learner.state_dict()["rng"] == off.state_dict()["rng"]
    means, reference = learner.window_metrics(), off.window_metrics()
    assert means.keys() == reference.keys()
    for key in means:  # cuDNN may pick other algorithms: close, not bitwise
        assert means[key] == pytest.approx(reference[key], rel=1e-3, abs=1e-5), key
    learner.close()
