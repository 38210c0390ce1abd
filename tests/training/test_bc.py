"""``train_bc`` end to end on the point-mass env (no MuJoCo), the checkpoint it writes, loading it
(and an RL run's actor, and an entry point) as a base policy, and every refusal in one line with
nothing already recorded lost."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from point_reach import PointExpert, make_point_env

from robot_rl.agents.base_policy import BasePolicyError, CallablePolicy, ChunkedPolicy
from robot_rl.config import Config
from robot_rl.config.agent import TrainConfig
from robot_rl.data.demos import DemoFormatError, DemoWriter
from robot_rl.data.recording import record
from robot_rl.training.base_loader import load_base_policy
from robot_rl.training.bc import train_bc
from robot_rl.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

pytestmark = pytest.mark.usefixtures("one_torch_thread")

POINT_OBS = make_point_env().observation_space
POINT_ACT = make_point_env().action_space


def point_env(cfg: Config, role: str) -> gym.Env:
    return make_point_env()


def make_cfg(run_dir: Path, chunk: int = 1, steps: int = 400) -> Config:
    cfg = Config()
    cfg.agent.hidden_dims = (64, 64)
    cfg.bc.chunk, cfg.bc.steps, cfg.bc.batch_size, cfg.bc.learning_rate = chunk, steps, 128, 3e-3
    cfg.bc.run_dir = str(run_dir)
    cfg.train = TrainConfig(scripted_demos=0, eval_episodes=10, progress=False, run_dir=str(run_dir))
    return cfg


def write_demos(folder: Path, episodes: int = 30, source: str = "scripted", intervened: bool = False) -> Path:
    env = make_point_env()
    writer = DemoWriter(folder, env.observation_space, env.action_space, source=source, force=True)
    expert = PointExpert(env)
    if intervened:  # a replay log: the person drove every other step
        class Marked(gym.Wrapper):
            t = 0

            def step(self, action):
                out = self.env.step(action)
                Marked.t += 1
                return (*out[:4], {**out[4], "intervened": Marked.t % 2 == 0})
        env = Marked(env)
    record(env, expert, writer, episodes, seed=5)
    return folder


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> Path:
    return write_demos(tmp_path_factory.mktemp("bc") / "demos")


@pytest.fixture(scope="module")
def bc_run(tmp_path_factory, demos) -> tuple[Path, object]:
    torch.set_num_threads(1)
    run = tmp_path_factory.mktemp("bc") / "run"
    result = train_bc(make_cfg(run), demos=str(demos), env_fn=point_env)
    return run, result


def test_bc_learns_the_point_task_and_writes_the_one_checkpoint_format(bc_run, demos):
    run, result = bc_run
    assert result.demo_episodes == 30 and result.demo_steps > 100
    assert result.eval is not None and result.eval.episodes == 10
    assert result.eval.success_rate >= 0.8, result.eval  # measured 1.0 here
    state, _ = load_checkpoint(run, buffer_names=())
    assert state["kind"] == "bc" and state["format"] == "robot_rl.checkpoint"
    assert state["config"]["bc"]["chunk"] == 1 and set(state["bc"]["policy"]) >= {"head.weight", "head.bias"}
    assert (run / "eval.json").is_file() and (run / "config.yaml").is_file()
    assert sorted(p.name for p in demos.iterdir())[0] == "episode_000000.npz"  # the demos are only read


def test_a_bc_checkpoint_loads_as_a_base_policy_that_acts_like_the_network(bc_run):
    run, result = bc_run
    base = load_base_policy(run, POINT_OBS, POINT_ACT)
    assert isinstance(base, ChunkedPolicy) and base.source.endswith("checkpoint/state.npz")
    env = make_point_env()
    guard = base.guarded(env)
    from robot_rl.data.rollout import ActorLoop

    loop = ActorLoop(env, guard, seed=123)
    wins = sum(loop.run_episode()[-1].success for _ in range(10))
    assert wins >= 8 and guard.refused == 0
    again = load_base_policy(run / "checkpoint", POINT_OBS, POINT_ACT)  # the checkpoint folder works too
    obs = {"state": np.array([0.1, 0.2, -0.3, 0.4, 0.0], np.float32)}
    assert again.act(obs) == pytest.approx(base.act(obs))


def test_chunked_bc_with_temporal_ensembling_also_learns(tmp_path, demos):
    result = train_bc(make_cfg(tmp_path / "run", chunk=4), demos=str(demos), env_fn=point_env)
    assert result.eval.success_rate >= 0.8, result.eval
    base = load_base_policy(tmp_path / "run", POINT_OBS, POINT_ACT, ensemble_decay=0.0)
    assert base.ensemble.decay == 0.0
    assert load_base_policy(tmp_path / "run", POINT_OBS, POINT_ACT).ensemble.decay == 0.01  # its own


def test_interventions_in_a_replay_log_are_the_demos(tmp_path):
    log = write_demos(tmp_path / "replay", episodes=10, source="learner replay", intervened=True)
    result = train_bc(make_cfg(tmp_path / "run", steps=20), demos=str(log), env_fn=point_env)
    whole = train_bc(make_cfg(tmp_path / "run2", steps=20),
                     demos=str(write_demos(tmp_path / "d", episodes=10, intervened=True)), env_fn=point_env)
    assert 0 < result.demo_steps < whole.demo_steps  # the replay log gives only the person's steps
    assert abs(result.demo_steps - whole.demo_steps / 2) <= 10


def test_an_rl_checkpoint_loads_as_its_actor_on_the_mean(tmp_path):
    from robot_rl.training.trainer import Trainer

    cfg = make_cfg(tmp_path / "rl")
    cfg.agent.hidden_dims = (32, 32)
    cfg.train = TrainConfig(total_env_steps=60, utd_ratio=1.0, batch_size=16, learning_starts=20, scripted_demos=0,
                            eval_every=0, eval_episodes=0, checkpoint_every=0, progress=False,
                            run_dir=str(tmp_path / "rl"), replay_capacity=500, demo_capacity=200)
    trainer = Trainer(cfg, env_fn=lambda c: make_point_env(), tensorboard=False)
    try:
        trainer.run()
        policy = trainer.learner.agent.policy
    finally:
        trainer.close()
    base = load_base_policy(tmp_path / "rl", POINT_OBS, POINT_ACT)
    assert isinstance(base, CallablePolicy)
    obs = {"state": np.array([0.1, 0.2, -0.3, 0.4, 0.0], np.float32)}
    assert base.act(obs) == pytest.approx(policy.act(obs, deterministic=True))


def test_an_entry_point_goes_through_the_same_loader(tmp_path, monkeypatch):
    (tmp_path / "bp_loader_ep.py").write_text(
        "import numpy as np\nclass P:\n    def act(self, obs):\n        return np.zeros(3, np.float32)\n"
        "def make(o, a):\n    return P()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        base = load_base_policy("bp_loader_ep:make", POINT_OBS, POINT_ACT)
        assert base.act({"state": np.zeros(5, np.float32)}) == pytest.approx([0, 0, 0])
    finally:
        sys.modules.pop("bp_loader_ep", None)


# --- refusals ---------------------------------------------------------------------------------


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and err.value.exit_code == 2
    return message


def test_a_missing_base_checkpoint_is_one_line(tmp_path):
    with pytest.raises(CheckpointError) as err:
        load_base_policy(tmp_path / "nothing", POINT_OBS, POINT_ACT)
    assert one_line(err) == f"run directory {tmp_path / 'nothing'} does not exist"
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError) as err:
        load_base_policy(tmp_path / "empty", POINT_OBS, POINT_ACT)
    assert one_line(err).startswith(f"no checkpoint in {tmp_path / 'empty'}")


def copy_run(run: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(run, to)
    return to


def test_a_damaged_base_checkpoint_is_one_line_naming_the_file(bc_run, tmp_path):
    run = copy_run(bc_run[0], tmp_path / "run")
    state = run / "checkpoint" / "state.npz"
    state.write_bytes(state.read_bytes()[:1000])
    with pytest.raises(CheckpointError) as err:
        load_base_policy(run, POINT_OBS, POINT_ACT)
    assert str(run / "checkpoint") in one_line(err) and "damaged" in one_line(err)


def rewrite(run: Path, change) -> None:
    state, _ = load_checkpoint(run, buffer_names=())
    change(state)
    state.pop("format"), state.pop("version")
    save_checkpoint(run, state)


def test_a_nan_weight_in_a_base_checkpoint_is_refused(bc_run, tmp_path):
    run = copy_run(bc_run[0], tmp_path / "run")
    rewrite(run, lambda s: s["bc"]["policy"]["head.bias"].__setitem__(0, float("nan")))
    with pytest.raises(CheckpointError) as err:
        load_base_policy(run, POINT_OBS, POINT_ACT)
    assert one_line(err) == f"checkpoint {run / 'checkpoint' / 'state.npz'} holds NaN or inf in 'bc.policy.head.bias'"


def test_finite_weights_that_blow_up_are_refused_by_running_them(bc_run, tmp_path):
    run = copy_run(bc_run[0], tmp_path / "run")
    rewrite(run, lambda s: s["bc"]["policy"]["trunk.0.weight"].__imul__(1e30))
    with pytest.raises(CheckpointError) as err:
        load_base_policy(run, POINT_OBS, POINT_ACT)
    message = one_line(err)
    assert message.startswith(f"base policy {run / 'checkpoint' / 'state.npz'}: the policy's actions are far "
                              "outside the action space before the squash on sampled observations"), message


def test_weights_of_another_shape_are_refused(bc_run, tmp_path):
    run = copy_run(bc_run[0], tmp_path / "run")
    rewrite(run, lambda s: s["bc"]["policy"].__setitem__("head.bias", torch.zeros(7)))
    with pytest.raises(CheckpointError) as err:
        load_base_policy(run, POINT_OBS, POINT_ACT)
    assert "its BC policy does not fit its config" in one_line(err) and "head.bias" in one_line(err)


def test_a_base_for_other_spaces_is_refused_at_load(bc_run):
    other = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (7,), np.float32)})
    with pytest.raises(CheckpointError) as err:
        load_base_policy(bc_run[0], other, POINT_ACT)
    assert one_line(err) == (f"checkpoint {bc_run[0] / 'checkpoint' / 'state.npz'} was made for other spaces: "
                             "observation 'state' has shape (5,), the task's is (7,)")
    wider = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    with pytest.raises(CheckpointError, match="action has shape \\(3,\\), the task's is \\(4,\\)"):
        load_base_policy(bc_run[0], POINT_OBS, wider)


def test_an_entry_point_that_does_not_import_is_one_line():
    with pytest.raises(BasePolicyError) as err:
        load_base_policy("no_such_module_xyz:make", POINT_OBS, POINT_ACT)
    assert one_line(err) == ("base policy no_such_module_xyz:make: cannot import no_such_module_xyz "
                             "(ModuleNotFoundError: No module named 'no_such_module_xyz')")


def test_an_empty_demo_folder_is_refused_before_anything_is_written(tmp_path):
    write_demos(tmp_path / "empty", episodes=0)
    with pytest.raises(DemoFormatError) as err:
        train_bc(make_cfg(tmp_path / "run"), demos=str(tmp_path / "empty"), env_fn=point_env)
    assert one_line(err) == f"{tmp_path / 'empty'} holds no demo episodes"
    assert not (tmp_path / "run").exists()


def test_demos_of_other_spaces_are_refused(tmp_path):
    env = make_point_env(image_size=8)
    writer = DemoWriter(tmp_path / "pixels", env.observation_space, env.action_space, source="scripted")
    record(env, PointExpert(env), writer, 1, seed=0)
    with pytest.raises(DemoFormatError) as err:
        train_bc(make_cfg(tmp_path / "run"), demos=str(tmp_path / "pixels"), env_fn=point_env)
    assert one_line(err).startswith(f"{tmp_path / 'pixels'}: demos do not match this task: observation key 'front'")
    assert not (tmp_path / "run").exists()


def test_a_replay_log_without_interventions_gives_no_demos(tmp_path):
    log = write_demos(tmp_path / "replay", episodes=2, source="learner replay")
    with pytest.raises(DemoFormatError) as err:
        train_bc(make_cfg(tmp_path / "run"), demos=str(log), env_fn=point_env)
    assert one_line(err).startswith(f"{log}: no demo steps in its 2 episodes")


def test_no_demos_at_all_is_one_line(tmp_path):
    with pytest.raises(Exception) as err:
        train_bc(make_cfg(tmp_path / "run"), env_fn=point_env)
    assert one_line(err).startswith("train-bc has no demos: give --demos DIR")


def test_a_run_is_never_replaced_without_force(bc_run, demos, tmp_path):
    run = copy_run(bc_run[0], tmp_path / "run")
    before = (run / "checkpoint" / "state.npz").read_bytes()
    with pytest.raises(Exception) as err:
        train_bc(make_cfg(run), demos=str(demos), env_fn=point_env)
    assert "already holds a run" in one_line(err) and "--force" in one_line(err)
    assert (run / "checkpoint" / "state.npz").read_bytes() == before


@pytest.mark.parametrize("override,fragment", [
    ("bc.chunk=0", "'bc.chunk' = 0 is out of range [1, 64]"),
    ("bc.chunk=65", "'bc.chunk' = 65 is out of range [1, 64]"),
    ("bc.ensemble_decay=.nan", "'bc.ensemble_decay'"),
    ("bc.learning_rate=-1", "'bc.learning_rate' = -1"),
    ("bc.steps=1e12", "'bc.steps'"),
    ("bc.episodes=failed", "'bc.episodes'"),
    ("bc.chunks=2", "unknown key 'bc.chunks' (did you mean 'bc.chunk'?)"),
])
def test_bc_config_keys_are_checked_like_every_key(override, fragment):
    from robot_rl.errors import ConfigError
    from robot_rl.tasks import load_config

    with pytest.raises(ConfigError) as err:
        load_config("configs/pick_cube.yaml", [override])
    assert fragment in one_line(err)


class AwayExpert(PointExpert):
    """A demonstrator who gets it wrong: moves away from the goal, never succeeds."""

    def act(self, obs):
        action = super().act(obs)
        action[:2] *= -1.0
        return action


def write_mixed_demos(folder: Path, good: int, failed: int) -> Path:
    """``good`` expert episodes and ``failed`` failed ones (kept, as a person's recorder keeps them)."""
    env = make_point_env()
    writer = DemoWriter(folder, env.observation_space, env.action_space, source="scripted", force=True)
    record(env, PointExpert(env), writer, good, seed=5)
    if failed:
        record(env, AwayExpert(env), writer, failed, seed=50, only_success=False)
    return folder


def test_failed_demo_episodes_are_left_out_by_default_and_counted(tmp_path):
    demos = write_mixed_demos(tmp_path / "mixed", good=30, failed=30)
    kept = train_bc(make_cfg(tmp_path / "kept"), demos=str(demos), env_fn=point_env)
    assert (kept.demo_episodes, kept.failed_left_out) == (30, 30)
    state, _ = load_checkpoint(tmp_path / "kept", buffer_names=())
    assert state["bc"]["failed_left_out"] == 30 and state["bc"]["demo_episodes"] == 30
    cfg = make_cfg(tmp_path / "all")
    cfg.bc.episodes = "all"
    every = train_bc(cfg, demos=str(demos), env_fn=point_env)
    assert (every.demo_episodes, every.failed_left_out) == (60, 0)
    # the failed half pulls the regressed mean off the goal; left out, BC learns the skill
    assert kept.eval.success_rate >= 0.8, kept.eval
    assert every.eval.success_rate <= kept.eval.success_rate - 0.5, (every.eval, kept.eval)


def test_demos_that_never_succeed_are_one_line_naming_the_key_and_nothing_is_written(tmp_path):
    demos = write_mixed_demos(tmp_path / "failed", good=0, failed=3)
    with pytest.raises(DemoFormatError) as err:
        train_bc(make_cfg(tmp_path / "run"), demos=str(demos), env_fn=point_env)
    assert one_line(err) == (f"{demos}: none of its 3 episodes succeeds (no step has success set), and bc.episodes "
                             "is 'successful'; for demos recorded without success labels set bc.episodes=all")
    assert not (tmp_path / "run").exists()
    cfg = make_cfg(tmp_path / "run", steps=20)
    cfg.bc.episodes = "all"
    assert train_bc(cfg, demos=str(demos), env_fn=point_env).demo_episodes == 3
