"""The MuJoCo sim backend: scene model, world (physics + law + rendering), the task and expert bases.

Sim knows no task by name: the tasks live in ``robot_rl/tasks/<task>/`` and the caller
hands a task object in. Importing this package does not import MuJoCo; :func:`build_world` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robot_rl.sim.task import SimTask
    from robot_rl.sim.world import SimWorld


def build_world(task: "SimTask", cameras: list[str] | None = None) -> "SimWorld":
    """A SimWorld for ``task`` (built on its config, ``task.cfg``) rendering ``cameras``
    (all configured ones if None)."""
    from robot_rl.sim.world import SimWorld

    return SimWorld(task.cfg, task, cameras)
