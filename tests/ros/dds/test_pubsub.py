"""The DDS backend across processes on loopback: data, QoS, wire conventions, bad input, signals.

Each test runs in its own random ROS domain with ROBOT_RL_DDS_LOCALHOST=1, so runs
side by side do not hear each other and nothing leaves the loopback interface.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from robot_rl.ros import convert
from robot_rl.ros import messages as m
from robot_rl.ros.dds import api as ros

PEER = str(Path(__file__).resolve().parents[2] / "support" / "ros_peer.py")
TIMEOUT = 20.0


def start_peer(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, PEER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ))


def spin_until(node, predicate, timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        ros.spin_once(node, timeout_sec=0.05)
    return True


def finish(peer: subprocess.Popen) -> str:
    out, err = peer.communicate(timeout=TIMEOUT)
    assert peer.returncode == 0, err
    return out


class Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def test_images_from_another_process_arrive_intact(dds):
    node = dds.Node("image_sink")
    got = []
    node.create_subscription(m.Image, "/camera/peer/color/image_raw",
                             lambda msg: got.append(convert.image_from_msg(msg)), 10)
    peer = start_peer("publish", "/camera/peer/color/image_raw", "image", "--count", "5")
    assert spin_until(node, lambda: len(got) == 5), f"got {len(got)} of 5 images"
    finish(peer)
    for i, (image, stamp) in enumerate(got):
        assert image.shape == (48, 64, 3) and image[0, 0].tolist() == [1, 2, 3] and int(image[1, 1, 0]) == i
        assert abs(time.time() - stamp) < TIMEOUT
    assert node.status()["received"] == {"/camera/peer/color/image_raw": 5}
    node.destroy_node()


def test_our_publisher_reaches_another_process(dds):
    peer = start_peer("echo", "/robot/target_pose", "pose", "--count", "3")
    assert json.loads(peer.stdout.readline()) == {"ready": True}
    node = dds.Node("pose_source")
    pub = node.create_publisher(m.PoseStamped, "/robot/target_pose", 10)
    deadline = time.monotonic() + TIMEOUT
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    for i in range(3):
        pub.publish(convert.pose_stamped_msg(np.array([i, 0.5, 0.25]), np.array([0.5, 0.5, -0.5, 0.5]),
                                             time.time(), "base"))
    lines = [json.loads(line) for line in finish(peer).splitlines()]
    assert [line["pos"] for line in lines] == [[0.0, 0.5, 0.25], [1.0, 0.5, 0.25], [2.0, 0.5, 0.25]]
    assert all(np.allclose(line["quat_wxyz"], [0.5, 0.5, -0.5, 0.5]) for line in lines)
    node.destroy_node()


def test_transient_local_reaches_a_late_subscriber_and_volatile_does_not(dds):
    peer = start_peer("publish", "/robot/config", "string", "--count", "1", "--no-wait", "--transient-local",
                      "--linger", "8")
    time.sleep(2.0)  # the peer has published before we subscribe
    node = dds.Node("late_joiner")
    late, volatile = [], []
    sub = node.create_subscription(m.String, "/robot/config", lambda msg: volatile.append(msg.data), 1)
    assert spin_until(node, lambda: sub.get_publisher_count() == 1)
    spin_until(node, lambda: False, timeout=1.0)
    assert volatile == []
    # (checked first: Cyclone hands a retransmission of history to every reader in the
    # participant that has not seen it, volatile or not, once one reader asks for it)
    tl = dds.QoSProfile(depth=1, durability=dds.DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(m.String, "/robot/config", lambda msg: late.append(msg.data), tl)
    assert spin_until(node, lambda: late == ["hello 0"])
    peer.kill()
    peer.communicate()
    node.destroy_node()


def test_best_effort_writer_does_not_match_a_reliable_reader(dds):
    node = dds.Node("qos_probe")
    reliable, best_effort = [], []
    subs = [node.create_subscription(m.String, "/qos", lambda msg: reliable.append(msg.data), 10),
            node.create_subscription(m.String, "/qos", lambda msg: best_effort.append(msg.data),
                                     dds.qos_profile_sensor_data)]
    peer = start_peer("publish", "/qos", "string", "--count", "30", "--best-effort", "--period", "0.05")
    assert spin_until(node, lambda: len(best_effort) >= 3)
    finish(peer)
    assert reliable == [] and subs[0].get_publisher_count() == 0
    node.destroy_node()


def test_endpoints_carry_rmw_cyclonedds_topic_type_and_type_hash(dds):
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
    from cyclonedds.qos import Policy

    node = dds.Node("graph_probe")
    peer = start_peer("publish", "/chatter", "string", "--count", "1", "--no-wait", "--linger", "8",
                      "--transient-local")
    reader = BuiltinDataReader(node.context.participant().dds, BuiltinTopicDcpsPublication)
    found = []
    deadline = time.monotonic() + TIMEOUT
    while not found and time.monotonic() < deadline:
        found = [e for e in reader.take(N=64) if getattr(e, "topic_name", "") == "rt/chatter"]
        time.sleep(0.05)
    peer.kill()
    peer.communicate()
    assert found, "the peer's writer was not discovered"
    endpoint = found[0]
    assert endpoint.type_name == "std_msgs::msg::dds_::String_"
    assert endpoint.qos[Policy.Userdata].data == f"typehash={m.type_hash(m.String)};".encode()
    assert endpoint.qos[Policy.Durability] == Policy.Durability.TransientLocal
    assert endpoint.qos[Policy.History] == Policy.History.KeepLast(10)
    assert isinstance(endpoint.qos[Policy.Reliability], Policy.Reliability.Reliable)
    assert endpoint.qos[Policy.DataRepresentation].use_cdrv0_representation  # plain CDR (XCDR1)
    node.destroy_node()


def test_malformed_messages_are_dropped_counted_and_warned_once(dds):
    collect = Collect()
    logging.getLogger("robot_rl.ros.node.drop_probe").addHandler(collect)
    node = dds.Node("drop_probe")
    good = []
    node.create_subscription(m.String, "/text", lambda msg: good.append(msg.data), 10)
    peer = start_peer("publish", "/text", "bad_utf8", "--count", "3")  # valid CDR, invalid UTF-8
    assert spin_until(node, lambda: node.dropped_messages == 3)
    finish(peer)
    pub = node.create_publisher(m.String, "/text", 10)  # the node still works
    pub.publish(m.String(data="fine"))
    assert spin_until(node, lambda: good == ["fine"])
    status = node.status()
    assert status["dropped"] == {"/text": 3} and status["received"] == {"/text": 1}
    assert "malformed std_msgs/msg/String" in status["last_drop_reason"]["/text"]
    warnings = [r for r in collect.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "dropped a message on /text" in warnings[0].getMessage()
    node.destroy_node()


def test_a_message_the_callback_cannot_use_is_dropped_and_the_node_keeps_running(dds):
    node = dds.Node("image_checker")
    shapes = []
    node.create_subscription(m.Image, "/camera/x/color/image_raw",
                             lambda msg: shapes.append(convert.image_from_msg(msg)[0].shape), 10)
    pub = node.create_publisher(m.Image, "/camera/x/color/image_raw", 10)
    pub.publish(m.Image(height=2, width=2, encoding="mono8", step=2, data=bytes(4)))  # wrong encoding
    pub.publish(m.Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(5)))  # data too short
    pub.publish(convert.image_to_msg(np.zeros((2, 2, 3), np.uint8), 1.0, "x"))
    assert spin_until(node, lambda: len(shapes) == 1)
    assert shapes == [(2, 2, 3)] and node.dropped_messages == 2
    with pytest.raises(TypeError, match="Expected sensor_msgs/msg/Image"):
        pub.publish(m.String(data="wrong type"))
    node.destroy_node()


def test_timer_fires_at_its_period(dds):
    node = dds.Node("ticker")
    ticks = []
    node.create_timer(0.05, lambda: ticks.append(time.monotonic()))
    spin_until(node, lambda: len(ticks) >= 8, timeout=5.0)
    assert len(ticks) >= 8
    gaps = np.diff(ticks)
    assert 0.03 < float(np.median(gaps)) < 0.08
    node.destroy_node()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_spinning_node_cleanly(dds, sig):
    code = textwrap.dedent("""
        import sys
        from robot_rl.ros import Node, run_node

        class Ticker(Node):
            def __init__(self):
                super().__init__("ticker")
                self.create_timer(0.05, self.tick)
                self.n = 0

            def tick(self):
                self.n += 1
                if self.n == 2:
                    print("spinning", flush=True)

        sys.exit(run_node(Ticker, sys.argv))
        """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ))
    assert proc.stdout.readline().strip() == "spinning"
    sent = time.monotonic()
    proc.send_signal(sig)
    proc.wait(timeout=10)
    assert proc.returncode == 0, proc.stderr.read()
    assert time.monotonic() - sent < 2.0
