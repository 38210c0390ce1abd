"""The one checkpoint format: no pickle, one loader for trainer and learner runs, damaged files in one line.

* the state file is a zip of JSON and ``.npy`` members that round-trips an agent's
  state types (int dict keys, tuples, tensors, non-finite floats);
* a ``robot-rl train`` run and a ``robot-rl learner`` run load into the same Policy class,
  which acts exactly like the network each saved; a restarted learner gets its agent back;
* a truncated, garbled, NaN-filled, foreign, old-format or wrong-shape checkpoint, other
  spaces, a missing run or no checkpoint are each one CheckpointError line naming the file.

Runs on the point-mass env (tests/support/point_reach.py): no MuJoCo needed.
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from robot_rl.agents.policy import Policy
from robot_rl.config import Config, to_dict
from robot_rl.config.agent import TrainConfig
from robot_rl.data.durable import MARKER
from robot_rl.data.rollout import ActorLoop
from robot_rl.data.spaces import spaces_spec
from robot_rl.training.checkpoint import (
    STATE_FILE,
    CheckpointError,
    load_checkpoint,
    read_run_config,
    read_tree,
    save_checkpoint,
    write_tree,
)
from robot_rl.training.saved_policy import SavedPolicy, load_policy

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_cfg(run_dir: Path, hidden=(32, 32)) -> Config:
    cfg = Config()
    cfg.agent.hidden_dims = tuple(hidden)
    cfg.train = TrainConfig(total_env_steps=60, utd_ratio=1.0, batch_size=16, learning_starts=20, scripted_demos=0,
                            eval_every=0, eval_episodes=0, checkpoint_every=0, progress=False, run_dir=str(run_dir),
                            replay_capacity=500, demo_capacity=200)
    return cfg


def observations(env: gym.Env, n: int = 8) -> list[dict[str, np.ndarray]]:
    out = []
    for seed in range(n):
        obs, _ = env.reset(seed=seed)
        out.append(obs)
    return out


def assert_acts_like(saved: SavedPolicy, network: Policy, env: gym.Env) -> None:
    assert type(saved.policy) is Policy
    for obs in observations(env):
        np.testing.assert_array_equal(saved.act(obs), network.act(obs, deterministic=True))


# --- the state file ------------------------------------------------------------------------


def test_the_state_file_has_no_pickle_and_round_trips_an_agent_s_types(tmp_path):
    tree = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "step": torch.tensor(4.0),
            3: {"state": (1, 2.5, None, True)}, "rng": np.random.default_rng(1).bit_generator.state,
            "inf": float("inf"), "arr": np.arange(3, dtype=np.int16), "name": "x"}
    path = tmp_path / "c.npz"
    with open(path, "wb") as f:
        write_tree(f, tree)
    back = read_tree(path)
    assert torch.equal(back["w"], tree["w"]) and back["step"].shape == ()
    assert back[3] == {"state": (1, 2.5, None, True)} and back["rng"] == tree["rng"]
    assert back["inf"] == float("inf") and back["arr"].dtype == np.int16 and back["name"] == "x"
    with zipfile.ZipFile(path) as zf:  # every member is plain JSON or a .npy that loads with allow_pickle=False
        names = zf.namelist()
        json.loads(zf.read("__tree__.json"))
    assert all(n == "__tree__.json" or n.endswith(".npy") for n in names)
    with pytest.raises(TypeError, match="without pickle"):
        with open(tmp_path / "bad.npz", "wb") as f:
            write_tree(f, {"x": object()})


# --- both kinds of run, one policy class -----------------------------------------------------


def test_trainer_and_learner_checkpoints_load_into_one_policy_class_acting_like_the_saved_network(
        tmp_path, point_env_fn, point_expert_cls):
    from robot_rl.training.remote.learner_process import LearnerProcess
    from robot_rl.training.trainer import Trainer

    env = point_env_fn()
    trainer = Trainer(make_cfg(tmp_path / "train"), env_fn=lambda c: point_env_fn(), tensorboard=False)
    try:
        trainer.run()  # ends with a checkpoint, after real updates
    finally:
        trainer.close()
    assert trainer.learner.updates_done > 0
    from_train = load_policy(tmp_path / "train", trainer.cfg.agent, env.observation_space, env.action_space)
    assert from_train.kind == "train" and from_train.updates == trainer.learner.updates_done
    assert_acts_like(from_train, trainer.learner.agent.policy, env)

    cfg = make_cfg(tmp_path / "learner")
    learner = LearnerProcess(cfg, "token", env_fn=lambda c: point_env_fn(), evaluate=False, tensorboard=False)
    episodes = [ActorLoop(env, point_expert_cls(env), seed=i).run_episode() for i in range(3)]
    learner.learner.add_demos(episodes)
    for _ in range(15):
        learner.learner.update()
    learner.save()
    learner.metrics.close()
    learner.close()
    from_learner = load_policy(tmp_path / "learner" / "checkpoint", cfg.agent, env.observation_space,
                               env.action_space)  # the checkpoint folder itself is accepted too
    assert from_learner.kind == "learner" and from_learner.updates == 15
    assert type(from_learner.policy) is type(from_train.policy)
    assert_acts_like(from_learner, learner.learner.agent.policy, env)

    # a restarted learner gets exactly that agent back (it rebuilds its buffers from the replay log)
    again = LearnerProcess(cfg, "token", resume=True, env_fn=lambda c: point_env_fn(), evaluate=False,
                           tensorboard=False)
    saved, restored = learner.learner.agent.state_dict(), again.learner.agent.state_dict()
    for name in ("policy", "critic", "critic_target", "temperature"):
        for key, value in saved[name].items():
            assert torch.equal(value, restored[name][key]), f"{name}.{key}"
    assert restored["critic_updates"] == 15
    again.metrics.close()
    again.close()
    env.close()


# --- what is read back is an input --------------------------------------------------------


@pytest.fixture
def saved_run(tmp_path, point_env_fn):
    """A run directory holding a checkpoint of a small policy, and what it was made for."""
    env = point_env_fn()
    cfg = make_cfg(tmp_path / "run")
    torch.manual_seed(0)
    policy = Policy(cfg.agent, env.observation_space, env.action_space)
    run = tmp_path / "run"
    save_checkpoint(run, {"kind": "train", "config": to_dict(cfg),
                          "spaces": spaces_spec(env.observation_space, env.action_space),
                          "agent": {"policy": policy.state_dict(), "critic_updates": 7}})
    yield run, cfg, env, policy
    env.close()


def _load(run: Path, cfg: Config, env: gym.Env, action_space: gym.Space | None = None) -> SavedPolicy:
    return load_policy(run, cfg.agent, env.observation_space, action_space or env.action_space)


def _rewrite_state(run: Path, change) -> None:
    """Change the state file's tree in place and re-mark the folder (as a bad writer would)."""
    path = run / "checkpoint" / STATE_FILE
    tree = read_tree(path)
    change(tree)
    with open(path, "wb") as f:
        write_tree(f, tree)
    from robot_rl.data.durable import mark_complete

    mark_complete(run / "checkpoint")


def _nan_weight(tree) -> None:
    tree["agent"]["policy"]["actor_trunk.0.weight"][0, 0] = float("nan")


def _damage(run: Path, how: str) -> None:
    path = run / "checkpoint" / STATE_FILE
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "truncated, no marker":
        (run / "checkpoint" / MARKER).unlink()
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "garbled":
        size = path.stat().st_size
        path.write_bytes(bytes(random.Random(2).randrange(256) for _ in range(size)))
    elif how == "NaN":
        _rewrite_state(run, _nan_weight)
    elif how == "foreign":
        _rewrite_state(run, lambda tree: tree.pop("format"))
    elif how == "old format":
        (run / "checkpoint" / MARKER).unlink()
        path.rename(path.with_name("state.pt"))


@pytest.mark.parametrize("how, words", [
    ("truncated", "is damaged"),
    ("truncated, no marker", "cannot read checkpoint"),
    ("garbled", "cannot read checkpoint"),
    ("NaN", "holds NaN or inf in 'agent.policy.actor_trunk.0.weight'"),
    ("foreign", "not a robot_rl checkpoint"),
    ("old format", "the pickle-based format of older robot_rl versions"),
])
def test_a_damaged_checkpoint_is_one_line_naming_the_file(saved_run, how, words):
    run, cfg, env, _ = saved_run
    _damage(run, how)
    with pytest.raises(CheckpointError) as err:
        _load(run, cfg, env)
    message = str(err.value)
    assert words in message and "\n" not in message, message
    assert str(run / "checkpoint") in message, message


def test_a_garbled_file_of_the_same_size_is_one_line_too(saved_run):
    run, cfg, env, _ = saved_run
    path = run / "checkpoint" / STATE_FILE
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2: len(raw) // 2 + 64] = b"\x00" * 64  # the marker's sizes still hold
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="cannot read checkpoint") as err:
        _load(run, cfg, env)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_nan_checkpoint_is_refused_at_resume_too(saved_run):
    run, *_ = saved_run
    _rewrite_state(run, _nan_weight)
    with pytest.raises(CheckpointError, match="NaN or inf.*move the checkpoint folder aside"):
        load_checkpoint(run, buffer_names=())


def test_weights_of_another_shape_or_other_spaces_are_refused_before_anything_acts(saved_run):
    run, cfg, env, policy = saved_run
    wider = make_cfg(run, hidden=(16,))
    with pytest.raises(CheckpointError, match=r"does not fit this config: 'actor_trunk.0.weight' has shape "
                                              r"\(32, 5\), this config's policy has \(16, 5\) "
                                              r"\('agent.hidden_dims' is \[32, 32\] in the checkpoint, "):
        _load(run, wider, env)
    four = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    with pytest.raises(CheckpointError, match=r"other spaces: action has shape \(3,\), the task's is \(4,\)"):
        _load(run, cfg, env, four)
    _rewrite_state(run, lambda tree: tree["agent"]["policy"].pop("actor_head.mean.bias"))
    with pytest.raises(CheckpointError, match="does not fit this config: it lacks 'actor_head.mean.bias'"):
        _load(run, cfg, env)
    _rewrite_state(run, lambda tree: tree["agent"]["policy"].update(extra=torch.zeros(2)))
    with pytest.raises(CheckpointError, match="does not fit this config: it lacks"):
        _load(run, cfg, env)
    _rewrite_state(run, lambda tree: tree["agent"].update(policy={**policy.state_dict(), "extra": torch.zeros(2)}))
    with pytest.raises(CheckpointError, match="it holds 'extra', which this config's policy has not"):
        _load(run, cfg, env)
    _rewrite_state(run, lambda tree: tree["agent"].update(policy=policy.state_dict()))  # whole again: it loads
    assert_acts_like(_load(run, cfg, env), policy, env)


def test_a_missing_run_or_a_run_without_checkpoint_is_one_line(tmp_path, point_env_fn):
    env = point_env_fn()
    cfg = make_cfg(tmp_path)
    with pytest.raises(CheckpointError, match=f"run directory {tmp_path / 'nope'} does not exist"):
        _load(tmp_path / "nope", cfg, env)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=f"no checkpoint in {tmp_path / 'empty'}: a robot-rl train or "
                                              "robot-rl learner run holds checkpoint/state.npz"):
        _load(tmp_path / "empty", cfg, env)
    env.close()


@pytest.mark.parametrize("text, words", [
    ("- a\n- list\n", "the top level must be a mapping"),
    ("train: [unclosed\n", "cannot read the run's config"),
    (b"\xff\xfe", "cannot read the run's config"),
])
def test_a_run_config_that_is_no_config_is_one_line_for_both_commands(tmp_path, text, words):
    """The trainer and the learner process read config.yaml back through the same reader."""
    path = tmp_path / "config.yaml"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    with pytest.raises(CheckpointError, match=words) as err:
        read_run_config(tmp_path)
    assert str(err.value).startswith("--resume: ") and "\n" not in str(err.value)
