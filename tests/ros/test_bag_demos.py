"""Demo directories through rosbag2 MCAP and back: byte-exact, episodes and flags kept, bad bags refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from demo_bags import ACTION, arrays_of, assert_same_episodes, make_demos

from robot_rl.data.demos import DemoWriter
from robot_rl.data.transition import Step
from robot_rl.ros import messages as m
from robot_rl.ros.bag.demos import (
    ACTION_TOPIC,
    MANIFEST_TOPIC,
    OBS_PREFIX,
    STEP_TOPIC,
    DemoBagError,
    DemoLossError,
    export_demos,
    import_demos,
)
from robot_rl.ros.bag.reader import open_bag, repair_bag
from robot_rl.ros.bag.writer import BagWriter

rosbags_typesys = pytest.importorskip("rosbags.typesys")
from rosbags.highlevel import AnyReader  # noqa: E402

STORE = rosbags_typesys.get_typestore(rosbags_typesys.Stores.ROS2_JAZZY)

def assert_same_demos(a: Path, b: Path) -> None:
    assert_same_episodes(a, b)
    ma, mb = (json.loads((d / "manifest.json").read_text()) for d in (a, b))
    assert {k: v for k, v in ma.items() if k != "created"} == {k: v for k, v in mb.items() if k != "created"}


def test_a_demo_directory_round_trips_through_mcap_byte_exact(tmp_path):
    episodes = make_demos(tmp_path / "demos")
    report = export_demos(tmp_path / "demos", tmp_path / "bag")
    assert (report.episodes, report.steps) == (3, 12)
    back = import_demos(tmp_path / "bag", tmp_path / "again")
    assert (back.episodes, back.steps, back.skipped) == (3, 12, None)
    assert_same_demos(tmp_path / "demos", tmp_path / "again")
    flags = [a["intervened"].tolist() for a in arrays_of(tmp_path / "again")]
    assert flags == [[s.intervened for s in steps] for steps in episodes] and any(map(any, flags))
    ends = [(a["terminated"][-1], a["truncated"][-1]) for a in arrays_of(tmp_path / "again")]
    assert ends == [(True, False), (False, True), (True, False)]


def test_the_demo_bag_is_standard_messages_a_ros_tool_decodes(tmp_path):
    make_demos(tmp_path / "demos")
    export_demos(tmp_path / "demos", tmp_path / "bag")
    with AnyReader([tmp_path / "bag"], default_typestore=STORE) as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        decoded: dict[str, list] = {}
        for conn, t, raw in reader.messages():
            decoded.setdefault(conn.topic, []).append((t, reader.deserialize(raw, conn.msgtype)))
    assert types == {MANIFEST_TOPIC: "std_msgs/msg/String", STEP_TOPIC: "std_msgs/msg/String",
                     ACTION_TOPIC: "std_msgs/msg/Float64MultiArray", OBS_PREFIX + "front": "sensor_msgs/msg/Image",
                     OBS_PREFIX + "gray": "sensor_msgs/msg/Image",
                     OBS_PREFIX + "state": "std_msgs/msg/Float64MultiArray"}
    counts = {topic: len(v) for topic, v in decoded.items()}
    assert counts == {MANIFEST_TOPIC: 1, STEP_TOPIC: 12, ACTION_TOPIC: 12, OBS_PREFIX + "front": 15,
                      OBS_PREFIX + "gray": 15, OBS_PREFIX + "state": 15}
    front = decoded[OBS_PREFIX + "front"][0][1]
    assert (front.encoding, front.height, front.width, front.step) == ("rgb8", 6, 8, 24)
    assert decoded[OBS_PREFIX + "gray"][0][1].encoding == "mono8"
    steps = [json.loads(msg.data) for _, msg in decoded[STEP_TOPIC]]
    assert [(s["episode"], s["step"]) for s in steps[:6]] == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0)]
    times = [t for t, _ in decoded[OBS_PREFIX + "state"]]
    assert np.allclose(np.diff(times), 1e9 / 20)  # one frame per control period (env.control_hz 20)
    assert decoded[STEP_TOPIC][0][0] == decoded[OBS_PREFIX + "front"][0][0]  # a step and its frame share a time


def test_import_refuses_a_bag_that_is_not_a_demo_bag(tmp_path):
    w = BagWriter(tmp_path / "session")
    topic = w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    w.write(topic, m.serialize(m.JointState()), 1)
    w.close()
    with pytest.raises(DemoBagError, match=r"is not a robot_rl demo bag: it has no /demo/manifest topic "
                                           r"\(its topics: /joint_states\)"):
        import_demos(tmp_path / "session", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_import_refuses_a_bag_cut_short_and_says_what_is_readable(tmp_path):
    make_demos(tmp_path / "demos", lengths=(4, 4, 4))
    export_demos(tmp_path / "demos", tmp_path / "bag")
    mcap = tmp_path / "bag" / "bag_0.mcap"
    from mcap.reader import make_reader

    with open(mcap, "rb") as f:
        chunks = sorted(make_reader(f).get_summary().chunk_indexes, key=lambda c: c.chunk_start_offset)
    assert len(chunks) == 3  # the export writes an episode at a time
    data = mcap.read_bytes()
    mcap.write_bytes(data[: chunks[2].chunk_start_offset + chunks[2].chunk_length // 2])  # inside episode 2
    with pytest.raises(DemoBagError) as err:
        import_demos(tmp_path / "bag", tmp_path / "out")
    text = str(err.value)
    assert "is cut short" in text and "messages are readable" in text and "robot-rl bag repair" in text
    assert "\n" not in text and not (tmp_path / "out").exists()
    assert ", 2 finished episodes among them" in text

    # repaired (the original kept), the loss is named and refused unless accepted; then the whole episodes import
    repair_bag(tmp_path / "bag")
    assert (tmp_path / "bag" / "bag_0.mcap.orig").read_bytes() == data[: chunks[2].chunk_start_offset
                                                                         + chunks[2].chunk_length // 2]
    with pytest.raises(DemoLossError, match=r"leave out 1 of 3 episode\(s\): episode 2 \(none of its messages "
                                            r"were readable\); what an earlier 'bag repair' dropped the last \d+ "
                                            r"bytes .*--allow-loss"):
        import_demos(tmp_path / "bag", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    report = import_demos(tmp_path / "bag", tmp_path / "out", allow_loss=True)
    assert (report.episodes, report.episodes_lost) == (2, 1) and "episode 2" in report.line()
    for a, b in zip(arrays_of(tmp_path / "demos"), arrays_of(tmp_path / "out")):
        assert all(a[k].tobytes() == b[k].tobytes() for k in a)


def _rewrite(src: Path, dst: Path, change) -> None:
    """Copy the bag ``src`` to ``dst`` message by message, ``change(topic, data) -> data | None`` on the way."""
    bag = open_bag(src)
    kept = [(msg, change(msg.topic, msg.data)) for msg in bag.messages]
    kept = [(msg, data) for msg, data in kept if data is not None]
    w = BagWriter(dst)
    topics = {name: w.add_topic(name, t.type_name) for name, t in bag.topics.items()
              if any(msg.topic == name for msg, _ in kept)}  # a topic left with no message is left out
    for msg, data in kept:
        w.write(topics[msg.topic], data, msg.log_time)
    w.close()


def _drop_one(topic_name: str, index: int = 3):
    """A change that drops message ``index`` of one topic (a frame or an action gone missing)."""
    seen = [0]

    def change(topic: str, data: bytes):
        if topic != topic_name:
            return data
        seen[0] += 1
        return None if seen[0] - 1 == index else data

    return change


def _tamper_action(topic: str, data: bytes) -> bytes:
    if topic != ACTION_TOPIC:
        return data
    msg = m.deserialize(data, m.REGISTRY["std_msgs/msg/Float64MultiArray"])
    msg.data[0] = 0.1  # a double that is no float32: not what the exporter writes
    return bytes(m.serialize(msg))


def _bad_step(topic: str, data: bytes) -> bytes:
    if topic != STEP_TOPIC:
        return data
    record = json.loads(m.deserialize(data, m.String).data)
    record["intervened"] = "yes"
    return bytes(m.serialize(m.String(data=json.dumps(record))))


@pytest.mark.parametrize("change,error", [
    (lambda topic, data: None if topic == OBS_PREFIX + "gray" else data, "no /demo/obs/gray topic"),
    (lambda topic, data: None if topic == ACTION_TOPIC else data, "no /demo/action topic"),
    (_tamper_action, "values that are not float32 values"),
    (_bad_step, "'intervened' must be true or false"),
    (lambda topic, data: data[:-3] if topic == OBS_PREFIX + "state" else data, "malformed"),
    (lambda topic, data: None if topic == MANIFEST_TOPIC else data, "no /demo/manifest topic"),
    (_drop_one(OBS_PREFIX + "gray"), r"1 episode\(s\): episode 0 \(no /demo/obs/gray frame for step 3\)"),
    (_drop_one(ACTION_TOPIC), r"episode 0 \(no /demo/action message for step 3\)"),
    (_drop_one(STEP_TOPIC, 1), r"episode 0 \(step 1 missing\)"),
])
def test_import_refuses_a_tampered_demo_bag_in_one_line(tmp_path, change, error):
    make_demos(tmp_path / "demos")
    export_demos(tmp_path / "demos", tmp_path / "bag")
    _rewrite(tmp_path / "bag", tmp_path / "bad", change)
    with pytest.raises(DemoBagError, match=error) as err:
        import_demos(tmp_path / "bad", tmp_path / "out")
    assert "\n" not in str(err.value)
    assert not list((tmp_path / "out").glob("episode_*.npz")) if (tmp_path / "out").exists() else True


def test_an_observation_a_double_cannot_hold_is_refused_at_export(tmp_path):
    space = gym.spaces.Dict({"count": gym.spaces.Box(0, 2**40, (2,), np.int64)})
    writer = DemoWriter(tmp_path / "demos", space, ACTION, task="t")
    frame = {"count": np.array([2**53 + 1, 3], dtype=np.int64)}
    writer.write_episode([Step(0, 0, frame, np.zeros(4, np.float32), 0.0, True, False, frame)])
    with pytest.raises(DemoBagError, match="observation 'count' is int64, which a float64 message cannot hold"):
        export_demos(tmp_path / "demos", tmp_path / "bag")


def test_export_keeps_the_demo_directory_it_reads_and_refuses_an_existing_bag(tmp_path):
    make_demos(tmp_path / "demos")
    before = {p.name: p.read_bytes() for p in (tmp_path / "demos").iterdir()}
    export_demos(tmp_path / "demos", tmp_path / "bag")
    assert {p.name: p.read_bytes() for p in (tmp_path / "demos").iterdir()} == before
    with pytest.raises(Exception, match="already exists"):
        export_demos(tmp_path / "demos", tmp_path / "bag")
    shutil.rmtree(tmp_path / "bag")
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match="not a demo directory|demo directory not found|no manifest"):
        export_demos(tmp_path / "empty", tmp_path / "bag")


def test_an_episode_that_never_ended_is_left_out_and_named(tmp_path):
    """What a repaired recording can hold: the last episode's final step is missing."""
    make_demos(tmp_path / "demos")  # episodes of 5, 3 and 4 steps
    export_demos(tmp_path / "demos", tmp_path / "bag")
    _rewrite(tmp_path / "bag", tmp_path / "short", _drop_one(STEP_TOPIC, 11))
    with pytest.raises(DemoLossError, match=r"episode 2 \(3 steps, which never ended\)"):
        import_demos(tmp_path / "short", tmp_path / "out")
    report = import_demos(tmp_path / "short", tmp_path / "out", allow_loss=True)
    assert (report.episodes, report.steps, report.episodes_lost) == (2, 8, 1)
    assert report.skipped.startswith("1 episode(s): episode 2 (3 steps, which never ended)")
    assert "; left out 1 episode(s): episode 2 (3 steps, which never ended)" in report.line()
    for a, b in zip(arrays_of(tmp_path / "demos")[:2], arrays_of(tmp_path / "out")):
        assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    assert len(arrays_of(tmp_path / "out")) == 2
