"""Typed hardware settings (robot_rl.config.hardware) and backend selection by mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from robot_rl.config import to_dict
from robot_rl.config.hardware import check_hardware
from robot_rl.config.sections import RobotConfig
from robot_rl.errors import ConfigError
from robot_rl.tasks import HARDWARE, config_from_dict, load_config
from robot_rl_drivers.cameras.opencv.settings import OpenCVSettings
from robot_rl_drivers.cameras.realsense.settings import RealSenseSettings
from robot_rl_drivers.robots import make_robot, robot_hardware
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig

HERE = Path(__file__).resolve().parents[2] / "support"  # fake_pylibfranka.py

RIG = {
    "robot": {"backend": "franka", "hardware": {
        "ip": "172.16.0.2", "mode": "torque", "gripper": {"mode": "continuous", "force": 30},
        "collision": {"collision_torque": [40, 40, 36, 36, 32, 28, 24]}, "loop": {"cpu": 3}}},
    "cameras": {
        "front": {"backend": "realsense", "width": 640, "height": 480,
                  "hardware": {"serial": "012345678901", "exposure": 150, "depth": True}},
        "wrist": {"backend": "opencv", "width": 640, "height": 480, "hardware": {"device": "/dev/video2"}},
    },
    "env": {"obs_mode": "pixels"},
}


def test_check_hardware_types_every_block_and_round_trips(tmp_path):
    cfg = config_from_dict(json.loads(json.dumps(RIG)), file="rig.yaml")
    check_hardware(cfg, "rig.yaml", HARDWARE)
    hw = cfg.robot.hardware
    assert isinstance(hw, FrankaHardwareConfig) and hw.gripper.force == 30.0 and hw.loop.cpu == 3
    assert hw.collision.collision_torque[0] == 40.0 and hw.collision.contact_torque[0] == 20.0
    assert isinstance(cfg.cameras["front"].hardware, RealSenseSettings)
    assert cfg.cameras["front"].hardware.serial == "012345678901" and cfg.cameras["front"].hardware.depth
    assert isinstance(cfg.cameras["wrist"].hardware, OpenCVSettings)
    # The typed config writes back to YAML that loads to the same thing.
    path = tmp_path / "again.yaml"
    path.write_text(yaml.safe_dump(to_dict(cfg)))
    again = load_config(path)
    check_hardware(again, str(path), HARDWARE)
    assert again.robot.hardware == hw and again.cameras["front"].hardware == cfg.cameras["front"].hardware


@pytest.mark.parametrize("hardware, message", [
    ({"ip": "172.16.0.2", "gripper": {"sped": 0.1}},
     "rig.yaml: unknown key 'robot.hardware.gripper.sped' (did you mean 'speed'?)"),
    ({"ip": "172.16.0.2", "mode": "ros2"},
     "rig.yaml: 'robot.hardware.mode' must be one of 'torque', 'ros2_control', got 'ros2'"),
    ({"ip": "172.16.0.256"}, "rig.yaml: robot.hardware: ip '172.16.0.256' is not an IP address or host name"),
    ({}, "rig.yaml: missing required key 'robot.hardware.ip'"),
    ({"ip": "172.16.0.2", "collision": {"contact_force": [30, 30, 30, 30, 30, 30]}},
     "rig.yaml: robot.hardware.collision: contact_force must not exceed collision_force on any axis"),
    ({"ip": "172.16.0.2", "loop": {"rt_priority": 120}},
     "rig.yaml: 'robot.hardware.loop.rt_priority' = 120 is out of range [0, 99]"),
])
def test_bad_robot_hardware_names_the_file_and_key(hardware, message):
    cfg = RobotConfig(backend="franka", hardware=hardware)
    with pytest.raises(ConfigError) as err:
        robot_hardware(cfg, file="rig.yaml")
    assert str(err.value) == message


def test_sim_keeps_its_mapping_untouched():
    cfg = RobotConfig(backend="sim", hardware={"anything": 1})
    assert robot_hardware(cfg, file="x.yaml") == {"anything": 1}


def test_make_robot_refuses_non_hardware_backends():
    with pytest.raises(ConfigError, match="robot.backend is 'sim'"):
        make_robot(RobotConfig(backend="sim"), file="rig.yaml")


def test_make_robot_builds_the_torque_backend_for_mode_torque(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    import fake_pylibfranka as fakelib

    scenario = tmp_path / "scenario.json"
    scenario.write_text("{}")
    monkeypatch.setenv(fakelib.SCENARIO_ENV, str(scenario))
    from robot_rl.config.sections import WorkspaceConfig
    from robot_rl_drivers.robots.franka.torque import FrankaTorqueRobot

    cfg = RobotConfig(backend="franka", reset_pos=(0.35, 0.0, 0.45),
                      workspace=WorkspaceConfig(pos_low=(0.2, -0.2, 0.3), pos_high=(0.6, 0.2, 0.6)),
                      hardware={"ip": "172.16.0.2", "loop": {"realtime": "ignore", "rt_priority": 0}})
    robot = make_robot(cfg, file="rig.yaml", lib="fake_pylibfranka")
    try:
        assert isinstance(robot, FrankaTorqueRobot)
        assert robot.state().q.shape == (7,)
    finally:
        robot.close()
