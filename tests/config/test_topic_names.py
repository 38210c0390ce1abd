"""Topic names in the config: a ``topic`` camera's settings and the ``ros.topics`` remaps.

Both are strict: an unknown key, a name that is not a ROS topic name, or a value of the
wrong type is one ConfigError naming the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from robot_rl.config import to_dict
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config
from robot_rl_drivers.cameras.topic.settings import TopicCameraSettings

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


# --- aliasing: two topics of the session on one resolved name --------------------------------------


@pytest.mark.parametrize("overrides, first, second, name", [
    (["ros.topics.joint_states=/same", "ros.topics.tcp_pose=/same"],
     "ros.topics.joint_states '/same'", "ros.topics.tcp_pose '/same'", "/same"),
    (["ros.topics.joint_states=/robot/target_pose"],  # a state topic on the command topic (default name)
     "ros.topics.joint_states '/robot/target_pose'", "ros.topics.target_pose (default 'robot/target_pose')",
     "/robot/target_pose"),
    (["ros.topics.target_pose=robot/tcp_pose"],  # relative, onto a default relative one
     "ros.topics.tcp_pose (default 'robot/tcp_pose')", "ros.topics.target_pose 'robot/tcp_pose'", "/robot/tcp_pose"),
    (["ros.namespace=r1", "ros.topics.tcp_twist=/r1/joint_states"],  # absolute vs relative in a namespace
     "ros.topics.joint_states (default 'joint_states')", "ros.topics.tcp_twist '/r1/joint_states'",
     "/r1/joint_states"),
    (["ros.topics.gripper_command=spacenav/joy"],
     "ros.topics.gripper_command 'spacenav/joy'", "ros.topics.spacenav_joy (default 'spacenav/joy')",
     "/spacenav/joy"),
    (["ros.topics.posture=/diagnostics"], "ros.topics.posture '/diagnostics'", "the /diagnostics topic",
     "/diagnostics"),
    (["ros.topics.tcp_wrench=tf"], "ros.topics.tcp_wrench 'tf'", "the tf topic", "/tf"),
    (["ros.namespace=r2", "ros.topics.spacenav_twist=/r2/clock"], "ros.topics.spacenav_twist '/r2/clock'",
     "the /clock topic", "/r2/clock"),  # /clock moves into the namespace
    (["ros.topics.posture=sim/reset"], "ros.topics.posture 'sim/reset'", "the sim's sim_reset topic", "/sim/reset"),
    (["ros.topics.joint_states=camera/front/color/image_raw"], "ros.topics.joint_states "
     "'camera/front/color/image_raw'", "camera front's image topic", "/camera/front/color/image_raw"),
    ([*topic_camera(topic="/robot/tcp_pose")], "ros.topics.tcp_pose (default 'robot/tcp_pose')",
     "cameras.front.hardware.topic '/robot/tcp_pose'", "/robot/tcp_pose"),
    ([*topic_camera(topic="image", transport="compressed"), "ros.topics.tcp_pose=image/compressed"],
     "ros.topics.tcp_pose 'image/compressed'", "cameras.front.hardware.topic 'image'", "/image/compressed"),
])
def test_topics_on_one_resolved_name_are_refused_naming_both_keys(overrides, first, second, name):
    with pytest.raises(ConfigError) as err:
        load_config(PICK, overrides)
    msg = str(err.value)
    assert f"{first} and {second} both resolve to {name}: " in msg, msg
    assert "\n" not in msg and "give each its own name" in msg
    if "joint_states '/robot/target_pose'" in first:
        assert "a robot-state topic on a command topic" in msg


def test_two_cameras_on_one_topic_are_refused(tmp_path):
    data = yaml.safe_load(PICK.read_text())
    data["cameras"] = {name: {"backend": "topic", "hardware": {"topic": "/camera/color/image_raw"}}
                       for name in ("front", "wrist")}
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: cameras.front.hardware.topic '/camera/color/image_raw' and "
                                     "cameras.wrist.hardware.topic '/camera/color/image_raw' both resolve to "
                                     "/camera/color/image_raw")


def test_distinct_names_after_resolution_are_taken():
    # the same relative text in two namespaces' worth of names: /r1/x vs /x are different topics
    cfg = load_config(PICK, ["ros.namespace=r1", "ros.topics.joint_states=/joint_states",
                             "ros.topics.tcp_pose=joint_states_b", "ros.topics.spacenav_joy=/r1/joy"])
    assert cfg.ros.topics.remaps()["joint_states"] == "/joint_states"
    # renaming one topic onto another's default is fine once that one is renamed too (a swap)
    swapped = load_config(PICK, ["ros.topics.tcp_pose=robot/tcp_twist", "ros.topics.tcp_twist=robot/tcp_pose"])
    assert swapped.ros.topics.remaps() == {"tcp_pose": "robot/tcp_twist", "tcp_twist": "robot/tcp_pose"}


def test_the_node_tables_are_the_configs():
    from robot_rl.config import ros
    from robot_rl.nodes import topics

    assert topics.ROBOT_STATE is ros.ROBOT_STATE_TOPICS and topics.ROBOT_COMMANDS is ros.ROBOT_COMMAND_TOPICS
    assert topics.INPUT is ros.INPUT_TOPICS and topics.SIM is ros.SIM_TOPICS
