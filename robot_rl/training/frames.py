"""Drawing on rendered frames, so a video or an image strip says what happened in it.

A label is a band across the top of the frame with one line of white text (episode and
step, reward, outcome); an outcome is a band and a border in green for success or red
for failure, thick enough to survive video compression. Frames are RGB ``uint8`` arrays of
shape ``(H, W, 3)``; every function returns a new array and leaves its input alone.
:func:`gif_bytes` encodes frames as an animated GIF, the form TensorBoard's image
dashboard plays and W&B accepts, so no video library beyond OpenCV and Pillow is needed.
:func:`camera_tiles` names each camera on its image, :func:`readable` scales small renders
up to :data:`MIN_VIDEO_HEIGHT`, :func:`grid` wraps a strip into rows, and
:class:`Mp4Writer` writes an MP4 that appears under its name only when whole. Nothing here
imports torch: the sim node films with it (:mod:`robot_rl.nodes.sim_film`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from robot_rl.data.video_frames import Mp4File
from robot_rl.errors import RobotRLError

#: How long the marked last frame of an episode stays on screen, in seconds of video.
HOLD_S = 0.5

SUCCESS_RGB = (0, 200, 0)
FAILURE_RGB = (220, 0, 0)
TEXT_RGB = (255, 255, 255)


def as_frame(image: np.ndarray) -> np.ndarray:
    """``image`` as a contiguous RGB ``uint8`` array; anything else is a one-line error."""
    frame = np.asarray(image)
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.shape[0] < 1 or frame.shape[1] < 1:
        raise RobotRLError(f"a frame must be an RGB image of shape (H, W, 3), got shape {frame.shape}")
    if frame.dtype != np.uint8:
        if not np.issubdtype(frame.dtype, np.number):
            raise RobotRLError(f"a frame must hold pixel values, got dtype {frame.dtype}")
        if not np.all(np.isfinite(frame)):
            raise RobotRLError("a frame holds non-finite pixel values (NaN or inf)")
        frame = np.clip(frame, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(frame)


def label(image: np.ndarray, text: str, band: tuple[int, int, int] | None = None) -> np.ndarray:
    """``image`` with white ``text`` on a band across its top: the scene darkened, or the
    solid colour ``band``. Text that does not fit is cut at the right edge."""
    import cv2  # OpenCV draws the text; imported with the first frame that needs it

    frame = as_frame(image).copy()
    height = frame.shape[0]
    scale = max(0.35, min(1.0, height / 300))
    (_, text_h), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    rows = min(height, text_h + baseline + 4)
    if band is None:
        frame[:rows] = (frame[:rows].astype(np.uint16) * 2 // 7).astype(np.uint8)  # darken, keep the scene visible
    else:
        frame[:rows] = band
    left = _border_px(frame) + 2  # clear of an outcome border drawn later
    cv2.putText(frame, text, (left, rows - baseline - 2), cv2.FONT_HERSHEY_SIMPLEX, scale, TEXT_RGB, 1, cv2.LINE_AA)
    return frame


def outline(image: np.ndarray, color: tuple[int, int, int], width: int | None = None) -> np.ndarray:
    """``image`` with a solid border of ``color`` (by default 1/25 of its shorter side, at least 3 px)."""
    frame = as_frame(image).copy()
    height, w = frame.shape[:2]
    px = max(1, min(width or _border_px(frame), height // 2, w // 2))
    frame[:px], frame[-px:], frame[:, :px], frame[:, -px:] = color, color, color, color
    return frame


def _border_px(frame: np.ndarray) -> int:
    return max(3, min(frame.shape[:2]) // 25)


def mark_outcome(image: np.ndarray, success: bool, text: str = "") -> np.ndarray:
    """The frame after an episode's end: a green (success) or red (failure) border and a label."""
    color = SUCCESS_RGB if success else FAILURE_RGB
    verdict = "SUCCESS" if success else "FAILURE"
    return outline(label(image, f"{text}  {verdict}" if text else verdict, band=color), color)


def side_by_side(images: Sequence[np.ndarray]) -> np.ndarray:
    """Frames next to each other, left to right; shorter ones padded with black at the bottom."""
    frames = [as_frame(i) for i in images]
    if not frames:
        raise RobotRLError("side_by_side needs at least one frame")
    height = max(f.shape[0] for f in frames)
    padded = [np.pad(f, ((0, height - f.shape[0]), (0, 0), (0, 0))) for f in frames]
    return np.concatenate(padded, axis=1)


def named(image: np.ndarray, name: str) -> np.ndarray:
    """``image`` with ``name`` (a camera's) on a dark band across its bottom, so a video of several
    cameras says which is which; the top stays free for :func:`label`."""
    import cv2

    frame = as_frame(image).copy()
    height = frame.shape[0]
    scale = max(0.3, min(1.0, height / 300))
    (_, text_h), baseline = cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    rows = min(height, text_h + baseline + 4)
    frame[-rows:] = (frame[-rows:].astype(np.uint16) * 2 // 7).astype(np.uint8)
    cv2.putText(frame, name, (_border_px(frame) + 2, height - baseline - 2), cv2.FONT_HERSHEY_SIMPLEX, scale,
                TEXT_RGB, 1, cv2.LINE_AA)
    return frame


def camera_tiles(views: Mapping[str, np.ndarray]) -> np.ndarray:
    """Every camera's image side by side (in the given order), each with its name on it."""
    if not views:
        raise RobotRLError("camera_tiles needs at least one camera image")
    return side_by_side([named(image, name) for name, image in views.items()])


def grid(images: Sequence[np.ndarray], columns: int) -> np.ndarray:
    """Frames in rows of ``columns``, left to right then top to bottom (a strip of 24 frames
    as 4 rows of 6, not one row 24 frames wide); cells are the largest frame's size, the
    smaller frames and the empty cells of the last row black."""
    frames = [as_frame(i) for i in images]
    if not frames:
        raise RobotRLError("grid needs at least one frame")
    if columns < 1:
        raise RobotRLError(f"grid needs at least one column, got {columns}")
    height, width = max(f.shape[0] for f in frames), max(f.shape[1] for f in frames)
    cells = [np.pad(f, ((0, height - f.shape[0]), (0, width - f.shape[1]), (0, 0))) for f in frames]
    cols = min(columns, len(cells))
    cells += [np.zeros_like(cells[0])] * (-len(cells) % cols)
    return np.concatenate([np.concatenate(cells[r:r + cols], axis=1) for r in range(0, len(cells), cols)], axis=0)


def gif_bytes(frames: Sequence[np.ndarray], fps: float) -> bytes:
    """``frames`` (all of one size) as an animated GIF that loops, played at ``fps``."""
    from PIL import Image  # Pillow comes with matplotlib, a dependency; only videos need it

    if not frames:
        raise RobotRLError("a GIF needs at least one frame")
    if not np.isfinite(fps) or fps <= 0:
        raise RobotRLError(f"a GIF needs a positive frame rate, got {fps}")
    first = as_frame(frames[0])
    images = []
    for f in frames:
        frame = as_frame(f)
        if frame.shape != first.shape:
            raise RobotRLError(f"GIF frames must all have one size: {frame.shape} after {first.shape}")
        images.append(Image.fromarray(frame))
    out = io.BytesIO()
    # GIF delays are in hundredths of a second; Pillow takes milliseconds and rounds to them
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], loop=0,
                   duration=max(20, round(1000 / fps)), optimize=False)
    return out.getvalue()


def hold_frames(fps: float) -> int:
    """How many copies of an episode's marked last frame follow it (:data:`HOLD_S` at ``fps``)."""
    return max(1, round(HOLD_S * fps))


MIN_VIDEO_HEIGHT = 256  # pixels; smaller renders (128 px cameras) are scaled up by a whole factor


def readable(image: np.ndarray) -> np.ndarray:
    """``image`` scaled up by whole pixels to at least :data:`MIN_VIDEO_HEIGHT` rows, so a video of
    128 px cameras (or the policy's own 32x32 images) is watchable and its labels fit above the scene."""
    frame = as_frame(image)
    scale = -(-MIN_VIDEO_HEIGHT // frame.shape[0])
    return np.repeat(np.repeat(frame, scale, axis=0), scale, axis=1) if scale > 1 else frame


class Mp4Writer(Mp4File):
    """Eval and session videos: MP4 with the ``mp4v`` codec, which every player opens, appearing
    under its name only when whole (:class:`robot_rl.data.video_frames.Mp4File`)."""

    fourcc = "mp4v"

    def finish(self) -> Path | None:
        """Close the video and put it in place; its path, or None when no frame was written."""
        return self.close()


