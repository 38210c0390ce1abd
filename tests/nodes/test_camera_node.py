"""camera_node: a camera backend from the session config -> image_raw (rgb8) + camera_info, sensor QoS."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
import yaml
from graph_harness import PICK, Probe, private_env, run_cli  # noqa: E402

from robot_rl.interfaces import Camera, Frame  # noqa: E402
from robot_rl.ros import convert  # noqa: E402
from robot_rl.ros import messages as m  # noqa: E402
from robot_rl_drivers.cameras import register_camera_backend  # noqa: E402

W, H = 64, 48
IMAGE = "/camera/side/color/image_raw"
INFO = "/camera/side/color/camera_info"


def session_with_camera(tmp_path: Path, hardware: dict) -> Path:
    cfg = yaml.safe_load(PICK.read_text())
    cfg["cameras"]["side"] = {"backend": "opencv", "width": W, "height": H, "fps": 30, "hardware": hardware}
    path = tmp_path / "camera.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


class CountingCamera(Camera):
    """A camera whose frame n is filled with n; a new frame only every other read (like a slow device)."""

    def __init__(self) -> None:
        self.reads = 0
        self.closed = threading.Event()
        self.intrinsics = np.array([[50.0, 0, 32.0], [0, 50.0, 24.0], [0, 0, 1]])

    def read(self) -> Frame:
        self.reads += 1
        n = self.reads // 2
        image = np.zeros((H, W, 3), np.uint8)
        image[..., 0], image[..., 1], image[..., 2] = n % 256, 7, 200
        return Frame(image=image, stamp=1000.0 + n)

    def close(self) -> None:
        self.closed.set()


@pytest.fixture
def counting_camera():
    camera = CountingCamera()
    register_camera_backend("opencv", lambda name, cfg: camera)
    yield camera
    register_camera_backend("opencv", None)


def test_camera_node_publishes_each_new_frame_as_rgb8_with_camera_info(tmp_path, monkeypatch, counting_camera):
    config = session_with_camera(tmp_path, {"device": 0})
    env = private_env()
    probe = Probe(monkeypatch, env, ros_args=["-p", f"config:={config}", "-p", "camera:=side",
                                              "-p", f"topics.image:={IMAGE}", "-p", f"topics.info:={INFO}"])
    try:
        from robot_rl.nodes.camera_node import CameraNode

        sensor = probe.ros.qos_profile_sensor_data  # best-effort subscribers, as DESIGN.md says
        images = probe.collect(m.Image, IMAGE, lambda msg: (convert.image_from_msg(msg), msg.header.frame_id),
                               depth=sensor)
        infos = probe.collect(m.CameraInfo, INFO, depth=sensor)
        node = probe.add(CameraNode())
        assert probe.spin_until(lambda: len(images) >= 10 and len(infos) >= 10, 30)
        (image, stamp), frame_id = images[-1][1]
        assert image.shape == (H, W, 3) and image[0, 0].tolist() == [int(stamp - 1000) % 256, 7, 200]
        assert frame_id == "side_color_optical_frame"
        stamps = [img[1][0][1] for img in images]  # (arrival, ((image, stamp), frame_id))
        assert stamps == sorted(set(stamps)), "every frame once, in order"
        info = infos[-1][1]
        assert (info.width, info.height) == (W, H) and info.header.frame_id == frame_id
        assert list(info.k) == counting_camera.intrinsics.ravel().tolist()
        status = node.status()
        assert status["received"] == {} and status["dropped_messages"] == 0
        assert node.published >= 10 and node.repeated >= node.published - 2  # half the reads were repeats
    finally:
        probe.close()
    assert counting_camera.closed.is_set()


def write_video(path: Path, frames: int) -> Path:
    import cv2

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (W, H))
    for i in range(frames):
        writer.write(np.full((H, W, 3), i % 256, np.uint8))
    writer.release()
    return path


def test_a_camera_that_stops_delivering_ends_the_node_with_one_line(tmp_path):
    video = write_video(tmp_path / "clip.avi", 30)  # the OpenCV backend, from a file: it ends
    config = session_with_camera(tmp_path, {"device": str(video), "frame_timeout_s": 0.5})
    out = run_cli(["-m", "robot_rl.nodes.camera_node", "--ros-args", "-p", f"config:={config}", "-p",
                   "camera:=side", "-p", f"topics.image:={IMAGE}", "-p", f"topics.info:={INFO}"], private_env())
    assert out.returncode == 2, out.stderr[-2000:]
    lines = [line for line in out.stderr.splitlines() if line.startswith("robot-rl: ")]
    assert lines == ["robot-rl: camera 'side': no new frame for 0.5 s (unplugged or stalled?)"] or \
        (len(lines) == 1 and "camera 'side'" in lines[0] and "no new frame" in lines[0]), out.stderr[-2000:]
    assert "Traceback" not in out.stderr
