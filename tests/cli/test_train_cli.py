"""``robot-rl record-demos`` and ``robot-rl train`` on the MuJoCo PickCube, end to end but short."""

import json

import pytest

from robot_rl.cli import main
from robot_rl.data.demos import episode_files, read_manifest

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

pytest.importorskip("mujoco")

TINY = ["--set", "agent.hidden_dims=[16,16]", "--set", "train.batch_size=16", "--set", "train.learning_starts=10",
        "--set", "train.eval_episodes=1", "--set", "train.torch_threads=1", "--set", "train.log_every=20",
        "--no-progress"]


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demos") / "pick"
    assert main(["record-demos", "--config", "configs/pick_cube.yaml", "--source", "scripted",
                 "--episodes", "2", "--out", str(out)]) == 0
    return out


def test_record_demos_writes_episodes_and_refuses_to_overwrite(demo_dir, capsys):
    assert len(episode_files(demo_dir)) == 2
    manifest = read_manifest(demo_dir)
    assert manifest["task"] == "PickCube" and manifest["spaces"]["action"]["shape"] == [4]
    assert main(["record-demos", "--config", "configs/pick_cube.yaml", "--episodes", "1", "--out", str(demo_dir)]) == 2
    assert "--force" in capsys.readouterr().err
    assert len(episode_files(demo_dir)) == 2


def test_train_logs_evaluates_checkpoints_and_resumes(demo_dir, tmp_path, capsys):
    run = tmp_path / "run"
    common = ["train", "--config", "configs/pick_cube.yaml", "--run-dir", str(run), "--set", f"train.demos={demo_dir}",
              "--set", "train.eval_every=40", *TINY]
    assert main([*common, "--set", "train.total_env_steps=40"]) == 0
    first = last_json(capsys.readouterr().out)
    assert first["env_steps"] >= 40 and first["eval_success_rate"] is not None
    assert (run / "checkpoint" / "state.npz").is_file() and (run / "evals.jsonl").is_file()

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run / "tb"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"eval/success_rate", "episode/success", "episode/return", "episode/length", "episode/intervention_rate",
            "loss/critic", "loss/actor", "train/temperature", "perf/updates_per_s"} <= tags

    assert main([*common, "--set", "train.total_env_steps=80"]) == 2  # exists: needs --resume or --force
    assert "--resume" in capsys.readouterr().err
    assert main([*common, "--set", "train.total_env_steps=80", "--set", "agent.discount=0.9", "--resume"]) == 2
    assert "'agent.discount' is 0.97 in the checkpoint, 0.9 here" in capsys.readouterr().err
    assert main([*common, "--set", "train.total_env_steps=80", "--resume"]) == 0
    resumed = last_json(capsys.readouterr().out)
    assert resumed["env_steps"] >= 80 and resumed["updates"] > first["updates"]


def test_demos_of_another_task_are_refused_naming_the_mismatch(demo_dir, tmp_path, capsys):
    rc = main(["train", "--config", "configs/peg_insert.yaml", "--run-dir", str(tmp_path / "r"),
               "--set", f"train.demos={demo_dir}", "--set", "train.total_env_steps=10", *TINY])
    assert rc == 2
    err = capsys.readouterr().err
    assert "demos do not match this task: action has shape (4,), the task's is (3,)" in err


def test_gripper_critic_without_a_gripper_dim_is_a_config_error(tmp_path, capsys):
    rc = main(["train", "--config", "configs/peg_insert.yaml", "--run-dir", str(tmp_path / "r"),
               "--set", "agent.gripper_critic=true", *TINY])
    assert rc == 2
    assert "agent.gripper_critic needs 'gripper' in env.active_dims" in capsys.readouterr().err
