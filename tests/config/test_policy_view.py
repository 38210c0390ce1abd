"""The robot's view: a hardware config never gives the policy the sim's ground truth."""

from __future__ import annotations

import pytest

from robot_rl.cli import main
from robot_rl.config import ConfigError
from robot_rl.tasks import load_config

PICK = "configs/pick_cube.yaml"


@pytest.mark.parametrize("backend", ["franka", "topics"])
@pytest.mark.parametrize("mode", ["state", "both"])
def test_ground_truth_on_a_hardware_backend_is_refused_at_load(backend, mode):
    hardware = ["robot.hardware={ip: 172.16.0.2}"] if backend == "franka" else []
    with pytest.raises(ConfigError) as err:
        load_config(PICK, [f"robot.backend={backend}", *hardware, f"env.obs_mode={mode}"])
    message = str(err.value)
    assert "\n" not in message
    assert f"env.obs_mode is '{mode}' but robot.backend is '{backend}'" in message
    assert "env.obs_mode: pixels" in message


def test_the_robots_view_loads_on_hardware_and_ground_truth_stays_a_sim_setting():
    cfg = load_config(PICK, ["robot.backend=topics", "env.obs_mode=pixels"])
    assert cfg.env.obs_mode == "pixels"
    assert load_config(PICK).env.obs_mode == "state"  # sim: privileged state is allowed
    assert load_config("configs/franka_peg_insert.yaml").env.obs_mode == "pixels"


def test_every_command_refuses_it_in_one_line(capsys, tmp_path):
    code = main(["train", "--config", "pick_cube", "--set", "robot.backend=topics",
                 "--set", f"train.run_dir={tmp_path / 'run'}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err, err
    assert "no ground-truth object state" in err
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_the_pixel_view_holds_images_and_proprioception_only():
    pytest.importorskip("mujoco")
    from robot_rl.assemble import make_actor_env
    from robot_rl.envs.robot_env import PROPRIO_DIM

    cfg = load_config("configs/pick_cube_pixels.yaml")
    env = make_actor_env(cfg, "train")
    try:
        space = env.observation_space
        assert sorted(space.spaces) == ["front", "state", "wrist"]
        assert space["state"].shape == (PROPRIO_DIM,)  # no cube pose
        assert space["front"].shape == (32, 32, 3) and space["front"].dtype.name == "uint8"
        obs, _ = env.reset(seed=0)
        assert obs["state"].shape == (PROPRIO_DIM,)
    finally:
        env.close()


def test_demos_recorded_at_another_camera_size_are_refused_naming_the_camera(capsys, tmp_path):
    pytest.importorskip("mujoco")
    demos = tmp_path / "demos128"
    assert main(["record-demos", "--config", "pick_cube", "--set", "env.obs_mode=pixels", "--episodes", "1",
                 "--out", str(demos)]) == 0
    capsys.readouterr()
    code = main(["train", "--config", "pick_cube_pixels", "--set", f"train.demos={demos}",
                 "--set", f"train.run_dir={tmp_path / 'run'}", "--set", "train.progress=false"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err, err
    assert "observation 'front' has shape (128, 128, 3), the task's is (32, 32, 3)" in err


def test_the_benches_find_each_tasks_robots_view_config():
    from robot_rl.paths import pixels_config

    assert pixels_config("pick_cube") == "pick_cube_pixels" and pixels_config("peg_insert") == "peg_insert_pixels"
    assert pixels_config("plug_insert") == "plug_insert_pixels"
    assert pixels_config("no_such_task") is None
    for task in ("peg_insert", "plug_insert"):
        assert load_config(f"configs/{pixels_config(task)}.yaml").env.obs_mode == "pixels"
