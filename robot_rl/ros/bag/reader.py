"""Read a rosbag2 MCAP bag, also one its writer never finished, or one with damaged parts.

:func:`open_bag` takes a bag folder (``metadata.yaml`` + ``*.mcap``) or one ``.mcap``
file and reads the MCAP file from its start, record by record and chunk by chunk (never
the whole file in memory). What it finds is one of:

* **whole**: footer and closing magic read, every chunk checked (:attr:`Bag.complete`,
  no :attr:`Bag.damaged`);
* **damaged**: the file has its full length (it ends in a footer or the closing magic),
  but a chunk in it fails its CRC, does not decompress, or a record cannot be framed:
  that part is skipped, counted and named (:class:`Damage`: chunk index, byte offset,
  the messages its index says it held), and reading goes on at the next whole chunk;
* **cut short** (:attr:`Bag.problem`): the file ends before its footer (a recorder
  killed, a full disk, a truncated copy); everything before the last incomplete record
  is read. Only a file that really ends early is called cut short.

Nothing in a bag is trusted before it is checked (:mod:`robot_rl.ros.bag.guard`): the
files ``metadata.yaml`` names must lie inside the bag folder, ``metadata.yaml`` is read
through the guarded YAML reader, and a chunk's claimed uncompressed size is checked
against :data:`~robot_rl.ros.bag.guard.MAX_CHUNK_BYTES` before it is decompressed (and
decompression stops one byte past the claim). A file that is not MCAP at all, a folder
with no MCAP file, a path outside the folder, a chunk over the limit: one-line
:class:`~robot_rl.ros.bag.writer.BagError` (exit 2).

:func:`repair_bag` rewrites a cut-short or damaged bag whole: every message of every
intact chunk into a new MCAP file with summary and indexes, and a ``metadata.yaml``
that counts them and says what was dropped (``custom_data``: ``robot_rl_repair``). The
original file is kept first, beside it, as ``<name>.orig`` (a hard link, else a durable
copy), and the new file is swapped in durably: a repair never loses a byte it could not
read either.

Reading never needs the summary section, so it never trusts it either: counts come
from the messages themselves (the summary's channels are used only to name the
messages of a chunk whose own channel records were in a damaged chunk).
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Optional

import yaml

from robot_rl.config.yaml_text import parse_yaml
from robot_rl.data.durable import durable_rename, durable_write, durable_writer, fsync_dir
from robot_rl.errors import ConfigError
from robot_rl.ros.bag.guard import MAX_CHUNK_BYTES, bag_files, fsync_file, inflate, inside, mib, read_metadata
from robot_rl.ros.bag.writer import METADATA, BagError, bag_metadata

MAGIC = b"\x89MCAP0\r\n"
_OP_HEADER, _OP_FOOTER, _OP_SCHEMA, _OP_CHANNEL, _OP_MESSAGE, _OP_CHUNK = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
_OP_MESSAGE_INDEX, _OP_ATTACHMENT, _OP_METADATA, _OP_DATA_END = 0x07, 0x09, 0x0C, 0x0F
_SUMMARY_OPS = range(0x03, 0x0F)  # schema, channel, chunk/attachment/metadata indexes, statistics, offsets
_FOOTER_BYTES = 9 + 20  # opcode, length, summary start, summary offset start, CRC
_DATA_END = bytes([_OP_DATA_END]) + struct.pack("<Q", 4)
_COMPRESSIONS = ("", "lz4", "zstd")
_BLOCK = 1 << 20
REPAIR_KEY = "robot_rl_repair"  # the custom_data entry of a repaired bag: what the repair dropped


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
class Damage:
    """A part of a full-length file that the reader skipped, and why."""

    what: str  # "chunk 2", "a record", "the summary", "the footer"
    offset: int  # where it starts in the file
    length: int  # bytes skipped
    why: str
    messages: Optional[int] = None  # messages it held, by the message indexes after it (None: not known)

    def line(self) -> str:
        held = f", {self.messages} messages" if self.messages is not None else ""
        return f"{self.what} at byte {self.offset} ({self.length} bytes{held}): {self.why}"


@dataclass
class Bag:
    """What :func:`open_bag` read: the file, its topics, whether it is whole, and its messages."""

    path: Path  # the bag folder (or the .mcap file given alone)
    file: Path
    profile: str
    library: str
    complete: bool  # footer (or closing magic) read where the file ends
    problem: Optional[str]  # why not complete (cut short at byte N), else None
    readable_bytes: int  # the file's bytes up to the end of its last whole record
    file_bytes: int
    metadata_yaml: Optional[dict[str, Any]]  # metadata.yaml's rosbag2_bagfile_information, if there is one
    rosbag2_record: Optional[str]  # the serialized_metadata of the file's 'rosbag2' metadata record
    topics: dict[str, BagTopic] = field(default_factory=dict)
    messages: list[BagMessage] = field(default_factory=list)  # in log-time order (empty unless kept)
    first_time: Optional[int] = None  # log times (ns) of the earliest and latest message read
    last_time: Optional[int] = None
    damaged: list[Damage] = field(default_factory=list)  # parts skipped (see the module docstring)
    chunks: int = 0  # chunk records met (whole or damaged)

    @property
    def message_count(self) -> int:
        return sum(t.count for t in self.topics.values())

    @property
    def whole(self) -> bool:
        """Complete and nothing skipped: nothing to repair."""
        return self.complete and not self.damaged

    @property
    def damaged_chunks(self) -> list[Damage]:
        return [d for d in self.damaged if d.what.startswith("chunk")]

    @property
    def lost_messages(self) -> Optional[int]:
        """Messages the damaged chunks held, where their indexes say (None: some unknown)."""
        counts = [d.messages for d in self.damaged_chunks]
        return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)

    def counts(self) -> dict[str, int]:
        return {name: t.count for name, t in self.topics.items()}

    def of(self, topic: str) -> list[BagMessage]:
        return [m for m in self.messages if m.topic == topic]

    def damage_line(self) -> str:
        """The damaged parts in one line (empty when there are none)."""
        if not self.damaged:
            return ""
        shown = "; ".join(d.line() for d in self.damaged[:4])
        more = f"; and {len(self.damaged) - 4} more" if len(self.damaged) > 4 else ""
        return f"{len(self.damaged)} damaged part(s) skipped: {shown}{more}"

    def summary(self) -> str:
        """One line: whole, damaged or cut short, and how much is readable."""
        if not self.complete:
            state = f"NOT complete: {self.problem}"
        elif self.damaged:
            lost = self.lost_messages
            state = (f"complete, but DAMAGED ({len(self.damaged_chunks)} of {self.chunks} chunks unreadable"
                     + (f", {lost} messages lost" if lost is not None and self.damaged_chunks else "") + ")")
        else:
            state = "complete"
        return (f"{self.file}: {state}; {self.message_count} messages readable on {len(self.topics)} topics "
                f"({self.readable_bytes} of {self.file_bytes} bytes)")


def find_mcap(path: str | Path) -> tuple[Path, Path]:
    """``(bag folder or file, the .mcap file)`` for a bag folder or an ``.mcap`` file.

    Every file the folder's ``metadata.yaml`` names is checked to lie inside the folder
    before anything is opened (:func:`robot_rl.ros.bag.guard.bag_files`).
    """
    path = Path(path)
    if path.is_file():
        return path, path
    if not path.is_dir():
        raise BagError(f"no bag at {path}: not a folder or an .mcap file")
    meta = read_metadata(path)
    if meta is not None:
        if meta.get("storage_identifier") != "mcap":
            raise BagError(f"{path}: {METADATA} says storage '{meta.get('storage_identifier')}', not mcap")
        files = bag_files(path, meta)
        if len(files) != 1:
            raise BagError(f"{path}: {METADATA} lists {len(files)} files; robot_rl reads single-file bags")
        return path, files[0]
    found = sorted(path.glob("*.mcap"))
    if len(found) != 1:
        raise BagError(f"{path} is not a rosbag2 MCAP bag: no {METADATA} and {len(found)} .mcap files")
    return path, inside(path, path, found[0], found[0].name)


OnMessage = Callable[[BagTopic, int, int, bytes], None]


def open_bag(path: str | Path, keep_messages: bool = True, on_message: Optional[OnMessage] = None,
             max_chunk_bytes: int = MAX_CHUNK_BYTES) -> Bag:
    """Read the bag at ``path`` (see the module docstring); BagError if it is not an MCAP bag.

    ``keep_messages=False`` counts the messages without holding them (a long session's
    bag may not fit in memory); ``on_message(topic, log_time, publish_time, data)`` sees
    each one in file order either way, a chunk's messages only once the whole chunk checked.
    """
    folder, mcap = find_mcap(path)
    if not mcap.is_file():
        raise BagError(f"{folder}: its MCAP file {mcap.name} is missing")
    meta = read_metadata(folder) if folder.is_dir() else None
    with open(mcap, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return _Scan(f, size, folder, mcap, meta, keep_messages, on_message, max_chunk_bytes).run()


class _Damaged(Exception):
    """A record or chunk that cannot be used; ``resync``: its length cannot be trusted either."""

    def __init__(self, why: str, resync: bool = False, what: str = "a record") -> None:
        super().__init__(why)
        self.resync, self.what = resync, what


class _Scan:
    """One pass over an MCAP file: top-level records framed by their lengths, chunks opened one at a time."""

    def __init__(self, f: BinaryIO, size: int, folder: Path, mcap: Path, meta: Optional[dict[str, Any]],
                 keep: bool, on_message: Optional[OnMessage], max_chunk: int) -> None:
        self.f, self.size, self.mcap, self.keep, self.on_message = f, size, mcap, keep, on_message
        self.max_chunk = max_chunk
        self.bag = Bag(folder, mcap, "", "", False, None, 0, size, meta, None)
        self.schemas: dict[int, tuple[str, str, str]] = {}
        self.channels: dict[int, BagTopic] = {}
        self._summary_channels: Optional[dict[int, BagTopic]] = None
        self.footer_at = size - len(MAGIC) - _FOOTER_BYTES
        self.full_length = self._ends_in_footer()
        self._last_damage: Optional[Damage] = None  # a damaged chunk whose message indexes follow

    # --- framing -----------------------------------------------------------------------------

    def _peek(self, at: int, n: int) -> bytes:
        self.f.seek(at)
        return self.f.read(n)

    def _ends_in_footer(self) -> bool:
        """Whether the file has its full length: it ends in a footer record or in the closing magic.

        One damaged byte cannot break both, so a whole-length file with a damaged byte is never
        taken for one cut short.
        """
        if self.footer_at < len(MAGIC):
            return False
        tail = self._peek(self.footer_at, _FOOTER_BYTES + len(MAGIC))
        return tail[-len(MAGIC):] == MAGIC or tail[:9] == bytes([_OP_FOOTER]) + struct.pack("<Q", 20)

    def run(self) -> Bag:
        if self._peek(0, len(MAGIC)) != MAGIC:
            raise BagError(f"{self.mcap}: not an MCAP file (it does not start with the MCAP magic bytes)")
        pos = len(MAGIC)
        self.bag.readable_bytes = pos
        in_summary = False
        end_of_data = self.footer_at if self.full_length else self.size
        while True:
            if self.full_length and pos >= self.footer_at:
                return self._footer(pos)
            if end_of_data - pos < 9:
                return self._cut(pos, "cut short" if pos < self.size else "cut short (no footer)")
            opcode, length = struct.unpack("<BQ", self._peek(pos, 9))
            nxt = pos + 9 + length
            try:
                if nxt > end_of_data:
                    raise _Damaged(f"a record (opcode 0x{opcode:02x}) claims {length} bytes; "
                                   f"{end_of_data - pos - 9} are left", resync=True)
                if opcode == _OP_FOOTER and not self.full_length:
                    if self._peek(nxt, len(MAGIC)) != MAGIC:
                        return self._cut(pos, "cut short after its footer (no closing magic)")
                    self.bag.readable_bytes = self.size
                    self.bag.complete = True
                    return self._done()
                if in_summary:
                    if opcode not in _SUMMARY_OPS:
                        raise _Damaged(f"a record of opcode 0x{opcode:02x} in the summary", resync=True)
                    if opcode in (_OP_SCHEMA, _OP_CHANNEL):  # the summary repeats every channel,
                        self._record(opcode, self._body(pos, length), top_level=True)  # also empty ones
                elif opcode == _OP_DATA_END:
                    in_summary = True
                    if length != 4:
                        raise _Damaged("a data-end record of the wrong length", resync=True)
                else:
                    self._data_record(pos, opcode, length)
            except _Damaged as err:
                if in_summary:
                    # derived data only (indexes, statistics): note it, repair rewrites it
                    self._damage("the summary", pos, end_of_data - pos, str(err))
                    if not self.full_length:
                        return self._cut(pos, f"cut short in its summary ({err})")
                    pos = self.footer_at
                    continue
                if not err.resync:
                    pos = nxt
                    self.bag.readable_bytes = pos
                    continue
                found = self._resync(pos + 1, end_of_data)
                if found is None and not self.full_length:
                    return self._cut(pos, f"cut short inside a record ({err})")
                target = self.footer_at if found is None else found
                self._damage(err.what, pos, target - pos, str(err))
                self._last_damage = None
                pos = target
                self.bag.readable_bytes = pos
                continue
            except (struct.error, UnicodeDecodeError, ValueError, IndexError) as err:
                if in_summary:
                    self._damage("the summary", pos, length, f"a malformed record: {err}")
                else:
                    self._damage("a record", pos, 9 + length, f"a malformed record (opcode 0x{opcode:02x}: {err})")
            pos = nxt
            self.bag.readable_bytes = pos

    def _body(self, pos: int, length: int) -> bytes:
        if length > self.max_chunk:
            raise BagError(f"{self.mcap}: a record at byte {pos} holds {mib(length)}, more than the "
                           f"{mib(self.max_chunk)} robot_rl reads at once; refused")
        return self._peek(pos + 9, length)

    def _data_record(self, pos: int, opcode: int, length: int) -> None:
        """One record of the data section; _Damaged when it does not hold together."""
        if opcode == _OP_CHUNK:
            self._chunk(pos, length)
            return
        if opcode == _OP_MESSAGE_INDEX:
            self._message_index(pos, length)
            return
        self._last_damage = None
        if opcode == _OP_ATTACHMENT:
            self._attachment(pos, length)
        elif opcode in (_OP_HEADER, _OP_SCHEMA, _OP_CHANNEL, _OP_MESSAGE, _OP_METADATA):
            self._record(opcode, self._body(pos, length), top_level=True)
        else:  # indexes, statistics and offsets belong to the summary: here they are garbage
            raise _Damaged(f"a record of opcode 0x{opcode:02x}, which the data section does not hold", resync=True)

    def _damage(self, what: str, offset: int, length: int, why: str) -> Damage:
        damage = Damage(what, offset, length, why)
        self.bag.damaged.append(damage)
        return damage

    def _resync(self, start: int, limit: int) -> Optional[int]:
        """The next offset in ``[start, limit)`` where a whole-looking chunk or the data end starts."""
        at = start
        while at < limit:
            buf = self._peek(at, min(_BLOCK, limit - at))
            found = []
            i = buf.find(b"\x06")
            while i >= 0 and not found:
                if self._looks_like_chunk(at + i):
                    found.append(at + i)
                i = buf.find(b"\x06", i + 1)
            j = buf.find(_DATA_END)
            while j >= 0:
                if self._looks_like_data_end(at + j, limit):
                    found.append(at + j)
                    break
                j = buf.find(_DATA_END, j + 1)
            if found:
                return min(found)
            at += len(buf) if at + len(buf) >= limit else len(buf) - len(_DATA_END)  # a pattern across blocks
        return None

    def _looks_like_data_end(self, at: int, limit: int) -> bool:
        """A data-end record at ``at``, followed by a summary record or the footer."""
        after = at + 13
        if after > limit:
            return False
        if after == limit:
            return True
        follow = self._peek(after, 1)
        return bool(follow) and (follow[0] in _SUMMARY_OPS or follow[0] == _OP_FOOTER)

    def _looks_like_chunk(self, at: int) -> bool:
        """A chunk record's framing holds together at ``at``: its lengths agree with each other."""
        head = self._peek(at, 9 + 32 + 4)
        if len(head) < 45 or head[0] != _OP_CHUNK:
            return False
        (length,) = struct.unpack_from("<Q", head, 1)
        (clen,) = struct.unpack_from("<I", head, 9 + 28)
        if clen > 4 or at + 9 + length > (self.footer_at if self.full_length else self.size):
            return False
        rest = self._peek(at + 9 + 32, clen + 8)
        if len(rest) < clen + 8 or rest[:clen].decode("latin-1") not in _COMPRESSIONS:
            return False
        (records,) = struct.unpack_from("<Q", rest, clen)
        return records == length - 32 - clen - 8

    def _footer(self, pos: int) -> Bag:
        footer = self._peek(self.footer_at, _FOOTER_BYTES + len(MAGIC))
        if pos > self.footer_at:
            self._damage("the footer", self.footer_at, _FOOTER_BYTES, "a record runs into it")
        elif footer[:9] != bytes([_OP_FOOTER]) + struct.pack("<Q", 20):
            self._damage("the footer", self.footer_at, _FOOTER_BYTES, "its opcode or length is wrong")
        elif footer[-len(MAGIC):] != MAGIC:
            self._damage("the closing magic", self.size - len(MAGIC), len(MAGIC), "not the MCAP magic bytes")
        self.bag.readable_bytes = self.size
        self.bag.complete = True
        return self._done()

    # --- records ---------------------------------------------------------------------------------

    def _message_index(self, pos: int, length: int) -> None:
        body = self._body(pos, length)
        if len(body) < 6 or struct.unpack_from("<I", body, 2)[0] != len(body) - 6 or (len(body) - 6) % 16:
            raise _Damaged("a message index whose lengths disagree", resync=True)
        if self._last_damage is not None:  # the index of a damaged chunk: how many messages it held
            self._last_damage.messages = (self._last_damage.messages or 0) + (len(body) - 6) // 16

    def _attachment(self, pos: int, length: int) -> None:
        at = pos + 9 + 16
        for _ in range(2):  # name, media type
            (n,) = struct.unpack("<I", self._peek(at, 4))
            at += 4 + n
        (n,) = struct.unpack("<Q", self._peek(at, 8) or b"\xff" * 8)
        if at + 8 + n + 4 != pos + 9 + length:
            raise _Damaged("an attachment whose lengths disagree", resync=True)

    def _chunk(self, pos: int, length: int) -> None:
        index = self.bag.chunks
        self.bag.chunks += 1
        what = f"chunk {index}"
        self._last_damage = None
        if not self._looks_like_chunk(pos):
            raise _Damaged("its lengths disagree (a damaged chunk header)", resync=True, what=what)
        _start, _end, claimed, crc = struct.unpack("<QQQI", self._peek(pos + 9, 28))
        (clen,) = struct.unpack("<I", self._peek(pos + 9 + 28, 4))
        compression = self._peek(pos + 9 + 32, clen).decode("latin-1")
        stored = length - 32 - clen - 8
        if claimed > self.max_chunk or stored > self.max_chunk:
            raise BagError(f"{self.mcap}: chunk {index} at byte {pos} claims {mib(max(claimed, stored))} "
                           f"{'uncompressed' if claimed >= stored else 'stored'}, more than the "
                           f"{mib(self.max_chunk)} one chunk may hold (a decompression bomb, or a damaged size "
                           "field); refused before decompressing, nothing written (a genuine chunk that large: "
                           "--max-chunk-mib)")
        data = self._peek(pos + 9 + 32 + clen + 8, stored)
        try:
            try:
                data = inflate(data, compression, claimed) if compression else data
            except Exception as err:  # zstandard.ZstdError, RuntimeError from lz4: a damaged stream
                raise _Damaged(f"it does not decompress ({type(err).__name__}: {' '.join(str(err).split())})") from None
            if len(data) != claimed:
                raise _Damaged(f"it inflates to {'more' if len(data) > claimed else 'fewer'} than the "
                               f"{claimed} bytes it claims")
            if crc and zlib.crc32(data) != crc:
                raise _Damaged("its CRC does not match its contents")
            # first pass: framing, schemas and channels, every message's channel known (nothing held);
            # second pass: the messages, one at a time. A damaged chunk delivers none.
            for op, start, end in _records_in(data):
                if op in (_OP_SCHEMA, _OP_CHANNEL):
                    self._record(op, data[start:end], top_level=False)
                elif end - start < 22:
                    raise ValueError("a message record shorter than its header")
                else:
                    (cid,) = struct.unpack_from("<H", data, start)
                    if cid not in self.channels and self._summary_channel(cid) is None:
                        raise _Damaged(f"a message on channel {cid}, which no channel record declared")
        except _Damaged as err:
            self._last_damage = self._damage(what, pos, 9 + length, str(err))
            raise _Damaged(str(err)) from None
        except (struct.error, UnicodeDecodeError, ValueError, IndexError) as err:
            self._last_damage = self._damage(what, pos, 9 + length, f"a malformed record inside it ({err})")
            raise _Damaged(str(err)) from None
        for op, start, end in _records_in(data):
            if op == _OP_MESSAGE:
                self._deliver(*self._decode_message(data[start:end]))

    def _decode_message(self, body: bytes) -> tuple[BagTopic, int, int, bytes]:
        cid, _seq, log_time, publish_time = struct.unpack_from("<HIQQ", body, 0)
        channel = self.channels.get(cid) or self._summary_channel(cid)
        if channel is None:
            raise _Damaged(f"a message on channel {cid}, which no channel record declared")
        return channel, log_time, publish_time, body[22:]

    def _deliver(self, channel: BagTopic, log_time: int, publish_time: int, data: bytes) -> None:
        channel.count += 1
        bag = self.bag
        bag.first_time = log_time if bag.first_time is None else min(bag.first_time, log_time)
        bag.last_time = log_time if bag.last_time is None else max(bag.last_time, log_time)
        if self.on_message is not None:
            self.on_message(channel, log_time, publish_time, data)
        if self.keep:
            bag.messages.append(BagMessage(channel.name, log_time, publish_time, data))

    def _summary_channel(self, cid: int) -> Optional[BagTopic]:
        """Channel ``cid`` as the summary declares it: for chunks whose channel records were in a damaged one."""
        if self._summary_channels is None:
            self._summary_channels = {}
            if self.full_length:
                here = self.f.tell()
                try:
                    self._read_summary_channels()
                except (struct.error, UnicodeDecodeError, ValueError, IndexError, _Damaged):
                    pass  # a damaged summary: the channels read so far are all it gives
                self.f.seek(here)
        channel = self._summary_channels.get(cid)
        if channel is not None and cid not in self.channels:
            self.channels[cid] = channel
            self.bag.topics.setdefault(channel.name, channel)
        return self.channels.get(cid)

    def _read_summary_channels(self) -> None:
        (start,) = struct.unpack("<Q", self._peek(self.footer_at + 9, 8))
        if not len(MAGIC) <= start < self.footer_at:
            return
        schemas: dict[int, tuple[str, str, str]] = {}
        pos = start
        while pos + 9 <= self.footer_at:
            opcode, length = struct.unpack("<BQ", self._peek(pos, 9))
            if pos + 9 + length > self.footer_at or opcode not in _SUMMARY_OPS:
                return
            if opcode in (_OP_SCHEMA, _OP_CHANNEL):
                body = self._body(pos, length)
                if opcode == _OP_SCHEMA:
                    sid, schema = _schema(body)
                    schemas[sid] = schema
                else:
                    cid, topic = _channel(body, schemas)
                    self._summary_channels.setdefault(cid, topic)  # type: ignore[union-attr]
            pos += 9 + length

    def _record(self, opcode: int, body: bytes, top_level: bool) -> None:
        if top_level and opcode in _SELF_DELIMITED and _end_of(opcode, body) != len(body):
            # its fields do not fill it: its length field is damaged, so is everything framed by it
            raise _Damaged(f"a record (opcode 0x{opcode:02x}) whose fields do not fill its {len(body)} bytes",
                           resync=True)
        if opcode == _OP_HEADER and top_level:
            profile, rest = _string(body, 0)
            self.bag.profile, self.bag.library = profile, _string(body, rest)[0]
        elif opcode == _OP_SCHEMA:
            sid, schema = _schema(body)
            self.schemas[sid] = schema
        elif opcode == _OP_CHANNEL:
            cid, topic = _channel(body, self.schemas)
            if cid not in self.channels:
                self.channels[cid] = topic
                self.bag.topics.setdefault(topic.name, topic)
        elif opcode == _OP_MESSAGE:
            self._deliver(*self._decode_message(body))
        elif opcode == _OP_METADATA and top_level:
            name, at = _string(body, 0)
            if name == "rosbag2":
                self.bag.rosbag2_record = _string_map(body, at).get("serialized_metadata")

    def _cut(self, pos: int, why: str) -> Bag:
        self.bag.problem = f"{why} at byte {pos}"
        return self._done()

    def _done(self) -> Bag:
        self.bag.messages.sort(key=lambda m: m.log_time)  # stable: per-topic order is kept
        return self.bag


_SELF_DELIMITED = (_OP_HEADER, _OP_SCHEMA, _OP_CHANNEL, _OP_METADATA)


def _end_of(opcode: int, body: bytes) -> int:
    """Where the fields of a header, schema, channel or metadata record end (-1: past the body)."""
    layout = {_OP_HEADER: (0, "ss"), _OP_SCHEMA: (2, "ssb"), _OP_CHANNEL: (4, "ssb"), _OP_METADATA: (0, "sb")}
    at, fields = layout[opcode]
    try:
        for _ in fields:  # strings, byte arrays and maps alike: a u32 length, then that many bytes
            _, at = _bytes(body, at, 4)
    except (ValueError, struct.error):
        return -1
    return at


def _schema(body: bytes) -> tuple[int, tuple[str, str, str]]:
    (sid,) = struct.unpack_from("<H", body, 0)
    name, at = _string(body, 2)
    encoding, at = _string(body, at)
    data, _ = _bytes(body, at, 4)
    return sid, (name, encoding, data.decode("utf-8", errors="replace"))


def _channel(body: bytes, schemas: dict[int, tuple[str, str, str]]) -> tuple[int, BagTopic]:
    cid, sid = struct.unpack_from("<HH", body, 0)
    topic, at = _string(body, 4)
    encoding, at = _string(body, at)
    meta = _string_map(body, at)
    schema = schemas.get(sid, ("", "", ""))
    return cid, BagTopic(topic, schema[0], encoding, schema[1], schema[2], meta.get("offered_qos_profiles", ""),
                         meta.get("topic_type_hash", ""))


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


def _records_in(data: bytes) -> Iterator[tuple[int, int, int]]:
    """``(opcode, body start, body end)`` of each record of a decompressed, CRC-checked chunk.

    A chunk holds schemas, channels and messages only (the MCAP spec); any other opcode is
    damage, found at once, so a chunk of a million empty records costs nothing.
    """
    pos, size = 0, len(data)
    while pos < size:
        if size - pos < 9:
            raise _Damaged("its last record is cut")
        opcode, length = struct.unpack_from("<BQ", data, pos)
        if opcode not in (_OP_SCHEMA, _OP_CHANNEL, _OP_MESSAGE):
            raise _Damaged(f"a record of opcode 0x{opcode:02x} at {pos} inside it, which a chunk does not hold")
        if length > size - pos - 9:
            raise _Damaged("its last record is cut")
        yield opcode, pos + 9, pos + 9 + length
        pos += 9 + length


# --- repair -----------------------------------------------------------------------------------


@dataclass
class RepairReport:
    bag: Path
    kept: int
    dropped_bytes: int  # the unfinished tail of a file cut short
    was_complete: bool  # whole already: nothing done
    damaged: list[Damage] = field(default_factory=list)  # parts skipped (their messages are not in the new file)
    backup: Optional[Path] = None  # where the original file now is

    def dropped(self) -> str:
        """What the repair could not keep, in words (empty when it kept everything)."""
        parts = []
        chunks = [d for d in self.damaged if d.what.startswith("chunk")]
        if chunks:
            counts = [d.messages for d in chunks]
            held = (f" holding {sum(c for c in counts if c is not None)} messages"
                    if all(c is not None for c in counts) else "")
            named = ", ".join(f"{d.what} at byte {d.offset}" for d in chunks[:5])
            parts.append(f"{len(chunks)} damaged chunk(s){held} ({named}{', ...' if len(chunks) > 5 else ''})")
        others = [d for d in self.damaged if not d.what.startswith("chunk")]
        if others:
            named = ", ".join(f"{d.what} at byte {d.offset}" for d in others[:3])
            parts.append(f"{len(others)} damaged record(s) ({named})")
        if self.dropped_bytes:
            parts.append(f"the last {self.dropped_bytes} bytes (an unfinished record)")
        return " and ".join(parts)

    def line(self) -> str:
        if self.was_complete:
            return f"{self.bag}: already complete ({self.kept} messages); nothing to repair"
        lost = self.dropped()
        tail = f"dropped {lost}" if lost else "nothing was cut off, only the summary was missing"
        kept = f"; the original file is kept as {self.backup}" if self.backup else ""
        return f"{self.bag}: repaired: kept {self.kept} messages; {tail}{kept}"


def repair_bag(path: str | Path, max_chunk_bytes: int = MAX_CHUNK_BYTES) -> RepairReport:
    """Rewrite a cut-short or damaged bag whole (see the module docstring); a whole one is left alone.

    Two passes over the file, holding no messages: one to count, one to copy. The original
    file is kept beside it (``<name>.orig``) before the new one takes its name.
    """
    from mcap.writer import CompressionType, Writer

    bag = open_bag(path, keep_messages=False, max_chunk_bytes=max_chunk_bytes)
    if bag.whole:
        return RepairReport(bag.path, bag.message_count, 0, True)
    if bag.file.is_symlink():
        raise BagError(f"{bag.file} is a symbolic link: repair the file it points to, not the link")
    report = RepairReport(bag.path, bag.message_count, 0 if bag.complete else bag.file_bytes - bag.readable_bytes,
                          False, list(bag.damaged))
    backup = _free_name(bag.file.with_name(bag.file.name + ".orig"))
    lost = report.dropped()
    meta = _metadata_of(bag, f"{lost} (the original file is kept as {backup.name})" if lost else "")
    staging = bag.file.with_name(bag.file.name + ".repaired")
    with durable_writer(staging) as f:
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

        again = open_bag(bag.file, keep_messages=False, on_message=copy, max_chunk_bytes=max_chunk_bytes)
        if again.message_count != bag.message_count:
            raise BagError(f"{bag.file} changed while it was being repaired")
        writer.flush()
        writer.add_metadata("rosbag2", {"serialized_metadata": yaml.safe_dump(meta, sort_keys=False)})
        writer.finish()
    report.backup = keep_original(bag.file, backup)
    durable_rename(staging, bag.file)
    if bag.path.is_dir():
        meta_file = bag.path / METADATA
        if meta_file.is_file():
            keep_original(meta_file, _free_name(meta_file.with_name(METADATA + ".orig")))
        durable_write(meta_file, yaml.safe_dump({"rosbag2_bagfile_information": meta}, sort_keys=False).encode())
    return report


def _free_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``, ...: the first name no file has (a backup never replaces one)."""
    candidate, n = path, 0
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


def keep_original(path: Path, backup: Path) -> Path:
    """Keep ``path``'s bytes as ``backup`` (a hard link, else a copy), durably, before ``path`` is replaced."""
    try:
        os.link(path, backup)
    except OSError:  # a file system without hard links: copy, durably
        with open(path, "rb") as src, durable_writer(backup) as dst:
            shutil.copyfileobj(src, dst, _BLOCK)
    fsync_file(backup)
    fsync_dir(backup.parent)
    return backup


def _qos_profiles(text: str, where: str) -> list[Any]:
    """A channel's ``offered_qos_profiles`` text as a list, read through the guarded YAML reader."""
    try:
        value = parse_yaml(text, source=where) if text else []
    except ConfigError:
        return []  # the channel record keeps the text as it was; metadata.yaml just lists none
    return value if isinstance(value, list) else []


def _metadata_of(bag: Bag, repair_note: str) -> dict[str, Any]:
    """``metadata.yaml`` for what ``bag`` holds, keeping the QoS and custom data it had, and what a repair dropped."""
    old = bag.metadata_yaml or {}
    qos_by_topic = {t.get("topic_metadata", {}).get("name"): t.get("topic_metadata", {}).get("offered_qos_profiles")
                    for t in old.get("topics_with_message_count") or [] if isinstance(t, dict)
                    and isinstance(t.get("topic_metadata"), dict)}
    topics = []
    for t in bag.topics.values():
        qos = qos_by_topic.get(t.name)
        if not isinstance(qos, list):
            qos = _qos_profiles(t.offered_qos, f"{bag.file}: {t.name} offered_qos_profiles")
        topics.append((t.name, t.type_name, qos or [], t.type_hash, t.count))
    custom = old.get("custom_data") if isinstance(old.get("custom_data"), dict) else {}
    custom = {str(k): str(v) for k, v in custom.items()}
    if repair_note:
        custom[REPAIR_KEY] = "; then ".join(filter(None, [custom.get(REPAIR_KEY), f"dropped {repair_note}"]))
    return bag_metadata(bag.file.name, topics, bag.first_time, bag.last_time, custom)


__all__ = ["Bag", "BagMessage", "BagTopic", "Damage", "REPAIR_KEY", "RepairReport", "find_mcap", "keep_original",
           "open_bag", "repair_bag"]
