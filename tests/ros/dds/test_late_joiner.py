"""A ROS 2 peer that starts long after a DDS-backend node still finds it, both ways (issue: late joiners).

Cyclone 11 prunes the peer locators nobody answered after ``InitialLocatorPruneDelay``
(30 s by default) and ignores participant announcements that arrive on loopback, where a
ROS 2 localhost peer sends them; without ``InitialLocatorPruneDelay=inf`` in our
configuration (robot_rl/ros/dds/config.py) this test fails. The node runs with the
default discovery settings (LOCALHOST range, not the loopback-only test mode); the peer
is a plain Cyclone process configured like rmw_cyclonedds_cpp in LOCALHOST mode
(tests/support/rmw_localhost_peer.py). It waits out the real 30 s: a shortened delay
passed through ``CYCLONEDDS_URI`` would also override the fix, since site settings win.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from domains import private_domain

from robot_rl.ros import messages as m
from robot_rl.ros.dds import api as ros

PEER = str(Path(__file__).resolve().parents[2] / "support" / "rmw_localhost_peer.py")
PRUNE_DELAY_S = 30.0  # Cyclone's default InitialLocatorPruneDelay
PEER_TIMEOUT_S = 25.0


@pytest.fixture
def default_discovery(monkeypatch):
    """The DDS backend as a user runs it: no test-mode loopback pinning, no discovery variables."""
    for var in ("ROBOT_RL_DDS_LOCALHOST", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS",
                "CYCLONEDDS_URI"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ROBOT_RL_ROS_BACKEND", "dds")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(private_domain(101, 232)))  # away from the loopback tests' 1..100
    ros.init(args=[])
    yield ros
    ros.try_shutdown()


def test_a_ros2_localhost_peer_started_after_the_prune_delay_finds_the_node_both_ways(default_discovery):
    node = default_discovery.Node("early")
    got: list[str] = []
    node.create_subscription(m.String, "/late/to_robot_rl", lambda msg: got.append(msg.data), 10)
    pub = node.create_publisher(m.String, "/late/from_robot_rl", 10)
    node.create_timer(0.2, lambda: pub.publish(m.String(data="from robot_rl")))
    started = time.monotonic()
    while time.monotonic() - started < PRUNE_DELAY_S + 3.0:
        default_discovery.spin_once(node, timeout_sec=0.1)
    assert got == [] and pub.get_subscription_count() == 0  # nobody else in this domain yet

    peer = subprocess.Popen([sys.executable, PEER, "--timeout", str(PEER_TIMEOUT_S)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        while peer.poll() is None:
            default_discovery.spin_once(node, timeout_sec=0.1)
        out, err = peer.communicate(timeout=10)
    finally:
        if peer.poll() is None:
            peer.kill()
            peer.communicate()
    report = json.loads(out.splitlines()[-1]) if out.strip() else {}
    assert peer.returncode == 0, f"the late peer never received the node's messages: {out} {err}"
    assert report["received"][0] == "from robot_rl"
    assert got and got[0].startswith("from peer"), "the node never received the late peer's messages"
    node.destroy_node()
