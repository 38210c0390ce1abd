"""Parameters from params files and ``--ros-args``, with rclpy's typing rules (DDS backend)."""

from __future__ import annotations

import textwrap

import pytest
from domains import private_domain

from robot_rl.errors import RobotRLError
from robot_rl.ros.dds import api as ros
from robot_rl.ros.dds.arguments import (
    load_params_file,
    node_name_matches,
    params_file_text,
    parse_ros_args,
    remove_ros_args,
)
from robot_rl.ros.errors import ParameterError


@pytest.fixture
def dds(monkeypatch):
    """A DDS context in a private domain on loopback; shut down after the test."""
    monkeypatch.setenv("ROBOT_RL_DDS_LOCALHOST", "1")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(private_domain(1, 100)))
    yield ros
    ros.try_shutdown()


@pytest.fixture
def params_file(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(textwrap.dedent("""\
        /**:
          ros__parameters:
            frame_id: base
            fps: 15
        camera_node:
          ros__parameters:
            fps: 30
            exposure: 0.5
            topic: /camera/wrist/color/image_raw
            intrinsics:
              fx: 600.0
              size: [640, 480]
        /robot:
          controller_node:
            ros__parameters:
              rate: 1000.0
        """))
    return path


def test_params_file_layout_wildcards_and_nesting(params_file):
    nodes = load_params_file(params_file)
    assert nodes["/camera_node"] == {"fps": 30, "exposure": 0.5, "topic": "/camera/wrist/color/image_raw",
                                     "intrinsics.fx": 600.0, "intrinsics.size": [640, 480]}
    assert nodes["/robot/controller_node"] == {"rate": 1000.0}
    args = parse_ros_args(["prog", "--ros-args", "--params-file", str(params_file)])
    camera = args.parameter_overrides("/camera_node")
    assert camera["fps"] == 30 and camera["frame_id"] == "base"  # specific entry wins over /**
    assert args.parameter_overrides("/other")["fps"] == 15
    assert args.parameter_overrides("/robot/controller_node")["rate"] == 1000.0


def test_command_line_order_decides_and_values_are_yaml(params_file):
    argv = ["prog", "--user-flag", "--ros-args", "-p", "fps:=60", "--params-file", str(params_file),
            "-p", "exposure:=0.25", "-p", "flags:=[true, false]", "-p", "label:=wrist cam", "--", "tail"]
    args = parse_ros_args(argv)
    camera = args.parameter_overrides("/camera_node")
    assert camera["fps"] == 30  # the file came after -p fps:=60
    assert camera["exposure"] == 0.25 and camera["flags"] == [True, False] and camera["label"] == "wrist cam"
    assert remove_ros_args(argv) == ["prog", "--user-flag", "tail"]


def test_remaps_node_name_and_namespace():
    args = parse_ros_args(["--ros-args", "-r", "__node:=cam2", "-r", "__ns:=robot", "-r", "image:=/cam/img",
                           "-r", "other_node:x:=y", "--log-level", "debug"])
    assert (args.node_name, args.namespace, args.log_level) == ("cam2", "/robot", "debug")
    assert args.remaps == [(None, "image", "/cam/img"), ("other_node", "x", "y")]


@pytest.mark.parametrize("argv, message", [
    (["--ros-args", "--bogus"], "unknown argument '--bogus'"),
    (["--ros-args", "-p", "novalue"], "NAME:=VALUE"),
    (["--ros-args", "-p"], "needs a value"),
    (["--ros-args", "-p", "x:=[1, a]"], "one type"),
    (["--ros-args", "--params-file", "/nonexistent/params.yaml"], "cannot read"),
])
def test_bad_ros_args_are_one_clear_error(argv, message):
    with pytest.raises(ParameterError, match=message) as info:
        parse_ros_args(argv)
    assert isinstance(info.value, RobotRLError) and "\n" not in str(info.value)


def test_malformed_params_file_names_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("camera_node:\n  fps: 30\n")  # no ros__parameters
    with pytest.raises(ParameterError, match="bad.yaml"):
        load_params_file(bad)


def test_params_file_text_round_trips(tmp_path):
    nodes = {"/robot/camera_node": {"fps": 30, "topic": "/camera/wrist/color/image_raw",
                                    "intrinsics": {"fx": 600.0, "size": [640, 480]}},
             "/**": {"use_sim_time": False}}
    path = tmp_path / "out.yaml"
    path.write_text(params_file_text(nodes))
    loaded = load_params_file(path)
    assert loaded["/robot/camera_node"] == {"fps": 30, "topic": "/camera/wrist/color/image_raw",
                                            "intrinsics.fx": 600.0, "intrinsics.size": [640, 480]}
    assert loaded["/**"] == {"use_sim_time": False}
    with pytest.raises(ParameterError, match="one type"):
        params_file_text({"n": {"mixed": [1, "a"]}})


def test_node_name_patterns():
    assert node_name_matches("/**", "/a/b/node")
    assert node_name_matches("/**/node", "/node") and node_name_matches("/**/node", "/x/y/node")
    assert node_name_matches("/*/node", "/x/node") and not node_name_matches("/*/node", "/node")
    assert node_name_matches("node", "/node") and not node_name_matches("node", "/ns/node")


def test_node_reads_parameters_with_rclpy_typing(dds, params_file):
    dds.init(args=["prog", "--ros-args", "--params-file", str(params_file), "-p", "gain:=2"])
    node = dds.Node("camera_node")
    assert node.declare_parameter("fps", 10).value == 30
    assert node.declare_parameter("exposure", 1.0).value == 0.5
    assert node.declare_parameter("intrinsics.fx", 0.0).value == 600.0
    assert node.declare_parameter("unset_default", "x").value == "x"
    assert node.get_parameter("use_sim_time").value is False  # declared by every node, as in rclpy
    # an int override for a double parameter is an error in rclpy too
    with pytest.raises(dds.InvalidParameterTypeException, match="'gain' expects double, got integer"):
        node.declare_parameter("gain", 1.0)
    with pytest.raises(dds.ParameterNotDeclaredException):
        node.get_parameter("never_declared")
    node.destroy_node()


def test_required_parameter_is_declared_by_type(dds, params_file):
    dds.init(args=["prog", "--ros-args", "--params-file", str(params_file)])
    node = dds.Node("camera_node")
    node.declare_parameter("topic", dds.Parameter.Type.STRING)
    assert node.get_parameter("topic").value == "/camera/wrist/color/image_raw"
    node.declare_parameter("serial", dds.Parameter.Type.STRING)
    with pytest.raises(dds.ParameterUninitializedException) as info:
        node.get_parameter("serial")
    assert str(info.value) == ("node 'camera_node': required parameter 'serial' (string) is not set; "
                               "pass --ros-args -p serial:=VALUE or set it in a --params-file")
    node.destroy_node()


def test_node_name_and_topics_follow_remaps(dds):
    dds.init(args=["prog", "--ros-args", "-r", "__node:=wrist_camera", "-r", "__ns:=/robot",
                   "-r", "image:=/camera/wrist/color/image_raw"])
    node = dds.Node("camera_node", parameter_overrides=[dds.Parameter("fps", value=5)])
    assert node.get_fully_qualified_name() == "/robot/wrist_camera"
    assert node.resolve_topic_name("image") == "/camera/wrist/color/image_raw"
    assert node.resolve_topic_name("state") == "/robot/state"
    assert node.resolve_topic_name("~/status") == "/robot/wrist_camera/status"
    assert node.declare_parameter("fps", 30).value == 5
    node.destroy_node()


def test_run_node_prints_a_missing_parameter_as_one_line(dds, capsys, monkeypatch):
    import robot_rl.ros.backend
    from robot_rl.ros.runner import run_node

    monkeypatch.setattr(robot_rl.ros.backend, "_selected", ros)

    class NeedsTopic(ros.Node):
        def __init__(self):
            super().__init__("needs_topic")
            self.declare_parameter("image_topic", ros.Parameter.Type.STRING)
            self.topic = self.get_parameter("image_topic").value

    assert run_node(NeedsTopic, ["prog"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("robot-rl: node 'needs_topic': required parameter 'image_topic' (string) is not set; "
                   "pass --ros-args -p image_topic:=VALUE or set it in a --params-file")
    assert not ros.ok()  # the context was shut down on the way out


@pytest.mark.parametrize("text, message", [
    ("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n", "aliases are expanded"),
    ("node:\n  ros__parameters:\n    x: 1\n    x: 2\n", "duplicate"),
    ("[" * 200 + "]" * 200, "deep"),
])
def test_a_hostile_params_file_is_one_line_parameter_error(tmp_path, text, message):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(ParameterError, match=message) as err:
        load_params_file(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_binary_params_file_is_one_line_parameter_error(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ParameterError, match="not UTF-8"):
        load_params_file(path)
