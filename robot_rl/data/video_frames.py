"""Camera frames to and from MP4 files, exactly: what a LeRobotDataset v3 export stores its images in.

:class:`LosslessMp4` writes RGB frames through OpenCV (a base dependency) with FFV1, FFmpeg's
lossless codec, inside an MP4 container: every pixel comes back as it went in, which the
lossy codecs video players prefer (``mp4v``, H.264, AV1 at their usual settings) do not
give. The files are larger than a lossy video's (about the size of PNG images), and every
decoder built on FFmpeg reads them: PyAV (what LeRobot decodes with), OpenCV, ``ffmpeg``.
A file is written as ``<name>.partial.mp4`` and renamed into place when closed, so a file
under its final name is always a whole video.

:func:`read_frames` decodes every frame of a file, with PyAV when it is installed (it reads
what LeRobot's own writer makes, AV1 by default) and with OpenCV otherwise (which reads the
files written here, and MPEG-4 and H.264, but has no AV1 decoder in its PyPI build). A file
that cannot be decoded is a one-line :class:`VideoError` naming it.

A LeRobotDataset v3 packs many episodes into one video file, so an import never holds a
whole file: :func:`video_info` says how many frames a file holds (the container's frame
count, or decode-and-count where the container has none, keeping no frame), and
:class:`FrameSpans` decodes one span of frames at a time, keeping the file open so that
consecutive spans read forward through it once (a span before the last one read reopens
the file). :func:`read_frame_range` is one span of a file, opened and closed.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from robot_rl.data.durable import durable_rename
from robot_rl.errors import RobotRLError, install_extra, one_line

#: What the info.json of a v3 dataset says of the videos written here.
CODEC = "ffv1"
PIX_FMT = "bgra"  # what OpenCV hands FFV1 (its BGR frames, padded); decoders give RGB back


_PYAV_HINT = f"PyAV reads AV1, LeRobot's default; install the lerobot extra ({install_extra('lerobot')})"


class VideoError(RobotRLError):
    """A video that cannot be written or decoded."""


class Mp4File:
    """RGB frames of one size into ``path`` (an MP4 container, the codec :attr:`fourcc`), written
    as ``<name>.partial.mp4`` and renamed into place, flushed, when closed, so a file under its
    final name is always a whole video (OpenCV picks the container by the extension, hence not
    ``.mp4.tmp``). Eval videos use it with a lossy codec (:class:`robot_rl.training.frames.Mp4Writer`)."""

    fourcc = "FFV1"

    def __init__(self, path: str | Path, fps: float) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.stem + ".partial" + self.path.suffix)
        self.fps = float(fps)
        self.frames = 0
        self.size: tuple[int, int] | None = None  # (width, height)
        self._writer: Any = None

    def write(self, frame: np.ndarray) -> None:
        import cv2  # only what records a video needs OpenCV

        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise VideoError(f"{self.path}: a video frame is uint8 HxWx3, not {frame.dtype}{frame.shape}")
        height, width = frame.shape[:2]
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = cv2.VideoWriter(str(self.partial), cv2.VideoWriter_fourcc(*self.fourcc), self.fps,
                                           (width, height))
            if not self._writer.isOpened():
                raise VideoError(f"cannot write the video {self.partial} (OpenCV has no {self.fourcc} writer here)")
            self.size = (width, height)
        elif (width, height) != self.size:
            raise VideoError(f"{self.path}: a {width}x{height} frame in a {self.size[0]}x{self.size[1]} video")
        self._writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
        self.frames += 1

    def close(self) -> Path | None:
        """Close the video, flush it to disk and put it in place; its path, or None when no frame came."""
        if self._writer is None:
            return None
        self._writer.release()
        self._writer = None
        with open(self.partial, "rb") as f:
            os.fsync(f.fileno())
        durable_rename(self.partial, self.path)
        return self.path

    def abort(self) -> None:
        """Drop a video that will not be finished."""
        if self._writer is not None:
            self._writer.release()
            self._writer = None
        with contextlib.suppress(OSError):
            self.partial.unlink()


class LosslessMp4(Mp4File):
    """FFV1 in MP4: every pixel comes back as it went in (see the module docstring)."""

    fourcc = "FFV1"

    def finish(self) -> Path:
        """Close the video and put it in place; a video of no frame is an error (a v3 episode has frames)."""
        path = self.close()
        if path is None:
            raise VideoError(f"{self.path}: a video needs at least one frame")
        return path


def have_pyav() -> bool:
    try:
        import av  # noqa: F401
    except ImportError:
        return False
    return True


def read_frames(path: str | Path) -> list[np.ndarray]:
    """Every frame of the video ``path`` as uint8 HxWx3 RGB, in order (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise VideoError(f"{path}: video file missing")
    return _read_pyav(path) if have_pyav() else _read_opencv(path)


def _read_pyav(path: Path) -> list[np.ndarray]:
    try:
        with _open_pyav(path) as container:
            return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    except VideoError:
        raise
    except Exception as err:  # PyAV raises its own error classes for every kind of damage
        raise VideoError(f"{path}: cannot decode the video ({one_line(err)})") from None


def _read_opencv(path: Path) -> list[np.ndarray]:
    import cv2

    capture = _open_opencv(path)
    try:
        frames = []
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        if not frames:
            raise _no_frame(path, capture)
        return frames
    finally:
        capture.release()


@dataclass(frozen=True)
class VideoInfo:
    """What :func:`video_info` read of a file without keeping its frames."""

    frames: int
    height: int
    width: int


def video_info(path: str | Path) -> VideoInfo:
    """The frame count and frame size of the video ``path``, holding no frame (see the module docstring).

    With PyAV the count is the container's (an MP4's sample table), or, where the container
    has none, the frames decoded and dropped; with OpenCV it is always decoded and counted
    (its own count may be an estimate from the duration). A file that cannot be opened or
    decoded is a one-line :class:`VideoError`.
    """
    path = Path(path)
    if not path.is_file():
        raise VideoError(f"{path}: video file missing")
    if have_pyav():
        try:
            with _open_pyav(path) as container:
                stream = container.streams.video[0]
                count = int(stream.frames or 0)
                if count <= 0:
                    count = sum(1 for _ in container.decode(video=0))
                return VideoInfo(count, int(stream.codec_context.height), int(stream.codec_context.width))
        except VideoError:
            raise
        except Exception as err:  # PyAV raises its own error classes for every kind of damage
            raise VideoError(f"{path}: cannot decode the video ({one_line(err)})") from None
    import cv2

    capture = _open_opencv(path)
    try:
        count = 0
        while capture.grab():
            count += 1
        if not count:
            raise _no_frame(path, capture)
        height, width = int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)), int(capture.get(cv2.CAP_PROP_FRAME_WIDTH))
        return VideoInfo(count, height, width)
    finally:
        capture.release()


class FrameSpans:
    """Spans of frames of one video file as uint8 HxWx3 RGB, read forward with the file kept open.

    ``read(first, count)`` gives frames ``first .. first+count-1`` (in decode order, counting
    from 0): frames before ``first`` are decoded and dropped, never converted or kept, and a
    span that starts before the last one read reopens the file. Only the span asked for is
    ever held. Close it (or use it as a context manager) when done.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.position = 0  # the index of the next frame the open decoder gives
        self._pyav = have_pyav()
        self._handle: Any = None  # PyAV container, or OpenCV capture
        self._frames: Iterator[Any] | None = None  # PyAV's decoded frames

    def __enter__(self) -> FrameSpans:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(Exception):  # closing a damaged file may raise too; it is closed either way
                if self._pyav:
                    self._handle.close()
                else:
                    self._handle.release()
        self._handle, self._frames, self.position = None, None, 0

    def read(self, first: int, count: int) -> list[np.ndarray]:
        if first < 0 or count < 0:
            raise VideoError(f"{self.path}: frames {first}..{first + count - 1} asked for")
        try:
            if self._handle is None or first < self.position:
                self._open()
            while self.position < first:
                self._next(convert=False, first=first, count=count)
            frames = [self._next(convert=True, first=first, count=count) for _ in range(count)]
            return [f for f in frames if f is not None]
        except VideoError:
            self.close()
            raise
        except Exception as err:  # PyAV's and OpenCV's errors for every kind of damage, in one line
            self.close()
            raise VideoError(f"{self.path}: cannot decode the video ({one_line(err)})") from None

    def _open(self) -> None:
        self.close()
        if not self.path.is_file():
            raise VideoError(f"{self.path}: video file missing")
        if self._pyav:
            self._handle = _open_pyav(self.path)
            self._frames = iter(self._handle.decode(video=0))
        else:
            self._handle = _open_opencv(self.path)

    def _next(self, *, convert: bool, first: int, count: int) -> np.ndarray | None:
        """The next frame as RGB when ``convert``; otherwise decoded and dropped (None)."""
        frame: Any = None
        if self._pyav:
            assert self._frames is not None
            frame = next(self._frames, None)
            ok = frame is not None
        elif convert:
            ok, frame = self._handle.read()
        else:
            ok = self._handle.grab()
        if not ok:
            raise VideoError(f"{self.path}: holds {self.position} frames, frames {first}..{first + count - 1} "
                             "were asked for (a video cut short?)")
        self.position += 1
        if not convert:
            return None
        if self._pyav:
            return frame.to_ndarray(format="rgb24")
        import cv2

        return cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)


def read_frame_range(path: str | Path, first: int, count: int) -> list[np.ndarray]:
    """Frames ``first .. first+count-1`` of the video ``path`` (a :class:`FrameSpans` opened for one span)."""
    with FrameSpans(path) as spans:
        return spans.read(first, count)


def _open_pyav(path: Path) -> Any:
    """A PyAV container of ``path`` that holds a video stream (else closed, and a VideoError)."""
    import av

    container = av.open(str(path))
    if not container.streams.video:
        container.close()
        raise VideoError(f"{path}: holds no video stream")
    return container


def _open_opencv(path: Path) -> Any:
    import cv2

    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        capture.release()
        raise VideoError(f"{path}: OpenCV cannot open the video (damaged, or a codec it lacks: {_PYAV_HINT})")
    return capture


def _no_frame(path: Path, capture: Any) -> VideoError:
    import cv2

    codec = int(capture.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode("latin-1").strip("\0 ")
    return VideoError(f"{path}: OpenCV decoded no frame (codec '{codec or '?'}'; a damaged file, or a codec "
                      f"OpenCV lacks: {_PYAV_HINT})")
