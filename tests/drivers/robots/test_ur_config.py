"""``robot.hardware`` of ``robot.backend: ur`` (URHardwareConfig), the UR state and fault helpers, make_robot."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from ur_rig import make_ur, ur_robot_config, write_scenario

from robot_rl.config import to_dict
from robot_rl.config.hardware import check_hardware
from robot_rl.config.sections import RobotConfig, WorkspaceConfig
from robot_rl.control.transforms import quat_to_rotvec, rpy_to_quat
from robot_rl.errors import ConfigError
from robot_rl.tasks import HARDWARE, config_from_dict, load_config
from robot_rl_drivers.robots import arm_joint_names, make_robot, robot_hardware
from robot_rl_drivers.robots.ur.faults import SAFETY_MODES, describe_connect_error, describe_stop, mode_name
from robot_rl_drivers.robots.ur.settings import URHardwareConfig
from robot_rl_drivers.robots.ur.state import UNREADABLE, code, pose_from_ur, ur_pose, vector

RIG = {"robot": {"backend": "ur", "reset_pos": [0.4, -0.1, 0.3],
                 "workspace": {"pos_low": [0.25, -0.25, 0.15], "pos_high": [0.55, 0.05, 0.45]},
                 "hardware": {"ip": "192.168.1.10", "model": "ur10e", "command": "servol",
                              "tcp_offset": [0, 0, 0.15, 0, 0, 0], "gripper": {"enabled": True, "force": 40},
                              "recovery": {"auto_unlock": False}, "loop": {"cpu": 2}}},
       "env": {"obs_mode": "pixels"}}


def test_the_ur_block_is_typed_and_round_trips(tmp_path):
    cfg = config_from_dict(json.loads(json.dumps(RIG)), file="rig.yaml")
    check_hardware(cfg, "rig.yaml", HARDWARE)
    hw = cfg.robot.hardware
    assert isinstance(hw, URHardwareConfig) and hw.model == "ur10e" and hw.reach_m == 1.3
    assert hw.command == "servol" and hw.rate_hz == 500.0 and hw.tcp_offset == (0.0, 0.0, 0.15, 0.0, 0.0, 0.0)
    assert hw.gripper.enabled and hw.gripper.force == 40 and hw.gripper.port == 63352
    assert not hw.recovery.auto_unlock and hw.recovery.unlock_delay_s == 5.0 and hw.loop.cpu == 2
    path = tmp_path / "again.yaml"
    path.write_text(yaml.safe_dump(to_dict(cfg)))
    again = load_config(path)
    check_hardware(again, str(path), HARDWARE)
    assert again.robot.hardware == hw


@pytest.mark.parametrize("change, message", [
    ({"rate_hz": float("nan")}, "'robot.hardware.rate_hz' must be a finite number, got nan"),
    ({"stop_acc": float("inf")}, "'robot.hardware.stop_acc' must be a finite number, got inf"),
    ({"rate_hz": 1e300}, "'robot.hardware.rate_hz' = 1e+300 is out of range [50.0, 500.0]"),
    ({"state_timeout_s": -1}, "'robot.hardware.state_timeout_s' = -1.0 is out of range [0.004, 2.0]"),
    ({"rate_hz": "fast"}, "'robot.hardware.rate_hz' must be a number, got 'fast'"),
    ({"rate_hz": [500]}, "'robot.hardware.rate_hz' must be a number"),
    ({"model": "ur7"}, "'robot.hardware.model' must be one of 'ur3e', 'ur5e', 'ur10e', 'ur16e', 'ur20', 'ur30', "
                       "got 'ur7'"),
    ({"command": "movel"}, "'robot.hardware.command' must be one of 'speedl', 'servol', got 'movel'"),
    ({"ip": "10.0.0.256"}, "robot.hardware: ip '10.0.0.256' is not an IP address or host name"),
    ({"ip": None}, "'robot.hardware.ip'"),
    ({"tcp_offset": [0, 0, 0.1]}, "'robot.hardware.tcp_offset' must have 6 items, got 3"),
    ({"tcp_offset": [0, 0, float("nan"), 0, 0, 0]}, "must be a finite number, got nan"),
    ({"tcp_offset": [0, 0, 9.0, 0, 0, 0]}, "is out of range [-0.5, 0.5]"),
    ({"rtde_watchdog_hz": 250}, "robot.hardware: rtde_watchdog_hz (250) must be below half of rate_hz (500)"),
    ({"rate_hz": 125, "state_timeout_s": 0.01}, "robot.hardware: state_timeout_s (0.01) must cover at least two "
                                                "control periods"),
    ({"servo_gain": 5000}, "'robot.hardware.servo_gain' = 5000.0 is out of range [100.0, 2000.0]"),
    ({"gripper": {"port": 70000}}, "'robot.hardware.gripper.port' = 70000 is out of range [1, 65535]"),
    ({"gripper": {"force": 2.5}}, "'robot.hardware.gripper.force' must be an integer"),
    ({"gripper": {"open_position": 200, "closed_position": 100}},
     "robot.hardware.gripper: open_position (200) must be below closed_position (100)"),
    ({"recovery": {"unlock_delay_s": float("-inf")}}, "'robot.hardware.recovery.unlock_delay_s' must be a finite"),
    ({"recovery": {"auto_unlok": True}}, "unknown key 'robot.hardware.recovery.auto_unlok' (did you mean "
                                         "'auto_unlock'?)"),
    ({"loop": {"realtime": "ignore"}}, "unknown key 'robot.hardware.loop.realtime'"),
    ({"loop": {"rt_priority": 1e9}}, "'robot.hardware.loop.rt_priority'"),
])
def test_bad_ur_hardware_is_one_line_naming_the_file_and_key(change, message):
    hardware = {"ip": "10.0.0.2", **change}
    with pytest.raises(ConfigError) as err:
        robot_hardware(RobotConfig(backend="ur", hardware=hardware), file="rig.yaml")
    text = str(err.value)
    assert text.startswith("rig.yaml: ") and message in text and "\n" not in text, text


def test_a_box_beyond_the_arm_s_reach_is_refused_naming_the_model(tmp_path, monkeypatch):
    cfg = RobotConfig(backend="ur", reset_pos=(0.4, 0.0, 0.3), hardware={"ip": "10.0.0.2", "model": "ur3e"},
                      workspace=WorkspaceConfig(pos_low=(0.3, -0.5, 0.0), pos_high=(1.0, 0.5, 0.6)))
    with pytest.raises(ConfigError) as err:
        make_robot(cfg, file="rig.yaml", lib="fake_rtde")
    assert str(err.value) == ("rig.yaml: robot.workspace reaches 1.27 m from the base, but a ur3e reaches 0.50 m "
                              "(+0.3 m for a tool): shrink the box or check robot.hardware.model")


def test_make_robot_builds_the_ur_backend(tmp_path, monkeypatch):
    from robot_rl_drivers.robots.ur.robot import URRobot

    write_scenario(tmp_path, monkeypatch)
    cfg = ur_robot_config()
    # This test is about which class the registry builds; ur_rtde's watchdog (tested in test_ur_loop and
    # test_ur_faults) would stop the fake's control script when a loaded machine starves the loop for 50 ms.
    cfg.hardware = {"ip": "10.0.0.2", "connect_timeout_s": 60.0, "rtde_watchdog_hz": 0.0, "loop": {"rt_priority": 0}}
    robot = make_robot(cfg, file="rig.yaml", lib="fake_rtde")
    try:
        assert isinstance(robot, URRobot) and robot.state().q.shape == (6,)
        with pytest.raises(NotImplementedError):
            robot.set_posture(robot.state().q)  # six joints: no null space
    finally:
        robot.close()
    assert arm_joint_names(cfg) == ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                    "wrist_2_joint", "wrist_3_joint"]


def test_a_ur_without_a_gripper_reports_it_open(tmp_path, monkeypatch):
    robot, _ = make_ur(tmp_path, monkeypatch)
    try:
        state = robot.state()
        assert state.gripper == 1.0 and robot.command(state.tcp_pos, state.tcp_quat, 0.0) is True
    finally:
        robot.close()


# --------------------------------------------------------------------------- readings and modes


@pytest.mark.parametrize("rpy", [(np.pi, 0.0, 0.0), (np.pi, 0.3, -0.7), (0.1, 0.2, 0.3), (np.pi / 2, 0.0, np.pi)])
def test_ur_poses_are_rotation_vectors_both_ways(rpy):
    quat = rpy_to_quat(np.array(rpy))
    pose = ur_pose(np.array([0.4, -0.1, 0.3]), quat)
    assert pose[:3] == [0.4, -0.1, 0.3]
    np.testing.assert_allclose(pose[3:], quat_to_rotvec(quat), atol=1e-12)
    pos, back = pose_from_ur(pose)
    assert abs(abs(np.dot(back, quat)) - 1.0) < 1e-12 and np.array_equal(pos, [0.4, -0.1, 0.3])


def test_a_tool_pointing_down_is_a_half_turn_about_x():
    _, quat = pose_from_ur([0.4, -0.1, 0.3, np.pi, 0.0, 0.0])
    np.testing.assert_allclose(np.abs(quat), [0.0, 1.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("value", [[np.nan] * 6, [np.inf] * 6, [1e308] * 6, [0.1] * 5, [], "n/a", None,
                                   [[0.1] * 6], {"x": 1}, [0.1, 0.2, 0.3, 0.4, 0.5, "x"]])
def test_an_unusable_reading_becomes_nan_and_says_so(value):
    vec, ok = vector(value, 6)
    assert not ok and vec.shape == (6,) and np.all(np.isnan(vec))


def test_mode_readings_are_integers_or_unreadable():
    assert code(7) == 7 and code(3.0) == 3
    for bad in (None, "RUNNING", float("nan"), 3.5, float("inf"), [7]):
        assert code(bad) == UNREADABLE
    assert mode_name(SAFETY_MODES, 3) == "PROTECTIVE_STOP (3)" and mode_name(SAFETY_MODES, 99) == "UNKNOWN (99)"
    assert mode_name(SAFETY_MODES, "x").startswith("unreadable")


@pytest.mark.parametrize("safety, robot, words", [
    (5, 7, "safeguard stop"), (6, 7, "emergency stop"), (8, 7, "violation"), (9, 7, "fault"),
    (4, 7, "recovery mode"), (13, 7, "three-position enabling device"), (1, 6, "backdrive"),
    (1, 8, "firmware update"), (11, 7, "UNDEFINED_SAFETY_MODE (11)"), (1, 42, "robot mode UNKNOWN (42)"),
])
def test_every_stop_is_one_line_with_a_remedy(safety, robot, words):
    line = describe_stop("10.0.0.2", safety, robot)
    assert line.startswith("UR at 10.0.0.2 ") and words in line and "\n" not in line
    assert line.endswith("recover")


def test_connect_errors_are_told_apart():
    assert "not in remote control" in describe_connect_error(
        "h", RuntimeError("ur_rtde: Please enable remote control on the robot!"))
    assert describe_connect_error("h", RuntimeError("Error: Could not connect to: h at 30004, verify the IP")
                                  ).startswith("cannot reach the UR at h (RuntimeError: Error: Could not connect")
    assert describe_connect_error("h", RuntimeError("boom")) == "UR at h: RuntimeError: boom"
