"""What the registry knows of a task without importing it: :class:`TaskSpec`.

Each task folder's ``__init__.py`` holds one ``SPEC = TaskSpec(...)`` and imports nothing
else, so that listing the tasks (for ``--help`` text, the gymnasium ids, a config's
``task.name`` check) loads no sim. The folder's parts are found by a fixed layout and
loaded only when asked for:

* ``params.py``: ``<Name>Params``, the dataclass of ``task.params`` and their defaults
  (light: every config load imports it);
* ``task.py``: ``<Name>``, the :class:`~robot_rl.sim.task.SimTask` subclass (scene,
  success, reward, ground-truth state), whose class attributes name the other parts:
  ``Expert`` (``expert.py``), ``Reset`` (``reset.py``), ``Backward`` (``backward.py``)
  and ``Scenarios`` (``scenarios.py``); its scene is in ``scene.py``;
* ``configs/<folder>.yaml``: the task's session config (env, robot box, learner).

A task that lives only on a real cell (``real_only=True``) has ``__init__.py`` and
``params.py`` and nothing else: no scene, no scripted expert, no scripted task reset.
Its spaces come from its config (:func:`robot_rl.assemble.config_spaces_env`), its
success from the reward classifier, its resets from poses (:mod:`robot_rl.tasks.real`);
asking it for a sim part is one :class:`~robot_rl.errors.ConfigError` saying what to use
instead (:meth:`TaskSpec.no_sim`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from robot_rl.errors import ConfigError

if TYPE_CHECKING:
    import gymnasium as gym

    from robot_rl.config import Config
    from robot_rl.sim.experts import ScriptedExpert
    from robot_rl.sim.task import SimTask


@dataclass(frozen=True)
class TaskSpec:
    """One task: its names, a few facts for code that has no sim, and its parts on demand."""

    name: str  # task.name in configs, the SimTask subclass, the gymnasium id robot_rl/<name>-v0
    folder: str  # robot_rl/tasks/<folder>/ and configs/<folder>.yaml
    summary: str  # one line: what is done, and what counts as success
    #: Opening of a real gripper at the start of an episode: 1 open, 0 closed on a part
    #: that is held from the start (a robot reset must then never open the fingers).
    start_gripper: float = 1.0
    #: bench/reset_free.py: config overrides on top of the task's config, and scripted
    #: demonstrations per direction, for a 30-minute forward-backward run on a CPU.
    reset_free_overrides: tuple[str, ...] = ()
    reset_free_demos: int = 20
    #: The task lives only on a real cell: no MuJoCo scene, nothing builds a sim for it.
    real_only: bool = False

    def no_sim(self, doing: str) -> ConfigError:
        """The one-line error for ``doing`` (a sim-only thing) on a real-only task."""
        return ConfigError(
            f"task '{self.name}' lives only on a real cell (robot_rl/tasks/{self.folder}/ has no MuJoCo scene): "
            f"{doing} needs a sim; run it on the cell instead: robot-rl launch {self.config} (the actor node over "
            f"the arm's topics) with robot-rl learner --config {self.config} (see docs/adding-a-task.md)")

    @property
    def env_id(self) -> str:
        """The gymnasium id (registered by ``import robot_rl``; its builder is in :mod:`robot_rl.assemble`)."""
        return f"robot_rl/{self.name}-v0"

    @property
    def config(self) -> str:
        """The name of the task's config (``robot_rl.paths.resolve_config`` finds the file)."""
        return self.folder

    def _module(self, part: str) -> ModuleType:
        return importlib.import_module(f"robot_rl.tasks.{self.folder}.{part}")

    @property
    def params(self) -> type:
        """The dataclass of the task's parameters (light to import)."""
        return getattr(self._module("params"), f"{self.name}Params")

    @property
    def task(self) -> type["SimTask"]:
        """The SimTask subclass (imports the sim's task-agnostic parts, not MuJoCo)."""
        if self.real_only:
            raise self.no_sim("a sim task (scene, scripted expert, scripted reset)")
        return getattr(self._module("task"), self.name)

    @property
    def parts(self) -> dict[str, type]:
        """Every part by its role: what a new task must provide."""
        task = self.task
        return {"params": task.Params, "task": task, "expert": task.Expert, "reset": task.Reset,
                "backward": task.Backward, "scenarios": task.Scenarios}

    def make_task(self, cfg: "Config") -> "SimTask":
        """A fresh task object for ``cfg`` (not yet bound to a world)."""
        return self.task(cfg)

    def make_expert(self, env: "gym.Env", noise: float = 0.0, seed: int | None = None) -> "ScriptedExpert":
        """The scripted expert on ``env``: a sim env, or one over topics (the expert needs only the RobotEnv API)."""
        return self.task.make_expert(env, noise=noise, seed=seed)
