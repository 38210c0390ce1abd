"""Read a rosbag2 MCAP bag, also one its writer never finished (a crash, a file cut short).

:func:`open_bag` takes a bag folder (``metadata.yaml`` + ``*.mcap``) or one ``.mcap``
file and reads the MCAP file from its start, record by record: a whole file has its
footer and closing magic; a file cut short (the recorder was killed, the disk filled,
someone truncated it) ends inside or after some record, and everything before the
first incomplete (or corrupt) record is still read. :class:`Bag` says which it was
(:attr:`Bag.complete`, :attr:`Bag.problem`: what is wrong, at which byte) and how much
was readable. A file that is not MCAP at all, or a folder with no MCAP file, is a
one-line :class:`~robot_rl.ros.bag.writer.BagError`.

:func:`repair_bag` rewrites a cut-short bag whole: its readable messages into a new
MCAP file with summary and indexes, and a ``metadata.yaml`` that counts them, swapped in
durably; the cut-off tail is dropped, and the report says how much.

Reading never needs the summary section, so it never trusts it either: counts come
from the messages themselves.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Optional

import yaml

from robot_rl.data.durable import durable_write, fsync_dir
from robot_rl.ros.bag.writer import METADATA, BagError, bag_metadata

MAGIC = b"\x89MCAP0\r\n"
_OP_HEADER, _OP_FOOTER, _OP_SCHEMA, _OP_CHANNEL, _OP_MESSAGE, _OP_CHUNK = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
_OP_METADATA, _OP_DATA_END = 0x0C, 0x0F
_U64 = struct.Struct("<Q")


@dataclass
class BagTopic:
    """A channel of the bag: topic, type, its schema and QoS text, and the messages read."""

    name: str
    type_name: str
    encoding: str
    schema_encoding: str
    schema: str
    offered_qos: str
    type_hash: str
    count: int = 0


@dataclass
class BagMessage:
    topic: str
    log_time: int
    publish_time: int
    data: bytes


@dataclass
class Bag:
    """What :func:`open_bag` read: the file, its topics, whether it is whole, and its messages."""

    path: Path  # the bag folder (or the .mcap file given alone)
    file: Path
    profile: str
    library: str
    complete: bool  # footer and closing magic read
    problem: Optional[str]  # why not complete (cut short / corrupt at byte N), else None
    readable_bytes: int  # the file's bytes up to the end of its last whole record
    file_bytes: int
    metadata_yaml: Optional[dict[str, Any]]  # metadata.yaml's rosbag2_bagfile_information, if there is one
    rosbag2_record: Optional[str]  # the serialized_metadata of the file's 'rosbag2' metadata record
    topics: dict[str, BagTopic] = field(default_factory=dict)
    messages: list[BagMessage] = field(default_factory=list)  # in log-time order (empty unless kept)
    first_time: Optional[int] = None  # log times (ns) of the earliest and latest message read
    last_time: Optional[int] = None

    @property
    def message_count(self) -> int:
        return sum(t.count for t in self.topics.values())

    def counts(self) -> dict[str, int]:
        return {name: t.count for name, t in self.topics.items()}

    def of(self, topic: str) -> list[BagMessage]:
        return [m for m in self.messages if m.topic == topic]

    def summary(self) -> str:
        """One line: whole or cut short, and how much is readable."""
        state = "complete" if self.complete else f"NOT complete: {self.problem}"
        return (f"{self.file}: {state}; {self.message_count} messages readable on {len(self.topics)} topics "
                f"({self.readable_bytes} of {self.file_bytes} bytes)")


def find_mcap(path: str | Path) -> tuple[Path, Path]:
    """``(bag folder or file, the .mcap file)`` for a bag folder or an ``.mcap`` file."""
    path = Path(path)
    if path.is_file():
        return path, path
    if not path.is_dir():
        raise BagError(f"no bag at {path}: not a folder or an .mcap file")
    meta = _read_metadata_yaml(path)
    if meta is not None:
        files = meta.get("relative_file_paths") or []
        if meta.get("storage_identifier") != "mcap":
            raise BagError(f"{path}: {METADATA} says storage '{meta.get('storage_identifier')}', not mcap")
        if len(files) != 1:
            raise BagError(f"{path}: {METADATA} lists {len(files)} files; robot_rl reads single-file bags")
        return path, path / str(files[0])
    found = sorted(path.glob("*.mcap"))
    if len(found) != 1:
        raise BagError(f"{path} is not a rosbag2 MCAP bag: no {METADATA} and {len(found)} .mcap files")
    return path, found[0]


def _read_metadata_yaml(folder: Path) -> Optional[dict[str, Any]]:
    meta = folder / METADATA
    if not meta.is_file():
        return None
    try:
        doc = yaml.safe_load(meta.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise BagError(f"{meta}: not valid YAML ({str(err).splitlines()[0]})") from None
    info = doc.get("rosbag2_bagfile_information") if isinstance(doc, dict) else None
    if not isinstance(info, dict):
        raise BagError(f"{meta}: no rosbag2_bagfile_information mapping: not a rosbag2 bag")
    return info


OnMessage = Callable[[BagTopic, int, int, bytes], None]


def open_bag(path: str | Path, keep_messages: bool = True, on_message: Optional[OnMessage] = None) -> Bag:
    """Read the bag at ``path`` (see the module docstring); BagError if it is not an MCAP bag.

    ``keep_messages=False`` counts the messages without holding them (a long session's
    bag may not fit in memory); ``on_message(topic, log_time, publish_time, data)`` sees
    each one in file order either way.
    """
    folder, mcap = find_mcap(path)
    if not mcap.is_file():
        raise BagError(f"{folder}: its MCAP file {mcap.name} is missing")
    meta = _read_metadata_yaml(folder) if folder.is_dir() else None
    with open(mcap, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return _Scan(f, size, folder, mcap, meta, keep_messages, on_message).run()


class _Scan:
    """One pass over an MCAP file: top-level records framed by their lengths, chunks opened."""

    def __init__(self, f: BinaryIO, size: int, folder: Path, mcap: Path, meta: Optional[dict[str, Any]],
                 keep: bool, on_message: Optional[OnMessage]) -> None:
        self.f, self.size, self.mcap, self.keep, self.on_message = f, size, mcap, keep, on_message
        self.bag = Bag(folder, mcap, "", "", False, None, 0, size, meta, None)
        self.schemas: dict[int, tuple[str, str, str]] = {}
        self.channels: dict[int, BagTopic] = {}

    def run(self) -> Bag:
        head = self.f.read(len(MAGIC))
        if head != MAGIC:
            raise BagError(f"{self.mcap}: not an MCAP file (it does not start with the MCAP magic bytes)")
        pos = len(MAGIC)
        self.bag.readable_bytes = pos
        in_summary = False
        while True:
            if self.size - pos < 9:
                return self._cut(pos, "cut short" if pos < self.size else "cut short (no footer)")
            opcode, length = struct.unpack("<BQ", self.f.read(9))
            if length > self.size - pos - 9:
                return self._cut(pos, f"cut short inside a record ({length} bytes long, "
                                      f"{self.size - pos - 9} left)")
            body = self.f.read(length)
            try:
                if opcode == _OP_FOOTER:
                    if self.f.read(len(MAGIC)) != MAGIC:
                        return self._cut(pos, "cut short after its footer (no closing magic)")
                    self.bag.readable_bytes = self.size
                    self.bag.complete = True
                    return self._done()
                if opcode == _OP_DATA_END:
                    in_summary = True
                elif not in_summary or opcode in (_OP_SCHEMA, _OP_CHANNEL):  # the summary repeats every
                    self._record(opcode, body, top_level=True)  # channel, also those no chunk ever held
            except _Corrupt as err:
                return self._cut(pos, str(err))
            except (struct.error, UnicodeDecodeError, ValueError, IndexError) as err:
                return self._cut(pos, f"a malformed record (opcode 0x{opcode:02x}: {err})")
            pos += 9 + length
            self.bag.readable_bytes = pos

    def _record(self, opcode: int, body: bytes, top_level: bool) -> None:
        if opcode == _OP_HEADER and top_level:
            profile, rest = _string(body, 0)
            self.bag.profile, self.bag.library = profile, _string(body, rest)[0]
        elif opcode == _OP_SCHEMA:
            (sid,) = struct.unpack_from("<H", body, 0)
            name, at = _string(body, 2)
            encoding, at = _string(body, at)
            data, _ = _bytes(body, at, 4)
            self.schemas[sid] = (name, encoding, data.decode("utf-8", errors="replace"))
        elif opcode == _OP_CHANNEL:
            cid, sid = struct.unpack_from("<HH", body, 0)
            topic, at = _string(body, 4)
            encoding, at = _string(body, at)
            meta = _string_map(body, at)
            schema = self.schemas.get(sid, ("", "", ""))
            if cid not in self.channels:
                self.channels[cid] = BagTopic(topic, schema[0], encoding, schema[1], schema[2],
                                              meta.get("offered_qos_profiles", ""), meta.get("topic_type_hash", ""))
                self.bag.topics.setdefault(topic, self.channels[cid])
        elif opcode == _OP_MESSAGE:
            cid, _seq, log_time, publish_time = struct.unpack_from("<HIQQ", body, 0)
            channel = self.channels.get(cid)
            if channel is None:
                raise _Corrupt(f"a message on channel {cid}, which no channel record declared")
            channel.count += 1
            bag = self.bag
            bag.first_time = log_time if bag.first_time is None else min(bag.first_time, log_time)
            bag.last_time = log_time if bag.last_time is None else max(bag.last_time, log_time)
            if self.on_message is not None:
                self.on_message(channel, log_time, publish_time, body[22:])
            if self.keep:
                self.bag.messages.append(BagMessage(channel.name, log_time, publish_time, body[22:]))
        elif opcode == _OP_CHUNK and top_level:
            for inner_op, inner in _chunk_records(body):
                self._record(inner_op, inner, top_level=False)
        elif opcode == _OP_METADATA and top_level:
            name, at = _string(body, 0)
            if name == "rosbag2":
                self.bag.rosbag2_record = _string_map(body, at).get("serialized_metadata")
        # message indexes, chunk indexes, attachments, statistics: derived data, not needed

    def _cut(self, pos: int, why: str) -> Bag:
        self.bag.problem = f"{why} at byte {pos}"
        return self._done()

    def _done(self) -> Bag:
        self.bag.messages.sort(key=lambda m: m.log_time)  # stable: per-topic order is kept
        return self.bag


class _Corrupt(Exception):
    pass


def _string(body: bytes, at: int) -> tuple[str, int]:
    data, at = _bytes(body, at, 4)
    return data.decode("utf-8"), at


def _bytes(body: bytes, at: int, width: int) -> tuple[bytes, int]:
    (n,) = struct.unpack_from("<I" if width == 4 else "<Q", body, at)
    at += width
    if at + n > len(body):
        raise ValueError(f"a field of {n} bytes runs past the record's end")
    return body[at:at + n], at + n


def _string_map(body: bytes, at: int) -> dict[str, str]:
    data, _ = _bytes(body, at, 4)
    out, i = {}, 0
    while i < len(data):
        key, i = _string(data, i)
        value, i = _string(data, i)
        out[key] = value
    return out


def _chunk_records(body: bytes) -> Iterator[tuple[int, bytes]]:
    """The records inside a chunk, decompressed and CRC-checked."""
    _start, _end, uncompressed_size, crc = struct.unpack_from("<QQQI", body, 0)
    compression, at = _string(body, 28)
    data, _ = _bytes(body, at, 8)
    try:
        if compression == "zstd":
            import zstandard

            data = zstandard.ZstdDecompressor().decompress(data, max_output_size=uncompressed_size)
        elif compression == "lz4":
            import lz4.frame

            data = lz4.frame.decompress(data)
        elif compression:
            raise _Corrupt(f"a chunk compressed with '{compression}', which robot_rl cannot read")
    except _Corrupt:
        raise
    except Exception as err:  # zstandard.ZstdError, RuntimeError from lz4: a damaged chunk
        raise _Corrupt(f"a chunk that does not decompress ({type(err).__name__}: {err})") from None
    if len(data) != uncompressed_size or (crc and zlib.crc32(data) != crc):
        raise _Corrupt("a chunk whose size or CRC does not match its contents")
    pos = 0
    while pos < len(data):
        if len(data) - pos < 9:
            raise _Corrupt("a chunk whose last record is cut")
        opcode, length = struct.unpack_from("<BQ", data, pos)
        if length > len(data) - pos - 9:
            raise _Corrupt("a chunk whose last record is cut")
        yield opcode, data[pos + 9:pos + 9 + length]
        pos += 9 + length


# --- repair -----------------------------------------------------------------------------------


@dataclass
class RepairReport:
    bag: Path
    kept: int
    dropped_bytes: int
    was_complete: bool

    def line(self) -> str:
        if self.was_complete:
            return f"{self.bag}: already complete ({self.kept} messages); nothing to repair"
        tail = (f"dropped the last {self.dropped_bytes} bytes (an unfinished record)" if self.dropped_bytes
                else "nothing was cut off, only the summary was missing")
        return f"{self.bag}: repaired: kept {self.kept} messages; {tail}"


def repair_bag(path: str | Path) -> RepairReport:
    """Rewrite a cut-short bag whole (see the module docstring); a complete one is left alone.

    Two passes over the file, holding no messages: one to count, one to copy.
    """
    from mcap.writer import CompressionType, Writer

    bag = open_bag(path, keep_messages=False)
    if bag.complete:
        return RepairReport(bag.path, bag.message_count, 0, True)
    tmp = bag.file.with_name(bag.file.name + ".repair.tmp")
    meta = _metadata_of(bag)
    with open(tmp, "wb") as f:
        writer = Writer(f, compression=CompressionType.ZSTD)
        writer.start(profile=bag.profile or "ros2", library=bag.library or "robot_rl")
        schema_ids: dict[str, int] = {}
        channel_ids: dict[str, int] = {}
        for topic in bag.topics.values():
            if topic.type_name not in schema_ids:
                schema_ids[topic.type_name] = writer.register_schema(topic.type_name, topic.schema_encoding,
                                                                     topic.schema.encode())
            channel_ids[topic.name] = writer.register_channel(topic.name, topic.encoding, schema_ids[topic.type_name],
                                                              {"offered_qos_profiles": topic.offered_qos,
                                                               "topic_type_hash": topic.type_hash})

        def copy(topic: BagTopic, log_time: int, publish_time: int, data: bytes) -> None:
            writer.add_message(channel_ids[topic.name], log_time=log_time, data=data, publish_time=publish_time)

        again = open_bag(bag.file, keep_messages=False, on_message=copy)
        if again.message_count != bag.message_count:
            raise BagError(f"{bag.file} changed while it was being repaired")
        writer.flush()
        writer.add_metadata("rosbag2", {"serialized_metadata": yaml.safe_dump(meta, sort_keys=False)})
        writer.finish()
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, bag.file)
    fsync_dir(bag.file.parent)
    if bag.path.is_dir():
        durable_write(bag.path / METADATA, yaml.safe_dump({"rosbag2_bagfile_information": meta},
                                                           sort_keys=False).encode())
    return RepairReport(bag.path, bag.message_count, bag.file_bytes - bag.readable_bytes, False)


def _metadata_of(bag: Bag) -> dict[str, Any]:
    """``metadata.yaml`` for what ``bag`` holds, keeping the QoS and custom data it had."""
    old = bag.metadata_yaml or {}
    qos_by_topic = {t.get("topic_metadata", {}).get("name"): t.get("topic_metadata", {}).get("offered_qos_profiles")
                    for t in old.get("topics_with_message_count") or [] if isinstance(t, dict)}
    topics = []
    for t in bag.topics.values():
        qos = qos_by_topic.get(t.name)
        if not isinstance(qos, list):
            qos = yaml.safe_load(t.offered_qos) if t.offered_qos else []
        topics.append((t.name, t.type_name, qos or [], t.type_hash, t.count))
    custom = old.get("custom_data") if isinstance(old.get("custom_data"), dict) else {}
    return bag_metadata(bag.file.name, topics, bag.first_time, bag.last_time,
                        {str(k): str(v) for k, v in custom.items()})


__all__ = ["Bag", "BagMessage", "BagTopic", "RepairReport", "find_mcap", "open_bag", "repair_bag"]
