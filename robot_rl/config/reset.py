"""Typed config for auto-reset (the ``reset:`` section of a session YAML).

``mode`` picks how a new episode's initial state comes about:

* ``scripted``: the robot brings the scene back itself, through the same controller,
  safety box, error clipping and watchdog as the policy (see :mod:`robot_rl.reset`);
* ``teleport``: the *sim shortcut*, objects and arm are written into MuJoCo's state;
  only possible with ``robot.backend: sim``;
* ``auto``: ``teleport`` in sim (fast training), ``scripted`` on hardware.

Every pose a reset may command is checked against the safety box when the config is
loaded (:func:`check_reset_poses`), and the joint reset's angles against the arm's joint
limits, so a reset pose outside the box is a config error, not a surprise on the robot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Optional

import numpy as np

from robot_rl.config.loader import param

if TYPE_CHECKING:
    from robot_rl.config import Config

BOX_MARGIN = 0.002  # metres: planned reset poses stay this far inside the box


@dataclass
class ForwardBackwardConfig:
    """Reset-free practice: a forward policy does the task, a backward policy undoes it.

    Each task defines its backward task in its folder (``robot_rl/tasks/<task>/backward.py``;
    the generic part is :mod:`robot_rl.reset.backward`): say, put a lifted object down at a
    random goal in its randomization range and lift clear, or pull a held part out and
    bring it to a random start pose. When neither policy can start from the scene (say an
    object was pushed out of range), the scripted task reset recovers it through the
    controller (``recovery: scripted``) or practice stops with an error (``recovery: stop``).
    """

    backward_max_steps: int = param(60, min=1, max=10_000, doc="time limit of a backward episode, in env steps")
    goal_tolerance: float = param(0.015, min=0.001, max=0.1,
                                  doc="metres: how close to its goal the backward task must end")
    retreat_height: float = param(0.03, min=0.0, max=0.2,
                                  doc="tasks that put an object down: the open gripper ends this high above its top")
    max_backward_in_row: int = param(3, min=1, max=1000,
                                     doc="backward episodes in a row before the scripted task reset "
                                         "gives the forward task its start back")
    recovery: Literal["scripted", "stop"] = "scripted"


@dataclass
class ResetConfig:
    """How episodes are reset: scripted through the controller, or the sim shortcut."""

    mode: Literal["auto", "teleport", "scripted"] = "auto"
    perturb_pos: Optional[tuple[float, float, float]] = param(
        None, min=0.0, max=0.2, doc="+- metres around robot.reset_pos; null: the task's start_pos_range")
    perturb_yaw: Optional[float] = param(None, min=0.0, max=1.0,
                                         doc="+- radians about the base z axis; null: the task's start_yaw_range")
    lift_height: float = param(0.05, min=0.0, max=0.3, doc="metres to lift clear before moving sideways")
    hover_height: float = param(0.05, min=0.01, max=0.3,
                                doc="metres between a held object's bottom (or the open fingers) and the table "
                                    "while moving objects")
    speed: float = param(0.05, min=0.001, max=0.5, doc="peak Cartesian speed, m/s")
    slow_speed: float = param(0.02, min=0.001, max=0.5,
                              doc="peak speed near contact (extracting a peg, placing an object), m/s")
    rot_speed: float = param(0.5, min=0.01, max=3.0, doc="peak rotation speed, rad/s")
    rate_hz: Optional[float] = param(None, min=1.0, max=1000.0,
                                     doc="target stream rate; null: env.control_hz (the policy's rate)")
    settle_tolerance: float = param(0.002, min=0.0001, max=0.05, doc="metres from the target that counts as arrived")
    settle_speed: float = param(0.01, min=0.0001, max=0.5, doc="m/s below which the arm counts as at rest")
    move_timeout_s: float = param(4.0, min=0.1, max=60.0, doc="seconds past a path's end before a move has failed")
    gripper_timeout_s: float = param(1.5, min=0.1, max=30.0, doc="seconds for the gripper to stop moving")
    max_attempts: int = param(3, min=1, max=20, doc="grasp / place attempts before a task reset gives up")
    place_margin: float = param(0.004, min=0.0, max=0.05,
                                doc="metres inside the randomization range where objects are put down")
    gripper: Optional[float] = param(None, min=0.0, max=1.0,
                                     doc="hardware: opening the robot reset leaves the gripper at (0 closed, "
                                         "1 open); null: the task's (open, or closed on a part held from the "
                                         "start)")
    joint_reset_every: int = param(20, min=0, max=1_000_000, doc="a full joint-space reset every N resets; 0 never")
    joint_reset_q: Optional[tuple[float, float, float, float, float, float, float]] = param(
        None, min=-6.3, max=6.3, doc="joint angles (rad) of the joint reset, a posture of robot.reset_pos "
                  "(`robot-rl franka check` "
                  "prints an arm's joints); null: in sim, IK for the reset pose; on a real arm, "
                  "robot.controller.rest_posture, as close as the held reset pose allows")
    joint_reset_stiffness: float = param(40.0, min=0.0, max=200.0,
                                         doc="null-space stiffness while a joint reset pulls the elbow, Nm/rad "
                                             "(a ros2_control controller uses its own)")
    joint_tolerance: float = param(0.03, min=0.001, max=1.0, doc="radians: a joint reset has arrived")
    forward_backward: ForwardBackwardConfig = field(default_factory=ForwardBackwardConfig)


def resolve_mode(cfg: "Config") -> str:
    """``teleport`` or ``scripted``: what ``reset.mode`` means for this robot backend."""
    if cfg.reset.mode == "auto":
        return "teleport" if cfg.robot.backend == "sim" else "scripted"
    return cfg.reset.mode


def _task_param(cfg: "Config", name: str) -> Any:
    """A task parameter (none while ``task.params`` is still the raw mapping of an unloaded config)."""
    return getattr(cfg.task.params, name, None)


def perturbation(cfg: "Config") -> tuple[np.ndarray, float]:
    """The (xyz, yaw) half-ranges of the random reset-pose perturbation."""
    pos = cfg.reset.perturb_pos if cfg.reset.perturb_pos is not None else _task_param(cfg, "start_pos_range")
    yaw = cfg.reset.perturb_yaw if cfg.reset.perturb_yaw is not None else _task_param(cfg, "start_yaw_range")
    pos = np.zeros(3) if pos is None else np.asarray(pos, dtype=float)
    return pos, float(yaw or 0.0)


def check_reset_poses(cfg: "Config") -> None:
    """Refuse a config whose resets could command a pose outside the safety box.

    Runs once the task's parameters are typed (their start range is a perturbation too).
    Checks every corner of ``robot.reset_pos +- perturbation`` and the yaw range, and
    refuses ``mode: teleport`` on hardware. Raises ``ValueError`` (the loader turns it
    into a ConfigError naming the file).
    """
    if cfg.reset.mode == "teleport" and cfg.robot.backend != "sim":
        raise ValueError(f"reset.mode 'teleport' is the sim shortcut; robot.backend '{cfg.robot.backend}' "
                         "needs reset.mode 'scripted' (or 'auto')")
    pos_range, yaw_range = perturbation(cfg)
    ws = cfg.robot.workspace
    low, high = np.asarray(ws.pos_low, float), np.asarray(ws.pos_high, float)
    centre = np.asarray(cfg.robot.reset_pos, float)
    if np.any(centre - pos_range < low) or np.any(centre + pos_range > high):
        raise ValueError(f"reset poses robot.reset_pos {list(cfg.robot.reset_pos)} +- {pos_range.tolist()} "
                         f"leave the workspace box {list(ws.pos_low)}..{list(ws.pos_high)}")
    if yaw_range > 0 and (-yaw_range < ws.rot_low[2] or yaw_range > ws.rot_high[2]):
        raise ValueError(f"reset yaw +-{yaw_range} rad leaves the workspace box's rotation limits about z "
                         f"[{ws.rot_low[2]}, {ws.rot_high[2]}]")
    if cfg.reset.joint_reset_q is not None:
        ctrl = cfg.robot.controller
        for i, (qi, lo, hi) in enumerate(zip(cfg.reset.joint_reset_q, ctrl.joint_low, ctrl.joint_high)):
            if not lo <= qi <= hi:
                raise ValueError(f"reset.joint_reset_q joint {i + 1} is {qi} rad, outside the arm's limits "
                                 f"[{lo}, {hi}]")
