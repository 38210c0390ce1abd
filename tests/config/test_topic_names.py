"""Topic names in the config: a ``topic`` camera's settings and the ``ros.topics`` remaps.

Both are strict: an unknown key, a name that is not a ROS topic name, or a value of the
wrong type is one ConfigError naming the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from robot_rl.config import to_dict
from robot_rl.config.hardware import TopicCameraSettings
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config

PICK = Path(__file__).resolve().parents[2] / "configs" / "pick_cube.yaml"
REALSENSE = "/camera/camera/color/image_raw"


def topic_camera(**hardware) -> list[str]:
    return ["cameras.front.backend=topic",
            f"cameras.front.hardware={yaml.safe_dump(hardware, default_flow_style=True)}"]


def test_a_topic_camera_reads_the_named_topic_raw_or_compressed():
    cfg = load_config(PICK, topic_camera(topic=REALSENSE))
    settings = cfg.cameras["front"].hardware
    assert isinstance(settings, TopicCameraSettings)
    assert (settings.transport, settings.subscribed_topic) == ("raw", REALSENSE)
    cfg = load_config(PICK, topic_camera(topic="camera/color/image_raw", transport="compressed"))
    assert cfg.cameras["front"].hardware.subscribed_topic == "camera/color/image_raw/compressed"  # relative: in the ns


def test_a_topic_camera_round_trips_through_its_yaml(tmp_path):
    cfg = load_config(PICK, topic_camera(topic=REALSENSE, transport="compressed"))
    path = tmp_path / "session.yaml"
    path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))  # what robot-rl launch hands the nodes
    again = load_config(path).cameras["front"]
    assert again.backend == "topic" and again.hardware == cfg.cameras["front"].hardware


@pytest.mark.parametrize("hardware, message", [
    ({}, "missing required key 'cameras.front.hardware.topic'"),
    ({"topic": REALSENSE, "transport": "theora"}, "'cameras.front.hardware.transport' must be one of 'raw', "
                                                  "'compressed'"),
    ({"topic": REALSENSE, "serial": "123"}, "unknown key 'cameras.front.hardware.serial'"),
    ({"topic": 5}, "'cameras.front.hardware.topic' must be a string"),
    ({"topic": ""}, "cameras.front.hardware: topic '' is not a ROS topic name"),
    ({"topic": "/camera//color"}, "is not a ROS topic name"),
    ({"topic": "/camera/color/"}, "is not a ROS topic name"),
    ({"topic": "/camera/1color"}, "is not a ROS topic name"),
    ({"topic": "~/image"}, "is not a ROS topic name"),
    ({"topic": "/camera/col or"}, "is not a ROS topic name"),
    ({"topic": "/a" * 200}, "is not a ROS topic name"),
])
def test_bad_topic_camera_settings_are_one_line_naming_the_key(hardware, message):
    with pytest.raises(ConfigError) as err:
        load_config(PICK, ["cameras.front.backend=topic", f"cameras.front.hardware={yaml.safe_dump(hardware)}"])
    assert message in str(err.value) and "\n" not in str(err.value)


def test_ros_topics_rename_the_robot_state_command_and_input_topics():
    cfg = load_config(PICK, ["ros.topics.tcp_pose=/franka/tcp_pose", "ros.topics.spacenav_joy=joy"])
    assert cfg.ros.topics.remaps() == {"tcp_pose": "/franka/tcp_pose", "spacenav_joy": "joy"}
    assert load_config(PICK).ros.topics.remaps() == {}


def test_ros_topics_in_a_yaml_file(tmp_path):
    data = yaml.safe_load(PICK.read_text())
    data.setdefault("ros", {})["topics"] = {"joint_states": "/franka/joint_states", "target_pose": None}
    path = tmp_path / "remapped.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_config(path).ros.topics.remaps() == {"joint_states": "/franka/joint_states"}
    data["ros"]["topics"] = {"joint_state": "/franka/joint_states"}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"remapped.yaml(:\d+)?: unknown key 'ros.topics.joint_state' "
                                          r"\(did you mean 'joint_states'\?\)"):
        load_config(path)


@pytest.mark.parametrize("override, message", [
    ("ros.topics.tcp_pos=/x", "unknown key 'ros.topics.tcp_pos' (did you mean 'ros.topics.tcp_pose'?)"),
    ("ros.topics.sim_reset=/x", "unknown key 'ros.topics.sim_reset'"),  # the sim's own topics stay ours
    ("ros.topics.tcp_pose=/franka//tcp_pose", "ros.topics.tcp_pose '/franka//tcp_pose' is not a ROS topic name"),
    ("ros.topics.target_pose=2fast", "ros.topics.target_pose '2fast' is not a ROS topic name"),
    ("ros.topics.posture=~/posture", "ros.topics.posture '~/posture' is not a ROS topic name"),
    ("ros.topics.joint_states=[a, b]", "'ros.topics.joint_states' must be a string"),
    ("ros.topics.tcp_wrench=7", "'ros.topics.tcp_wrench' must be a string"),
    ("ros.topics=/franka", "'ros.topics' must be a mapping"),
])
def test_bad_remaps_are_one_line_naming_the_key(override, message):
    with pytest.raises(ConfigError) as err:
        load_config(PICK, [override])
    assert message in str(err.value) and "\n" not in str(err.value)
