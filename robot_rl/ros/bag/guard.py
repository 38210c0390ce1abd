"""What a bag may make the reader do: which files it may name, how much it may make it allocate.

A bag comes from outside (a recording copied from another machine, a download), so
nothing in it is trusted before it is checked:

* :func:`bag_files` reads ``metadata.yaml`` through the project's guarded YAML reader
  (:func:`robot_rl.config.yaml_text.read_yaml`: no alias bombs, no deep nesting, no huge
  files) and refuses, before anything is opened, a file it names (``relative_file_paths``,
  ``files[].path``) that is absolute, climbs out with ``..``, or is a symbolic link whose
  target lies outside the bag folder;
* :func:`inflate` decompresses one chunk to at most the size it claims, in pieces, and the
  caller checks that claim against :data:`MAX_CHUNK_BYTES` before calling it, so a chunk
  that claims (or inflates to) gigabytes costs at most the limit, never the claim.
"""

from __future__ import annotations

import io
import os
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Optional

from robot_rl.config.yaml_text import read_yaml
from robot_rl.errors import ConfigError
from robot_rl.ros.bag.writer import METADATA, BagError

#: The most bytes one chunk may hold uncompressed (and one record may hold): robot_rl's writer
#: makes 1 MiB chunks and rosbag2's are smaller; a message larger than a chunk gets a chunk of its own.
MAX_CHUNK_BYTES = 256 << 20
_PIECE = 1 << 20  # decompression output step


def mib(n: int) -> str:
    """A byte count for a message: ``2.5 GiB``, ``256 MiB``, ``80 KiB``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def read_metadata(folder: Path) -> Optional[dict[str, Any]]:
    """``metadata.yaml``'s ``rosbag2_bagfile_information`` mapping (None when there is no such file)."""
    meta = folder / METADATA
    if not meta.exists() and not meta.is_symlink():
        return None
    inside(folder, meta, meta, METADATA)
    try:
        doc = read_yaml(meta)
    except ConfigError as err:
        raise BagError(str(err)) from None
    info = doc.get("rosbag2_bagfile_information")
    if not isinstance(info, dict):
        raise BagError(f"{meta}: no rosbag2_bagfile_information mapping: not a rosbag2 bag")
    return info


def inside(folder: Path, meta: Path, path: Path, named: str) -> Path:
    """``path`` if it (and any link on the way) stays inside ``folder``; else a one-line BagError."""
    root = folder.resolve()
    target = path.resolve()
    if target != root and root not in target.parents:
        raise BagError(f"{meta}: names {named!r}, which is outside the bag folder {folder}; refused, nothing opened")
    return path


def bag_files(folder: Path, meta: dict[str, Any]) -> list[Path]:
    """The files ``metadata.yaml`` names, each checked to stay inside ``folder`` (see the module docstring)."""
    where = folder / METADATA
    relative, files = meta.get("relative_file_paths") or [], meta.get("files") or []
    if not isinstance(relative, list) or not isinstance(files, list):
        raise BagError(f"{where}: relative_file_paths and files must be lists")
    listed = [_checked(folder, where, name) for name in relative]
    others = [_checked(folder, where, f.get("path")) for f in files if isinstance(f, dict)]
    return listed or others


def _checked(folder: Path, where: Path, name: Any) -> Path:
    if not isinstance(name, str) or not name or "\x00" in name or len(name) > 4096:
        raise BagError(f"{where}: names a file {str(name)[:80]!r}, which is not a file name")
    pure, windows = PurePosixPath(name), PureWindowsPath(name)
    if pure.is_absolute() or windows.is_absolute() or windows.drive or ".." in pure.parts or ".." in windows.parts:
        raise BagError(f"{where}: names {name!r}, which is outside the bag folder {folder}; refused, nothing opened")
    return inside(folder, where, folder / name, name)


def inflate(data: bytes, compression: str, claimed: int) -> bytes:
    """``data`` decompressed, but never more than ``claimed + 1`` bytes (the caller bounded ``claimed``).

    One byte past the claim is enough to tell a chunk that lies about its size; the rest
    is never produced. Errors of the libraries (a damaged stream) pass through.
    """
    cap = claimed + 1
    out = bytearray()
    if compression == "zstd":
        import zstandard

        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
            while len(out) < cap:
                piece = reader.read(min(_PIECE, cap - len(out)))
                if not piece:
                    break
                out += piece
    elif compression == "lz4":
        import lz4.frame

        dec = lz4.frame.LZ4FrameDecompressor()
        out += dec.decompress(data, max_length=min(_PIECE, cap))
        while len(out) < cap and not dec.eof and not dec.needs_input:
            out += dec.decompress(b"", max_length=min(_PIECE, cap - len(out)))
    else:
        raise ValueError(f"compression {compression!r}")
    return bytes(out)


def fsync_file(path: Path) -> None:
    """Flush a file's bytes (one just linked or copied as a backup) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["MAX_CHUNK_BYTES", "bag_files", "inflate", "inside", "mib", "read_metadata"]
