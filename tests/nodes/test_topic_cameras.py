"""Cameras other drivers publish (``backend: topic``) and ``ros.topics`` remaps, without processes.

The graph description starts no camera node for a topic camera and gives the actor the
topic the camera's config names; ``ros.topics`` reaches every node's ``topics.*``
parameters. :class:`TopicCamera` turns a stream it cannot use into one line saying what
arrives and what the config says, and a silent topic into one line naming who should
publish it.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_rl.config.ros import RosTopicsConfig
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.nodes.camera import TopicCamera, topic_camera
from robot_rl.nodes.description import build_graph
from robot_rl.nodes.latest import StopRequested
from robot_rl.nodes.topics import INPUT, ROBOT_COMMANDS, ROBOT_STATE
from robot_rl.ros.dds.arguments import load_params_file
from robot_rl.tasks import load_config

PICK = Path(__file__).resolve().parents[2] / "configs" / "pick_cube.yaml"
REALSENSE = "/camera/camera/color/image_raw"


def write_config(tmp_path: Path, robot: str = "sim", **cameras: dict) -> Path:
    cfg = yaml.safe_load(PICK.read_text())
    cfg["env"]["obs_mode"] = "pixels"
    if robot != "sim":
        cfg["robot"].update(backend=robot, hardware={"ip": "172.16.0.2"} if robot == "franka" else {})
    cfg["cameras"] = {**cfg.get("cameras", {}), **cameras}
    path = tmp_path / "session.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def graph(path: Path, overrides=()):
    return build_graph(load_config(path, list(overrides)), path)


# --- the graph -------------------------------------------------------------------------------


def test_a_sim_session_reads_a_topic_camera_and_renders_only_its_own(tmp_path):
    path = write_config(tmp_path, front={"backend": "topic", "hardware": {"topic": REALSENSE}},
                        wrist={"backend": "sim"})
    g = graph(path)
    assert g.names == ["sim_node", "actor_node"]
    assert list(g.node("sim_node").parameters["topics"]["cameras"]) == ["wrist"]  # the sim renders no "front"
    actor = g.node("actor_node").parameters["topics"]["cameras"]
    assert actor["front"] == {"image": REALSENSE}
    assert actor["wrist"]["image"].endswith("camera/wrist/color/image_raw")


def test_a_compressed_topic_camera_is_read_on_image_transport_s_compressed_topic(tmp_path):
    path = write_config(tmp_path, front={"backend": "topic",
                                         "hardware": {"topic": REALSENSE, "transport": "compressed"}})
    actor = graph(path).node("actor_node").parameters["topics"]["cameras"]
    assert actor["front"] == {"image": REALSENSE + "/compressed"}


def test_a_real_cell_starts_camera_nodes_only_for_the_cameras_it_opens(tmp_path):
    path = write_config(tmp_path, "franka", front={"backend": "topic", "hardware": {"topic": REALSENSE}},
                        wrist={"backend": "realsense", "hardware": {"serial": "123"}})
    g = graph(path)
    assert g.names == ["controller_node", "camera_wrist", "actor_node"]
    assert g.node("actor_node").parameters["topics"]["cameras"]["front"] == {"image": REALSENSE}
    path = write_config(tmp_path, "topics", front={"backend": "topic", "hardware": {"topic": REALSENSE}},
                        wrist={"backend": "topic", "hardware": {"topic": "/wrist/image_raw"}})
    assert graph(path).names == ["actor_node"]  # every driver is someone else's


def test_sim_and_real_cameras_still_do_not_mix(tmp_path):
    path = write_config(tmp_path, front={"backend": "opencv", "hardware": {"device": 0}})
    with pytest.raises(ConfigError, match="cameras.front.backend is 'opencv' but robot.backend is 'sim'"):
        graph(path)
    path = write_config(tmp_path, "franka", front={"backend": "sim"})
    with pytest.raises(ConfigError, match="cameras.front.backend is 'sim' but robot.backend is 'franka'"):
        graph(path)


def test_ros_topics_keys_are_the_remappable_keys_of_the_topic_table():
    fields = [f.name for f in dataclasses.fields(RosTopicsConfig)]
    assert fields == [*ROBOT_STATE, *ROBOT_COMMANDS, *INPUT]


def test_remaps_reach_every_node_s_topic_parameters(tmp_path):
    remaps = {"joint_states": "/franka/joint_states", "tcp_pose": "/franka/tcp_pose",
              "target_pose": "franka/target_pose", "spacenav_twist": "/spacemouse/twist"}
    overrides = [f"ros.topics.{k}={v}" for k, v in remaps.items()] + ["intervention.device=spacemouse"]
    path = write_config(tmp_path, "franka", front={"backend": "realsense", "hardware": {"serial": "1"}},
                        wrist={"backend": "topic", "hardware": {"topic": REALSENSE}})
    g = graph(path, overrides)
    assert g.names == ["controller_node", "camera_front", "intervention_node", "actor_node"]
    default = graph(path, ["intervention.device=spacemouse"])
    params = load_params_file(g.write_params_file(tmp_path / "run"))  # what the nodes read
    for spec in g.nodes:
        topics, before = spec.parameters["topics"], default.node(spec.name).parameters["topics"]
        assert set(topics) == set(before)
        for key, name in topics.items():
            assert name == remaps.get(key, before[key]), (spec.name, key)
        flat = next(v for k, v in params.items() if k.endswith(spec.name))
        for key in set(remaps) & set(topics):
            assert flat[f"topics.{key}"] == remaps[key]
    assert g.node("controller_node").parameters["topics"]["tcp_pose"] == "/franka/tcp_pose"
    assert g.node("actor_node").parameters["topics"]["target_pose"] == "franka/target_pose"
    assert g.node("intervention_node").parameters["topics"]["spacenav_twist"] == "/spacemouse/twist"
    assert g.node("camera_front").parameters["topics"] == default.node("camera_front").parameters["topics"]
    assert g.node("actor_node").parameters["topics"]["cameras"]["wrist"] == {"image": REALSENSE}


def test_a_sim_session_s_nodes_agree_on_remapped_names():
    g = build_graph(load_config(PICK, ["ros.topics.tcp_pose=/franka/tcp_pose",
                                       "ros.topics.gripper_command=/franka/gripper"]), PICK)
    for node in ("sim_node", "actor_node"):
        topics = g.node(node).parameters["topics"]
        assert topics["tcp_pose"] == "/franka/tcp_pose" and topics["gripper_command"] == "/franka/gripper"


# --- TopicCamera -----------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def camera(clock=None, **kwargs) -> TopicCamera:
    return TopicCamera("front", REALSENSE, 128, 96, timeout_s=1.0, wait_timeout_s=30.0,
                       clock=clock or time.monotonic, publisher="another driver", accepts="rgb8 or bgr8", **kwargs)


def image(value: int = 5, shape=(96, 128, 3)) -> np.ndarray:
    return np.full(shape, value, np.uint8)


def test_a_stream_of_only_wrong_images_is_one_line_saying_what_arrives_and_what_the_config_says():
    clock = FakeClock()
    cam = camera(clock)
    for _ in range(5):  # 1.2 s of 640x480 mono8, nothing usable
        cam.refuse("640x480 mono8", "image encoding mono8 is not supported (rgb8 or bgr8)")
        clock.t += 0.3
    started = time.monotonic()
    with pytest.raises(DeviceError) as err:
        cam.wait_for_frame()  # 30 s allowed, but the stream is known to be wrong
    assert time.monotonic() - started < 5.0
    assert str(err.value) == (f"camera front: {REALSENSE} publishes 640x480 mono8, the config says 128x96 rgb8 or "
                              "bgr8 (5 refused: image encoding mono8 is not supported (rgb8 or bgr8))")


def test_wrong_sizes_are_refused_on_arrival_and_named():
    clock = FakeClock()
    cam = camera(clock)
    with pytest.raises(ValueError, match="image is 640x480, the config says 128x96"):
        cam.on_image(image(shape=(480, 640, 3)), 1.0)
    cam.refuse("640x480 rgb8", "camera front: image is 640x480, the config says 128x96")
    clock.t += 1.5
    cam.refuse("640x480 rgb8", "camera front: image is 640x480, the config says 128x96")
    with pytest.raises(DeviceError, match=f"{REALSENSE} publishes 640x480 rgb8, the config says 128x96"):
        cam.wait_for_frame()


def test_single_bad_messages_in_a_good_stream_change_nothing():
    clock = FakeClock()
    cam = camera(clock)
    cam.refuse("12 bytes of undecodable jpeg data", "not JPEG")
    clock.t += 2.0
    cam.on_image(image(9), 50.0)
    cam.refuse("12 bytes of undecodable jpeg data", "not JPEG")
    clock.t += 0.5
    cam.wait_for_frame()
    frame = cam.read()
    assert frame.stamp == 50.0 and frame.image[0, 0, 0] == 9 and cam.refused_total == 2


def test_a_silent_topic_names_the_topic_and_who_should_publish_it():
    cam = camera()
    cam.count_publishers = lambda: 0
    with pytest.raises(DeviceError) as err:
        cam.wait_for_frame(timeout=0.5)
    assert str(err.value) == (f"camera front: no image on {REALSENSE} within 0.5 s; nothing publishes that topic: "
                              "it should come from another driver; is it running, on this topic?")
    cam.count_publishers = lambda: 2
    with pytest.raises(DeviceError, match="2 publishers matched but sent nothing"):
        cam.wait_for_frame(timeout=0.2)


def test_a_stream_that_turns_wrong_after_good_images_says_so_when_the_image_is_stale():
    clock = FakeClock()
    cam = camera(clock)
    cam.on_image(image(), 1.0)
    cam.read()
    for _ in range(4):
        clock.t += 0.5
        cam.refuse("128x96 yuv422", "image encoding yuv422 is not supported (rgb8 or bgr8)")
    with pytest.raises(DeviceError, match=r"publishes 128x96 yuv422, the config says 128x96 rgb8 or bgr8 .*; "
                                          r"the newest usable image is 2.00 s old"):
        cam.read()
    cam.on_image(image(), 2.0)  # good again
    assert cam.read().stamp == 2.0


def test_a_stop_cuts_the_wait():
    cancel = threading.Event()
    cam = camera(cancel=cancel)
    threading.Timer(0.3, cancel.set).start()
    with pytest.raises(StopRequested):
        cam.wait_for_frame(timeout=20.0)


@pytest.mark.parametrize("backend, hardware, publisher, accepts", [
    ("topic", {"topic": REALSENSE}, "another driver (cameras.front.backend is topic", "rgb8, bgr8, rgba8 or bgra8"),
    ("topic", {"topic": REALSENSE, "transport": "compressed"}, "another driver", "colour JPEG or PNG"),
    ("sim", {}, "the sim node (sim_node)", "rgb8, bgr8"),
])
def test_the_actor_s_camera_knows_who_publishes_it(tmp_path, backend, hardware, publisher, accepts):
    path = write_config(tmp_path, front={"backend": backend, "hardware": hardware})
    cam = topic_camera(load_config(path), "front", "/some/topic")
    assert cam.publisher.startswith(publisher) and cam.expected.startswith(f"128x128 {accepts}")
    path = write_config(tmp_path, "franka", front={"backend": "opencv", "hardware": {"device": 0}},
                        wrist={"backend": "opencv", "hardware": {"device": 1}})
    assert topic_camera(load_config(path), "front", "/t").publisher == "its camera node (camera_front)"


def test_robot_rl_opens_no_device_for_a_topic_camera(tmp_path):
    from robot_rl_drivers.cameras import make_camera

    path = write_config(tmp_path, "topics", front={"backend": "topic", "hardware": {"topic": REALSENSE,
                                                                                   "transport": "compressed"}},
                        wrist={"backend": "opencv", "hardware": {"device": 0}})
    cfg = load_config(path)
    with pytest.raises(ConfigError) as err:
        make_camera("front", cfg.cameras["front"])
    topic = REALSENSE + "/compressed"
    assert str(err.value) == (f"camera 'front': backend topic is another driver's image topic ({topic}), read by the "
                              f"actor node; robot_rl opens no device for it (check it with: ros2 topic hz {topic})")
