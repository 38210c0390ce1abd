"""Labels, outcome borders, side-by-side frames and the GIF encoding of eval videos."""

from __future__ import annotations

import io

import numpy as np
import pytest

from robot_rl.errors import RobotRLError
from robot_rl.training.frames import (
    FAILURE_RGB,
    SUCCESS_RGB,
    as_frame,
    gif_bytes,
    label,
    mark_outcome,
    outline,
    side_by_side,
)


def grey(h: int = 64, w: int = 96, value: int = 128) -> np.ndarray:
    return np.full((h, w, 3), value, np.uint8)


def test_a_label_writes_text_in_a_band_at_the_top_and_leaves_the_rest_and_the_input_alone():
    frame = grey()
    out = label(frame, "t 12  reward 0.00  success no")
    assert out.shape == frame.shape and out.dtype == np.uint8
    assert np.array_equal(frame, grey())  # the input is not drawn on
    top, rest = out[:14], out[20:]
    assert np.array_equal(rest, frame[20:])
    assert (top == 255).any() and (top < 128).any()  # white text on the darkened band
    other = label(frame, "t 13  reward 1.00  success yes")
    assert not np.array_equal(out[:14], other[:14])  # the text is what differs


def test_an_outcome_is_a_green_or_red_border_and_band():
    for success, color in ((True, SUCCESS_RGB), (False, FAILURE_RGB)):
        out = mark_outcome(grey(), success, "ep 1  t 50")
        for edge in (out[-1], out[:, 0], out[:, -1]):
            assert (edge == color).all()
        assert (out[:12] == color).all(axis=-1).mean() > 0.6  # the band is the outcome's colour
        assert np.array_equal(out[20:-5, 5:-5], grey()[20:-5, 5:-5])  # the scene stays visible
    px = 4
    bordered = outline(grey(), (1, 2, 3), width=px)
    assert (bordered[:px] == (1, 2, 3)).all() and (bordered[px:-px, px:-px] == 128).all()


def test_side_by_side_pads_shorter_frames_and_keeps_order():
    a, b = grey(40, 30, 10), grey(50, 20, 200)
    out = side_by_side([a, b])
    assert out.shape == (50, 50, 3)
    assert (out[:40, :30] == 10).all() and (out[40:, :30] == 0).all() and (out[:, 30:] == 200).all()
    with pytest.raises(RobotRLError):
        side_by_side([])


@pytest.mark.parametrize("bad, fragment", [
    (np.zeros((8, 8)), "shape (8, 8)"),
    (np.zeros((8, 8, 4), np.uint8), "shape (8, 8, 4)"),
    (np.zeros((0, 8, 3), np.uint8), "shape (0, 8, 3)"),
    (np.full((8, 8, 3), np.nan), "non-finite"),
    (np.full((8, 8, 3), np.inf), "non-finite"),
    (np.full((8, 8, 3), "x"), "pixel values"),
])
def test_malformed_frames_are_one_line_errors(bad, fragment):
    with pytest.raises(RobotRLError) as err:
        label(bad, "x")
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_float_and_huge_pixels_are_clipped_into_uint8():
    frame = as_frame(np.array([[[-5.0, 300.0, 1e30]]]))
    assert frame.dtype == np.uint8 and frame.tolist() == [[[0, 255, 255]]]


def test_a_gif_holds_every_frame_at_its_size_and_loops():
    from PIL import Image

    frames = [grey(32, 48, v) for v in (0, 80, 160, 240)]
    gif = gif_bytes(frames, fps=10)
    image = Image.open(io.BytesIO(gif))
    assert image.format == "GIF" and image.size == (48, 32) and image.n_frames == 4
    assert image.info.get("loop") == 0 and image.info.get("duration") == 100
    values = []
    for i in range(image.n_frames):
        image.seek(i)
        values.append(int(np.asarray(image.convert("RGB"))[0, 0, 0]))
    assert values == [0, 80, 160, 240]


@pytest.mark.parametrize("frames, fps, fragment", [
    ([], 10, "at least one frame"),
    ([np.zeros((8, 8, 3), np.uint8), np.zeros((8, 9, 3), np.uint8)], 10, "one size"),
    ([np.zeros((8, 8, 3), np.uint8)], 0, "positive frame rate"),
    ([np.zeros((8, 8, 3), np.uint8)], float("nan"), "positive frame rate"),
])
def test_a_gif_refuses_what_it_cannot_encode(frames, fps, fragment):
    with pytest.raises(RobotRLError, match=fragment):
        gif_bytes(frames, fps)
