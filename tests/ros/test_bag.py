"""rosbag2 MCAP bags without ROS: what the writer puts in them, what ROS tools' readers make of
it, and what is left of a bag cut short anywhere.

The bags are read back with three readers that know nothing of robot_rl: ``rosbags``
(its rosbag2 reader, and its Jazzy type store to decode every message and check every
schema), the ``mcap`` package's indexed reader, and our own linear reader (the one that
copes with a file that has no summary).
"""

from __future__ import annotations

import array
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_rl.ros import messages as m
from robot_rl.ros.bag.reader import open_bag, repair_bag
from robot_rl.ros.bag.schema import msg_definition, qos_profile
from robot_rl.ros.bag.writer import BagError, BagWriter

rosbags_typesys = pytest.importorskip("rosbags.typesys")
from rosbags.highlevel import AnyReader  # noqa: E402
from rosbags.rosbag2 import Reader  # noqa: E402

STORE = rosbags_typesys.get_typestore(rosbags_typesys.Stores.ROS2_JAZZY)
T0 = 1_700_000_000_000_000_000


def image(i: int, w: int = 8, h: int = 6) -> m.Image:
    data = np.random.default_rng(i).integers(0, 256, h * w * 3, dtype=np.uint8).tobytes()
    return m.Image(header=m.Header(stamp=m.Time(sec=i, nanosec=7), frame_id="cam"), height=h, width=w,
                   encoding="rgb8", step=w * 3, data=data)


def joints(i: int) -> m.JointState:
    return m.JointState(header=m.Header(stamp=m.Time(sec=i, nanosec=0), frame_id="base"), name=["a", "b"],
                        position=array.array("d", [i * 0.5, -i * 0.25]))


def write_bag(path: Path, n: int = 40, **kw) -> tuple[BagWriter, dict[str, list[bytes]]]:
    """A finished bag with ``n`` images and ``n`` joint states; the bytes written, per topic."""
    w = BagWriter(path, **kw)
    img = w.add_topic("/camera/front/color/image_raw", "sensor_msgs/msg/Image", [qos_profile(1)])
    js = w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    sent: dict[str, list[bytes]] = {img.name: [], js.name: []}
    for i in range(n):
        for topic, msg in ((img, image(i)), (js, joints(i))):
            data = bytes(m.serialize(msg))
            w.write(topic, data, T0 + i * 1_000_000 + len(sent[topic.name]))
            sent[topic.name].append(data)
    w.close()
    return w, sent


def test_a_bag_is_what_rosbag2_writes_and_readers_without_robot_rl_read_it_byte_exact(tmp_path):
    bag_dir = tmp_path / "bag"
    writer, sent = write_bag(bag_dir)
    assert sorted(p.name for p in bag_dir.iterdir()) == ["bag_0.mcap", "metadata.yaml"]

    info = yaml.safe_load((bag_dir / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] == 9 and info["storage_identifier"] == "mcap"
    assert info["relative_file_paths"] == ["bag_0.mcap"] and info["message_count"] == 80
    assert isinstance(info["custom_data"], dict) and info["ros_distro"] == "jazzy"
    topics = {t["topic_metadata"]["name"]: t for t in info["topics_with_message_count"]}
    image_meta = topics["/camera/front/color/image_raw"]["topic_metadata"]
    assert image_meta["type_description_hash"] == STORE.hash_rihs01("sensor_msgs/msg/Image")
    assert image_meta["offered_qos_profiles"][0]["depth"] == 1

    with Reader(bag_dir) as reader:  # rosbags' rosbag2 reader: metadata.yaml, then the MCAP summary
        assert reader.message_count == 80
        got: dict[str, list[bytes]] = {}
        for conn, _, raw in reader.messages():
            got.setdefault(conn.topic, []).append(bytes(raw))
            STORE.deserialize_cdr(raw, conn.msgtype)
        qos = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}
    assert got == sent
    assert qos["/camera/front/color/image_raw"][0].reliability.name == "RELIABLE"

    from mcap.reader import make_reader

    with open(bag_dir / "bag_0.mcap", "rb") as f:
        r = make_reader(f)
        header, summary = r.get_header(), r.get_summary()
        assert header.profile == "ros2"
        assert summary.statistics.message_count == 80
        schemas = {s.name: s for s in summary.schemas.values()}
        channels = list(summary.channels.values())
        metadata = {rec.name: rec.metadata for rec in r.iter_metadata()}
    assert {s.encoding for s in schemas.values()} == {"ros2msg"}
    assert {c.message_encoding for c in channels} == {"cdr"}
    assert all({"offered_qos_profiles", "topic_type_hash"} <= set(c.metadata) for c in channels)
    rosbag2 = yaml.safe_load(metadata["rosbag2"]["serialized_metadata"])
    assert rosbag2["message_count"] == 80 and rosbag2["version"] == 9


@pytest.mark.parametrize("cls", list(m.ALL), ids=lambda c: c._type)
def test_every_schema_parses_to_the_jazzy_definition(cls):
    """The complete ros2msg text of each type, parsed by rosbags, is Jazzy's type (fields and nested types)."""
    parsed = rosbags_typesys.get_types_from_msg(msg_definition(cls), cls._type)
    assert cls._type in parsed
    for name, (_, fields) in parsed.items():
        assert fields == STORE.fielddefs[name][1], name


def test_a_decoder_given_only_the_bag_decodes_every_message(tmp_path):
    """Foxglove's situation: no type store, only the schemas in the file."""
    bag_dir = tmp_path / "bag"
    write_bag(bag_dir, n=5)
    store = rosbags_typesys.get_typestore(rosbags_typesys.Stores.EMPTY)
    with AnyReader([bag_dir], default_typestore=store) as reader:  # types registered from the bag's schemas
        decoded = [reader.deserialize(raw, conn.msgtype) for conn, _, raw in reader.messages()]
    images = [d for d in decoded if hasattr(d, "encoding")]
    assert len(decoded) == 10 and bytes(images[3].data) == bytes(image(3).data)


def test_every_cut_keeps_every_message_of_every_whole_chunk(tmp_path):
    """Truncate a flushed-as-it-goes bag at every record boundary and inside records: the reader
    always returns the messages of the whole chunks before the cut, in order, and says where it stopped."""
    bag_dir = tmp_path / "bag"
    w = BagWriter(bag_dir, chunk_size=1 << 20)
    topic = w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    w.flush()
    sent, flushed_at = [], []  # file size after each flush, messages on disk then
    for i in range(30):
        data = bytes(m.serialize(joints(i)))
        w.write(topic, data, T0 + i)
        sent.append(data)
        if i % 3 == 2:
            w.flush()
            flushed_at.append(((bag_dir / "bag_0.mcap").stat().st_size, i + 1))
    whole = (bag_dir / "bag_0.mcap").read_bytes()  # a crash now: no summary, no footer
    assert open_bag(bag_dir).message_count == 30
    rng = random.Random(0)
    cuts = sorted({size for size, _ in flushed_at} | {rng.randrange(8, len(whole)) for _ in range(40)})
    for cut in cuts:
        trial = tmp_path / f"cut{cut}"
        shutil.copytree(bag_dir, trial)
        (trial / "bag_0.mcap").write_bytes(whole[:cut])
        bag = open_bag(trial)
        # every chunk flushed before the cut is whole; the chunk the cut falls in may be whole too (the cut
        # falls in its message index) or not: whole chunks (3 messages each) only, in order
        at_least = max((n for size, n in flushed_at if size <= cut), default=0)
        expected = bag.message_count
        assert not bag.complete and f"at byte {bag.readable_bytes}" in bag.problem
        assert at_least <= expected <= at_least + 3 and expected % 3 == 0, cut
        assert [x.data for x in bag.messages] == sent[:expected], cut
        report = repair_bag(trial)
        assert report.kept == expected and report.dropped_bytes == cut - bag.readable_bytes
        with Reader(trial) as reader:  # complete again: rosbags (summary, metadata.yaml) reads it
            assert [bytes(raw) for _, _, raw in reader.messages()] == sent[:expected]
            assert reader.message_count == expected
        assert open_bag(trial).complete


def test_metadata_yaml_counts_what_is_on_disk_after_each_flush(tmp_path):
    bag_dir = tmp_path / "bag"
    w = BagWriter(bag_dir)
    topic = w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    w.flush()

    def listed() -> int:
        return yaml.safe_load((bag_dir / "metadata.yaml").read_text())["rosbag2_bagfile_information"]["message_count"]

    assert listed() == 0
    for i in range(5):
        w.write(topic, m.serialize(joints(i)), T0 + i)
    assert listed() == 0  # not flushed yet: not on disk, not counted
    w.flush()
    assert listed() == 5 == open_bag(bag_dir).message_count
    w.close()
    assert listed() == 5 and open_bag(bag_dir).complete


def test_a_repaired_bag_keeps_its_qos_and_custom_data(tmp_path):
    bag_dir = tmp_path / "bag"
    w = BagWriter(bag_dir, custom_data={"who": "test"})
    topic = w.add_topic("/tf_static", "tf2_msgs/msg/TFMessage", [qos_profile(1, durability="transient_local")])
    w.write(topic, m.serialize(m.TFMessage()), T0)
    w.flush()  # crash here
    repair_bag(bag_dir)
    info = yaml.safe_load((bag_dir / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["custom_data"] == {"who": "test"}
    qos = info["topics_with_message_count"][0]["topic_metadata"]["offered_qos_profiles"]
    assert qos[0]["durability"] == "transient_local"
    assert repair_bag(bag_dir).was_complete


def test_a_bag_is_never_written_over(tmp_path):
    write_bag(tmp_path / "bag", n=1)
    with pytest.raises(BagError, match="already exists"):
        BagWriter(tmp_path / "bag")
    (tmp_path / "empty").mkdir()
    BagWriter(tmp_path / "empty").close()  # an empty folder is fine


def test_an_unknown_type_is_refused(tmp_path):
    w = BagWriter(tmp_path / "bag")
    with pytest.raises(KeyError, match="no message type 'foo_msgs/msg/Bar'"):
        w.add_topic("/x", "foo_msgs/msg/Bar")


@pytest.mark.parametrize("content,error", [
    (b"", "not an MCAP file"),
    (b"PK\x03\x04 a zip, not a bag", "not an MCAP file"),
    (b"\x89MCAP0\r\n" + b"\x01" + (2**62).to_bytes(8, "little"), "cut short inside a record"),
])
def test_files_that_are_not_bags_or_hardly_begun(tmp_path, content, error):
    path = tmp_path / "x.mcap"
    path.write_bytes(content)
    if error.startswith("not"):
        with pytest.raises(BagError, match=error):
            open_bag(path)
    else:
        bag = open_bag(path)
        assert not bag.complete and error in bag.problem and bag.message_count == 0


def test_a_corrupt_chunk_in_the_middle_is_skipped_and_named_and_the_rest_read(tmp_path):
    bag_dir = tmp_path / "bag"
    w = BagWriter(bag_dir, compression="none")
    topic = w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    for i in range(3):
        w.write(topic, m.serialize(joints(i)), T0 + i)
        w.flush()
    w.close()
    data = bytearray((bag_dir / "bag_0.mcap").read_bytes())
    names = [i for i in range(len(data)) if data.startswith(b"\x02\x00\x00\x00a\x00", i)]
    data[names[1] + 4] ^= 0xFF  # the second message's name list ("a"), inside chunk 1
    (bag_dir / "bag_0.mcap").write_bytes(bytes(data))
    bag = open_bag(bag_dir)
    assert bag.complete and bag.problem is None and not bag.whole
    assert [d.what for d in bag.damaged] == ["chunk 1"] and "CRC" in bag.damaged[0].why
    assert bag.damaged[0].messages == 1 and bag.lost_messages == 1
    assert [msg.data for msg in bag.messages] == [bytes(m.serialize(joints(i))) for i in (0, 2)]
    assert "DAMAGED (1 of 3 chunks unreadable, 1 messages lost)" in bag.summary()


@pytest.mark.parametrize("text,error", [
    ("{unclosed", "not valid YAML"),
    ("a: 1", "no rosbag2_bagfile_information"),
    ("rosbag2_bagfile_information: {storage_identifier: sqlite3, relative_file_paths: [x.db3]}", "not mcap"),
])
def test_a_bad_metadata_yaml_is_one_line(tmp_path, text, error):
    bag_dir = tmp_path / "bag"
    write_bag(bag_dir, n=1)
    (bag_dir / "metadata.yaml").write_text(text)
    with pytest.raises(BagError, match=error) as err:
        open_bag(bag_dir)
    assert "\n" not in str(err.value)


def test_a_folder_without_a_bag(tmp_path):
    with pytest.raises(BagError, match="not a rosbag2 MCAP bag"):
        open_bag(tmp_path)
    with pytest.raises(BagError, match="no bag at"):
        open_bag(tmp_path / "nothing")


def test_a_topic_without_messages_is_still_in_the_bag(tmp_path):
    w = BagWriter(tmp_path / "bag")
    w.add_topic("/robot/posture", "sensor_msgs/msg/JointState")
    w.close()
    bag = open_bag(tmp_path / "bag")
    assert bag.complete and bag.counts() == {"/robot/posture": 0}
    assert bag.topics["/robot/posture"].type_name == "sensor_msgs/msg/JointState"


def test_a_bag_where_none_can_be_written_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(BagError, match=r"cannot write a bag at .*file/bag: Not a directory"):
        BagWriter(tmp_path / "file" / "bag")
