"""The MuJoCo sim backend: scene model, world (physics + law + rendering), tasks, experts.

Importing this package does not import MuJoCo; :func:`build_world` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robot_rl.config import Config
    from robot_rl.sim.world import SimWorld


def build_world(cfg: "Config", cameras: list[str] | None = None) -> "SimWorld":
    """A SimWorld for ``cfg.task`` rendering ``cameras`` (all configured ones if None)."""
    from robot_rl.sim.tasks import task_class
    from robot_rl.sim.world import SimWorld

    task = task_class(cfg.task.name)(cfg)
    return SimWorld(cfg, task, cameras)
