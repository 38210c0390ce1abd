"""The OpenCV (V4L2) backend, fed from a video file written with cv2.VideoWriter.

VideoCapture opens the file through the same code path as a camera node (only the API
preference differs), so these tests exercise the backend's open, size check, BGR->RGB
conversion, grab thread and gone-device detection.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from robot_rl.config.sections import CameraConfig
from robot_rl.errors import DeviceError
from robot_rl_drivers.cameras import make_camera
from robot_rl_drivers.cameras.opencv.camera import OpenCVCamera
from robot_rl_drivers.cameras.opencv.settings import OpenCVSettings

cv2 = pytest.importorskip("cv2")

W, H = 64, 48
RGB = (200, 40, 90)  # a colour whose channels differ, so a missed BGR->RGB swap shows


def write_video(path: Path, frames: int = 20, size: tuple[int, int] = (W, H)) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, size)
    assert writer.isOpened(), "OpenCV cannot write MJPG here"
    bgr = np.zeros((size[1], size[0], 3), np.uint8)
    bgr[:] = RGB[::-1]
    for _ in range(frames):
        writer.write(bgr)
    writer.release()
    return path


def cfg(**kw) -> CameraConfig:
    return CameraConfig(backend="opencv", width=kw.pop("width", W), height=kw.pop("height", H), fps=30, **kw)


def test_frames_arrive_as_rgb_of_the_configured_size(tmp_path):
    video = write_video(tmp_path / "clip.avi")
    before = time.time()
    cam = OpenCVCamera("side", cfg(), OpenCVSettings(device=str(video)))
    try:
        frame = cam.read()
        assert frame.image.shape == (H, W, 3) and frame.image.dtype == np.uint8
        assert frame.image.flags["C_CONTIGUOUS"]
        mean = frame.image.reshape(-1, 3).mean(axis=0)
        assert np.allclose(mean, RGB, atol=6), f"expected RGB {RGB}, got {mean.round()}"
        assert before <= frame.stamp <= time.time()
        assert frame.depth is None
    finally:
        cam.close()


def test_the_end_of_the_stream_reports_the_camera_gone(tmp_path):
    video = write_video(tmp_path / "short.avi", frames=3)
    cam = OpenCVCamera("side", cfg(), OpenCVSettings(device=str(video), frame_timeout_s=0.2))
    try:
        time.sleep(0.4)
        with pytest.raises(DeviceError, match="camera 'side': no new frame"):
            cam.read()
    finally:
        cam.close()


def test_a_device_that_does_not_open_is_one_clear_error():
    with pytest.raises(DeviceError) as err:
        OpenCVCamera("side", cfg(), OpenCVSettings(device="/dev/video97"))
    msg = str(err.value)
    assert msg.startswith("camera 'side' (/dev/video97): cannot open the video device") and "\n" not in msg


def test_a_size_the_device_does_not_deliver_is_refused(tmp_path):
    video = write_video(tmp_path / "big.avi", size=(80, 60))
    with pytest.raises(DeviceError) as err:
        OpenCVCamera("side", cfg(), OpenCVSettings(device=str(video)))
    assert "delivers 80x60 frames, the config asks for 64x48" in str(err.value)


def test_the_factory_builds_it_from_the_hardware_mapping(tmp_path):
    video = write_video(tmp_path / "clip.avi")
    cam = make_camera("side", cfg(hardware={"device": str(video)}))
    try:
        assert isinstance(cam, OpenCVCamera)
        assert cam.read().image.shape == (H, W, 3)
    finally:
        cam.close()
