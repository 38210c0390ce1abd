"""DDS-backend nodes as ROS 2 sees them: ``ros_discovery_info`` names every node and its endpoints.

``ros2 node list`` and ``ros2 node info`` come from that topic; a gid that matches no
endpoint of DDS discovery, or an endpoint no node claims, is what makes a node invisible
or an endpoint ``_CREATED_BY_BARE_DDS_APP_``. The reader is a separate plain Cyclone
process (tests/support/graph_probe.py) that starts after the nodes, as ``ros2`` does, and
checks every gid against the DDS built-in topics. Each test runs in its own random ROS
domain on loopback (ROBOT_RL_DDS_LOCALHOST=1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from robot_rl.ros import messages as m
from robot_rl.ros.dds.graph import DISCOVERY_QOS, DISCOVERY_TOPIC
from robot_rl.ros.dds.graph_messages import ParticipantEntitiesInfo

PROBE = str(Path(__file__).resolve().parents[2] / "support" / "graph_probe.py")
TIMEOUT = 30.0


def probe(*node_fqns: str) -> dict:
    """Start a late ros_discovery_info reader and return the state it saw (the nodes must be exactly these)."""
    proc = subprocess.run([sys.executable, PROBE, *node_fqns, "--timeout", str(TIMEOUT)], capture_output=True,
                          text=True, env=dict(os.environ), timeout=TIMEOUT + 30)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.splitlines()[-1])


def topics(node: dict, kind: str) -> list[str]:
    return sorted(e["topic"] for e in node[kind])


def test_ros2_learns_every_node_and_the_owner_of_every_endpoint(dds):
    arm = dds.Node("arm", namespace="/robot")
    arm_state = arm.create_publisher(m.JointState, "joint_states", 10)
    arm.create_publisher(m.String, "~/status", 10)
    arm.create_subscription(m.PoseStamped, "/robot/command", lambda msg: None, 10)
    cam = dds.Node("camera")
    cam_pub = cam.create_publisher(m.Image, "/camera/wrist/color/image_raw", 5)
    cam.create_subscription(m.String, "/camera/wrist/settings", lambda msg: None, 10)

    seen = probe("/robot/arm", "/camera")
    participant = arm.context.participant()
    assert seen["participant"] == participant.gid.hex() and seen["user_data"] == "enclave=/;"
    by_name = {n["fqn"]: n for n in seen["nodes"]}
    assert [n["fqn"] for n in seen["nodes"]] == ["/robot/arm", "/camera"]  # creation order, as rmw
    assert (by_name["/robot/arm"]["namespace"], by_name["/robot/arm"]["name"]) == ("/robot", "arm")
    assert (by_name["/camera"]["namespace"], by_name["/camera"]["name"]) == ("/", "camera")
    assert topics(by_name["/robot/arm"], "writers") == ["rt/robot/arm/status", "rt/robot/joint_states"]
    assert topics(by_name["/robot/arm"], "readers") == ["rt/robot/command"]
    assert topics(by_name["/camera"], "writers") == ["rt/camera/wrist/color/image_raw"]
    assert topics(by_name["/camera"], "readers") == ["rt/camera/wrist/settings"]
    # the gid of an endpoint is its DDS GUID, the same bytes the built-in topics carry
    writer_gids = {e["gid"] for e in by_name["/robot/arm"]["writers"]}
    assert arm_state._writer.gid.hex() in writer_gids and len(arm_state._writer.gid) == 16
    assert by_name["/camera"]["writers"][0]["gid"] == cam_pub._writer.gid.hex()

    # a destroyed node, publisher and subscription leave the graph; what remains is announced again
    cam.destroy_node()
    arm.destroy_publisher(arm_state)
    late = arm.create_subscription(m.String, "~/late", lambda msg: None, 10)
    seen = probe("/robot/arm")
    (node,) = seen["nodes"]
    assert topics(node, "writers") == ["rt/robot/arm/status"]
    assert topics(node, "readers") == ["rt/robot/arm/late", "rt/robot/command"]
    arm.destroy_subscription(late)
    seen = probe("/robot/arm")
    assert topics(seen["nodes"][0], "readers") == ["rt/robot/command"]
    arm.destroy_node()


def test_discovery_writer_has_rmw_cyclonedds_topic_type_and_qos(dds):
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
    from cyclonedds.qos import Policy

    node = dds.Node("graph_qos")
    reader = BuiltinDataReader(node.context.participant().dds, BuiltinTopicDcpsPublication)
    found = [e for e in reader.take(N=256) if e.topic_name == DISCOVERY_TOPIC]
    assert len(found) == 1, "one ros_discovery_info writer per participant, as rmw has"
    (endpoint,) = found
    assert endpoint.type_name == "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
    assert endpoint.qos[Policy.Userdata].data == f"typehash={m.type_hash(ParticipantEntitiesInfo)};".encode()
    assert endpoint.qos[Policy.Durability] == Policy.Durability.TransientLocal
    assert endpoint.qos[Policy.History] == Policy.History.KeepLast(1)
    assert isinstance(endpoint.qos[Policy.Reliability], Policy.Reliability.Reliable)
    assert DISCOVERY_QOS.depth == 1
    node.destroy_node()
