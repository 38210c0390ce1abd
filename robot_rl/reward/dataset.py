"""Labelled reward frames on disk: written as they are collected, read back for training.

Format of a frame directory (``robot-rl record-rewards --out DIR``)::

    DIR/meta.json            what every chunk holds (below), written first
    DIR/chunk_000000.npz     frames 0 .. chunk_frames-1
    DIR/chunk_000001.npz     ...

``meta.json``::

    {"format": "robot_rl.reward_frames", "version": 1,
     "cameras": ["front", "wrist"], "image_size": [64, 64],   # width, height
     "task": "PickCube", "label_source": "ground_truth",     # or "keys"
     "tags": ["success_hold", "lift_below", ...],            # names of the tag codes
     "chunk_frames": 256, "created": "2025-01-01T12:00:00"}

Each chunk is a NumPy ``.npz`` (no pickled objects) with, for ``N`` frames:

* ``image_<camera>``: ``uint8 (N, height, width, 3)`` RGB, one array per camera;
* ``label``: ``uint8 (N,)``, 1 = success, 0 = failure;
* ``episode``: ``int32 (N,)``, episode id, unique within the directory (splits are by episode,
  because neighbouring frames of one episode are near-copies of each other);
* ``step``: ``int32 (N,)``, step within the episode (0 = the frame after reset);
* ``tag``: ``uint8 (N,)``, index into ``meta["tags"]``: how the frame came about (for
  per-case error reports; ``"recorded"`` on hardware).

A chunk is written to ``*.npz.tmp``, fsync'd and renamed when full (and ``meta.json``
likewise, through :mod:`robot_rl.data.durable`), so a crash or a power cut loses at most
the chunk in flight and never leaves a half-written ``.npz``. A directory can be
appended to by a later session with the same cameras and image size.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from robot_rl import jsonio
from robot_rl.data.durable import READ_ERRORS, durable_mkdir, durable_write, durable_writer
from robot_rl.errors import ConfigError, one_line

log = logging.getLogger(__name__)

FORMAT = "robot_rl.reward_frames"
VERSION = 1
META = "meta.json"
_CHUNK = re.compile(r"^chunk_(\d{6})\.npz$")


class DatasetError(ConfigError):
    """A frame directory is missing, malformed, or does not match the config."""


def read_meta(folder: str | Path) -> dict[str, Any]:
    """The checked ``meta.json`` of a frame directory."""
    folder = Path(folder)
    path = folder / META
    if not path.is_file():
        raise DatasetError(f"{folder}: not a reward frame directory (no {META}); "
                           "record one with 'robot-rl record-rewards'")
    try:
        meta = json.loads(path.read_bytes().decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DatasetError(f"{path}: not valid JSON ({err})") from None
    if meta.get("format") != FORMAT:
        raise DatasetError(f"{path}: format is {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise DatasetError(f"{path}: version {meta.get('version')!r} is not supported (expected {VERSION})")
    for key in ("cameras", "image_size", "tags"):
        if key not in meta:
            raise DatasetError(f"{path}: missing key {key!r}")
    return meta


def check_layout(meta: Mapping[str, Any], cameras: list[str], image_size: tuple[int, int], where: str) -> None:
    """Refuse frames whose cameras or image size differ from what the config asks for."""
    if list(meta["cameras"]) != list(cameras):
        raise DatasetError(f"{where}: frames hold cameras {list(meta['cameras'])}, "
                           f"but reward.cameras is {list(cameras)}")
    if tuple(meta["image_size"]) != tuple(image_size):
        w, h = meta["image_size"]
        raise DatasetError(f"{where}: frames are {w}x{h}, but reward.image_size is "
                           f"{image_size[0]}x{image_size[1]}")


def chunk_paths(folder: str | Path) -> list[Path]:
    """The complete chunks of a directory, in order (``*.tmp`` leftovers are skipped)."""
    folder = Path(folder)
    return sorted(p for p in folder.iterdir() if _CHUNK.match(p.name))


class FrameWriter:
    """Appends labelled frames to a directory, one chunk file at a time.

    Contract: ``add()`` takes one frame (a dict of camera -> ``uint8 (h, w, 3)`` at the
    configured size), ``end_episode()`` starts a new episode id, ``close()`` writes the
    last partial chunk. Every full chunk is on disk before ``add()`` returns.
    """

    def __init__(self, folder: str | Path, *, cameras: list[str], image_size: tuple[int, int],
                 task: str, label_source: str, tags: list[str], chunk_frames: int = 256,
                 append: bool = False) -> None:
        self.folder = Path(folder)
        self.cameras = list(cameras)
        self.image_size = (int(image_size[0]), int(image_size[1]))
        self.chunk_frames = int(chunk_frames)
        self.tags = list(tags)
        self._buffer: dict[str, list] = self._empty()
        self.frames_written = 0
        self.positives_written = 0
        durable_mkdir(self.folder)
        existing = chunk_paths(self.folder)
        if (self.folder / META).exists():
            if not append:
                raise DatasetError(f"{self.folder}: already holds reward frames; pass --append to add to it "
                                   "or choose another --out")
            meta = read_meta(self.folder)
            check_layout(meta, self.cameras, self.image_size, str(self.folder))
            self.tags = list(meta["tags"]) + [t for t in self.tags if t not in meta["tags"]]
            meta["tags"] = self.tags
            self.meta = meta
        else:
            if existing:
                raise DatasetError(f"{self.folder}: holds chunk files but no {META}")
            self.meta = {
                "format": FORMAT, "version": VERSION, "cameras": self.cameras,
                "image_size": list(self.image_size), "task": task, "label_source": label_source,
                "tags": self.tags, "chunk_frames": self.chunk_frames,
                "created": datetime.datetime.now().isoformat(timespec="seconds"),
            }
        self._write_meta()
        self._next_chunk = (int(_CHUNK.match(existing[-1].name).group(1)) + 1) if existing else 0
        self.episode = self._last_episode(existing) + 1
        self._step = 0

    def _empty(self) -> dict[str, list]:
        return {"label": [], "episode": [], "step": [], "tag": [], **{f"image_{c}": [] for c in self.cameras}}

    def _write_meta(self) -> None:
        text = jsonio.dumps(self.meta, indent=1).encode()
        durable_write(self.folder / META, text)

    @staticmethod
    def _last_episode(existing: list[Path]) -> int:
        last = -1
        for path in existing:
            try:
                with np.load(path, allow_pickle=False) as z:
                    if len(z["episode"]):
                        last = max(last, int(z["episode"].max()))
            except READ_ERRORS as err:
                raise DatasetError(f"{path}: cannot read ({type(err).__name__}); "
                                   "move it aside to append to this directory") from None
        return last

    def tag_code(self, tag: str) -> int:
        if tag not in self.tags:
            self.tags.append(tag)
            self.meta["tags"] = self.tags
            self._write_meta()
        return self.tags.index(tag)

    def add(self, images: Mapping[str, np.ndarray], label: bool, tag: str = "recorded") -> None:
        h, w = self.image_size[1], self.image_size[0]
        for cam in self.cameras:
            img = images[cam]
            if img.dtype != np.uint8 or img.shape != (h, w, 3):
                raise ValueError(f"frame for camera {cam!r} is {img.dtype} {img.shape}, expected uint8 {(h, w, 3)}")
            self._buffer[f"image_{cam}"].append(img)
        self._buffer["label"].append(1 if label else 0)
        self._buffer["episode"].append(self.episode)
        self._buffer["step"].append(self._step)
        self._buffer["tag"].append(self.tag_code(tag))
        self._step += 1
        self.frames_written += 1
        self.positives_written += int(bool(label))
        if len(self._buffer["label"]) >= self.chunk_frames:
            self.flush()

    def end_episode(self) -> None:
        """The next frame belongs to a new episode (no-op when this one has no frames)."""
        if self._step > 0:
            self.episode += 1
            self._step = 0

    def flush(self) -> None:
        """Write the buffered frames as one chunk (nothing when empty)."""
        if not self._buffer["label"]:
            return
        arrays = {
            "label": np.asarray(self._buffer["label"], np.uint8),
            "episode": np.asarray(self._buffer["episode"], np.int32),
            "step": np.asarray(self._buffer["step"], np.int32),
            "tag": np.asarray(self._buffer["tag"], np.uint8),
        }
        for cam in self.cameras:
            arrays[f"image_{cam}"] = np.stack(self._buffer[f"image_{cam}"])
        path = self.folder / f"chunk_{self._next_chunk:06d}.npz"
        with durable_writer(path) as f:
            np.savez_compressed(f, **arrays)
        self._next_chunk += 1
        self._buffer = self._empty()

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> "FrameWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class FrameSet:
    """All frames of a directory in memory (images stay uint8)."""

    images: dict[str, np.ndarray]
    label: np.ndarray  # bool (N,)
    episode: np.ndarray  # int64 (N,)
    step: np.ndarray
    tag: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(len(self.label))

    def subset(self, index: np.ndarray) -> "FrameSet":
        return FrameSet({k: v[index] for k, v in self.images.items()}, self.label[index], self.episode[index],
                        self.step[index], self.tag[index], self.meta)


def load_frames(folder: str | Path) -> FrameSet:
    """Read every complete chunk of a frame directory."""
    folder = Path(folder)
    meta = read_meta(folder)
    cams = list(meta["cameras"])
    w, h = meta["image_size"]
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ["label", "episode", "step", "tag"]
                                          + [f"image_{c}" for c in cams]}
    leftovers = [p.name for p in folder.glob("*.tmp")]
    if leftovers:
        log.warning("%s: ignoring unfinished chunk files %s (a recording was interrupted)", folder, leftovers)
    for path in chunk_paths(folder):
        try:
            with np.load(path, allow_pickle=False) as z:
                for key in parts:
                    if key not in z:
                        raise DatasetError(f"{path}: missing array {key!r}")
                    parts[key].append(z[key])
        except READ_ERRORS as err:
            raise DatasetError(f"{path}: cannot read ({one_line(err)})") from None
        n = len(parts["label"][-1])
        for cam in cams:
            shape = parts[f"image_{cam}"][-1].shape
            if shape != (n, h, w, 3):
                raise DatasetError(f"{path}: image_{cam} has shape {shape}, meta.json says {(n, h, w, 3)}")
    if not parts["label"]:
        raise DatasetError(f"{folder}: holds no frames")
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    return FrameSet(
        images={c: cat[f"image_{c}"] for c in cams},
        label=cat["label"].astype(bool),
        episode=cat["episode"].astype(np.int64),
        step=cat["step"].astype(np.int64),
        tag=cat["tag"].astype(np.int64),
        meta=meta,
    )
