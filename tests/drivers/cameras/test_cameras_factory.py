"""make_camera: backend choice, the sim registration hook, config errors, lazy imports."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from robot_rl.config.sections import CameraConfig
from robot_rl.errors import ConfigError
from robot_rl.interfaces import Camera, Frame
from robot_rl_drivers.cameras import make_camera, make_cameras, register_camera_backend


class FakeSimCamera(Camera):
    def __init__(self, name: str, cfg: CameraConfig) -> None:
        self.name, self.cfg, self.closed = name, cfg, False

    def read(self) -> Frame:
        return Frame(np.zeros((self.cfg.height, self.cfg.width, 3), np.uint8), 0.0)

    def close(self) -> None:
        self.closed = True


def test_sim_cameras_come_from_the_registered_factory():
    register_camera_backend("sim", FakeSimCamera)
    try:
        cam = make_camera("wrist", CameraConfig(backend="sim", width=32, height=24))
        assert isinstance(cam, FakeSimCamera) and cam.name == "wrist"
        assert cam.read().image.shape == (24, 32, 3)
    finally:
        register_camera_backend("sim", None)


def test_sim_without_a_registered_world_is_a_clear_error():
    with pytest.raises(ConfigError, match="camera 'front': the sim backend renders from a MuJoCo world"):
        make_camera("front", CameraConfig(backend="sim"))


def test_per_call_factories_override_the_registry():
    made = []
    cam = make_camera("front", CameraConfig(backend="opencv"),
                      factories={"opencv": lambda name, cfg: made.append(name) or FakeSimCamera(name, cfg)})
    assert made == ["front"] and isinstance(cam, FakeSimCamera)


def test_unknown_hardware_keys_name_the_file_and_key():
    cfg = CameraConfig(backend="realsense", hardware={"serial": "1", "exposur": 100})
    with pytest.raises(ConfigError,
                       match=r"rig.yaml: unknown key 'cameras.front.hardware.exposur' \(did you mean 'exposure'\?\)"):
        make_camera("front", cfg, file="rig.yaml")


def test_a_bare_numeric_serial_asks_for_quotes():
    cfg = CameraConfig(backend="realsense", hardware={"serial": 123456})
    with pytest.raises(ConfigError, match='write the serial in quotes'):
        make_camera("front", cfg, file="rig.yaml")


def test_make_cameras_closes_the_started_ones_when_one_fails():
    started: list[FakeSimCamera] = []

    def factory(name: str, cfg: CameraConfig) -> Camera:
        cam = FakeSimCamera(name, cfg)
        started.append(cam)
        return cam

    cfgs = {"a": CameraConfig(backend="sim"), "b": CameraConfig(backend="sim"),
            "c": CameraConfig(backend="realsense", hardware={"serial": "x", "bogus": 1})}
    with pytest.raises(ConfigError):
        make_cameras(cfgs, factories={"sim": factory})
    assert [c.closed for c in started] == [True, True]


def test_importing_the_package_loads_no_hardware_library_and_no_sim():
    code = ("import sys, robot_rl_drivers.cameras, robot_rl_drivers.robots; "
            "bad = [m for m in ('pyrealsense2', 'pylibfranka', 'cv2', 'robot_rl.sim', 'rclpy', 'cyclonedds') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
