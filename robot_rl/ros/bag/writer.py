"""Write a rosbag2 bag with MCAP storage, without ROS: what ``ros2 bag record -s mcap`` writes.

A bag is a folder::

    <bag>/
      metadata.yaml      rosbag2's bag description (version 9): topics, types, QoS, counts
      <bag>_0.mcap       the messages, in MCAP chunks

The MCAP file is what rosbag2's MCAP storage plugin writes: profile ``ros2``, one
schema per type (``ros2msg``, the complete definition, :mod:`robot_rl.ros.bag.schema`),
one channel per topic with message encoding ``cdr`` and the metadata
``offered_qos_profiles`` and ``topic_type_hash`` (RIHS01), messages as encapsulated
CDR (what :func:`robot_rl.ros.messages.serialize`, rclpy's ``serialize_message`` and a
DDS reader give), and at the end a ``rosbag2`` metadata record holding the bag's
metadata as YAML, then the summary (statistics, chunk and message indexes).

**What a crash leaves.** Messages gather in the chunk in progress;
:meth:`BagWriter.flush` (the recorder calls it every ``ros.record.flush_s``, and a
chunk also goes out when it reaches its size) writes that chunk, fsyncs the file and
rewrites ``metadata.yaml`` (durably: temporary file, fsync, rename) with the counts of
every message now on disk. ``metadata.yaml`` exists and is valid from the moment the
bag is opened. Killed at any moment (SIGKILL, power cut), the bag keeps every message
of every chunk flushed before: the file then ends without its summary, possibly inside
a chunk that was being written, and ``metadata.yaml`` counts what the last flush wrote.
``ros2 bag info`` reads that ``metadata.yaml``; ``ros2 bag play`` (rosbag2's MCAP
reader scans a file without a summary) and :mod:`robot_rl.ros.bag.reader` read the file
up to its last whole chunk; ``robot-rl bag repair`` rewrites it whole (summary, indexes,
metadata record) for the readers that need a summary (``rosbags``, the ``mcap``
package's). :meth:`BagWriter.close` finishes the file.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Optional

import yaml

from robot_rl.data.durable import durable_write, fsync_dir
from robot_rl.errors import RobotRLError
from robot_rl.ros.bag.schema import message_class, msg_definition, qos_profile, qos_yaml
from robot_rl.ros.messages import type_hash

METADATA = "metadata.yaml"
VERSION = 9  # rosbag2's metadata version in Jazzy
ROS_DISTRO = "jazzy"  # the distribution whose message definitions and type hashes the bag uses
COMPRESSIONS = ("zstd", "lz4", "none")


class BagError(RobotRLError):
    """A bag cannot be written or read: an existing folder, a file that is not a bag, one cut short."""


@dataclass
class Topic:
    """One recorded topic: its channel in the MCAP file, and what it says in ``metadata.yaml``."""

    name: str
    type_name: str
    channel_id: int
    offered_qos: list[dict[str, Any]]
    type_hash: str
    written: int = 0  # messages handed to the writer
    flushed: int = 0  # of which are on disk (in a flushed chunk)


@dataclass
class _Times:
    first: Optional[int] = None
    last: Optional[int] = None

    def add(self, t: int) -> None:
        self.first = t if self.first is None else min(self.first, t)
        self.last = t if self.last is None else max(self.last, t)


@dataclass
class BagStats:
    """Figures of a bag being written, for a node's status."""

    messages: int = 0
    flushed: int = 0
    flushes: int = 0
    bytes: int = 0
    per_topic: dict[str, int] = field(default_factory=dict)


class BagWriter:
    """Writes one rosbag2 MCAP bag (see the module docstring); not thread-safe, one caller at a time.

    ``path`` is the bag folder: it must not exist, or be empty. ``custom_data`` lands in
    ``metadata.yaml`` (rosbag2's ``custom_data``: strings only).
    """

    def __init__(self, path: str | Path, *, compression: str = "zstd", chunk_size: int = 1 << 20,
                 custom_data: Optional[dict[str, str]] = None, library: str = "robot_rl") -> None:
        try:
            from mcap.writer import CompressionType, Writer
        except ImportError:
            raise BagError("writing a bag needs the 'mcap' package, one of robot_rl's requirements: "
                           "rerun scripts/setup.sh") from None
        if not hasattr(Writer, "flush"):  # the bounded crash loss needs a chunk ended on demand
            raise BagError("writing a bag needs mcap >= 1.6 (Writer.flush): rerun scripts/setup.sh "
                           "(it installs the tested version)")
        if compression not in COMPRESSIONS:
            raise ValueError(f"compression {compression!r} is not one of {', '.join(COMPRESSIONS)}")
        self.path = Path(path)
        if self.path.exists() and (not self.path.is_dir() or any(self.path.iterdir())):
            raise BagError(f"{self.path} already exists: a bag is written into a new (or empty) folder")
        self.file_name = f"{self.path.name}_0.mcap"
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fsync_dir(self.path.parent)
            self._file: BinaryIO = open(self.path / self.file_name, "xb")
        except OSError as err:
            raise BagError(f"cannot write a bag at {self.path}: {err.strerror or err}") from None
        self.custom_data = dict(custom_data or {})
        self.topics: dict[str, Topic] = {}
        self._schemas: dict[str, int] = {}
        self._times = _Times()
        self._flushed_times = _Times()
        self.flushes = 0
        self.closed = False
        kind = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4, "none": CompressionType.NONE}[compression]
        self._mcap = Writer(self._file, chunk_size=chunk_size, compression=kind)
        self._mcap.start(profile="ros2", library=library)
        self._sync()

    # --- topics and messages ------------------------------------------------------------

    def add_topic(self, name: str, type_name: str, offered_qos: Optional[list[dict[str, Any]]] = None) -> Topic:
        """Declare a topic of type ``pkg/msg/Name`` (one of robot_rl's message types)."""
        if name in self.topics:
            raise ValueError(f"topic {name} is already in the bag")
        cls = message_class(type_name)
        schema_id = self._schemas.get(type_name)
        if schema_id is None:
            schema_id = self._mcap.register_schema(type_name, "ros2msg", msg_definition(cls).encode())
            self._schemas[type_name] = schema_id
        offered = [qos_profile(10)] if offered_qos is None else offered_qos
        digest = type_hash(cls)
        channel_id = self._mcap.register_channel(name, "cdr", schema_id, {
            "offered_qos_profiles": qos_yaml(offered), "topic_type_hash": digest})
        topic = Topic(name, type_name, channel_id, offered, digest)
        self.topics[name] = topic
        return topic

    def write(self, topic: Topic, data: bytes | bytearray | memoryview, log_time_ns: Optional[int] = None,
              publish_time_ns: Optional[int] = None) -> None:
        """Add one message: encapsulated CDR bytes, received at ``log_time_ns`` (default: now)."""
        if self.closed:
            raise BagError(f"{self.path}: the bag is closed")
        t = time.time_ns() if log_time_ns is None else int(log_time_ns)
        self._mcap.add_message(topic.channel_id, log_time=t, data=bytes(data),
                               publish_time=t if publish_time_ns is None else int(publish_time_ns))
        topic.written += 1
        self._times.add(t)

    # --- durability -----------------------------------------------------------------------

    def flush(self) -> None:
        """Write the chunk in progress, fsync the file, and rewrite ``metadata.yaml`` to match."""
        if self.closed:
            return
        self._mcap.flush()
        self._sync()
        for topic in self.topics.values():
            topic.flushed = topic.written
        self._flushed_times = _Times(self._times.first, self._times.last)
        self.flushes += 1
        self.write_metadata()

    def close(self) -> None:
        """Finish the file (the ``rosbag2`` metadata record, summary, footer) and ``metadata.yaml``."""
        if self.closed:
            return
        self._mcap.flush()
        for topic in self.topics.values():
            topic.flushed = topic.written
        self._flushed_times = _Times(self._times.first, self._times.last)
        self._mcap.add_metadata("rosbag2", {"serialized_metadata": yaml.safe_dump(
            self.metadata(), sort_keys=False, default_flow_style=False)})
        self._mcap.finish()
        self._sync()
        self._file.close()
        self.closed = True
        self.write_metadata()

    def _sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    # --- metadata.yaml ------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """rosbag2's ``BagMetadata`` (version 9) of what is on disk now."""
        return bag_metadata(self.file_name, [(t.name, t.type_name, t.offered_qos, t.type_hash, t.flushed)
                                             for t in self.topics.values()],
                            self._flushed_times.first, self._flushed_times.last, self.custom_data)

    def write_metadata(self) -> None:
        text = yaml.safe_dump({"rosbag2_bagfile_information": self.metadata()}, sort_keys=False,
                              default_flow_style=False)
        durable_write(self.path / METADATA, text.encode())

    def stats(self) -> BagStats:
        size = self._file.tell() if not self.closed else (self.path / self.file_name).stat().st_size
        return BagStats(messages=sum(t.written for t in self.topics.values()),
                        flushed=sum(t.flushed for t in self.topics.values()), flushes=self.flushes, bytes=size,
                        per_topic={t.name: t.written for t in self.topics.values()})

    def __enter__(self) -> "BagWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def bag_metadata(file_name: str, topics: list[tuple[str, str, list[dict[str, Any]], str, int]],
                 first_ns: Optional[int], last_ns: Optional[int], custom_data: dict[str, str]) -> dict[str, Any]:
    """The ``rosbag2_bagfile_information`` mapping for one MCAP file and its topics
    ``(name, type, offered QoS profiles, type hash, message count)``."""
    start = first_ns or 0
    duration = (last_ns - first_ns) if first_ns is not None and last_ns is not None else 0
    count = sum(t[4] for t in topics)
    return {
        "version": VERSION,
        "storage_identifier": "mcap",
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": count,
        "topics_with_message_count": [
            {"topic_metadata": {"name": name, "type": type_name, "serialization_format": "cdr",
                                "offered_qos_profiles": qos, "type_description_hash": digest},
             "message_count": n}
            for name, type_name, qos, digest, n in topics],
        "compression_format": "",
        "compression_mode": "",
        "relative_file_paths": [file_name],
        "files": [{"path": file_name, "starting_time": {"nanoseconds_since_epoch": start},
                   "duration": {"nanoseconds": duration}, "message_count": count}],
        "custom_data": dict(custom_data),
        "ros_distro": ROS_DISTRO,
    }
