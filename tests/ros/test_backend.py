"""Backend choice, lazy imports, and the DDS discovery configuration."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from robot_rl.ros.backend import select_backend_name
from robot_rl.ros.dds.config import cyclone_config, settings_from_env
from robot_rl.ros.errors import BackendError

try:
    import rclpy  # noqa: F401
    HAVE_RCLPY = True
except ImportError:
    HAVE_RCLPY = False


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "ROBOT_RL_DDS_LOCALHOST": "1", "ROS_DOMAIN_ID": "99", **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env, capture_output=True,
                          text=True, timeout=60)


def test_unknown_backend_name_is_one_clear_error():
    with pytest.raises(BackendError, match="ROBOT_RL_ROS_BACKEND='zmq' is not a backend; use 'rclpy', 'dds'"):
        select_backend_name({"ROBOT_RL_ROS_BACKEND": "zmq"})


def test_dds_can_be_forced_and_auto_prefers_rclpy():
    assert select_backend_name({"ROBOT_RL_ROS_BACKEND": "dds"}) == "dds"
    assert select_backend_name({"ROBOT_RL_ROS_BACKEND": "DDS "}) == "dds"
    assert select_backend_name({}) == ("rclpy" if HAVE_RCLPY else "dds")
    assert select_backend_name({"ROBOT_RL_ROS_BACKEND": "auto"}) == ("rclpy" if HAVE_RCLPY else "dds")


@pytest.mark.skipif(HAVE_RCLPY, reason="rclpy is importable here")
def test_forcing_rclpy_without_ros_says_what_to_do():
    with pytest.raises(BackendError, match="rclpy cannot be imported .*source a ROS 2 setup.bash"):
        select_backend_name({"ROBOT_RL_ROS_BACKEND": "rclpy"})


def test_node_entry_point_reports_a_bad_backend_on_one_line():
    result = _python("""
        import sys
        from robot_rl.ros import run_node
        sys.exit(run_node(lambda: None, ["prog"]))
        """, ROBOT_RL_ROS_BACKEND="bogus")
    assert result.returncode == 2
    assert result.stderr.strip() == ("robot-rl: ROBOT_RL_ROS_BACKEND='bogus' is not a backend; "
                                     "use 'rclpy', 'dds' or 'auto'")


def test_cyclonedds_loads_only_when_a_dds_node_is_created():
    result = _python("""
        import sys
        import robot_rl.ros as ros
        from robot_rl.ros import convert, msgs
        import numpy as np
        msg = convert.image_to_msg(np.zeros((2, 2, 3), np.uint8), 1.0, "cam")
        assert type(msg).__module__.startswith("robot_rl.ros.messages"), type(msg)
        ros.init(args=[])
        assert ros.backend_name() == "dds"
        before = "cyclonedds" in sys.modules
        node = ros.Node("probe")
        print(before, "cyclonedds" in sys.modules)
        node.destroy_node()
        ros.shutdown()
        """, ROBOT_RL_ROS_BACKEND="dds")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


def test_default_discovery_is_localhost_like_rmw_cyclonedds():
    s = settings_from_env({})
    assert (s.domain_id, s.range, s.loopback_only) == (0, "LOCALHOST", False)
    xml = cyclone_config(s)
    assert "<AllowMulticast>false</AllowMulticast>" in xml
    assert '<Peer address="localhost"/>' in xml
    assert "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>" in xml
    assert "NetworkInterface" not in xml  # rmw's LOCALHOST mode does not pin an interface
    assert "<FragmentSize>62000B</FragmentSize>" in xml  # loopback-sized fragments for images
    with_peer = cyclone_config(settings_from_env({"ROS_STATIC_PEERS": "192.168.1.7"}))
    assert '<Peer address="192.168.1.7"/>' in with_peer and "FragmentSize" not in with_peer


def test_test_mode_pins_loopback_and_user_uri_comes_last():
    s = settings_from_env({"ROBOT_RL_DDS_LOCALHOST": "1", "ROS_DOMAIN_ID": "42",
                           "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "CYCLONEDDS_URI": "file:///etc/dds.xml"})
    assert (s.domain_id, s.range, s.loopback_only) == (42, "LOCALHOST", True)
    xml = cyclone_config(s)
    assert '<NetworkInterface address="127.0.0.1"/>' in xml
    assert xml.endswith("</CycloneDDS>,file:///etc/dds.xml")


def test_subnet_and_off_ranges_and_static_peers():
    subnet = cyclone_config(settings_from_env({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET",
                                               "ROS_STATIC_PEERS": "10.0.0.5; robot.local"}))
    assert "AllowMulticast" not in subnet and "FragmentSize" not in subnet
    assert '<Peer address="10.0.0.5"/><Peer address="robot.local"/>' in subnet
    assert cyclone_config(settings_from_env({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"})) == ""
    off = cyclone_config(settings_from_env({"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"}))
    assert "<ParticipantIndex>none</ParticipantIndex>" in off and "Peer" not in off
    assert settings_from_env({"ROS_LOCALHOST_ONLY": "0"}).range == "SUBNET"


@pytest.mark.parametrize("env, message", [
    ({"ROS_DOMAIN_ID": "x"}, "ROS_DOMAIN_ID='x' is not an integer"),
    ({"ROS_DOMAIN_ID": "300"}, "outside 0..232"),
    ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "WORLD"}, "not one of"),
])
def test_bad_discovery_settings_are_clear_errors(env, message):
    with pytest.raises(BackendError, match=message):
        settings_from_env(env)
