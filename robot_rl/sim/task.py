"""What a sim task provides: scene objects, randomised initial states, ground-truth success.

A :class:`SimTask` is also the :class:`~robot_rl.envs.task.EpisodeTask` that ``RobotEnv``
uses in sim. Its ``reset`` here is the *sim shortcut*: objects and the arm are
teleported into a new randomised initial state. Resets that move objects with the robot
through the controller live in robot_rl.reset.

Each task lives in its own folder, ``robot_rl/tasks/<task>/``, and its subclass names
the task's other parts as class attributes (:attr:`SimTask.Params`, ``Expert``,
``Reset``, ``Backward``, ``Scenarios``). Code below the tasks (reset, reward, data)
asks a task object for its parts through the ``make_*`` methods here, so that it never
imports a task, and sim itself knows no task by name.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np

from robot_rl.config import Config
from robot_rl.config.reset import resolve_mode
from robot_rl.control.transforms import quat_mul, rpy_to_quat
from robot_rl.envs.task import EpisodeTask
from robot_rl.sim.model import SceneParts

if TYPE_CHECKING:
    import gymnasium as gym

    from robot_rl.config.reward import RewardCollectConfig
    from robot_rl.sim.experts import ScriptedExpert
    from robot_rl.sim.world import SimWorld

SETTLE_S = 0.1  # physics time after a teleport reset, so objects come to rest


class SimTask(EpisodeTask, abc.ABC):
    """Base class of the MuJoCo tasks. Subclasses set ``name``, ``state_dim`` and the parts.

    The parts are classes from the task's own folder. They are typed loosely here
    because the reset, backward-task and scenario bases live in robot_rl.reset and
    robot_rl.reward, which build on sim (and sim must not import them back).
    """

    name: str = ""
    #: Dataclass of the task's parameters and their defaults (``task.params`` in a config).
    Params: ClassVar[type] = object
    #: Scripted expert, a :class:`~robot_rl.sim.experts.ScriptedExpert`: demonstrations.
    Expert: ClassVar[type]
    #: Scripted reset, a :class:`robot_rl.reset.sim.SimTaskReset`: ``reset.mode: scripted``.
    Reset: ClassVar[type]
    #: Forward-backward rules, a :class:`robot_rl.reset.backward.BackwardSpec` (it names the backward task).
    Backward: ClassVar[type]
    #: Reward-frame scenarios, a :class:`robot_rl.reward.scenarios.ScenarioDriver`.
    Scenarios: ClassVar[type]

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
            self.reset_routine = self.make_reset()
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

    # --- the task's parts -------------------------------------------------------------
    @classmethod
    def make_expert(cls, env: "gym.Env", noise: float = 0.0, seed: int | None = None) -> "ScriptedExpert":
        """The scripted expert on ``env``, ready for its first episode.

        A class method: an env over topics has no sim task object, only the task's name,
        and the expert needs nothing but the ``RobotEnv`` API.
        """
        expert = cls.Expert(env, noise=noise, seed=seed)
        expert.reset()
        return expert

    def make_reset(self, cfg: Config | None = None) -> Callable[[np.random.Generator], Any]:
        """The scripted reset routine (a ``SimTaskReset``) of this bound task."""
        return self.Reset(self, cfg)

    def make_backward(self, cfg: Config) -> Any:
        """The forward-backward rules (a ``BackwardSpec``) of this bound task."""
        return self.Backward(self, cfg)

    def make_scenarios(self, env: "gym.Env", collect: "RewardCollectConfig", seed: int | None = None) -> Any:
        """The reward-frame scenario driver (a ``ScenarioDriver``) on ``env``, an env of this task."""
        return self.Scenarios(env, collect, seed)

    def _world(self) -> "SimWorld":
        if self.world is None:
            raise RuntimeError(f"{self.name} task used before it was bound to a SimWorld")
        return self.world
