"""The ``Camera`` contract (robot_rl.interfaces.Camera), rule by rule, on every backend.

Backends (tests/support/contract_rigs.py): ``sim`` (a MuJoCo camera), ``topic`` (the
actor's TopicCamera), ``realsense`` (a pyrealsense2 software device) and ``opencv``
(VideoCapture on a video file). Every rig is configured 64x48, so a transposed size shows.
"""

from __future__ import annotations

import numpy as np
import pytest
from contract_rigs import CAMERAS, over  # noqa: E402  (tests/support)

from robot_rl.errors import DeviceError
from robot_rl.interfaces import Frame


def assert_frame(frame, rig) -> None:
    assert isinstance(frame, Frame)
    image = frame.image
    assert isinstance(image, np.ndarray), f"image is a {type(image).__name__}"
    assert image.dtype == np.uint8, f"image dtype {image.dtype}"
    assert image.shape == (rig.height, rig.width, 3), \
        f"image shape {image.shape}, configured (H, W, 3) = {(rig.height, rig.width, 3)}"
    assert isinstance(frame.stamp, float) and np.isfinite(frame.stamp), f"stamp {frame.stamp!r}"
    if frame.depth is not None:
        assert frame.depth.dtype == np.uint16 and frame.depth.shape == (rig.height, rig.width)


@pytest.mark.parametrize("camera_rig", over(CAMERAS), indirect=True)
def test_a_frame_is_uint8_rgb_of_the_configured_size(camera_rig):
    assert_frame(camera_rig.camera.read(), camera_rig)


@pytest.mark.parametrize("camera_rig", over(CAMERAS), indirect=True)
def test_the_size_is_fixed_for_the_camera_s_lifetime(camera_rig):
    for _ in range(5):
        camera_rig.advance()
        assert_frame(camera_rig.camera.read(), camera_rig)


@pytest.mark.parametrize("camera_rig", over(CAMERAS), indirect=True)
def test_read_returns_the_newest_frame(camera_rig):
    first = camera_rig.camera.read()
    camera_rig.advance()
    later = camera_rig.camera.read()
    if camera_rig.streams:
        assert later.stamp > first.stamp, "a later read returned an older or the same frame"
    else:
        assert later.stamp >= first.stamp, "a later read returned an older frame"


@pytest.mark.parametrize("camera_rig", over(CAMERAS, skip={"sim": "the scene has no reference colour to compare"}),
                         indirect=True)
def test_frames_are_rgb_as_the_source_sent_them(camera_rig):
    camera_rig.check_colours(camera_rig.camera.read())


@pytest.mark.parametrize("short_lived_camera_rig",
                         over(CAMERAS, skip={"sim": "a rendered camera cannot go away"}), indirect=True)
def test_a_camera_that_went_away_raises_device_error(short_lived_camera_rig):
    rig = short_lived_camera_rig
    assert_frame(rig.camera.read(), rig)
    rig.go_away()
    with pytest.raises(DeviceError):
        rig.camera.read()


@pytest.mark.parametrize("camera_rig", over(CAMERAS), indirect=True)
def test_close_is_idempotent(camera_rig):
    camera_rig.camera.close()
    camera_rig.camera.close()
