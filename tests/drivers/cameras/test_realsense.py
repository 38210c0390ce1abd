"""The RealSense backend on synthetic frames injected through pyrealsense2.software_device.

The software device stands in for the camera at librealsense's sensor level; everything
above it (device lookup by serial, profile choice, options, syncer, align, timestamps,
the grab thread) is the code a real D4xx runs.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from robot_rl.config.sections import CameraConfig
from robot_rl.errors import DeviceError
from robot_rl_drivers.cameras.realsense.settings import RealSenseSettings

rs = pytest.importorskip("pyrealsense2", reason="pyrealsense2 (and apt libusb-1.0-0) not installed")

from fake_realsense import FPS, SERIAL, H, SyntheticRealSense, W  # noqa: E402  (tests/support)

from robot_rl_drivers.cameras import make_camera  # noqa: E402
from robot_rl_drivers.cameras.realsense.camera import HostClockMapper, RealSenseCamera  # noqa: E402


def camera_cfg(**overrides) -> CameraConfig:
    return CameraConfig(backend="realsense", width=W, height=H, fps=FPS, **overrides)


@pytest.fixture
def synthetic():
    made: list[SyntheticRealSense] = []

    def build(**kw) -> SyntheticRealSense:
        made.append(SyntheticRealSense(**kw))
        return made[-1]

    yield build
    for s in made:
        s.stop()


def open_camera(dev: SyntheticRealSense, **settings) -> RealSenseCamera:
    """Open the camera, then start feeding frames (the software device's syncer builds
    its matcher from the streams active at the first frame, so all must be started)."""
    settings.setdefault("serial", SERIAL)
    cam = RealSenseCamera("front", camera_cfg(), RealSenseSettings(**settings), devices=lambda: [dev.device])
    if dev._thread is None:
        dev.start()
    return cam


def frame_number(image: np.ndarray) -> int:
    return int(image[0, 0, 0])


def test_streams_newest_rgb_frames_of_the_configured_size(synthetic):
    dev = synthetic()
    cam = open_camera(dev)
    try:
        first = cam.read()
        assert first.image.shape == (H, W, 3) and first.image.dtype == np.uint8
        n = frame_number(first.image)
        # Channels stay in RGB order: frame n is (n, 2n, 3n).
        assert first.image[5, 7].tolist() == [n % 256, (2 * n) % 256, (3 * n) % 256]
        assert first.depth is None
        time.sleep(0.25)
        later = cam.read()
        m = frame_number(later.image)
        assert m > n, "read() must return the newest frame, not a queued old one"
        assert dev.sent - m <= 3, f"newest frame {dev.sent}, read() returned {m}"
        assert later.stamp > first.stamp
    finally:
        cam.close()


def test_hardware_clock_stamps_are_mapped_onto_host_time(synthetic):
    dev = synthetic(t0_ms=5_000.0)  # device clock: 5 s after the device started
    cam = open_camera(dev)
    try:
        stamps = {}
        deadline = time.time() + 2.0
        while len(stamps) < 6 and time.time() < deadline:
            frame = cam.read()
            stamps[frame_number(frame.image)] = frame.stamp
            time.sleep(0.02)
        assert len(stamps) >= 4
        assert all(abs(s - time.time()) < 1.0 for s in stamps.values()), "stamps must be host time"
        ns = sorted(stamps)
        # Device spacing survives the mapping (up to the offset estimate improving).
        rate = (stamps[ns[-1]] - stamps[ns[0]]) / (ns[-1] - ns[0])
        assert rate == pytest.approx(1.0 / FPS, abs=0.01)
    finally:
        cam.close()


def test_global_time_stamps_are_used_as_they_are(synthetic):
    t0 = time.time() * 1000.0
    dev = synthetic(domain=rs.timestamp_domain.global_time, t0_ms=t0)
    cam = open_camera(dev)
    try:
        frame = cam.read()
        n = frame_number(frame.image)
        assert frame.stamp == pytest.approx(dev.stamp_ms(n) / 1000.0, abs=1e-6)
    finally:
        cam.close()


def test_clock_mapper_takes_the_smallest_transfer_delay():
    mapper = HostClockMapper(window=10)
    # Device frames every 33 ms; arrivals delayed by 5, 20, 7, 5 ms after a host offset of 100 s.
    delays = [0.005, 0.020, 0.007, 0.005]
    out = [mapper(0.033 * i, 100.0 + 0.033 * i + d) for i, d in enumerate(delays)]
    assert out[1] == pytest.approx(100.0 + 0.033 + 0.005)
    assert out[3] - out[2] == pytest.approx(0.033)


def test_exposure_gain_and_white_balance_reach_the_colour_sensor(synthetic):
    dev = synthetic()
    cam = open_camera(dev, exposure=250, gain=32, white_balance=3200)
    try:
        assert dev.color.get_option(rs.option.enable_auto_exposure) == 0
        assert dev.color.get_option(rs.option.exposure) == 250
        assert dev.color.get_option(rs.option.gain) == 32
        assert dev.color.get_option(rs.option.enable_auto_white_balance) == 0
        assert dev.color.get_option(rs.option.white_balance) == 3200
    finally:
        cam.close()
    cam = open_camera(dev)  # null settings turn the automatic controls back on
    try:
        assert dev.color.get_option(rs.option.enable_auto_exposure) == 1
        assert dev.color.get_option(rs.option.enable_auto_white_balance) == 1
    finally:
        cam.close()


def test_exposure_outside_the_device_range_is_one_clear_error(synthetic):
    dev = synthetic()
    with pytest.raises(DeviceError) as err:
        open_camera(dev, exposure=20000)
    msg = str(err.value)
    assert "front" in msg and "exposure 20000" in msg and "1..10000" in msg and "\n" not in msg


def test_missing_serial_lists_the_connected_ones(synthetic):
    dev = synthetic()
    with pytest.raises(DeviceError) as err:
        open_camera(dev, serial="999")
    msg = str(err.value)
    assert "serial 999" in msg and SERIAL in msg and "\n" not in msg


def test_missing_serial_through_the_factory_with_no_camera_attached():
    cfg = camera_cfg(hardware={"serial": "999"})
    with pytest.raises(DeviceError, match=r"camera 'wrist': no RealSense with serial 999 is connected \(connected: "):
        make_camera("wrist", cfg)


def test_a_mode_the_device_lacks_lists_the_modes_it_has(synthetic):
    dev = synthetic()
    cfg = CameraConfig(backend="realsense", width=1280, height=720, fps=FPS)
    with pytest.raises(DeviceError) as err:
        RealSenseCamera("front", cfg, RealSenseSettings(serial=SERIAL), devices=lambda: [dev.device])
    assert "1280x720@30" in str(err.value) and "32x24@30" in str(err.value) and "64x48@30" in str(err.value)


@pytest.mark.parametrize("units, scale", [(0.001, 1.0), (0.0001, 0.1)])
def test_depth_is_aligned_synchronised_and_in_millimetres(synthetic, units, scale):
    # Device stamps start at 0 here: the software device's timestamp matcher needs many
    # frames to settle when the first stamp is far from 0 (a quirk of the software device).
    dev = synthetic(depth=True, depth_units=units, t0_ms=0.0)
    cam = open_camera(dev, depth=True, align_depth=True)
    try:
        for _ in range(3):
            frame = cam.read()
            n = frame_number(frame.image)
            assert frame.depth is not None and frame.depth.dtype == np.uint16
            assert frame.depth.shape == (H, W)
            # The depth belongs to the same frameset as the colour image (same n).
            assert int(frame.depth[H // 2, W // 2]) == int(round((500 + n) * scale))
            time.sleep(0.05)
    finally:
        cam.close()


def test_a_camera_that_stops_sending_is_reported_gone(synthetic):
    dev = synthetic()
    cam = open_camera(dev, frame_timeout_s=0.2)
    try:
        cam.read()
        dev.stop()
        time.sleep(0.4)
        with pytest.raises(DeviceError, match="no new frame"):
            cam.read()
    finally:
        cam.close()
