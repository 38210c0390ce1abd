"""``robot-rl cameras list|check``: what a person runs first on a new rig."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import yaml

from robot_rl.cli import main

cv2 = pytest.importorskip("cv2")


def write_config(tmp_path, cameras: dict):
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump({"cameras": cameras}))
    return str(path)


def test_a_missing_serial_exits_non_zero_with_one_line(tmp_path):
    pytest.importorskip("pyrealsense2")
    cfg = write_config(tmp_path, {"front": {"backend": "realsense", "width": 640, "height": 480,
                                            "hardware": {"serial": "123456789"}}})
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "cameras", "check", "--config", cfg],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "robot-rl: camera 'front': no RealSense with serial 123456789 is connected (connected: none)"]


def test_check_reports_size_and_rate(tmp_path, capsys):
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    for i in range(300):
        writer.write(np.full((48, 64, 3), i % 255, np.uint8))
    writer.release()
    cfg = write_config(tmp_path, {"side": {"backend": "opencv", "width": 64, "height": 48,
                                           "hardware": {"device": str(video)}},
                                  "wrist": {"backend": "sim"}})
    assert main(["cameras", "check", "--config", cfg, "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "camera 'side' (opencv): 64x48," in out and "wrist" not in out


def test_an_unknown_camera_name_is_one_line(tmp_path, capsys):
    cfg = write_config(tmp_path, {"side": {"backend": "sim"}})
    assert main(["cameras", "check", "--config", cfg, "--name", "top"]) == 2
    assert capsys.readouterr().err.strip() == f"robot-rl: {cfg}: no camera named top (has: side)"


def test_list_runs_without_devices(capsys):
    assert main(["cameras", "list"]) == 0
    assert "v4l2:" in capsys.readouterr().out
