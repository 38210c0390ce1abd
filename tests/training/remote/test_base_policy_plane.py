"""A base policy across the learning plane: ``robot-rl learner`` + actors with ``agent.base.mode`` set.

On the point-mass env (no MuJoCo): a learner process and an actor process over gRPC on
127.0.0.1. The base runs in the actor (its ResidualEnv); the learner's steps carry the base
action and the stored residual, a person's takeover is stored as the residual closest to
it, the weights that travel are the SAC actor's alone, and the learner's checkpoint records
the base (a resume on another base is one line). A warm-started actor acts as its BC policy
before any weights came. Bad input (a base for other spaces, a missing one, a scale that
cannot bound the residual) is one line, exit 2 from the command line.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from point_reach import PointExpert, make_point_env
from polling import listening_port

from robot_rl.agents.policy import Policy
from robot_rl.agents.residual import BASE_ACTION_KEY, residual_target
from robot_rl.config import Config
from robot_rl.config.agent import TrainConfig
from robot_rl.data.demos import DemoWriter
from robot_rl.data.recording import record
from robot_rl.training.bc import train_bc
from robot_rl.training.checkpoint import CheckpointError, load_checkpoint
from robot_rl.training.remote.actor_process import ActorProcess
from robot_rl.training.remote.learner_process import LearnerProcess

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TOKEN = "base-plane-token-0123456789"
SCALE = np.array([0.3, 0.3, 0.5], np.float32)
HUMAN = np.array([0.9, -0.9, 1.0], np.float32)  # the person's action on their steps


class Person(gym.Wrapper):
    """Takes over every fourth step with :data:`HUMAN`, reporting it as HumanIntervention does."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.t = 0

    def reset(self, **kwargs):
        self.t = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        self.t += 1
        if self.t % 4 == 0:
            obs, r, term, trunc, info = self.env.step(HUMAN)
            return obs, r, term, trunc, {**info, "intervened": True, "intervene_action": HUMAN.copy()}
        return self.env.step(action)


@pytest.fixture(scope="module")
def bc(tmp_path_factory) -> tuple[Path, Path]:
    """(a BC run directory, its demo folder): an imperfect base from 6 demos and 60 steps."""
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("plane_bc")
    env = make_point_env()
    writer = DemoWriter(root / "demos", env.observation_space, env.action_space, source="scripted", force=True)
    record(env, PointExpert(env), writer, 6, seed=5)
    cfg = bc_cfg(root / "bc")
    train_bc(cfg, demos=str(root / "demos"), env_fn=lambda c, role: make_point_env())
    return root / "bc", root / "demos"


def bc_cfg(folder: Path, seed: int = 0) -> Config:
    cfg = Config(seed=seed)
    cfg.agent.hidden_dims = (32, 32)
    cfg.bc.steps, cfg.bc.batch_size, cfg.bc.run_dir = 60, 64, str(folder)
    cfg.train = TrainConfig(scripted_demos=0, eval_episodes=2, progress=False, run_dir=str(folder))
    return cfg


def plane_cfg(run_dir: Path, source: str, demos: Path, mode: str = "residual") -> Config:
    cfg = Config()
    cfg.agent.hidden_dims = (32, 32)
    cfg.agent.base.mode, cfg.agent.base.source = mode, source
    cfg.agent.residual.scale = tuple(float(s) for s in SCALE)
    cfg.train = TrainConfig(total_env_steps=10_000, utd_ratio=1.0, batch_size=32, learning_starts=20,
                            random_steps=0, scripted_demos=0, demos=str(demos), eval_every=0, eval_episodes=2,
                            checkpoint_every=0, progress=False, run_dir=str(run_dir))
    cfg.learning.batch_steps, cfg.learning.batch_max_age_s = 8, 0.2
    return cfg


def test_the_base_runs_in_the_actor_and_only_the_residual_s_weights_travel(tmp_path, bc):
    bc_dir, demos = bc
    base_dir = tmp_path / "base"
    shutil.copytree(bc_dir, base_dir)  # replaced by another BC policy below, under the same name
    cfg = plane_cfg(tmp_path / "run", str(base_dir), demos)
    learner = LearnerProcess(cfg, TOKEN, env_fn=lambda c: make_point_env(), evaluate=True, tensorboard=False)
    assert BASE_ACTION_KEY in learner.obs_space.spaces  # the steps it takes carry the base action
    result: dict = {}
    thread = threading.Thread(target=lambda: result.update(learner.run(port=0, max_seconds=240)), daemon=True)
    thread.start()
    port = listening_port(tmp_path / "run", thread.is_alive, 120)
    assert port is not None, "the learner stopped before it listened"
    actor = ActorProcess(cfg, TOKEN, target=f"127.0.0.1:{port}", actor_id="a1",
                         env_fn=lambda c: Person(make_point_env(max_steps=20)))
    sent: list[dict] = []
    swap = actor.client.take_weights

    def take_weights():
        weights = swap()
        if weights is not None:
            sent.append(weights.tensors)
        return weights

    actor.client.take_weights = take_weights
    try:
        # every episode counts, the ones before the learner first answers too (a loaded machine may take a
        # step first): they wait in the actor's queue and reach the learner all the same
        summary = actor.run(max_episodes=4, flush_timeout=60)
    finally:
        learner.stop()
        thread.join(120)
    assert not thread.is_alive() and result, "the learner did not stop"
    assert summary["episodes"] == 4 and summary["acked_steps"] == summary["steps"] == 80, summary
    assert summary["base_refused"] == 0 and summary["residual_refused"] == 0, summary
    assert result["received_steps"] == 80 and result["lost_steps"] == 0
    assert result["evals"] and result["evals"][-1]["length"] > 0  # it evaluated through its own copy of the base

    # what travelled: the SAC actor's weights only, exactly the tensors of a Policy on the base-action space
    own = Policy(cfg.agent, actor.env.observation_space, actor.env.action_space).state_dict()
    assert sent and all(set(w) == set(own) for w in sent)
    assert all(tuple(w[k].shape) == tuple(own[k].shape) for w in sent for k in own)

    # what the learner stored: the base action beside each observation, the person's action as the residual
    from robot_rl.data.demos import episode_files, read_episode

    files = episode_files(tmp_path / "run" / "replay")
    assert len(files) == 4
    person_steps = 0
    for path in files:
        for step in read_episode(path, learner.obs_space, learner.action_space):
            base = step.obs[BASE_ACTION_KEY]
            assert np.isfinite(base).all() and np.all(np.abs(step.action) <= 1.0)
            if step.intervened:
                person_steps += 1
                np.testing.assert_allclose(step.action, residual_target(base, HUMAN, SCALE), atol=1e-5)
    assert person_steps == 4 * 5  # every fourth of 20 steps, in each of the 4 episodes

    # the checkpoint records the base; a resume on another base is one line
    state, _ = load_checkpoint(tmp_path / "run", buffer_names=())
    assert state["base"]["mode"] == "residual" and np.asarray(state["base"]["fingerprint"]).shape[1] == 3
    again = LearnerProcess(cfg, TOKEN, resume=True, env_fn=lambda c: make_point_env(), evaluate=False,
                           tensorboard=False)  # its own base: resumes
    assert again.received_steps == 80
    again.metrics.close()
    again.close()
    shutil.rmtree(base_dir)
    train_bc(bc_cfg(base_dir, seed=7), demos=str(demos), env_fn=lambda c, role: make_point_env())
    with pytest.raises(CheckpointError, match="another base policy") as err:
        LearnerProcess(cfg, TOKEN, resume=True, env_fn=lambda c: make_point_env(), evaluate=False,
                       tensorboard=False)
    assert "\n" not in str(err.value)


def test_a_warm_started_actor_acts_as_its_bc_policy_before_any_weights_came(tmp_path, bc):
    from robot_rl.training.base_loader import load_base_policy

    bc_dir, demos = bc
    cfg = plane_cfg(tmp_path / "run", str(bc_dir), demos, mode="warm_start")
    actor = ActorProcess(cfg, TOKEN, target="127.0.0.1:9", actor_id="w1", env_fn=lambda c: make_point_env())
    env = make_point_env()
    base = load_base_policy(bc_dir, env.observation_space, env.action_space)
    assert BASE_ACTION_KEY not in actor.env.observation_space.spaces  # a warm start adds nothing to the steps
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        base.reset()
        np.testing.assert_allclose(actor.policy.act(obs, deterministic=True), base.act(obs), atol=1e-5)
    actor.env.close()


def test_a_base_that_cannot_serve_the_actor_or_the_learner_is_one_line(tmp_path, bc):
    bc_dir, demos = bc
    for source, words in ((str(tmp_path / "nowhere"), "does not exist"), (str(bc_dir), "other spaces")):
        cfg = plane_cfg(tmp_path / "run", source, demos)
        with pytest.raises(CheckpointError, match="agent.base.source") as err:  # the pixel env: other spaces
            ActorProcess(cfg, TOKEN, target="127.0.0.1:9", actor_id="x", env_fn=lambda c: make_point_env(image_size=8))
        assert words in str(err.value) and "\n" not in str(err.value)
        with pytest.raises(CheckpointError, match="agent.base.source"):
            LearnerProcess(cfg, TOKEN, env_fn=lambda c: make_point_env(image_size=8), evaluate=False, tensorboard=False)
        assert not (tmp_path / "run").exists()  # nothing was written


@pytest.mark.parametrize("command", ["learner", "actor"])
@pytest.mark.parametrize("scale, words", [(".nan", "must be a finite number"), ("-0.1", "agent.residual.scale"),
                                          ("1.5", "agent.residual.scale"), ("[0.1,0.2]", "has 2 values")])
def test_the_commands_refuse_a_residual_scale_that_cannot_bound_it_in_one_line(tmp_path, capsys, command, scale,
                                                                               words):
    from robot_rl.cli import main

    pytest.importorskip("mujoco")
    sets = ["--set", f"agent.residual.scale={scale}", "--set", "agent.base.mode=residual",
            "--set", f"agent.base.source={tmp_path / 'bc'}"]
    args = ["--run-dir", str(tmp_path / "run")] if command == "learner" else ["--learner", "127.0.0.1:9"]
    code = main([command, "--config", "pick_cube", *args, *sets])
    err = capsys.readouterr().err.strip()
    assert code == 2 and words in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", [["learner", "--port", "0"], ["actor", "--learner", "127.0.0.1:9"],
                                     ["launch", "--dry-run", "--set", "ros.policy=learner"]])
def test_the_commands_refuse_a_missing_base_in_one_line(tmp_path, capsys, monkeypatch, command):
    from robot_rl.cli import main

    pytest.importorskip("mujoco")
    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    missing = tmp_path / "no_such_bc"
    code = main([command[0], "--config", "pick_cube", *command[1:], "--set", "agent.base.mode=residual",
                 "--set", f"agent.base.source={missing}", *(["--run-dir", str(tmp_path / "run")]
                                                             if command[0] == "learner" else [])])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "agent.base.source" in err and str(missing) in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_a_non_finite_residual_from_the_actor_s_policy_holds_the_arm_and_is_counted(tmp_path, bc):
    bc_dir, demos = bc
    cfg = plane_cfg(tmp_path / "run", str(bc_dir), demos)
    sent: list[np.ndarray] = []

    class Sent(gym.Wrapper):
        def step(self, action):
            sent.append(np.array(action))
            return self.env.step(action)

    actor = ActorProcess(cfg, TOKEN, target="127.0.0.1:9", actor_id="n1", env_fn=lambda c: Sent(make_point_env()))
    act = actor.policy.act
    calls = {"n": 0}

    def every_other_nan(obs, **kwargs):
        calls["n"] += 1
        u = act(obs, **kwargs)
        return np.full_like(u, np.nan) if calls["n"] % 2 == 0 else u

    actor.policy.act = every_other_nan
    steps = [actor.loop.step() for _ in range(10)]
    summary = actor.summary()
    assert summary["residual_refused"] == 5 and summary["base_refused"] == 0, summary
    for i, (step, executed) in enumerate(zip(steps, sent)):
        if i % 2 == 1:  # held: zero motion (the point env's no-motion), nothing of the base added
            assert np.array_equal(executed, np.zeros(3, np.float32))
            assert np.isfinite(step.action).all()  # stored: the residual that comes closest to holding
        else:
            assert np.all(np.abs(executed - step.obs[BASE_ACTION_KEY]) <= SCALE + 1e-6)
    actor.env.close()
