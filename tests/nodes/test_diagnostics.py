"""``/diagnostics``: a node's status as a ``DiagnosticStatus``, the level rule, and a running node."""

from __future__ import annotations

import math

import numpy as np
import pytest
from graph_harness import Probe, Session, private_env  # noqa: E402

from robot_rl.nodes.diagnostics import (
    DROP_WARN_S,
    ERROR,
    MAX_VALUE_CHARS,
    OK,
    WARN,
    DropWindow,
    diagnostic_fields,
    flatten,
)


def node_status(**extra):
    """What ``node.status()`` reports, plus a node's own figures."""
    return {"node": "/r1/sim_node", "backend": "dds", "received": {"/r1/robot/target_pose": 7}, "dropped": {},
            "dropped_messages": 0, "last_drop_reason": {}, **extra}


# --- the pure function ---------------------------------------------------------------------


def test_a_quiet_node_is_ok_and_named_by_its_fully_qualified_name():
    d = diagnostic_fields(node_status(frames=3), name="/r1/camera_front", hardware_id="camera front (realsense)")
    assert (d.level, d.name, d.message, d.hardware_id) == (OK, "/r1/camera_front", "ok", "camera front (realsense)")
    values = dict(d.values)
    assert values["received./r1/robot/target_pose"] == "7" and values["frames"] == "3"
    assert values["dropped"] == "{}" and values["last_drop_reason"] == "{}" and values["backend"] == "dds"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in d.values)


def test_recent_drops_warn_and_name_the_topic():
    status = node_status(dropped={"/r1/robot/target_pose": 2, "/r1/sim/reset": 1}, dropped_messages=3,
                         last_drop_reason={"/r1/sim/reset": "not JSON", "/r1/robot/target_pose": "a NaN"})
    d = diagnostic_fields(status, name="/r1/sim_node", recent_drops=3)
    assert d.level == WARN
    assert d.message == f"dropped 3 malformed messages in the last {DROP_WARN_S:g} s, most on " \
                        "/r1/robot/target_pose: a NaN"
    assert dict(d.values)["dropped./r1/robot/target_pose"] == "2"
    # the same counters with no drop in the window: history, not a warning
    assert diagnostic_fields(status, name="/r1/sim_node", recent_drops=0).level == OK


@pytest.mark.parametrize("status, level, words", [
    (node_status(holding=True, fault=None), WARN, "holding"),
    (node_status(controller={"holding": True, "fault": None}), WARN, "holding"),
    (node_status(holding=False, event={"event": "hold", "reason": "watchdog"}), WARN, "holding (watchdog)"),
    (node_status(holding=True, fault="reflex: joint 4"), ERROR, "fault: reflex: joint 4"),
    (node_status(controller={"holding": True, "fault": "lost connection"}), ERROR, "fault: lost connection"),
    (node_status(event={"event": "fault", "reason": "power"}), ERROR, "fault: power"),
    (node_status(device="spacemouse", device_lost="read failed on /dev/hidraw3"), ERROR, "input device lost"),
    (node_status(holding=False, event={"event": "targets"}), OK, "ok"),
    (node_status(event={"event": "finished"}), OK, "ok"),
])
def test_levels_follow_faults_holds_and_events(status, level, words):
    d = diagnostic_fields(status, name="/n")
    assert d.level == level and words in d.message, d


def test_an_error_outranks_warnings_and_the_message_keeps_both():
    d = diagnostic_fields(node_status(holding=True, fault="reflex", dropped={"/t": 1}, dropped_messages=1),
                          name="/n", recent_drops=1)
    assert d.level == ERROR and d.message.startswith("fault: reflex; holding; dropped 1 malformed message ")


def test_values_are_flat_strings_for_any_status_content():
    status = {"a": {"b": {"c": 1.5}}, "none": None, "yes": True, "n": math.nan, "big": -math.inf,
              "list": [1, "x", None], "empty": {}, "huge": "x" * 5000, "int": 10**30, "odd": object()}
    values = dict(flatten(status))
    assert values["a.b.c"] == "1.5" and values["none"] == "" and values["yes"] == "true"
    assert values["n"] == "nan" and values["big"] == "-inf" and values["list"] == '[1, "x", null]'
    assert values["empty"] == "{}" and values["int"] == str(10**30) and values["odd"].startswith("<object")
    assert len(values["huge"]) == MAX_VALUE_CHARS and values["huge"].endswith("...")
    d = diagnostic_fields({"fault": "x" * 5000}, name="/n")
    assert d.level == ERROR and len(d.message) == MAX_VALUE_CHARS


def test_drop_window_counts_only_recent_drops():
    w = DropWindow(window_s=10.0)
    assert w.update(0, 0.0) == 0
    assert w.update(2, 1.0) == 2
    assert w.update(3, 5.0) == 3
    assert w.update(3, 10.5) == 3  # t=1 is 9.5 s ago: still in the window
    assert w.update(3, 11.5) == 1  # the two at t=1 left the window; the one at t=5 has not
    assert w.update(3, 15.5) == 0
    assert w.update(4, 16.0) == 1


# --- a running node on the DDS backend ----------------------------------------------------------


def test_a_running_sim_node_publishes_its_diagnostics(tmp_path, monkeypatch):
    from robot_rl.ros import convert
    from robot_rl.ros import messages as m
    from robot_rl.ros.messages import serialize

    env = private_env()
    # a namespaced session; a slack watchdog so that a loaded machine does not turn "streaming" into "holding"
    session = Session(tmp_path, ["ros.namespace=r1", "ros.status_hz=5", "ros.watchdog_s=1.0"], env)
    probe = Probe(monkeypatch, env)
    try:
        got: list = []
        probe.node.create_subscription(m.DiagnosticArray, "/diagnostics", got.append, 100)
        poses = probe.collect(m.PoseStamped, "/r1/robot/tcp_pose", lambda msg: convert.pose_from_msg(msg)[0])
        target = probe.node.create_publisher(m.PoseStamped, "/r1/robot/target_pose", 10)
        sim = session.start("sim_node")

        def mine() -> list:
            return [s for msg in got for s in msg.status if s.name == "/r1/sim_node"]

        assert probe.spin_until(lambda: mine() and poses and target.get_subscription_count() > 0, 60,
                                {"sim_node": sim}), session.log("sim_node")
        assert all(len(msg.status) == 1 for msg in got)
        first = mine()[0]
        values = dict((kv.key, kv.value) for kv in first.values)
        assert first.hardware_id == "robot sim" and values["node"] == "/r1/sim_node" and values["backend"] == "dds"
        assert first.level == m.DiagnosticStatus.WARN and "holding" in first.message  # no target yet: it holds

        def stream(seconds: float, bad: int = 0) -> None:
            start = poses[-1][1]
            good = convert.pose_stamped_msg(start, np.array([0.0, 1.0, 0.0, 0.0]), 0.0, "base")
            for i in range(int(seconds / 0.05)):
                target.publish(good)
                if i < bad:  # a frame_id that is not UTF-8: the node cannot decode it and drops it
                    target.publish(serialize(good).replace(b"base", b"\xff\xfe\xfd\xfc"))
                probe.spin(0.05)

        seen = len(mine())
        stream(2.0)
        streaming = mine()[seen:]
        assert any(s.level == m.DiagnosticStatus.OK and s.message == "ok" for s in streaming), \
            [(s.level, s.message) for s in streaming]
        seen = len(mine())
        stream(1.5, bad=2)
        after = mine()[seen:]
        warned = [s for s in after if s.level == m.DiagnosticStatus.WARN and "dropped 2 malformed" in s.message]
        assert warned, [(s.level, s.message) for s in after]
        assert "most on /r1/robot/target_pose" in warned[-1].message
        values = dict((kv.key, kv.value) for kv in warned[-1].values)
        assert values["dropped./r1/robot/target_pose"] == "2" and values["dropped_messages"] == "2"
        assert int(values["received./r1/robot/target_pose"]) >= 30
        assert sim.poll() is None
    finally:
        probe.close()
        codes = session.stop()
    assert codes["sim_node"] == 0
