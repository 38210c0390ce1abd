"""The tasks, one folder each, and the one registry everything else asks.

A task is a folder, ``robot_rl/tasks/<folder>/``, holding everything about it (scene,
task logic, scripted expert, scripted reset, backward task, reward-recording scenarios,
parameter defaults; see :mod:`robot_rl.tasks.spec` for the layout), plus its config
``configs/<folder>.yaml``. Adding a task is adding a folder and one line to
:data:`FOLDERS`.

Only the composition layer asks the registry (:mod:`robot_rl.assemble`, the CLI,
training, the nodes, the benches): the core packages below it (sim, reset, reward,
envs, config, control, data) never import a task. Where they need a task's part they
get it from their caller, or from the task object itself (``SimTask.make_expert`` and
its siblings). That is also why loading a typed config lives here: the config package
types ``task.params`` with the class this registry hands it, and ``robot.hardware`` /
``cameras.<name>.hardware`` with the classes the drivers' registries hand it
(:mod:`robot_rl_drivers.robots`, :mod:`robot_rl_drivers.cameras`: import-light
descriptions of the backends, see there why core may ask them).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from robot_rl import config as _config
from robot_rl.config.bases import read_config_file
from robot_rl.config.hardware import HardwareLookups
from robot_rl.config.loader import ConfigSource
from robot_rl.errors import ConfigError
from robot_rl.tasks.spec import TaskSpec

if TYPE_CHECKING:
    from robot_rl.config import Config
    from robot_rl.sim.task import SimTask

#: The registered tasks, one line each: the folder under robot_rl/tasks/. The first is
#: the task of a config that names none.
FOLDERS = (
    "pick_cube",
    "peg_insert",
    "plug_insert",
    "connector_insert",  # real-only: no scene (robot_rl/tasks/real.py)
)

_SPECS: dict[str, TaskSpec] = {}


# The registries are asked when a config is loaded, not when this module is: ``import robot_rl``
# reads this registry (it registers the gymnasium ids), and the registries import robot_rl.


def _robot_settings(backend: str) -> type | None:
    from robot_rl_drivers.robots import settings_class

    return settings_class(backend)


def _camera_settings(backend: str) -> type | None:
    from robot_rl_drivers.cameras import settings_class

    return settings_class(backend)


#: The backend registries' settings lookups, for ``robot.hardware`` and ``cameras.<name>.hardware``.
HARDWARE = HardwareLookups(robot=_robot_settings, camera=_camera_settings)


def _specs() -> dict[str, TaskSpec]:
    if not _SPECS:
        for folder in FOLDERS:
            spec = importlib.import_module(f"robot_rl.tasks.{folder}").SPEC
            if spec.folder != folder:
                raise RuntimeError(f"robot_rl/tasks/{folder}/__init__.py: SPEC.folder is '{spec.folder}'")
            _SPECS[spec.name] = spec
    return _SPECS


def task_names() -> tuple[str, ...]:
    """Every registered task's name, in registry order."""
    return tuple(_specs())


def all_tasks() -> tuple[TaskSpec, ...]:
    """Every registered task, in registry order."""
    return tuple(_specs().values())


def sim_tasks() -> tuple[TaskSpec, ...]:
    """The registered tasks that have a MuJoCo scene (every one but the real-only ones), in registry order."""
    return tuple(spec for spec in _specs().values() if not spec.real_only)


def get_task(name: str) -> TaskSpec:
    """The task called ``name`` (``task.name`` in a config); a ConfigError names the known ones."""
    specs = _specs()
    if name not in specs:
        raise ConfigError(f"unknown task '{name}' (known: {', '.join(specs)})")
    return specs[name]


def make_task(cfg: "Config") -> "SimTask":
    """A fresh sim task object for ``cfg.task``, to build a world on (``robot_rl.sim.build_world``)."""
    return get_task(cfg.task.name).make_task(cfg)


def params_class(name: str) -> type:
    """The parameters dataclass of task ``name``; raises ValueError saying which names exist."""
    specs = _specs()
    if name not in specs:
        raise ValueError(f"must be one of {', '.join(repr(n) for n in specs)}, got {name!r}")
    return specs[name].params


def config_from_dict(data: dict[str, Any], file: str = "<config>") -> "Config":
    """A checked :class:`~robot_rl.config.Config` from a raw mapping, ``task.params`` typed by its task.

    A config that names no task gets the first registered one.
    """
    data = {} if data is None else data
    task = data.get("task") if isinstance(data, dict) else None
    if isinstance(data, dict) and (task is None or (isinstance(task, dict) and "name" not in task)):
        data = {**data, "task": {**(task or {}), "name": task_names()[0]}}
    cfg = _config.build_config(data, file, params_class, HARDWARE)
    spec = get_task(cfg.task.name)
    if spec.real_only:
        from robot_rl.tasks.real import check_real_config

        check_real_config(spec, cfg, data, file)
    return cfg


def load_config(path: str | Path, overrides: Iterable[str] = ()) -> "Config":
    """Load and check a session config file (with its ``base``, :mod:`robot_rl.config.bases`);
    ``overrides`` are ``key.sub=value`` strings."""
    path = Path(path)
    overrides = list(overrides)
    data = _config.apply_overrides(read_config_file(path), overrides)
    task = data.get("task")
    name = task.get("name") if isinstance(task, dict) else None
    _config.check_override_keys(overrides, params_class, name if isinstance(name, str) and name else task_names()[0])
    return config_from_dict(data, file=ConfigSource(str(path), overrides))  # value errors name their --set


__all__ = ["FOLDERS", "HARDWARE", "TaskSpec", "all_tasks", "config_from_dict", "get_task", "load_config", "make_task",
           "params_class", "sim_tasks", "task_names"]
