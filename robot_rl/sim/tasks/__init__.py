"""The MuJoCo tasks, by name. Each task has a ``Params`` dataclass checked at config load."""

from __future__ import annotations

from robot_rl.errors import ConfigError

_TASKS = {
    "PickCube": ("robot_rl.sim.tasks.pick_cube", "PickCube", "PickCubeParams"),
    "PegInsert": ("robot_rl.sim.tasks.peg_insert", "PegInsert", "PegInsertParams"),
}

TASK_NAMES = tuple(_TASKS)


def _lookup(name: str, index: int) -> type:
    import importlib

    if name not in _TASKS:
        raise ConfigError(f"unknown task '{name}' (known: {', '.join(_TASKS)})")
    module = importlib.import_module(_TASKS[name][0])
    return getattr(module, _TASKS[name][index])


def task_class(name: str) -> type:
    return _lookup(name, 1)


def task_params_class(name: str) -> type:
    return _lookup(name, 2)
