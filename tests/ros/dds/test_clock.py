"""The DDS backend's clocks: ROS time follows ``/clock`` while ``use_sim_time`` is on, as in rclpy."""

from __future__ import annotations

import time

import pytest

from robot_rl.ros import convert
from robot_rl.ros import messages as m
from robot_rl.ros.dds import api as ros
from robot_rl.ros.dds.clock import Clock, ClockType, Time

TIMEOUT = 20.0


def seconds(node) -> float:
    return node.get_clock().now().nanoseconds * 1e-9


def publish_until(node, pub, msg, predicate) -> bool:
    """Publish ``msg`` and spin until ``predicate`` (the subscription may match a little later)."""
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            return False
        pub.publish(msg)
        ros.spin_once(node, timeout_sec=0.05)
    return True


def clock_publisher(node, topic: str = "/clock"):
    return node.create_publisher(m.Clock, topic, ros.QoSProfile(depth=1, reliability=ros.ReliabilityPolicy.RELIABLE))


def test_clock_types():
    system, steady = Clock(), Clock(clock_type=ClockType.STEADY_TIME)
    assert abs(system.now().nanoseconds * 1e-9 - time.time()) < 1.0
    assert abs(steady.now().nanoseconds * 1e-9 - time.monotonic()) < 1.0
    with pytest.raises(RuntimeError):
        system.set_ros_time_override(Time(seconds=1))  # only a ROS_TIME clock follows /clock
    with pytest.raises(ValueError):
        Clock(clock_type=ClockType.UNINITIALIZED)


def test_without_use_sim_time_the_node_clock_is_the_system_clock(dds):
    node = dds.Node("wall_node")
    assert node.get_parameter("use_sim_time").value is False
    assert not node.get_clock().ros_time_is_active
    assert abs(seconds(node) - time.time()) < 1.0
    assert all(s.topic_name != "/clock" for s in node.subscriptions)  # nothing to follow


def test_with_use_sim_time_the_node_reports_the_clock_time(dds):
    source = dds.Node("sim_clock")
    node = dds.Node("follower", parameter_overrides=[dds.Parameter("use_sim_time", value=True)])
    assert node.get_clock().ros_time_is_active
    assert node.get_clock().now().nanoseconds == 0  # before the first /clock, as rclpy
    sub = next(s for s in node.subscriptions if s.topic_name == "/clock")
    assert sub.qos_profile.reliability == ros.ReliabilityPolicy.BEST_EFFORT and sub.qos_profile.depth == 1
    pub = clock_publisher(source)
    for t in (12.5, 12.75, 100.000000001):
        assert publish_until(node, pub, convert.clock_msg(t), lambda t=t: abs(seconds(node) - t) < 1e-9), \
            f"the clock never reported {t}"
    stamp = node.get_clock().now().to_msg()  # a header stamp in sim time
    assert (stamp.sec, stamp.nanosec) == (100, 1)
    assert node.status()["received"]["/clock"] >= 3


def test_use_sim_time_can_be_switched_at_run_time(dds):
    source = dds.Node("sim_clock")
    node = dds.Node("switcher")
    pub = clock_publisher(source)
    node.set_parameters([dds.Parameter("use_sim_time", value=True)])
    assert publish_until(node, pub, convert.clock_msg(7.0), lambda: seconds(node) == 7.0)
    node.set_parameters([dds.Parameter("use_sim_time", value=False)])
    assert abs(seconds(node) - time.time()) < 1.0
    assert all(s.topic_name != "/clock" for s in node.subscriptions)
    with pytest.raises(dds.InvalidParameterTypeException):
        node.set_parameters([dds.Parameter("use_sim_time", value="yes")])


def test_a_clock_before_zero_is_dropped_and_counted(dds):
    source = dds.Node("sim_clock")
    node = dds.Node("follower", parameter_overrides=[dds.Parameter("use_sim_time", value=True)])
    pub = clock_publisher(source)
    assert publish_until(node, pub, convert.clock_msg(3.0), lambda: seconds(node) == 3.0)
    assert publish_until(node, pub, m.Clock(clock=m.Time(sec=-5, nanosec=0)),
                         lambda: node.status()["dropped"].get("/clock", 0) > 0)
    assert seconds(node) == 3.0  # the bad one changed nothing
    assert "before 0" in node.status()["last_drop_reason"]["/clock"]


def test_a_remap_moves_the_clock_topic(dds):
    """A namespaced session remaps /clock to its own; the node follows that one only."""
    source = dds.Node("sim_clock")
    node = dds.Node("follower", cli_args=["--ros-args", "-r", "/clock:=/r1/clock"],
                    parameter_overrides=[dds.Parameter("use_sim_time", value=True)])
    other, own = clock_publisher(source, "/clock"), clock_publisher(source, "/r1/clock")
    assert publish_until(node, own, convert.clock_msg(5.0), lambda: seconds(node) == 5.0)
    for _ in range(20):
        other.publish(convert.clock_msg(99.0))
        ros.spin_once(node, timeout_sec=0.02)
    assert seconds(node) == 5.0
