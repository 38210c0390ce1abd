"""Robot arm backends behind :class:`robot_rl.interfaces.Robot`, and the one registry of them.

Each backend is a folder here holding its settings class, its robot, its loop and a
``SPEC`` (:class:`robot_rl_drivers.spec.RobotSpec`) in its ``__init__.py``; adding an arm
is adding a folder and one line to :data:`FOLDERS` (docs/adding-a-robot.md):

* ``sim``: the MuJoCo arm (robot_rl.sim), run by the sim node;
* ``topics``: another controller node's arm, read and commanded over topics;
* ``franka``: robot_rl's impedance law at 1 kHz through pylibfranka (``mode: torque``) or
  a ros2_control Cartesian impedance controller (``mode: ros2_control``);
* ``ur``: a UR e-series arm under robot_rl's admittance law at 500 Hz through ur_rtde;
* ``ros2_control``: any arm whose Cartesian controller runs in ros2_control (CRISP's or
  FZI's cartesian_controllers' topic contract), over topics.

Everything else asks this registry, never a backend's name: the config loader types
``robot.hardware`` with :func:`settings_class` (passed to it by :mod:`robot_rl.tasks`, as
the task registry's ``task.params`` classes are), the controller node builds the arm with
:func:`make_robot`, the CLI finds ``robot-rl <backend> check`` in ``SPEC.check``.

Why the config loader, which is core, may ask this registry: this module and every
backend's ``__init__.py`` and ``settings.py`` are import-light (stdlib, the config loader,
their SPEC dataclasses; tests/test_layout.py checks it): they describe the
backends and import none of their code. A backend's robot, loop, hardware library and
ROS node are imported only inside :func:`make_robot`, through the SPEC's factory string,
by the composition layer that builds an arm. Faults mid-episode surface as
:class:`~robot_rl_drivers.robots.faults.RobotFault`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from robot_rl.config.yaml_text import show
from robot_rl.errors import ConfigError
from robot_rl_drivers.spec import RobotSpec, load_specs, resolve

if TYPE_CHECKING:
    from robot_rl.config.sections import RobotConfig
    from robot_rl.interfaces import Robot

#: The registered arm backends, one line each: the folder under robot_rl_drivers/robots/.
FOLDERS = (
    "sim",
    "topics",
    "franka",
    "ur",
    "ros2_control",
)

_SPECS: dict[str, RobotSpec] = {}
_ADDED: dict[str, RobotSpec] = {}


def _specs() -> dict[str, RobotSpec]:
    if not _SPECS:
        _SPECS.update(load_specs(__name__, FOLDERS, _ADDED))
    return _SPECS


def register_robot_backend(spec: Optional[RobotSpec], name: str = "") -> None:
    """Add ``spec`` to the registry (a backend whose folder lives outside this package: a
    lab's own arm, a test's); ``None`` removes the backend ``name`` added before."""
    if spec is None:
        _ADDED.pop(name, None)
    else:
        _ADDED[spec.name] = spec
    _SPECS.clear()


def robot_names() -> tuple[str, ...]:
    """Every registered arm backend's name, in registry order."""
    return tuple(_specs())


def robot_specs() -> tuple[RobotSpec, ...]:
    """Every registered arm backend, in registry order."""
    return tuple(_specs().values())


def robot_spec(name: str) -> RobotSpec:
    """The backend ``robot.backend: name`` selects; ConfigError naming the known ones."""
    specs = _specs()
    if name not in specs:
        raise ConfigError(f"unknown robot backend {show(name)} (known: {', '.join(specs)})")
    return specs[name]


def settings_class(name: str) -> Optional[type]:
    """The dataclass of ``robot.hardware`` for backend ``name`` (None: a free mapping);
    ValueError saying which names exist (the config loader's lookup)."""
    specs = _specs()
    if name not in specs:
        raise ValueError(f"must be one of {', '.join(repr(n) for n in specs)}, got {show(name)}")
    return specs[name].settings


def robot_hardware(cfg: "RobotConfig", file: str = "<config>") -> Any:
    """The typed ``robot.hardware`` of ``cfg`` (the mapping itself where the backend has no settings)."""
    from robot_rl.config.hardware import typed

    return typed(robot_spec(cfg.backend).settings, cfg.hardware, file=file, where="robot.hardware")


def make_robot(cfg: "RobotConfig", *, file: str = "<config>", node: Optional[Any] = None,
               lib: Optional[str] = None) -> "Robot":
    """Connect to the arm ``cfg`` describes; errors are one line (ConfigError, DeviceError).

    ``node`` (a :mod:`robot_rl.ros` node, spun by the caller) is needed by backends that
    talk over topics; ``lib`` names the hardware library to import, None for the
    backend's own (``pylibfranka``, ``ur_rtde``; tests pass a fake).
    """
    spec = robot_spec(cfg.backend)
    if spec.factory is None:
        raise ConfigError(f"{file}: robot.backend is {cfg.backend!r}; make_robot builds the arms of "
                          f"{', '.join(repr(s.name) for s in robot_specs() if s.factory)}; {spec.doc}")
    return resolve(spec.factory)(cfg, robot_hardware(cfg, file), file=file, node=node, lib=lib)


def arm_has_posture(cfg: Any) -> bool:
    """Whether the arm a :class:`robot_rl.config.Config` drives has a null-space posture
    (:meth:`robot_rl.interfaces.Robot.set_posture`, the joint reset's way in).

    A 6-DoF arm (the sim UR5e, a UR over RTDE) has none and needs no joint reset; a
    ros2_control arm has one only where its contract has a posture topic. An arm with no
    settings that says nothing (``topics``: another controller node's arm) is taken to
    have one.
    """
    spec = robot_spec(cfg.robot.backend)
    if spec.posture is not None:
        return spec.posture(cfg)
    return bool(getattr(robot_hardware(cfg.robot, "<config>"), "has_posture", True))


def arm_joint_names(cfg: "RobotConfig", default_prefix: str = "fr3_joint", *, file: str = "<config>") -> list[str]:
    """The arm's joint names as the controller node publishes them: what the backend's
    settings say (``arm_joints``), else ``<default_prefix>1..7``."""
    joints = getattr(robot_hardware(cfg, file), "arm_joints", None)
    return list(joints(default_prefix)) if joints is not None else [f"{default_prefix}{i}" for i in range(1, 8)]


__all__ = ["FOLDERS", "RobotSpec", "arm_has_posture", "arm_joint_names", "make_robot", "register_robot_backend",
           "robot_hardware", "robot_names", "robot_spec", "robot_specs", "settings_class"]
