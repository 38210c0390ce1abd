"""Read back a W&B run file (``run-<id>.wandb``) into wandb's own ``Record`` protobufs.

wandb 0.31 ships no Python reader for the files its Go core writes, but it ships the
record schema (``wandb.proto.wandb_internal_pb2.Record``). The file is a 7-byte header
(``:W&B``, a 2-byte magic, a version byte) and then the LevelDB log format: 32 KiB
blocks of chunks, each ``crc32 (4, little-endian) | length (2) | type (1) | data``,
where type 1 is a whole record and 2, 3, 4 the first, middle and last piece of one that
spans blocks; the CRC covers the type byte and the data. Every CRC is checked here, so
a test that reads records has read the file as written.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

HEADER = 7
BLOCK = 32 * 1024
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def read_records(path: str | Path) -> list[Any]:
    """Every record in the run file at ``path``, in order."""
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    if data[:4] != b":W&B":
        raise ValueError(f"{path} is not a W&B run file (header {data[:4]!r})")
    records, pending, pos = [], b"", HEADER
    while pos + 7 <= len(data):
        left = BLOCK - pos % BLOCK
        if left < 7:  # a block's tail too short for a chunk header is padding
            pos += left
            continue
        crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 0 and length == 0:  # zero padding
            continue
        if zlib.crc32(bytes([kind]) + chunk) != crc:
            raise ValueError(f"{path}: bad checksum at byte {pos - 7 - length}")
        pending += chunk
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def history_rows(records: list[Any]) -> list[dict[str, str]]:
    """The logged rows: ``{"key" or "key.sub": value_json}`` per ``history`` record."""
    rows = []
    for record in records:
        if record.WhichOneof("record_type") == "history":
            rows.append({".".join([i.key] if i.key else list(i.nested_key)): i.value_json for i in record.history.item})
    return rows
