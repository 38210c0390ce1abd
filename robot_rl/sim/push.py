"""An external push on the sim arm's hand, and what the box fault does about it.

A clipped target keeps what the law is asked for inside the workspace box; an external
force (a collision, a person leaning on the arm, a stuck gripper) can still push the TCP
out. The guard (:mod:`robot_rl.control.guard`) faults once the measured TCP is more than
``robot.workspace.outside_margin_m`` outside, holds the nearest pose in the box and
refuses targets until it is recovered. :func:`push_attack` measures that on a MuJoCo arm
(either ``sim.arm``): a steady force on the hand while a policy keeps sending a target
inside the box, then the force taken off and ``recover()`` tried until it succeeds.
``bench/push_attacks.py`` sweeps arms, directions and force levels with it; the CI
tests (``tests/sim/test_box_fault_on_arm.py``) run single cases.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from robot_rl.control.guard import BOX_CLEAR_SHARE
from robot_rl.control.transforms import mat_to_quat
from robot_rl.errors import RobotFault

DIRECTIONS = {"+x": (0, 1.0), "-x": (0, -1.0), "+y": (1, 1.0), "-y": (1, -1.0), "+z": (2, 1.0), "-z": (2, -1.0)}


def push_hand(world: Any, force: np.ndarray) -> None:
    """A force at the TCP, as a force and a moment on the hand's centre of mass (MuJoCo's
    ``xfrc_applied``; it stays applied until changed, so call it each physics step to keep
    the moment right as the hand moves). A zero force takes the push off."""
    hand = world.model.body("hand").id
    d = world.data
    force = np.asarray(force, dtype=np.float64)
    d.xfrc_applied[hand, :3] = force
    d.xfrc_applied[hand, 3:] = np.cross(d.site_xpos[world.tcp_site] - d.xipos[hand], force)


def direction_vector(direction: str) -> np.ndarray:
    """The unit vector of ``"+x"`` .. ``"-z"``."""
    axis, sign = DIRECTIONS[direction]
    unit = np.zeros(3)
    unit[axis] = sign
    return unit


@dataclass
class PushResult:
    """What one push did (distances in metres, times in simulated seconds from the push's start)."""

    arm: str
    direction: str
    force_n: float
    max_outside_m: float = 0.0  # the farthest the measured TCP got outside the box
    max_outside_rad: float = 0.0  # the farthest the measured TCP got turned past the box's orientation bounds
    faulted: bool = False
    fault_after_s: float | None = None  # from the push's start to the law's box fault
    outside_at_fault_m: float | None = None  # how far outside the TCP was when it faulted
    outside_at_fault_rad: float | None = None  # how far it was turned past the orientation bounds then
    fault: str | None = None  # the fault's one line
    target_moves_in_fault: int = 0  # cycles in which the law's target moved while faulted (must be 0)
    accepted_in_fault: int = 0  # targets Robot.command accepted while faulted (must be 0)
    recovered: bool = False
    recovered_after_s: float | None = None  # from the push's end to a successful recover()
    outside_at_recovery_m: float | None = None
    back_in_box: bool = False  # the TCP got back within the clear share of the margin, with no fault left
    back_after_s: float | None = None  # from the push's end
    target_after_recovery: bool = False  # a target sent after recovery was accepted

    def row(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


def push_attack(world: Any, direction: str, newtons: float, *, push_s: float = 1.5, release_s: float = 3.0,
                command_hz: float = 50.0, recover_every_s: float = 0.1) -> PushResult:
    """Push the hand with ``newtons`` along ``direction`` for ``push_s`` while a policy keeps
    commanding the pose it started at (inside the box) through ``Robot.command`` at
    ``command_hz``; then take the force off and try ``robot.recover()`` every
    ``recover_every_s`` for up to ``release_s``. ``world`` is a fresh sim world whose task
    has been reset; its arm's own watchdog stays on, as in a trainer."""
    robot, ctrl = world.robot, world.robot.controller
    box = ctrl.box
    state = robot.state()
    home_pos, home_quat = state.tcp_pos.copy(), state.tcp_quat.copy()
    result = PushResult(world.arm.name, direction, float(newtons))
    force = direction_vector(direction) * float(newtons)
    command_every = max(1, int(round(1.0 / (command_hz * world.dt))))
    t0 = world.now()
    steps = int(round(push_s / world.dt))
    last_target = None
    for i in range(steps):
        if i % command_every == 0:
            try:
                if robot.command(home_pos, home_quat) and ctrl.fault is not None:
                    result.accepted_in_fault += 1
            except RobotFault:
                pass  # the arm stopped itself: the policy's target goes nowhere
        push_hand(world, force)
        world.physics_step()
        _observe(world, result, t0)
        if ctrl.box_fault is not None:
            target = None if ctrl.target_pos is None else ctrl.target_pos.copy()
            if last_target is not None and target is not None and not np.array_equal(target, last_target):
                result.target_moves_in_fault += 1
            last_target = target
    push_hand(world, np.zeros(3))
    t1 = world.now()
    next_try = t1
    back_within = BOX_CLEAR_SHARE * box.outside_margin
    while world.now() - t1 < release_s:
        world.physics_step()
        _observe(world, result, t0)
        if ctrl.box_fault is not None and ctrl.target_pos is not None and last_target is not None:
            if not np.array_equal(ctrl.target_pos, last_target):
                result.target_moves_in_fault += 1
            last_target = ctrl.target_pos.copy()
        if ctrl.fault is not None and world.now() >= next_try:
            next_try += recover_every_s
            try:
                robot.recover()
            except RobotFault:
                continue
            result.recovered = True
            result.recovered_after_s = world.now() - t1
            result.outside_at_recovery_m = box.excursion(robot.state().tcp_pos)[0]
        if (ctrl.fault is None and box.excursion(world.data.site_xpos[world.tcp_site])[0] <= back_within
                and turned_out(world) <= BOX_CLEAR_SHARE * box.outside_margin_rad):
            result.back_in_box = True
            result.back_after_s = world.now() - t1
            break
    if result.recovered:
        result.target_after_recovery = bool(robot.command(home_pos, home_quat))
    return result


def _observe(world: Any, result: PushResult, t0: float) -> None:
    ctrl = world.robot.controller
    outside = ctrl.box.excursion(world.data.site_xpos[world.tcp_site])[0]
    result.max_outside_m = max(result.max_outside_m, outside)
    result.max_outside_rad = max(result.max_outside_rad, turned_out(world))
    if ctrl.box_fault is not None and not result.faulted:
        result.faulted = True
        result.fault_after_s = world.now() - t0
        result.outside_at_fault_m = ctrl.outside_m
        result.outside_at_fault_rad = ctrl.outside_rad
        result.fault = ctrl.box_fault


def turned_out(world: Any) -> float:
    """How far the sim's TCP is turned past the box's orientation bounds (radians; 0 inside)."""
    quat = mat_to_quat(world.data.site_xmat[world.tcp_site].reshape(3, 3))
    return world.robot.controller.box.rot_excursion(quat)[0]
