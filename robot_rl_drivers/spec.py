"""What a hardware backend's folder tells the rest of robot_rl: its ``SPEC``.

Each backend is one folder, ``robot_rl_drivers/robots/<folder>/`` or
``robot_rl_drivers/cameras/<folder>/``, whose ``__init__.py`` holds a ``SPEC``: the name a
config's ``backend`` key gives, the dataclass of its ``hardware`` block, and, as
``"module:function"`` strings, the function that builds it and the command that checks
it. A SPEC imports nothing but its settings module (the settings import only the config
loader), so the config loader may ask the registry for a settings class without a
hardware library, a ROS node or a control loop coming along; the backend's code is
imported only when :func:`resolve` turns a string into the function, by whoever builds
the backend (the nodes, the CLI). The registry of each kind is the package of that kind:
:mod:`robot_rl_drivers.robots`, :mod:`robot_rl_drivers.cameras`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class RobotSpec:
    """One arm backend (``robot.backend``).

    ``factory`` is ``"module:function"``, called ``function(cfg, hw, *, file, node, lib)``
    with the robot section and its typed settings; None: robot_rl builds no arm for it
    here (the sim's arm lives in the sim node's world, a ``topics`` arm is another
    controller node's). ``node`` names the node of ours that runs the arm
    (``controller_node``, ``sim_node``) or is empty when none of ours does. ``check``
    is the module of ``robot-rl <name> ...`` (its ``add_arguments`` and ``run``).
    ``posture`` answers "does this arm take a null-space posture" from the whole config
    where the settings cannot (the sim: its ``sim.arm``); otherwise the typed settings'
    ``has_posture`` answers, and an arm without settings is taken to have one.
    """

    name: str
    folder: str
    settings: Optional[type] = None
    factory: Optional[str] = None
    check: Optional[str] = None
    check_help: str = ""
    node: str = "controller_node"
    posture: Optional[Callable[[Any], bool]] = None
    doc: str = ""


@dataclass(frozen=True)
class CameraSpec:
    """One camera backend (``cameras.<name>.backend``).

    ``factory`` is ``"module:class"``, called ``cls(name, cfg, settings)``; None: no
    device of ours (``sim`` renders from the MuJoCo world, ``topic`` is another driver's
    topic). ``reads_topic``: the actor reads the camera from the topic its settings name
    (``subscribed_topic``), and robot_rl starts no camera node for it. ``probe`` is
    ``"module:function"`` listing connected devices for ``robot-rl cameras list``.
    """

    name: str
    folder: str
    settings: Optional[type] = None
    factory: Optional[str] = None
    reads_topic: bool = False
    simulated: bool = False
    probe: Optional[str] = None
    doc: str = ""


def resolve(path: str) -> Any:
    """The object ``"package.module:name"`` names (imports the module now)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def load_specs(package: str, folders: tuple[str, ...], extra: dict[str, Any]) -> dict[str, Any]:
    """``{spec.name: spec}`` of ``<package>.<folder>.SPEC`` for each folder, then ``extra``
    (specs added through a registry's hook); a SPEC whose folder is not its own is refused."""
    specs: dict[str, Any] = {}
    for folder in folders:
        spec = importlib.import_module(f"{package}.{folder}").SPEC
        if spec.folder != folder:
            raise RuntimeError(f"{package.replace('.', '/')}/{folder}/__init__.py: SPEC.folder is '{spec.folder}'")
        specs[spec.name] = spec
    specs.update(extra)
    return specs
