"""Config loading: every mistake is one clear error naming the file and the key."""

from __future__ import annotations

import pytest

from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config


def write(tmp_path, text: str):
    path = tmp_path / "task.yaml"
    path.write_text(text)
    return path


def test_task_configs_load():
    for name in ("pick_cube", "peg_insert"):
        cfg = load_config(f"configs/{name}.yaml")
        assert cfg.task.params is not None


@pytest.mark.parametrize("text,fragment", [
    ("task: {name: PickCube}\nenv: {obs_mod: state}\n", "unknown key 'env.obs_mod' (did you mean 'obs_mode'?)"),
    ("task: {name: PickCube}\nenv: {control_hz: fast}\n", "'env.control_hz' must be a number"),
    ("task: {name: PickCube}\nenv: {control_hz: 0}\n", "'env.control_hz' = 0.0 is out of range"),
    ("task: {name: PickCube}\nenv: {obs_mode: video}\n", "'env.obs_mode' must be one of"),
    ("task: {name: FlipPancake}\n", "'task.name' must be one of 'PickCube', 'PegInsert'"),
    ("task: {name: PickCube, params: {cube_size: 3}}\n", "unknown key 'task.params.cube_size'"),
    ("task: {name: PickCube}\nrobot: {controller: {stiffness: [1, 2]}}\n",
     "'robot.controller.stiffness' must have 6 items"),
    ("task: {name: PickCube}\nrobot: {reset_pos: [2.0, 0.0, 0.2]}\n", "outside the workspace box"),
    ("task: {name: PickCube}\nenv: [1, 2]\n", "'env' must be a mapping"),
    ("task: {name: PickCube\n", "is not valid YAML"),
])
def test_bad_configs_name_file_and_key(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert fragment in message
    assert str(path) in message
    assert "\n" not in message


def test_missing_file_is_one_line():
    with pytest.raises(ConfigError, match="config file not found: nowhere.yaml"):
        load_config("nowhere.yaml")


def test_overrides_are_checked_like_the_file():
    cfg = load_config("configs/pick_cube.yaml", ["env.max_episode_steps=7"])
    assert cfg.env.max_episode_steps == 7
    with pytest.raises(ConfigError, match="unknown key 'env.max_steps'"):
        load_config("configs/pick_cube.yaml", ["env.max_steps=7"])
