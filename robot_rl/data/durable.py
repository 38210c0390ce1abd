"""The one durable write: temporary file, fsync of the file, rename, fsync of the folder.

Everything robot_rl keeps on disk (demo episodes, the replay log, checkpoints, reward
frames, the reward model, state files) is written through :func:`durable_write` or
:func:`durable_writer`, so that a crash or a power cut at any moment leaves either the
old file or the new one whole, never a torn one, and a file that a caller was told is
written survives a power cut too (the folder entry is flushed as well as the bytes).

Temporary files are named ``<name>.tmp`` beside the final path; :func:`remove_stale`
deletes the ones a crash left behind (callers do it when they open a folder).

Folders whose files belong together (a checkpoint) are written whole under a staging
name, marked complete last, and swapped in by renames (:func:`swap_dir`); after a crash,
:func:`recover_dir` finishes or undoes the swap. Append-only logs use :func:`durable_append`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

TMP_SUFFIX = ".tmp"
# What reading back a damaged file (truncated, garbage bytes, a bad zip member) can raise
# from numpy, zipfile and zlib: callers turn these into one-line errors naming the file.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, EOFError, KeyError, UnicodeDecodeError,
                                                zipfile.BadZipFile, zlib.error)


def tmp_path(path: str | Path) -> Path:
    """Where :func:`durable_writer` writes before the rename."""
    path = Path(path)
    return path.with_name(path.name + TMP_SUFFIX)


def fsync_dir(directory: str | Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def durable_writer(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` only when the block ends without an exception.

    On an exception the temporary file is removed and ``path`` keeps its old content.
    """
    path = Path(path)
    tmp = tmp_path(path)
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def durable_write(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` durably and atomically; returns ``path``."""
    path = Path(path)
    with durable_writer(path) as f:
        f.write(data)
    return path


def durable_write_text(path: str | Path, text: str) -> Path:
    """:func:`durable_write` for UTF-8 text."""
    return durable_write(path, text.encode("utf-8"))


def durable_mkdir(directory: str | Path) -> Path:
    """Create ``directory`` (and its parents) so that its entry survives a power cut too."""
    directory = Path(directory)
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        fsync_dir(directory.parent)
    return directory


def durable_rename(src: str | Path, dst: str | Path) -> None:
    """Rename ``src`` to ``dst`` (a file or a folder) and flush both folders' entries."""
    src, dst = Path(src), Path(dst)
    os.replace(src, dst)
    fsync_dir(dst.parent)
    if src.parent != dst.parent:
        fsync_dir(src.parent)


def remove_stale(directory: str | Path, pattern: str = "*" + TMP_SUFFIX) -> int:
    """Delete temporary files a crash left in ``directory``; returns how many."""
    count = 0
    for stale in Path(directory).glob(pattern):
        if stale.is_file():
            with contextlib.suppress(OSError):
                stale.unlink()
                count += 1
    return count


def durable_append(path: str | Path, data: bytes) -> None:
    """Append ``data`` to a log file and flush it to disk (a crash may tear only this record)."""
    path = Path(path)
    created = not path.exists()
    with open(path, "ab") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    if created:
        fsync_dir(path.parent)


# --- whole folders: written complete, then swapped in ------------------------------------
#
# A folder that must change as one piece (a checkpoint: several files that belong
# together) is written as ``<name>.tmp/`` with a marker file written last, then swapped
# in by two renames. At every instant one whole version exists under one of the names
# ``<name>`` (always whole), ``<name>.old`` (whole; only missing ``<name>`` makes it the
# one to use) or ``<name>.tmp`` (whole only when its marker lists every file at its size).
# A folder is deleted by renaming it to ``<name>.trash`` first, so a half-deleted folder
# never sits under a name that counts.

MARKER = "complete.json"


def staging_dir(final: str | Path) -> Path:
    """Where a new version of the folder ``final`` is written before the swap."""
    final = Path(final)
    return final.with_name(final.name + TMP_SUFFIX)


def old_dir(final: str | Path) -> Path:
    """Where the previous version of ``final`` waits during a swap."""
    final = Path(final)
    return final.with_name(final.name + ".old")


def trash_dir(directory: str | Path) -> Path:
    """Where :func:`remove_tree` moves a folder before deleting it."""
    directory = Path(directory)
    return directory.with_name(directory.name + ".trash")


def remove_tree(directory: str | Path) -> None:
    """Delete a folder so that no crash leaves part of it under its own name."""
    directory = Path(directory)
    if not directory.exists():
        return
    trash = trash_dir(directory)
    shutil.rmtree(trash, ignore_errors=True)
    durable_rename(directory, trash)
    shutil.rmtree(trash, ignore_errors=True)


def mark_complete(directory: str | Path) -> None:
    """Write the marker last: it lists every file of ``directory`` with its size."""
    directory = Path(directory)
    files = {p.name: p.stat().st_size for p in sorted(directory.iterdir()) if p.is_file() and p.name != MARKER}
    durable_write_text(directory / MARKER, json.dumps({"files": files}, indent=1))


def incomplete_reason(directory: str | Path) -> str | None:
    """Why ``directory`` is not a whole marked folder (None when it is): a missing or
    short file names itself, so a truncated file reads back as a one-line error."""
    directory = Path(directory)
    marker = directory / MARKER
    try:
        files = json.loads(marker.read_text())["files"]
    except FileNotFoundError:
        return f"{marker} is missing"
    except (OSError, ValueError, KeyError, TypeError) as err:
        return f"{marker} is unreadable ({type(err).__name__})"
    if not isinstance(files, dict):
        return f"{marker} is unreadable (no file list)"
    for name, size in files.items():
        path = directory / str(name)
        actual = path.stat().st_size if path.is_file() else None
        if actual != size:
            return f"{path} is missing" if actual is None else f"{path} is {actual} bytes, {MARKER} says {size}"
    return None


def swap_dir(new: str | Path, final: str | Path) -> None:
    """Put the whole folder ``new`` in place of ``final``; a crash anywhere leaves a whole version."""
    new, final = Path(new), Path(final)
    old = old_dir(final)
    if final.exists():
        remove_tree(old)  # a leftover of an earlier swap: ``final`` is whole, so it is not needed
        durable_rename(final, old)
    durable_rename(new, final)
    remove_tree(old)


def recover_dir(final: str | Path, whole: Callable[[Path], bool]) -> Path | None:
    """Finish or undo a :func:`swap_dir` (or a write of the staging folder) a crash cut short.

    Returns ``final`` when a version of it now exists, else None. The newest whole version
    wins: a marked staging folder, then ``final``, then ``<final>.old``. ``whole`` says
    whether a folder under the name ``final`` or ``.old`` can be used.
    """
    final = Path(final)
    new, old = staging_dir(final), old_dir(final)
    for name in (final, new, old):
        shutil.rmtree(trash_dir(name), ignore_errors=True)
    if new.exists():
        if incomplete_reason(new) is None:
            swap_dir(new, final)
            return final
        remove_tree(new)
    if final.exists():
        if whole(final):
            remove_tree(old)
        return final
    if old.exists() and whole(old):
        durable_rename(old, final)
        return final
    return None
