"""Camera backends behind :class:`robot_rl.interfaces.Camera`, the one registry of them, and
the factory that picks one.

Each backend is a folder here with a ``SPEC`` (:class:`robot_rl_drivers.spec.CameraSpec`)
in its ``__init__.py``; adding one is adding a folder and a line to :data:`FOLDERS`:

* ``sim``: rendered from a MuJoCo world, so it needs that world. The sim registers its
  factory with :func:`register_camera_backend` (or a caller passes ``factories=``); this
  package never imports robot_rl.sim;
* ``topic``: none here; another driver publishes the images and the actor node reads
  them (:class:`robot_rl.nodes.camera.TopicCamera`);
* ``realsense``: :class:`~robot_rl_drivers.cameras.realsense.camera.RealSenseCamera` (pyrealsense2);
* ``opencv``: :class:`~robot_rl_drivers.cameras.opencv.camera.OpenCVCamera` (V4L2 through OpenCV).

The config loader types ``cameras.<name>.hardware`` with :func:`settings_class` (handed to
it by :mod:`robot_rl.tasks`; this module and the SPECs import no camera code, see
:mod:`robot_rl_drivers.robots` for why that lets core ask). Backends deliver native
frames of ``cfg.width x cfg.height``; crop and resize (``cfg.crop``, ``cfg.resize``) are
the env wrapper's job. Hardware libraries are imported only when their backend is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from robot_rl.config.yaml_text import show
from robot_rl.errors import ConfigError
from robot_rl_drivers.spec import CameraSpec, load_specs, resolve

if TYPE_CHECKING:
    from robot_rl.config.sections import CameraConfig
    from robot_rl.interfaces import Camera

CameraFactory = Callable[[str, "CameraConfig"], "Camera"]

#: The registered camera backends, one line each: the folder under robot_rl_drivers/cameras/.
FOLDERS = (
    "sim",
    "topic",
    "realsense",
    "opencv",
)

_REGISTERED: dict[str, CameraFactory] = {}
_SPECS: dict[str, CameraSpec] = {}
_ADDED: dict[str, CameraSpec] = {}


def _specs() -> dict[str, CameraSpec]:
    if not _SPECS:
        _SPECS.update(load_specs(__name__, FOLDERS, _ADDED))
    return _SPECS


def add_camera_spec(spec: Optional[CameraSpec], name: str = "") -> None:
    """Add ``spec`` to the registry (a backend whose folder lives outside this package);
    ``None`` removes the backend ``name`` added before."""
    if spec is None:
        _ADDED.pop(name, None)
    else:
        _ADDED[spec.name] = spec
    _SPECS.clear()


def camera_specs() -> tuple[CameraSpec, ...]:
    """Every registered camera backend, in registry order."""
    return tuple(_specs().values())


def camera_spec(name: str) -> CameraSpec:
    """The backend ``cameras.<name>.backend: name`` selects; ConfigError naming the known ones."""
    specs = _specs()
    if name not in specs:
        raise ConfigError(f"unknown camera backend {show(name)} (known: {', '.join(specs)})")
    return specs[name]


def settings_class(name: str) -> Optional[type]:
    """The dataclass of ``cameras.<name>.hardware`` for backend ``name`` (None: a free
    mapping); ValueError saying which names exist (the config loader's lookup)."""
    specs = _specs()
    if name not in specs:
        raise ValueError(f"must be one of {', '.join(repr(n) for n in specs)}, got {show(name)}")
    return specs[name].settings


def camera_settings(cfg: "CameraConfig", *, file: str = "<config>", where: str = "cameras.<name>.hardware") -> Any:
    """The typed ``hardware`` settings of one camera (the mapping itself where the backend has none)."""
    from robot_rl.config.hardware import typed

    return typed(camera_spec(cfg.backend).settings, cfg.hardware, file=file, where=where)


def register_camera_backend(backend: str, factory: Optional[CameraFactory]) -> None:
    """Make ``make_camera`` build cameras of ``backend`` with ``factory(name, cfg)``.

    ``None`` removes the registration. A registered factory takes precedence over the
    built-in backends of the same name.
    """
    if factory is None:
        _REGISTERED.pop(backend, None)
    else:
        _REGISTERED[backend] = factory


def make_camera(name: str, cfg: "CameraConfig", *, file: str = "<config>",
                factories: Optional[Mapping[str, CameraFactory]] = None) -> "Camera":
    """Build and start camera ``name``; errors are one line naming the camera.

    ``factories`` (backend -> factory) override the registered ones for this call.
    """
    factory = (factories or {}).get(cfg.backend) or _REGISTERED.get(cfg.backend)
    if factory is not None:
        return factory(name, cfg)
    where = f"cameras.{name}.hardware"
    try:
        spec = camera_spec(cfg.backend)
    except ConfigError:
        raise ConfigError(f"{file}: cameras.{name}.backend: unknown camera backend {cfg.backend!r}") from None
    if spec.factory is not None:
        return resolve(spec.factory)(name, cfg, camera_settings(cfg, file=file, where=where))
    if spec.reads_topic:
        topic = camera_settings(cfg, file=file, where=where).subscribed_topic
        raise ConfigError(f"camera '{name}': backend {spec.name} is another driver's image topic ({topic}), read by "
                          f"the actor node; robot_rl opens no device for it (check it with: ros2 topic hz {topic})")
    raise ConfigError(f"camera '{name}': {spec.doc}")


def make_cameras(cfgs: Mapping[str, "CameraConfig"], *, file: str = "<config>",
                 factories: Optional[Mapping[str, CameraFactory]] = None) -> dict[str, "Camera"]:
    """All cameras of a config; if one fails, those already started are closed again."""
    cameras: dict[str, "Camera"] = {}
    try:
        for name, cfg in cfgs.items():
            cameras[name] = make_camera(name, cfg, file=file, factories=factories)
    except BaseException:
        for camera in cameras.values():
            camera.close()
        raise
    return cameras


__all__ = ["FOLDERS", "CameraFactory", "CameraSpec", "add_camera_spec", "camera_settings", "camera_spec",
           "camera_specs", "make_camera", "make_cameras", "register_camera_backend", "settings_class"]
