"""Intel RealSense cameras through pyrealsense2, opened by serial number.

The backend works at librealsense's *sensor* level: it finds the device with the
configured serial, picks the colour (and, if asked, depth) stream profiles that match
the config, opens the sensors that own them, sets exposure / gain / white balance and
starts them into one ``rs.syncer``. A background thread takes framesets from the syncer,
aligns depth to colour when asked, and keeps the newest :class:`Frame`.

Why not ``rs.pipeline``: the sensor level is where options, profiles and sync are
explicit, and it is the level at which ``pyrealsense2.software_device`` can stand in
for a camera, so the tests run this very code on synthetic frames (pyrealsense2 2.59
does not list a software device to a pipeline). It also handles the D405, whose colour
stream comes from the depth module.

Frame stamps are host wall-clock seconds (``time.time()`` scale), like every stamp in a
robot_rl process:
* frames in the ``global_time`` or ``system_time`` domain already carry host time (ms);
* ``hardware_clock`` frames (device clock, ms since the device started) are mapped onto
  host time with the smallest arrival-minus-device offset seen over the last frames,
  which removes the USB transfer jitter but keeps the device's even spacing.
"""

from __future__ import annotations

import collections
import logging
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from robot_rl.config.sections import CameraConfig
from robot_rl.errors import DeviceError, install_extra
from robot_rl.interfaces import Camera, Frame
from robot_rl_drivers.cameras.grabber import FrameGrabber
from robot_rl_drivers.cameras.realsense.settings import RealSenseSettings

log = logging.getLogger("robot_rl_drivers.cameras.realsense.camera")


def import_pyrealsense2() -> Any:
    """pyrealsense2, or a DeviceError saying how to install it."""
    try:
        import pyrealsense2 as rs
    except ImportError as err:
        hint = (" (apt-get install libusb-1.0-0)" if "libusb" in str(err)
                else f" ({install_extra('real')})")
        raise DeviceError(f"the realsense camera backend needs pyrealsense2: {err}{hint}") from None
    return rs


class HostClockMapper:
    """Maps device-clock stamps (seconds) onto host time: ``t_dev + min(arrival - t_dev)``.

    Transfer latency is always positive, so the smallest offset over a window is the
    best estimate of the clock offset; a window (not all time) follows clock drift.
    """

    def __init__(self, window: int = 300) -> None:
        self._offsets: collections.deque[float] = collections.deque(maxlen=window)

    def __call__(self, device_s: float, arrival_s: float) -> float:
        self._offsets.append(arrival_s - device_s)
        return device_s + min(self._offsets)


class RealSenseCamera(Camera):
    """One RealSense camera (see the module docstring).

    ``devices`` lists the candidate devices; it defaults to the devices librealsense
    enumerates, and tests pass a ``pyrealsense2.software_device`` instead.
    """

    def __init__(self, name: str, cfg: CameraConfig, settings: RealSenseSettings, *,
                 devices: Optional[Callable[[], Sequence[Any]]] = None) -> None:
        rs = self._rs = import_pyrealsense2()
        self.name = name
        self.cfg = cfg
        self.settings = settings
        self._clock = HostClockMapper()
        self._sensors: list[Any] = []
        self._grabber: FrameGrabber | None = None
        self._depth_scale_mm = 1.0
        self._align = None

        found = list(devices() if devices is not None else rs.context().query_devices())
        serials = [_info(d, rs.camera_info.serial_number) for d in found]
        if settings.serial not in serials:
            connected = ", ".join(serials) if serials else "none"
            raise DeviceError(f"camera '{name}': no RealSense with serial {settings.serial} is connected "
                              f"(connected: {connected})")
        self.device = found[serials.index(settings.serial)]

        fps = int(round(cfg.fps))
        color_sensor, color_profile = self._find_profile(rs.stream.color, rs.format.rgb8, cfg.width, cfg.height, fps)
        chosen: dict[int, tuple[Any, list[Any]]] = {id(color_sensor): (color_sensor, [color_profile])}
        self.color_sensor = color_sensor
        self.depth_sensor = None
        if settings.depth:
            dw, dh = (settings.depth_width, settings.depth_height)
            depth_sensor, depth_profile = self._find_depth_profile(dw, dh, fps)
            chosen.setdefault(id(depth_sensor), (depth_sensor, []))[1].append(depth_profile)
            self.depth_sensor = depth_sensor
            if depth_sensor.supports(rs.option.depth_units):
                self._depth_scale_mm = float(depth_sensor.get_option(rs.option.depth_units)) * 1000.0
            if settings.align_depth:
                self._align = rs.align(rs.stream.color)

        self._syncer = rs.syncer(2)
        try:
            for sensor, profiles in chosen.values():
                sensor.open(profiles if len(profiles) > 1 else profiles[0])
                self._sensors.append(sensor)
            self._configure(color_sensor)
            for sensor in self._sensors:
                sensor.start(self._syncer)
        except DeviceError:
            self.close()
            raise
        except RuntimeError as err:
            self.close()
            raise DeviceError(f"camera '{name}' (RealSense {settings.serial}): cannot start streaming: {err}") from None
        self._grabber = FrameGrabber(name, self._grab, settings.frame_timeout_s).start()
        log.info("camera '%s': RealSense %s streaming %dx%d @ %d fps%s", name, settings.serial,
                 cfg.width, cfg.height, fps, " + depth" if settings.depth else "")

    # ---------------------------------------------------------------- setup

    def _find_profile(self, stream: Any, fmt: Any, width: int, height: int, fps: int) -> tuple[Any, Any]:
        offered = []
        for sensor in self.device.query_sensors():
            for profile in sensor.get_stream_profiles():
                if profile.stream_type() != stream or not profile.is_video_stream_profile():
                    continue
                video = profile.as_video_stream_profile()
                mode = (video.width(), video.height(), profile.fps())
                if profile.format() == fmt and mode == (width, height, fps):
                    return sensor, profile
                if profile.format() == fmt:
                    offered.append(mode)
        kind = "colour" if stream == self._rs.stream.color else "depth"
        modes = ", ".join(f"{w}x{h}@{f}" for w, h, f in sorted(set(offered))) or "none"
        raise DeviceError(f"camera '{self.name}' (RealSense {self.settings.serial}) has no {kind} mode "
                          f"{width}x{height}@{fps} in {self._rs_format_name(fmt)} (offered: {modes})")

    def _find_depth_profile(self, width: Optional[int], height: Optional[int], fps: int) -> tuple[Any, Any]:
        rs = self._rs
        if width is not None and height is not None:
            return self._find_profile(rs.stream.depth, rs.format.z16, width, height, fps)
        for w, h in ((self.cfg.width, self.cfg.height), (640, 480), (848, 480)):
            try:
                return self._find_profile(rs.stream.depth, rs.format.z16, w, h, fps)
            except DeviceError:
                continue
        return self._find_profile(rs.stream.depth, rs.format.z16, self.cfg.width, self.cfg.height, fps)

    def _configure(self, sensor: Any) -> None:
        rs, s = self._rs, self.settings
        if s.global_time:
            for each in self._sensors:
                if each.supports(rs.option.global_time_enabled):
                    each.set_option(rs.option.global_time_enabled, 1)
        if s.exposure is None:
            self._set(sensor, rs.option.enable_auto_exposure, 1, "auto exposure", required=False)
        else:
            self._set(sensor, rs.option.enable_auto_exposure, 0, "auto exposure", required=False)
            self._set(sensor, rs.option.exposure, s.exposure, "exposure")
            if s.gain is not None:
                self._set(sensor, rs.option.gain, s.gain, "gain")
        if s.white_balance is None:
            self._set(sensor, rs.option.enable_auto_white_balance, 1, "auto white balance", required=False)
        else:
            self._set(sensor, rs.option.enable_auto_white_balance, 0, "auto white balance", required=False)
            self._set(sensor, rs.option.white_balance, s.white_balance, "white_balance")

    def _set(self, sensor: Any, option: Any, value: float, what: str, required: bool = True) -> None:
        where = f"camera '{self.name}' (RealSense {self.settings.serial})"
        if not sensor.supports(option):
            if required:
                raise DeviceError(f"{where}: its colour sensor has no {what} setting")
            return
        rng = sensor.get_option_range(option)
        if not rng.min <= value <= rng.max:
            raise DeviceError(f"{where}: {what} {value:g} is outside the device's range {rng.min:g}..{rng.max:g}")
        try:
            sensor.set_option(option, float(value))
        except RuntimeError as err:
            raise DeviceError(f"{where}: cannot set {what} to {value:g}: {err}") from None

    @staticmethod
    def _rs_format_name(fmt: Any) -> str:
        return str(fmt).split(".")[-1]

    # ---------------------------------------------------------------- streaming

    def _grab(self) -> Optional[Frame]:
        ok, frames = self._syncer.try_wait_for_frames(100)
        if not ok:
            return None
        arrival = time.time()
        rs = self._rs
        color = frames.first_or_default(rs.stream.color)
        if not color:
            return None  # a depth-only set while the colour frame is still on its way
        depth_image = None
        if self.settings.depth:
            depth = frames.first_or_default(rs.stream.depth)
            if not depth:
                return None
            if self._align is not None:
                aligned = self._align.process(frames)
                depth = aligned.first_or_default(rs.stream.depth)
            depth_image = self._depth_mm(np.asanyarray(depth.get_data()))
        image = np.array(np.asanyarray(color.get_data()), dtype=np.uint8, copy=True)
        if image.shape != (self.cfg.height, self.cfg.width, 3):
            raise DeviceError(f"delivered a {image.shape} frame, expected ({self.cfg.height}, {self.cfg.width}, 3)")
        return Frame(image=image, stamp=self._stamp(color, arrival), depth=depth_image)

    def _depth_mm(self, raw: np.ndarray) -> np.ndarray:
        if abs(self._depth_scale_mm - 1.0) < 1e-9:
            return np.array(raw, dtype=np.uint16, copy=True)
        return np.clip(np.rint(raw * self._depth_scale_mm), 0, 65535).astype(np.uint16)

    def _stamp(self, frame: Any, arrival: float) -> float:
        domain = frame.get_frame_timestamp_domain()
        stamp_s = frame.get_timestamp() / 1000.0
        if domain in (self._rs.timestamp_domain.global_time, self._rs.timestamp_domain.system_time):
            return stamp_s
        return self._clock(stamp_s, arrival)

    # ---------------------------------------------------------------- Camera

    def read(self) -> Frame:
        if self._grabber is None:
            raise DeviceError(f"camera '{self.name}' is closed")
        return self._grabber.read()

    def close(self) -> None:
        if self._grabber is not None:
            self._grabber.stop()
            self._grabber = None
        for sensor in self._sensors:
            for step in (sensor.stop, sensor.close):
                try:
                    step()
                except RuntimeError:
                    pass  # already stopped, or never started
        self._sensors = []


def _info(device: Any, key: Any) -> str:
    try:
        return str(device.get_info(key))
    except RuntimeError:
        return "?"


def list_devices() -> list[str]:
    """One line per connected RealSense, for ``robot-rl cameras list`` (the SPEC's probe);
    a line saying why when librealsense cannot list them."""
    try:
        rs = import_pyrealsense2()
        devices = list(rs.context().query_devices())
        lines = [f"realsense {dev.get_info(rs.camera_info.serial_number)}  {dev.get_info(rs.camera_info.name)}"
                 for dev in devices]
    except Exception as err:  # noqa: BLE001 - listing goes on without librealsense
        return [f"realsense: cannot enumerate ({err})"]
    return lines or ["realsense: none connected"]
