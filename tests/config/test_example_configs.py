"""The example configs in configs/: each loads with the strict loader, and the real-robot
example describes a safe Franka cell (two RealSense cameras, a SpaceMouse, resets inside
the box) without opening any device."""

from __future__ import annotations

import copy
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_rl.config.reset import perturbation, resolve_mode
from robot_rl.config.sections import AdmittanceConfig, ControllerConfig
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config, task_names
from robot_rl_drivers.cameras.realsense.settings import RealSenseSettings
from robot_rl_drivers.robots import arm_has_posture
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
from robot_rl_drivers.robots.ur.settings import URHardwareConfig

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
FRANKA = CONFIGS / "franka_peg_insert.yaml"
HARDWARE_MODULES = ("pyrealsense2", "pylibfranka", "hid", "hidraw", "pynput", "rclpy", "cyclonedds", "grpc")


def _example_configs() -> list[Path]:
    return sorted(CONFIGS.glob("*.yaml"))


def test_the_examples_are_there():
    names = {p.name for p in _example_configs()}
    assert {"pick_cube.yaml", "peg_insert.yaml", "franka_peg_insert.yaml"} <= names


@pytest.mark.parametrize("path", _example_configs(), ids=lambda p: p.name)
def test_every_example_config_loads(path):
    cfg = load_config(path)
    assert cfg.task.name in task_names()
    low, high = np.asarray(cfg.robot.workspace.pos_low), np.asarray(cfg.robot.workspace.pos_high)
    assert np.all(low < high)
    assert np.all(low <= cfg.robot.reset_pos) and np.all(np.asarray(cfg.robot.reset_pos) <= high)


@pytest.fixture
def franka():
    return load_config(FRANKA)


def test_franka_example_loads_without_touching_hardware_libraries(monkeypatch):
    # A module set to None in sys.modules makes any import of it fail: loading must not try.
    for name in HARDWARE_MODULES:
        monkeypatch.setitem(sys.modules, name, None)
    cfg = load_config(FRANKA)
    assert isinstance(cfg.robot.hardware, FrankaHardwareConfig)


def test_franka_example_is_a_franka_with_two_realsense_cameras(franka):
    assert franka.robot.backend == "franka"
    hw = franka.robot.hardware
    assert isinstance(hw, FrankaHardwareConfig)
    assert hw.mode in ("torque", "ros2_control")
    assert hw.loop.realtime == "enforce"  # 'ignore' is for a first look only, never the example
    assert set(franka.cameras) == {"front", "wrist"}
    serials = []
    for cam in franka.cameras.values():
        assert cam.backend == "realsense"
        assert isinstance(cam.hardware, RealSenseSettings)
        serials.append(cam.hardware.serial)
    assert len(set(serials)) == 2, f"the two cameras share a serial: {serials}"
    assert franka.env.obs_mode == "pixels"
    assert set(franka.env.cameras) == {"front", "wrist"}
    assert set(franka.reward.cameras) <= set(franka.cameras)


def test_franka_example_takes_over_with_a_spacemouse(franka):
    devices = franka.intervention.device.split("+")
    assert "spacemouse" in devices
    assert "simulated" not in devices
    assert franka.ros.input_node  # the session graph starts the intervention node


def test_franka_example_learns_from_a_classifier_and_the_human(franka):
    assert franka.reward.classifier_path, "the real cell's reward comes from a trained classifier"
    assert franka.train.scripted_demos == 0  # no scripted expert on a real cell
    assert franka.ros.policy == "learner"
    assert franka.learning.is_loopback()
    assert franka.learning.sync_steps == 0  # a robot never waits for weights


def test_franka_example_workspace_is_small_and_above_the_table(franka):
    ws = franka.robot.workspace
    low, high = np.asarray(ws.pos_low), np.asarray(ws.pos_high)
    assert np.all(low < high)
    assert np.all(high - low <= 0.3), f"a first-run box should be small, got {(high - low).tolist()} m"
    assert low[2] > 0.0, "the box floor must be above the robot base's plane"
    assert np.all(np.abs(ws.rot_low) <= 0.5) and np.all(np.abs(ws.rot_high) <= 0.5)


def test_franka_example_resets_stay_inside_the_box(franka):
    assert resolve_mode(franka) == "scripted"
    pos_range, yaw_range = perturbation(franka)
    ws = franka.robot.workspace
    centre = np.asarray(franka.robot.reset_pos)
    for signs in itertools.product((-1.0, 1.0), repeat=3):
        corner = centre + np.asarray(signs) * pos_range
        assert np.all(corner >= ws.pos_low) and np.all(corner <= ws.pos_high), corner
    assert ws.rot_low[2] <= -yaw_range and yaw_range <= ws.rot_high[2]


def test_franka_example_is_softer_than_the_sim_defaults(franka):
    ctrl, default = franka.robot.controller, ControllerConfig()
    assert np.all(np.asarray(ctrl.stiffness) <= np.asarray(default.stiffness))
    assert np.all(np.asarray(ctrl.error_clip_mm) <= np.asarray(default.error_clip_mm))
    assert ctrl.max_torque_rate <= 1000.0  # libfranka's own limit
    # The largest spring force a wrong target can ask for, K * clip, stays small.
    assert max(k * c / 1000.0 for k, c in zip(ctrl.stiffness[:3], ctrl.error_clip_mm)) <= 20.0
    assert 0.0 < ctrl.watchdog_s <= 0.5
    assert franka.ros.watchdog_s <= 0.2


def test_franka_example_session_graph(franka):
    from robot_rl.nodes.description import build_graph

    graph = build_graph(franka, FRANKA)
    assert graph.names == ["controller_node", "camera_front", "camera_wrist", "intervention_node", "actor_node"]
    assert graph.node("camera_wrist").parameters["camera"] == "wrist"
    actor_cams = graph.node("actor_node").parameters["topics"]["cameras"]
    assert set(actor_cams) == {"front", "wrist"}


def test_franka_example_spaces_match_what_the_learner_builds(franka):
    from robot_rl.training.remote.learner_process import spaces_env

    env = spaces_env(franka)
    try:
        obs, act = env.observation_space, env.action_space
        assert obs["front"].shape == (128, 128, 3) and obs["wrist"].shape == (128, 128, 3)
        assert act.shape == (len(franka.env.active_dims),)
    finally:
        env.close()


UR = CONFIGS / "ur5e_peg_insert.yaml"


def test_ur_example_loads_without_touching_hardware_libraries(monkeypatch):
    for name in (*HARDWARE_MODULES, "rtde_control", "rtde_receive", "dashboard_client"):
        monkeypatch.setitem(sys.modules, name, None)
    cfg = load_config(UR)
    assert cfg.robot.backend == "ur" and isinstance(cfg.robot.hardware, URHardwareConfig)
    assert cfg.robot.hardware.model == "ur5e" and not cfg.robot.hardware.gripper.enabled


def test_ur_example_is_soft_slow_and_its_resets_stay_in_the_box():
    ur = load_config(UR)
    adm, default = ur.robot.admittance, AdmittanceConfig()
    assert np.all(np.asarray(adm.stiffness) <= np.asarray(default.stiffness))
    assert adm.max_speed <= default.max_speed and 0.0 < adm.watchdog_s <= 0.5
    # The largest force a wrong target can push a contact with, K * clip, stays small.
    assert max(k * c / 1000.0 for k, c in zip(adm.stiffness[:3], adm.error_clip_mm)) <= 20.0
    assert not arm_has_posture(ur) and ur.reset.joint_reset_every == 0
    pos_range, _ = perturbation(ur)
    ws, centre = ur.robot.workspace, np.asarray(ur.robot.reset_pos)
    for signs in itertools.product((-1.0, 1.0), repeat=3):
        corner = centre + np.asarray(signs) * pos_range
        assert np.all(corner >= ws.pos_low) and np.all(corner <= ws.pos_high), corner


def test_ur_example_session_graph():
    from robot_rl.nodes.description import build_graph

    graph = build_graph(load_config(UR), UR)
    assert graph.names == ["controller_node", "camera_front", "camera_wrist", "intervention_node", "actor_node"]


def _franka_copy(tmp_path: Path, edit) -> Path:
    data = copy.deepcopy(yaml.safe_load(FRANKA.read_text()))
    edit(data)
    path = tmp_path / "my_cell.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_reset_pose_outside_the_box_is_refused_at_load(tmp_path):
    def move_out(data):
        data["robot"]["reset_pos"][0] = data["robot"]["workspace"]["pos_high"][0] + 0.05

    path = _franka_copy(tmp_path, move_out)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message
    assert "reset_pos" in message and "outside the workspace box" in message
    assert "\n" not in message


def test_a_reset_perturbation_leaving_the_box_is_refused_at_load(tmp_path):
    def widen(data):
        data["reset"]["perturb_pos"] = [0.08, 0.02, 0.01]  # 0.55 +- 0.08 leaves x in [0.50, 0.60]

    path = _franka_copy(tmp_path, widen)
    with pytest.raises(ConfigError, match=r"leave the workspace box") as err:
        load_config(path)
    assert str(path) in str(err.value)


def test_teleport_resets_are_refused_on_the_robot(tmp_path):
    path = _franka_copy(tmp_path, lambda data: data["reset"].update(mode="teleport"))
    with pytest.raises(ConfigError, match=r"'teleport' is the sim shortcut"):
        load_config(path)


def test_a_serial_written_as_a_bare_number_is_refused(tmp_path):
    path = _franka_copy(tmp_path, lambda data: data["cameras"]["front"]["hardware"].update(serial=12345678))
    with pytest.raises(ConfigError, match=r"cameras.front.hardware.*write the serial in quotes"):
        load_config(path)
