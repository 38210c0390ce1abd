"""Issue 26, item 16: ``ros2 launch robot_rl ...`` ends non-zero when a node died, the interop
tests' ``ros2`` daemons are found to be stopped, and their bag tests find rosbag2 or skip. No ROS 2
here: the launch file's exit handler is called as launch calls it, with launch's ``ProcessExited``
fields."""

from __future__ import annotations

import socket
import types

import pytest

from robot_rl.nodes.ros_launch import NodeDied, on_node_exit


class Shutdown:  # launch.actions.Shutdown's signature: reason=...
    def __init__(self, *, reason: str) -> None:
        self.reason = reason


def exited(code):
    return types.SimpleNamespace(returncode=code)


def running(shutting_down: bool = False):
    return types.SimpleNamespace(is_shutdown=shutting_down)


def test_a_clean_exit_shuts_the_session_down_with_status_0():
    [action] = on_node_exit("actor_node", Shutdown)(exited(0), running())
    assert isinstance(action, Shutdown) and action.reason == "actor_node exited (exit code 0)"


@pytest.mark.parametrize("code, words", [(-9, "exit code -9: SIGKILL"), (1, "exit code 1"), (-11, "SIGSEGV"),
                                         (255, "exit code 255"), (-99, "exit code -99")])
def test_a_node_that_dies_while_the_session_runs_ends_it_with_status_1(code, words):
    with pytest.raises(NodeDied) as died:
        on_node_exit("sim_node", Shutdown)(exited(code), running())
    message = str(died.value)
    assert message.startswith("node sim_node died (") and words in message
    assert message.endswith("the session ends with exit status 1") and "\n" not in message


def test_a_node_stopped_by_the_shutdown_itself_is_no_crash():
    [action] = on_node_exit("sim_node", Shutdown)(exited(-15), running(shutting_down=True))
    assert action.reason == "sim_node exited (exit code -15: SIGTERM)"


def test_the_daemon_check_sees_a_listener_on_the_domains_port():
    from jazzy import DAEMON_BASE_PORT, daemon_running

    for domain in range(180, 232):  # a free port in the range ros2cli's daemons use
        with socket.socket() as server:
            try:
                server.bind(("127.0.0.1", DAEMON_BASE_PORT + domain))
            except OSError:
                continue
            server.listen()
            assert daemon_running(domain)
        assert not daemon_running(domain)
        return
    pytest.skip("no free port among the daemon ports")


def test_the_rosbag2_check_reads_the_ament_index(tmp_path):
    """The bag interop tests skip on a ROS 2 without rosbag2 (its ``ros2`` has no ``bag`` verb) rather
    than fail: the check reads the ament index of every prefix, as ``ros2 pkg list`` does."""
    from jazzy import ament_has

    core, bag = tmp_path / "core", tmp_path / "bag"
    for root, packages in ((core, ["rclpy", "ros2cli"]), (bag, ["ros2bag", "rosbag2_storage_mcap"])):
        index = root / "share/ament_index/resource_index/packages"
        index.mkdir(parents=True)
        for package in packages:
            (index / package).write_text("")
    both = f"{core}:{bag}"
    assert ament_has("ros2bag", "rosbag2_storage_mcap", "rclpy", prefixes=both)
    assert not ament_has("ros2bag", "rosbag2_storage_mcap", prefixes=str(core))  # a core build: skip
    assert not ament_has("ros2bag", prefixes="") and not ament_has("ros2bag", prefixes="::")
    assert not ament_has("ros2bag", prefixes=f"{tmp_path / 'missing'}:{core}")
    (core / "share/ament_index/resource_index/packages/rosbag2_storage_mcap").mkdir()  # not a marker file
    assert not ament_has("rosbag2_storage_mcap", prefixes=str(core))
    assert ament_has(prefixes="")  # nothing asked, nothing missing
