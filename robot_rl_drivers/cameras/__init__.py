"""Camera backends behind :class:`robot_rl.interfaces.Camera`, and the factory that picks one.

``make_camera(name, cfg)`` builds the backend ``cfg.backend`` names:

* ``realsense``: :class:`~robot_rl_drivers.cameras.realsense.RealSenseCamera` (pyrealsense2);
* ``opencv``: :class:`~robot_rl_drivers.cameras.opencv.OpenCVCamera` (V4L2 through OpenCV);
* ``topic``: none here; another driver publishes the images and the actor node reads
  them (:class:`robot_rl.nodes.camera.TopicCamera`);
* ``sim``: rendered from a MuJoCo world, so it needs that world. The sim registers its
  factory with :func:`register_camera_backend` (or a caller passes ``factories=``); this
  package never imports robot_rl.sim.

Backends deliver native frames of ``cfg.width x cfg.height``; crop and resize
(``cfg.crop``, ``cfg.resize``) are the env wrapper's job. Hardware libraries are imported
only when their backend is built.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

from robot_rl.config.hardware import camera_settings
from robot_rl.config.sections import CameraConfig
from robot_rl.errors import ConfigError
from robot_rl.interfaces import Camera

CameraFactory = Callable[[str, CameraConfig], Camera]

_REGISTERED: dict[str, CameraFactory] = {}


def register_camera_backend(backend: str, factory: Optional[CameraFactory]) -> None:
    """Make ``make_camera`` build cameras of ``backend`` with ``factory(name, cfg)``.

    ``None`` removes the registration. A registered factory takes precedence over the
    built-in backends of the same name.
    """
    if factory is None:
        _REGISTERED.pop(backend, None)
    else:
        _REGISTERED[backend] = factory


def make_camera(name: str, cfg: CameraConfig, *, file: str = "<config>",
                factories: Optional[Mapping[str, CameraFactory]] = None) -> Camera:
    """Build and start camera ``name``; errors are one line naming the camera.

    ``factories`` (backend -> factory) override the registered ones for this call.
    """
    factory = (factories or {}).get(cfg.backend) or _REGISTERED.get(cfg.backend)
    if factory is not None:
        return factory(name, cfg)
    where = f"cameras.{name}.hardware"
    if cfg.backend == "realsense":
        from robot_rl_drivers.cameras.realsense import RealSenseCamera

        return RealSenseCamera(name, cfg, camera_settings(cfg, file=file, where=where))
    if cfg.backend == "opencv":
        from robot_rl_drivers.cameras.opencv import OpenCVCamera

        return OpenCVCamera(name, cfg, camera_settings(cfg, file=file, where=where))
    if cfg.backend == "topic":
        topic = camera_settings(cfg, file=file, where=where).subscribed_topic
        raise ConfigError(f"camera '{name}': backend topic is another driver's image topic ({topic}), read by the "
                          f"actor node; robot_rl opens no device for it (check it with: ros2 topic hz {topic})")
    if cfg.backend == "sim":
        raise ConfigError(f"camera '{name}': the sim backend renders from a MuJoCo world; build it through "
                          "robot_rl.sim, which registers it with register_camera_backend('sim', ...)")
    raise ConfigError(f"{file}: cameras.{name}.backend: unknown camera backend {cfg.backend!r}")


def make_cameras(cfgs: Mapping[str, CameraConfig], *, file: str = "<config>",
                 factories: Optional[Mapping[str, CameraFactory]] = None) -> dict[str, Camera]:
    """All cameras of a config; if one fails, those already started are closed again."""
    cameras: dict[str, Camera] = {}
    try:
        for name, cfg in cfgs.items():
            cameras[name] = make_camera(name, cfg, file=file, factories=factories)
    except BaseException:
        for camera in cameras.values():
            camera.close()
        raise
    return cameras


__all__ = ["CameraFactory", "make_camera", "make_cameras", "register_camera_backend"]
