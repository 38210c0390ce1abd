"""``robot.backend`` and ``cameras.<name>.backend`` are checked against the backend registries,
and each ``hardware`` block is typed by its backend's settings class, as the task registry
types ``task.params``: a name the registry does not know, or another backend's settings, is
one line naming the file and the key (exit 2 from ``robot-rl``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from robot_rl.cli import main
from robot_rl.errors import ConfigError
from robot_rl.tasks import config_from_dict, load_config
from robot_rl_drivers.cameras import camera_specs
from robot_rl_drivers.robots import robot_specs

REPO = Path(__file__).resolve().parents[2]
ROBOTS = "'sim', 'topics', 'franka', 'ur', 'ros2_control'"
CAMERAS = "'sim', 'topic', 'realsense', 'opencv'"


def real(robot: dict, cameras: dict | None = None) -> dict:
    return {"robot": robot, "cameras": cameras or {}, "env": {"obs_mode": "pixels", "cameras": list(cameras or {})}}


@pytest.mark.parametrize("name, shown", [
    ("frank", "'frank'"), ("Franka", "'Franka'"), ("", "''"), ("franka\nur", "'franka\\nur'"),
    ("x" * 500, "'" + "x" * 59 + "..."), ("ur ", "'ur '"),
])
def test_an_unknown_robot_backend_is_one_line_naming_the_key(name, shown):
    with pytest.raises(ConfigError) as err:
        config_from_dict(real({"backend": name}), file="cell.yaml")
    text = str(err.value)
    assert text == f"cell.yaml: 'robot.backend' must be one of {ROBOTS}, got {shown}"
    assert "\n" not in text and len(text) < 200


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e300, 5, True, None, ["franka"], {"a": 1}])
def test_a_robot_backend_that_is_not_a_string_is_refused_naming_the_key(value):
    with pytest.raises(ConfigError) as err:
        config_from_dict(real({"backend": value}), file="cell.yaml")
    text = str(err.value)
    assert text.startswith("cell.yaml: ") and "robot.backend" in text and "\n" not in text


def test_an_unknown_camera_backend_is_one_line_naming_the_camera():
    with pytest.raises(ConfigError) as err:
        config_from_dict(real({"backend": "topics"}, {"front": {"backend": "realsens"}}), file="cell.yaml")
    assert str(err.value) == f"cell.yaml: 'cameras.front.backend' must be one of {CAMERAS}, got 'realsens'"


@pytest.mark.parametrize("robot, key", [
    ({"backend": "ur", "hardware": {"ip": "10.0.0.2", "mode": "torque"}}, "robot.hardware.mode"),  # a Franka's
    ({"backend": "franka", "hardware": {"ip": "10.0.0.2", "model": "ur5e"}}, "robot.hardware.model"),  # a UR's
    ({"backend": "ros2_control", "hardware": {"ip": "10.0.0.2"}}, "robot.hardware.ip"),
])
def test_hardware_settings_of_another_backend_are_one_line_naming_the_key(robot, key):
    with pytest.raises(ConfigError) as err:
        config_from_dict(real(robot), file="cell.yaml")
    assert str(err.value).startswith(f"cell.yaml: unknown key '{key}'")


def test_camera_settings_of_another_backend_are_one_line_naming_the_key():
    with pytest.raises(ConfigError) as err:
        config_from_dict(real({"backend": "topics"}, {"wrist": {"backend": "opencv", "hardware": {"serial": "1"}}}),
                         file="cell.yaml")
    assert str(err.value) == "cell.yaml: unknown key 'cameras.wrist.hardware.serial'"


def test_every_registered_backend_types_its_block_with_its_own_class():
    for spec in robot_specs():
        if spec.settings is not None:
            assert spec.settings.__module__.startswith(f"robot_rl_drivers.robots.{spec.folder}.")
    for spec in camera_specs():
        if spec.settings is not None:
            assert spec.settings.__module__.startswith(f"robot_rl_drivers.cameras.{spec.folder}.")
    cfg = load_config(REPO / "configs" / "ur5e_peg_insert.yaml")
    assert type(cfg.robot.hardware).__module__ == "robot_rl_drivers.robots.ur.settings"


@pytest.mark.parametrize("change, message", [
    ({"robot": {"backend": "kuka"}}, f"'robot.backend' must be one of {ROBOTS}, got 'kuka'"),
    ({"robot": {"hardware": {"mode": "torque"}}}, "unknown key 'robot.hardware.mode'"),
])
def test_the_cli_exits_2_with_one_line_naming_the_file_and_key(tmp_path, capsys, change, message):
    data = yaml.safe_load((REPO / "configs" / "ur5e_peg_insert.yaml").read_text())
    for section, values in change.items():
        for key, value in values.items():
            if isinstance(value, dict):
                data[section][key] = {**data[section].get(key, {}), **value}
            else:
                data[section][key] = value
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["ur", "check", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"robot-rl: {path}: {message}"), err
