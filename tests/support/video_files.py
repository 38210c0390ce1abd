"""Reading back the MP4s robot_rl writes, frame by frame, as the tests check them."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def read_video(path: str | Path) -> tuple[list[np.ndarray], float]:
    """Every frame of ``path`` as RGB ``uint8`` arrays, and the frame rate the file states."""
    import cv2

    capture = cv2.VideoCapture(str(path))
    frames = []
    try:
        assert capture.isOpened(), path
        fps = capture.get(cv2.CAP_PROP_FPS)
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    finally:
        capture.release()
    return frames, fps
