"""Typing the ``hardware:`` blocks of the robot and the cameras, with the classes a registry hands in.

``RobotConfig.hardware`` and ``CameraConfig.hardware`` are free-form mappings in
:mod:`robot_rl.config.sections`, because what they hold depends on the backend. This
package knows no backend: :func:`check_hardware` asks the caller's :class:`HardwareLookups`
for the settings dataclass of ``robot.backend`` and of each ``cameras.<name>.backend``
(the drivers' registries, :mod:`robot_rl_drivers.robots` and
:mod:`robot_rl_drivers.cameras`, handed in by :mod:`robot_rl.tasks` the way it hands in
the task registry's ``task.params`` classes) and checks the mapping with the same strict
loader as the rest of the config, so a typo names the file and the dotted key::

    configs/franka.yaml: unknown key 'robot.hardware.gripper.sped' (did you mean 'speed'?)

A backend name the registry does not know, or a hardware block of another backend, is
one line naming the file and the key as well. Nothing here imports a hardware library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional

from robot_rl.config.loader import build, source_of
from robot_rl.errors import ConfigError

#: backend name -> the dataclass of its ``hardware`` block (None: a free mapping); raises
#: ValueError, saying which names exist, for a name it does not know.
SettingsLookup = Callable[[str], Optional[type]]


def _untyped(name: str) -> Optional[type]:
    return None


@dataclass(frozen=True)
class HardwareLookups:
    """The registries' lookups for ``robot.hardware`` and ``cameras.<name>.hardware``.

    The default types nothing (every block stays a mapping): what a config built without
    the drivers' registries gets.
    """

    robot: SettingsLookup = _untyped
    camera: SettingsLookup = _untyped


#: Lookups that type no hardware block (the default of :func:`check_hardware`).
UNTYPED_HARDWARE = HardwareLookups()


def typed(cls: Optional[type], data: Any, *, file: str, where: str) -> Any:
    """``data`` built as ``cls`` (already typed data and ``cls`` None pass through as they are)."""
    if cls is None or dataclasses.is_dataclass(data):
        return data
    return build(cls, data, file=file, where=where)


def _settings(lookup: SettingsLookup, name: str, key: str, file: str) -> Optional[type]:
    try:
        return lookup(name)
    except ValueError as err:
        raise ConfigError(f"{source_of(file, key)}: '{key}' {err}") from None


def check_hardware(cfg: Any, file: str = "<config>", lookups: HardwareLookups = UNTYPED_HARDWARE) -> None:
    """Check every hardware block of a :class:`robot_rl.config.Config`, in place.

    Each mapping is replaced by its typed settings, so that later code can rely on them.
    Raises :class:`robot_rl.errors.ConfigError` naming ``file`` and the key.
    """
    cls = _settings(lookups.robot, cfg.robot.backend, "robot.backend", file)
    cfg.robot.hardware = typed(cls, cfg.robot.hardware, file=file, where="robot.hardware")
    for name, cam in cfg.cameras.items():
        cls = _settings(lookups.camera, cam.backend, f"cameras.{name}.backend", file)
        cam.hardware = typed(cls, cam.hardware, file=file, where=f"cameras.{name}.hardware")
