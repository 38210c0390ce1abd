"""An attacker on the sim arm's command channels, and the safety figures it measures.

robot_rl promises that safety lives in the controller: whatever the policy, a person,
a reset or a bad message asks for, the TCP stays in the workspace box, the spring force
stays under ``K * clip``, torques stay under their limits (and, on the admittance law,
the commanded twist under its speed and acceleration limits), no NaN reaches the
physics, and a command that cannot be used is rejected and counted, never raised. The
:class:`Adversary` drives a MuJoCo arm (either ``sim.arm``, with its law) through one
entry point at a time (``"robot"``: ``Robot.command`` / ``set_posture``; ``"controller"``:
the arm's control law;
``"core"``: the controller node's rules, :class:`~robot_rl.nodes.controller.ControllerCore`,
which the caller passes in as ``make_core`` since sim imports nothing of the node graph)
on the scene of the task the caller's ``make_task`` builds (sim knows no task by name)
with the attacks below, and measures after every physics step. The CI suite
(``tests/control/test_command_attacks.py``) runs them at a small size; ``bench/safety_attacks.py`` at full size.

Attacks: random and hostile targets (far away, NaN, inf, 1e300, huge quaternions,
strings, ragged lists, ...), far corner targets alternating every few physics steps,
posture floods (past the joint limits, 1e200, huge stiffness, malformed) while valid
targets keep arriving (on an arm with a null-space posture; an arm without one is
flooded through the node's rules only, which must refuse every posture), and gripper
floods (hostile gripper values with valid poses).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

from robot_rl.config import Config
from robot_rl.control import CartesianImpedanceController
from robot_rl.control.transforms import quat_mul, rotvec_to_quat
from robot_rl.interfaces import Robot
from robot_rl.sim import build_world
from robot_rl.sim.task import SimTask

CHANNELS = ("robot", "controller", "core")

# Values no command channel may choke on: every one must be rejected and counted.
# (None is not among them: it means "leave the gripper" / "keep the configured stiffness".)
HOSTILE_SCALARS: tuple[Any, ...] = (float("nan"), float("inf"), -float("inf"), "0.5", b"\x00", [0.5],
                                    {"opening": 1}, True, 1e308 * 10, complex(1, 1))
HOSTILE_VECTORS: tuple[Any, ...] = ("xyz", b"\x00" * 24, [1.0, 2.0], [[0.5, 0.0, 0.2]], [0.5, [0.0], 0.2],
                                    {"x": 0.5}, None, [0.5, 0.0, "z"], np.zeros((3, 1)), 7)


@dataclass
class SafetyFigures:
    """Worst cases over every physics step of an attack (ratios: 1.0 is the limit)."""

    steps: int = 0
    commands: int = 0
    max_box_excursion_mm: float = 0.0  # TCP distance outside the workspace box
    max_spring_ratio: float = 0.0  # |K e_clipped| / (K clip), per axis
    max_torque_ratio: float = 0.0  # |tau| / torque limit, per joint
    max_torque_rate_ratio: float = 0.0  # |d tau_cmd| / (max_torque_rate dt), per joint (impedance law)
    max_speed_ratio: float = 0.0  # |commanded twist| / speed limit, linear and angular (admittance law)
    max_acc_ratio: float = 0.0  # |d twist| / (acceleration limit dt), linear and angular (admittance law)
    max_joint_limit_excess_rad: float = 0.0  # joints past their limits (the model's own soft limits)
    nonfinite_steps: int = 0  # physics steps with a NaN or inf in qpos, qvel or ctrl
    rejects: int = 0  # commands the channel refused (returned False)
    escapes: int = 0  # exceptions that escaped a command entry point
    half_applied: int = 0  # commands rejected for one part whose other part was applied anyway

    def merge(self, other: "SafetyFigures") -> "SafetyFigures":
        """The worst of both and the sums of the counts."""
        merged = SafetyFigures()
        for name, value in asdict(self).items():
            theirs = getattr(other, name)
            setattr(merged, name, value + theirs if isinstance(value, int) else max(value, theirs))
        return merged


class Adversary:
    """A sim arm attacked through one command channel; :attr:`figures` holds what it measured."""

    def __init__(self, cfg: Config, channel: str = "robot", seed: int = 0,
                 make_core: Callable[[Robot, float, Callable[[], float]], Any] | None = None, *,
                 make_task: Callable[[Config], SimTask]) -> None:
        """``make_core(robot, watchdog_s, clock)`` builds the node core for the ``"core"`` channel;
        ``make_task(cfg)`` the task whose scene the arm is attacked in (``robot_rl.tasks.make_task``)."""
        if channel not in CHANNELS:
            raise ValueError(f"channel must be one of {CHANNELS}, got {channel!r}")
        if channel == "core" and make_core is None:
            raise ValueError("the 'core' channel needs make_core (e.g. robot_rl.nodes.controller.ControllerCore)")
        self.cfg = cfg
        self.channel = channel
        self.rng = np.random.default_rng(seed)
        self.world = build_world(make_task(cfg), [])
        self.world.task.reset(np.random.default_rng(seed))
        self.robot = self.world.robot
        self.robot.start()
        self.controller = self.robot.controller
        self.box = self.controller.box
        self.impedance = isinstance(self.controller, CartesianImpedanceController)
        gains = self.controller.base_gains if self.impedance else self.controller.gains
        self._spring_limit = np.maximum(gains.stiffness * gains.error_clip, 1e-12)
        model, arm = self.world.model, self.world.arm
        self.dof = arm.dof
        if self.impedance:
            self._torque_limits = gains.torque_limits
            self._rate_limit = gains.max_torque_rate * self.world.dt
        else:  # the joint servos' own torque limits
            self._torque_limits = model.actuator_forcerange[self.world.arm_ctrl, 1].copy()
            self._speed_limits = np.array([gains.max_speed, gains.max_rot_speed])
            self._acc_limits = np.array([gains.max_acc, gains.max_rot_acc]) * self.world.dt
        self._prev_tau_cmd = np.zeros(self.dof)
        self._prev_twist = np.zeros(6)
        self.home = self.robot.state()
        self.core = None
        if channel == "core":
            self.core = make_core(self.robot, self.controller.cfg.watchdog_s, self.world.now)
            self.core.poll()
        self.figures = SafetyFigures()
        joints = self.world.arm_joint_ids
        self._joint_low = model.jnt_range[joints, 0] - model.jnt_margin[joints]
        self._joint_high = model.jnt_range[joints, 1] + model.jnt_margin[joints]

    @property
    def has_posture(self) -> bool:
        """Whether the arm has a null-space posture (else only the node's rules take postures, and refuse them)."""
        return self.world.arm.posture

    # --- sending through the chosen channel -------------------------------------------

    def target(self, pos: Any, quat: Any, gripper: Any = None) -> None:
        """Send one target (and gripper) through the channel; count rejects and escapes."""
        if self.channel == "robot":
            self._send(lambda: self.robot.command(pos, quat, gripper))
        elif self.channel == "controller":
            self._send(lambda: self.controller.set_target(pos, quat, self.world.now()))
        else:
            self._send(lambda: self.core.on_target(pos, quat))
            if gripper is not None:
                self._send(lambda: self.core.on_gripper(gripper))

    def posture(self, q: Any, stiffness: Any = None) -> None:
        """Send one null-space posture through the channel."""
        if self.channel == "robot":
            self._send(lambda: self.robot.set_posture(q, stiffness))
        elif self.channel == "controller":
            self._send(lambda: self.controller.set_posture(q, stiffness))
        else:
            self._send(lambda: self.core.on_posture(q, stiffness))

    def _send(self, call: Callable[[], Any]) -> None:
        self.figures.commands += 1
        try:
            accepted = call()
        except Exception:  # noqa: BLE001 - counting what escapes is the point
            self.figures.escapes += 1
            return
        self.figures.rejects += int(accepted is False)

    # --- physics and measurement ------------------------------------------------------

    def step(self, n: int = 1) -> None:
        """Advance ``n`` physics steps, measuring after each (and polling the core's watchdog)."""
        for _ in range(n):
            self.world.physics_step()
            if self.core is not None and self.figures.steps % 4 == 0:
                self.core.poll()
            self._measure()

    def _measure(self) -> None:
        f, d, out = self.figures, self.world.data, self.controller.last_output
        f.steps += 1
        if not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel)) and np.all(np.isfinite(d.ctrl))):
            f.nonfinite_steps += 1
            return
        pos = d.site_xpos[self.world.tcp_site]
        outside = np.maximum(self.box.pos_low - pos, pos - self.box.pos_high)
        f.max_box_excursion_mm = max(f.max_box_excursion_mm, 1000.0 * float(np.max(np.maximum(outside, 0.0))))
        q = d.qpos[self.world.arm_qpos]
        excess = np.maximum(self._joint_low - q, q - self._joint_high)
        f.max_joint_limit_excess_rad = max(f.max_joint_limit_excess_rad, float(np.max(np.maximum(excess, 0.0))))
        if out is None:
            return
        gains = self.controller.gains
        spring = np.abs(np.clip(out.error, -gains.error_clip, gains.error_clip) * gains.stiffness)
        f.max_spring_ratio = max(f.max_spring_ratio, float(np.max(spring / self._spring_limit)))
        if self.impedance:
            f.max_torque_ratio = max(f.max_torque_ratio, float(np.max(np.abs(out.tau) / gains.torque_limits)))
            rate = np.abs(out.tau_cmd - self._prev_tau_cmd) / self._rate_limit
            f.max_torque_rate_ratio = max(f.max_torque_rate_ratio, float(np.max(rate)))
            self._prev_tau_cmd = out.tau_cmd.copy()
            return
        tau = d.actuator_force[self.world.arm_ctrl]
        f.max_torque_ratio = max(f.max_torque_ratio, float(np.max(np.abs(tau) / self._torque_limits)))
        twist = out.twist
        speed = np.array([np.linalg.norm(twist[:3]), np.linalg.norm(twist[3:])]) / self._speed_limits
        change = twist - self._prev_twist
        acc = np.array([np.linalg.norm(change[:3]), np.linalg.norm(change[3:])]) / self._acc_limits
        f.max_speed_ratio = max(f.max_speed_ratio, float(np.max(speed)))
        f.max_acc_ratio = max(f.max_acc_ratio, float(np.max(acc)))
        self._prev_twist = twist.copy()

    # --- attacks ------------------------------------------------------------------------

    def corner(self, index: int, far: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """A pose ``far`` metres past corner ``index`` (0..7) of the box, turned past its rotation limits."""
        bits = np.array([(index >> i) & 1 for i in range(3)], dtype=float)
        pos = np.where(bits > 0, self.box.pos_high + far, self.box.pos_low - far)
        turn = np.where(bits > 0, self.box.rot_high + 1.0, self.box.rot_low - 1.0)
        return pos, quat_mul(rotvec_to_quat(turn), self.box.rot_center)

    def hostile_targets(self, n: int, max_hold_steps: int = 3) -> None:
        """``n`` targets drawn from far, hostile and malformed ones, each held 1..max_hold_steps steps."""
        for _ in range(n):
            pos, quat = self._hostile_pose()
            self.target(pos, quat)
            self.step(int(self.rng.integers(1, max_hold_steps + 1)))

    def _hostile_pose(self) -> tuple[Any, Any]:
        rng = self.rng
        kind = int(rng.integers(0, 8))
        pos = rng.uniform(-3.0, 3.0, 3)
        quat = rng.normal(size=4)
        if kind == 0:
            pos, quat = self.corner(int(rng.integers(0, 8)), far=float(rng.uniform(0.0, 5.0)))
        elif kind == 1:
            pos = pos.copy()
            pos[rng.integers(0, 3)] = rng.choice([np.nan, np.inf, -np.inf, 1e300, -1e300])
        elif kind == 2:
            quat = quat * 10.0 ** float(rng.uniform(100, 300))  # |q| overflows a naive norm
        elif kind == 3:
            quat = rng.choice([np.zeros(4), np.full(4, np.nan), np.array([np.inf, 0, 0, 0]), np.full(4, 1e-320)])
        elif kind == 4:
            pos = HOSTILE_VECTORS[int(rng.integers(0, len(HOSTILE_VECTORS)))]
        elif kind == 5:
            quat = HOSTILE_VECTORS[int(rng.integers(0, len(HOSTILE_VECTORS)))]
        return pos, quat

    def alternate(self, period: int, seconds: float) -> None:
        """Opposite far corners (position and rotation) alternating every ``period`` physics steps."""
        a, b = self.corner(0), self.corner(7)
        for i in range(int(round(seconds / self.world.dt / period))):
            self.target(*(a if i % 2 == 0 else b))
            self.step(period)

    def posture_flood(self, n: int, steps_between: int = 2, target_every: int = 25) -> None:
        """``n`` hostile postures while a valid target (the start pose) keeps arriving."""
        home_q = self.home.q
        for i in range(n):
            if i % max(1, target_every // max(1, steps_between)) == 0:
                self.target(self.home.tcp_pos, self.home.tcp_quat)
            q, k = self._hostile_posture(home_q)
            self.posture(q, k)
            self.step(steps_between)
        self.posture(None)

    def _hostile_posture(self, home_q: np.ndarray) -> tuple[Any, Any]:
        rng = self.rng
        kind = int(rng.integers(0, 6))
        k = rng.choice([None, 10.0, 1e6, 1e300, -1.0, np.nan, np.inf, 2.0 ** 31])
        n = self.dof
        if kind == 0:
            return home_q + rng.choice([-3.0, 3.0], n), k
        if kind == 1:
            return np.full(n, rng.choice([1e200, -1e200, 1e308])), k
        if kind == 2:
            q = home_q.copy()
            q[rng.integers(0, n)] = rng.choice([np.nan, np.inf])
            return q, k
        if kind == 3:
            return HOSTILE_VECTORS[int(rng.integers(0, len(HOSTILE_VECTORS)))], k
        if kind == 4:
            return home_q + rng.uniform(-6.0, 6.0, n), rng.uniform(0.0, 5000.0)
        return home_q, HOSTILE_SCALARS[int(rng.integers(0, len(HOSTILE_SCALARS)))]

    def gripper_flood(self, n: int, steps_between: int = 2) -> None:
        """``n`` valid poses, each sent with a hostile (70%) or a valid gripper value.

        On the ``Robot`` interface pose and gripper are one command: a rejected gripper must
        leave the pose unapplied too, and anything else counts in ``half_applied``.
        """
        for _ in range(n):
            pos = self.home.tcp_pos + self.rng.uniform(-0.05, 0.05, 3)
            bad = bool(self.rng.random() < 0.7)
            gripper = (HOSTILE_SCALARS[int(self.rng.integers(0, len(HOSTILE_SCALARS)))] if bad
                       else float(self.rng.uniform(-2.0, 3.0)))
            goal, opening = self.controller.goal_pos.copy(), self.robot.gripper_target
            self.target(pos, self.home.tcp_quat, gripper)
            changed = not np.array_equal(goal, self.controller.goal_pos) or opening != self.robot.gripper_target
            self.figures.half_applied += int(bad and self.channel == "robot" and changed)
            self.step(steps_between)


def run_attacks(cfg: Config, channel: str, *, targets: int, alternation_periods: tuple[int, ...],
                alternation_s: float, postures: int, grippers: int, seed: int = 0,
                make_core: Callable[[Robot, float, Callable[[], float]], Any] | None = None,
                make_task: Callable[[Config], SimTask]
                ) -> dict[str, SafetyFigures]:
    """Every attack on a fresh arm per attack (so one cannot hide another); figures per attack."""
    results: dict[str, SafetyFigures] = {}

    def fresh() -> Adversary:
        return Adversary(cfg, channel, seed, make_core, make_task=make_task)

    if targets:
        adv = fresh()
        adv.hostile_targets(targets)
        results["targets"] = adv.figures
    for period in alternation_periods:
        adv = fresh()
        adv.alternate(period, alternation_s)
        results[f"alternation_{period}"] = adv.figures
    if postures:
        adv = fresh()
        if adv.has_posture or channel == "core":  # else set_posture raises NotImplementedError, as documented
            adv.posture_flood(postures)
            results["postures"] = adv.figures
    if grippers and channel != "controller":  # the control law has no gripper
        adv = fresh()
        adv.gripper_flood(grippers)
        results["grippers"] = adv.figures
    return results
