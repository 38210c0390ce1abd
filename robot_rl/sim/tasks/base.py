"""What a sim task provides: scene objects, randomised initial states, ground-truth success.

A :class:`SimTask` is also the :class:`~robot_rl.envs.task.EpisodeTask` that ``RobotEnv``
uses in sim. Its ``reset`` here is the *sim shortcut*: objects and the arm are
teleported into a new randomised initial state. Resets that move objects with the robot
through the controller live in robot_rl.reset.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from robot_rl.config import Config
from robot_rl.config.reset import resolve_mode
from robot_rl.control.transforms import quat_mul, rpy_to_quat
from robot_rl.envs.task import EpisodeTask
from robot_rl.sim.model import SceneParts

if TYPE_CHECKING:
    from robot_rl.sim.world import SimWorld

SETTLE_S = 0.1  # physics time after a teleport reset, so objects come to rest


class SimTask(EpisodeTask, abc.ABC):
    """Base class of the MuJoCo tasks. Subclasses set ``name`` and ``Params``."""

    name: str = ""
    Params: type = object

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.params: Any = cfg.task.params
        self.world: "SimWorld | None" = None
        # What reset() runs instead of the teleport: robot_rl.reset installs a scripted
        # reset here (reset.mode: scripted) or a forward-backward hand-over.
        self.reset_routine: Callable[[np.random.Generator], Any] | None = None

    # --- scene ------------------------------------------------------------------
    @abc.abstractmethod
    def scene_parts(self) -> SceneParts:
        """MJCF for the task's objects."""

    def bind(self, world: "SimWorld") -> None:
        """Look up ids once the model exists."""
        self.world = world

    # --- EpisodeTask --------------------------------------------------------------
    def reset(self, rng: np.random.Generator) -> None:
        """A new initial state: the installed reset routine, else the teleport (sim shortcut)."""
        if self.reset_routine is None and resolve_mode(self.cfg) == "scripted":
            from robot_rl.reset.sim import make_task_reset

            self.reset_routine = make_task_reset(self)
        if self.reset_routine is not None:
            self.reset_routine(rng)
        else:
            self.teleport(rng)

    def teleport(self, rng: np.random.Generator) -> None:
        """The sim shortcut: teleport objects and arm to a new random initial state, then settle."""
        world = self._world()
        self.place_objects(rng)
        pos, quat = self.sample_start_pose(rng)
        q = world.solve_ik(pos, quat)
        world.set_arm_joints(q, gripper=self.start_gripper())
        world.robot.gripper_target = self.start_gripper()
        world.robot.start()
        world.sleep_until(world.now() + SETTLE_S)
        world.robot.start()  # adopt the settled pose as the target: no jump on the first step

    def sample_start_pose(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The robot's reset pose with the task's random perturbation (xyz, yaw)."""
        rcfg = self.cfg.robot
        pos = np.asarray(rcfg.reset_pos, dtype=float) + rng.uniform(-1, 1, 3) * np.asarray(self.params.start_pos_range)
        yaw = rng.uniform(-1, 1) * self.params.start_yaw_range
        quat = quat_mul(rpy_to_quat([0.0, 0.0, yaw]), rpy_to_quat(rcfg.reset_rpy))
        return pos, quat

    def start_gripper(self) -> float:
        """Gripper opening at the start of an episode."""
        return 1.0

    @abc.abstractmethod
    def place_objects(self, rng: np.random.Generator) -> None:
        """Put the task's objects in a random initial state."""

    @abc.abstractmethod
    def object_in_start_range(self) -> bool:
        """True when the objects are where ``place_objects`` could have put them."""

    def _world(self) -> "SimWorld":
        if self.world is None:
            raise RuntimeError(f"{self.name} task used before it was bound to a SimWorld")
        return self.world
