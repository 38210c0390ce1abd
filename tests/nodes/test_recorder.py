"""Session recording (``ros.record``): which topics, and the recorder node writing, crashing and finishing.

What proves "every message published is in the bag": a publisher in the test process
sends a known stream (N messages per topic, reliable, with a history as deep as the
stream, after its writers matched the recorder's readers, so DDS itself cannot lose
any), and the bag holds exactly those N messages per topic, byte for byte, in order.
A whole sim session recorded through ``robot-rl launch`` then shows the recorder on the
real graph: every topic of the session, every message decodable with ROS 2 Jazzy's
types, the same counts in the file, ``metadata.yaml`` and the summary, and no state tick
missing from any of the five streams the sim publishes each tick.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from graph_harness import PICK, Probe, Session, private_env

from robot_rl.errors import ConfigError
from robot_rl.nodes.description import build_graph
from robot_rl.nodes.recorder import (
    NODE,
    RecordedTopic,
    bag_path,
    parse_parameters,
    select_topics,
    session_topics,
)
from robot_rl.ros import messages as m
from robot_rl.ros.bag.reader import open_bag, repair_bag
from robot_rl.tasks import load_config

rosbags_typesys = pytest.importorskip("rosbags.typesys")
STORE = rosbags_typesys.get_typestore(rosbags_typesys.Stores.ROS2_JAZZY)

STREAM = ["joint_states", "camera/front/color/image_raw", "robot/target_pose", "sim_node/status"]


def graph(*sets: str, config: Path = PICK):
    cfg = load_config(config, list(sets))
    return cfg, build_graph(cfg, config)


# --- the plan (no processes) -------------------------------------------------------------------


def test_recording_adds_the_recorder_first_with_every_topic_of_the_session():
    cfg, g = graph("ros.record.enabled=true")
    assert g.names[0] == NODE and g.names[1:] == graph()[1].names
    params = g.node(NODE).parameters
    assert params["use_sim_time"] is False  # arrival times on the wall clock, flushes that never wait for /clock
    topics = parse_parameters(params["record"]["topics"], params["record"]["types"], params["record"]["kinds"])
    by_name = {t.name: t for t in topics}
    used = {name for spec in g.nodes[1:] for name in _names(spec.parameters["topics"])}
    assert used <= set(by_name)  # every topic any node publishes or reads
    assert {"sim_node/status", "actor_node/status", "tf", "tf_static", "/diagnostics", "/clock"} <= set(by_name)
    assert by_name["camera/front/color/image_raw"] == RecordedTopic("camera/front/color/image_raw",
                                                                    "sensor_msgs/msg/Image", "image")
    assert by_name["joint_states"].type_name == "sensor_msgs/msg/JointState"
    assert by_name["robot/gripper/command"].type_name == "std_msgs/msg/Float64"
    assert by_name["/clock"].kind == "clock" and by_name["tf_static"].kind == "static"
    assert all(t.type_name in m.REGISTRY for t in topics)
    assert NODE + "/status" not in by_name  # its own status is not recorded


def _names(topics):
    if isinstance(topics, dict):
        for v in topics.values():
            yield from _names(v)
    else:
        yield topics


def test_no_recorder_unless_asked():
    assert NODE not in graph()[1].names


def test_a_real_cell_records_its_camera_and_input_topics_and_no_sim_topic():
    path = PICK.parent / "franka_peg_insert.yaml"
    cfg, g = graph("ros.record.enabled=true", "intervention.device=spacemouse", config=path)
    names = set(g.node(NODE).parameters["record"]["topics"])
    assert {"spacenav/twist", "spacenav/joy", "intervention_node/status", "/diagnostics"} <= names
    assert not any(n.startswith("sim/") or n == "/clock" for n in names)
    cams = [n for n in names if n.startswith("camera/") and n.endswith("image_raw")]
    assert len(cams) == len(cfg.cameras)


def test_record_topics_narrows_the_recording_and_refuses_a_topic_the_session_lacks():
    _, g = graph("ros.record.enabled=true", "ros.record.topics=[/joint_states, sim_node/status]")
    assert g.node(NODE).parameters["record"]["topics"] == ["joint_states", "sim_node/status"]
    with pytest.raises(ConfigError, match=r"ros.record.topics: /joint_state is not a topic of this session "
                                          r"\(it has: .*joint_states"):
        graph("ros.record.enabled=true", "ros.record.topics=[/joint_state]")
    with pytest.raises(ConfigError, match="is not a ROS topic name"):
        load_config(PICK, ["ros.record.topics=[joint states]"])


def test_a_namespaced_session_records_under_its_namespace():
    _, g = graph("ros.record.enabled=true", "ros.namespace=r1")
    spec = g.node(NODE)
    assert ("/clock", "/r1/clock") in spec.remaps  # /clock moves with the session, for the recorder too
    assert "joint_states" in spec.parameters["record"]["topics"]  # relative: resolves to /r1/joint_states


def test_the_plan_refuses_parameters_that_do_not_line_up():
    with pytest.raises(ValueError, match="equally long"):
        parse_parameters(["a", "b"], ["std_msgs/msg/String"], ["event"])
    with pytest.raises(ValueError, match="'loud' is not one of"):
        parse_parameters(["a"], ["std_msgs/msg/String"], ["loud"])
    with pytest.raises(ValueError, match="nothing to record"):
        parse_parameters([], [], [])
    topics = [RecordedTopic("a", "std_msgs/msg/String", "event")]
    assert select_topics(topics, []) == topics


def test_bag_folders_are_new_every_time(tmp_path):
    import datetime

    now = datetime.datetime(2025, 1, 2, 3, 4, 5)
    first = bag_path(tmp_path, now)
    assert first.name == "session_20250102_030405"
    first.mkdir()
    assert bag_path(tmp_path, now).name == "session_20250102_030405_2"


def test_every_key_a_node_takes_has_a_recorded_type():
    cfg, g = graph("ros.record.enabled=true", "intervention.device=spacemouse")
    topics = session_topics(cfg, g.nodes[1:])
    assert len({t.name for t in topics}) == len(topics)


# --- the node ---------------------------------------------------------------------------------


def start_recorder(tmp_path: Path, *sets: str) -> tuple[Session, subprocess.Popen, dict]:
    env = private_env()
    session = Session(tmp_path, ["ros.record.enabled=true", f"ros.record.dir={tmp_path / 'bags'}",
                                 "ros.record.flush_s=0.2", "ros.record.topics=[" + ", ".join(STREAM) + "]", *sets],
                      env)
    return session, session.start(NODE), env


def known_stream(i: int) -> dict[str, m.Message]:
    """Message i of each recorded topic (an image of a few KiB, so chunks fill)."""
    stamp = m.Header(stamp=m.Time(sec=1000 + i, nanosec=i), frame_id="base")
    return {
        "/joint_states": m.JointState(header=stamp, name=["j1", "j2"], position=[i * 0.1, -i * 0.2]),
        "/camera/front/color/image_raw": m.Image(header=stamp, height=16, width=32, encoding="rgb8", step=96,
                                                 data=bytes((i + k) % 256 for k in range(16 * 96))),
        "/robot/target_pose": m.PoseStamped(header=stamp),
        "/sim_node/status": m.String(data=json.dumps({"i": i})),
    }


class Publisher:
    """The known stream's publishers in the test process, matched to the recorder before publishing."""

    def __init__(self, probe: Probe, depth: int, proc: subprocess.Popen) -> None:
        from robot_rl.ros.dds.qos import QoSProfile, ReliabilityPolicy

        qos = QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE)
        self.probe = probe
        self.pubs = {topic: probe.node.create_publisher(type(msg), topic, qos)
                     for topic, msg in known_stream(0).items()}
        self.sent: dict[str, list[bytes]] = {topic: [] for topic in self.pubs}
        matched = probe.spin_until(lambda: all(p.get_subscription_count() >= 1 for p in self.pubs.values()), 60.0,
                                   {NODE: proc})
        assert matched, "the recorder never subscribed"

    def send(self, first: int, count: int) -> None:
        for i in range(first, first + count):
            for topic, msg in known_stream(i).items():
                self.pubs[topic].publish(msg)
                self.sent[topic].append(on_the_wire(bytes(m.serialize(msg))))
            if i % 20 == 0:
                self.probe.spin(0.002)


def on_the_wire(data: bytes) -> bytes:
    """The serialized bytes as a DDS reader hands them over: padded with zeros to a multiple of 4
    (RTPS aligns the payload; CDR readers ignore the padding, and rosbag2 stores what rmw takes)."""
    return data + b"\0" * (-len(data) % 4)


def bag_dir(tmp_path: Path) -> Path:
    found = list((tmp_path / "bags").iterdir())
    assert len(found) == 1, found
    return found[0]


def test_the_recorder_stores_every_message_of_a_known_stream_byte_exact(tmp_path, monkeypatch):
    n = 300
    session, proc, env = start_recorder(tmp_path)
    probe = Probe(monkeypatch, env)
    try:
        statuses = probe.statuses(NODE)
        pub = Publisher(probe, depth=n, proc=proc)
        pub.send(0, n)
        done = probe.spin_until(lambda: statuses and statuses[-1]["messages"] >= 4 * n, 90.0, {NODE: proc})
        assert done, f"the recorder reported {statuses[-1]['messages'] if statuses else 'nothing'} of {4 * n}"
        codes = session.stop()
    finally:
        probe.close()
        session.stop()
    assert codes[NODE] == 0, session.log(NODE)
    bag = open_bag(bag_dir(tmp_path))
    assert bag.complete, bag.problem
    for topic, sent in pub.sent.items():
        assert [x.data for x in bag.messages if x.topic == topic] == sent, topic  # all n, in order, byte-exact
    assert f"wrote {4 * n} messages" in session.log(NODE)
    from rosbags.highlevel import AnyReader

    with AnyReader([bag.path], default_typestore=STORE) as reader:
        assert sum(1 for c, _, raw in reader.messages() if reader.deserialize(raw, c.msgtype) is not None) == 4 * n


def test_a_recorder_killed_mid_session_leaves_what_it_flushed_readable(tmp_path, monkeypatch):
    n1, n2 = 150, 150
    session, proc, env = start_recorder(tmp_path)
    probe = Probe(monkeypatch, env)
    try:
        statuses = probe.statuses(NODE)
        pub = Publisher(probe, depth=n1 + n2, proc=proc)
        pub.send(0, n1)
        flushed = probe.spin_until(lambda: statuses and statuses[-1]["flushed"] >= 4 * n1, 90.0, {NODE: proc})
        assert flushed, "the first part was never flushed"
        on_disk = statuses[-1]["flushed"]
        pub.send(n1, n2)
        probe.spin(0.1)
        proc.send_signal(signal.SIGKILL)  # no chance to finish the file
        assert proc.wait(10) == -signal.SIGKILL
    finally:
        probe.close()
        session.stop()
    path = bag_dir(tmp_path)
    bag = open_bag(path)
    assert not bag.complete and "cut short" in bag.problem
    assert bag.message_count >= on_disk
    for topic, sent in pub.sent.items():
        got = [x.data for x in bag.messages if x.topic == topic]
        assert len(got) >= n1 and got == sent[:len(got)], topic  # the first part whole, then a prefix of the rest
    listed = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert on_disk <= listed["message_count"] <= bag.message_count  # valid, and counts what a flush wrote

    check = subprocess.run([sys.executable, "-m", "robot_rl.cli", "bag", "check", str(path)], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 1 and "NOT complete" in check.stdout and "robot-rl bag repair" in check.stdout
    report = repair_bag(path)
    assert report.kept == bag.message_count
    from rosbags.rosbag2 import Reader

    with Reader(path) as reader:
        assert reader.message_count == bag.message_count
        assert sum(1 for _ in reader.messages()) == bag.message_count


def test_a_recorded_sim_session_reads_back_whole(tmp_path):
    """robot-rl launch with ros.record.enabled: the session as ROS 2 tools would read it."""
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "robot_rl.cli", "launch", str(PICK), "--set", "ros.state_timeout_s=2.0",
           "--set", "ros.policy=expert", "--set", "ros.episodes=2", "--set", "ros.record.enabled=true",
           "--set", f"ros.record.dir={tmp_path / 'bags'}", "--run-dir", str(run_dir), "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=private_env(), timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    path = bag_dir(tmp_path)
    bag = open_bag(path)
    assert bag.complete, bag.problem
    cfg = load_config(run_dir / "session.yaml")
    g = build_graph(cfg, run_dir / "session.yaml")
    expected = {"/" + t.name.lstrip("/"): t.type_name for t in session_topics(cfg, g.nodes[1:])}
    assert {name: t.type_name for name, t in bag.topics.items()} == expected
    for name in ("/joint_states", "/robot/tcp_pose", "/robot/target_pose", "/robot/gripper/command", "/sim/reset",
                 "/sim/reset_done", "/sim/task_state", "/camera/front/color/image_raw", "/camera/wrist/color/image_raw",
                 "/sim_node/status", "/actor_node/status", "/tf", "/tf_static", "/diagnostics", "/clock"):
        assert bag.topics[name].count > 0, name

    # three accounts of the counts agree: the messages read, metadata.yaml, the MCAP summary
    from mcap.reader import make_reader

    info = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    listed = {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]}
    with open(bag.file, "rb") as f:
        summary = make_reader(f).get_summary()
    by_channel = {c.topic: summary.statistics.channel_message_counts.get(cid, 0) for cid, c in summary.channels.items()}
    assert bag.counts() == listed == by_channel
    assert f"wrote {bag.message_count} messages" in proc.stdout

    # every message decodes with ROS 2 Jazzy's types
    from rosbags.highlevel import AnyReader

    with AnyReader([path], default_typestore=STORE) as reader:
        decoded = {}
        for conn, _, raw in reader.messages():
            decoded.setdefault(conn.topic, []).append(reader.deserialize(raw, conn.msgtype))
    assert {k: len(v) for k, v in decoded.items() if v} == {k: v for k, v in bag.counts().items() if v}

    # no state tick lost: the sim publishes these five with one stamp per tick; inside the window all five
    # streams cover, each holds every tick's stamp
    tick_topics = ["/joint_states", "/robot/tcp_pose", "/robot/tcp_twist", "/robot/tcp_wrench", "/sim/task_state"]
    stamps = {t: [(s.header.stamp.sec, s.header.stamp.nanosec) for s in decoded[t]] for t in tick_topics}
    lo, hi = max(min(v) for v in stamps.values()), min(max(v) for v in stamps.values())
    inside = {t: sorted(s for s in v if lo <= s <= hi) for t, v in stamps.items()}
    first = inside[tick_topics[0]]
    assert len(first) > 100 and all(v == first for v in inside.values())

    finished = [json.loads(s.data) for s in decoded["/actor_node/status"]]
    assert finished[-1]["episodes"] == 2  # the actor's last word is in the bag too


def test_a_recorder_with_a_bad_parameter_is_one_line(tmp_path):
    env = private_env()
    session = Session(tmp_path, ["ros.record.enabled=true", f"ros.record.dir={tmp_path / 'bags'}"], env)
    spec = session.graph.node(NODE)
    spec.parameters["record"]["kinds"] = spec.parameters["record"]["kinds"][:-1]
    params = session.graph.write_params_file(tmp_path)
    out = subprocess.run(session.graph.command(spec, params), capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines == [f"robot-rl: node '{NODE}': record.topics, record.types and record.kinds must be equally long "
                     f"({len(spec.parameters['record']['topics'])}, {len(spec.parameters['record']['types'])}, "
                     f"{len(spec.parameters['record']['kinds'])})"]
    assert not (tmp_path / "bags").exists()  # refused before any bag was begun
