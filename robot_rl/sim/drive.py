"""How the world turns an arm's control law into actuator commands, once per physics step.

One drive per actuation kind, each around the law a real arm of that kind runs:

* :class:`TorqueDrive` (the Panda): the Cartesian impedance law computes joint torques
  from the measured joints and the TCP Jacobian; they go to the torque motors.
* :class:`PositionDrive` (the UR5e): the Cartesian admittance law computes a TCP twist
  from the measured TCP pose and the wrist force-torque reading; damped least squares
  on the TCP Jacobian turns it into joint velocities (scaled into the joint speed
  limits), which are integrated into joint position targets (clipped to the joint
  limits) for the joint servos, as a UR's own controller does with a ``speedL``.

The drive is the part of :class:`~robot_rl.sim.world.SimRobot` that differs between
arms; the world calls :meth:`ArmDrive.step` between ``mj_step1`` and ``mj_step2``, so the
law sees the state of the step it acts on.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

import numpy as np

from robot_rl.control import CartesianAdmittanceController, CartesianImpedanceController, SafetyBox
from robot_rl.control.admittance import TcpState
from robot_rl.control.transforms import mat_to_quat

if TYPE_CHECKING:
    from robot_rl.sim.world import SimWorld

DLS_DAMPING = 1e-2  # of the TCP Jacobian's damped least squares (m, rad): matters only near singularities
SERVO_LEAD_SHARE = 0.25  # of a joint's torque limit: the most its servo pushes with beyond following


class ArmDrive(abc.ABC):
    """The arm's law and what it sends to the actuators; ``controller`` is the law's controller."""

    controller: CartesianImpedanceController | CartesianAdmittanceController

    def __init__(self, world: "SimWorld") -> None:
        self.world = world

    @abc.abstractmethod
    def start(self, now: float) -> None:
        """(Re)start the law at the measured state (kinematics current): no jump."""

    @abc.abstractmethod
    def hold(self, now: float) -> None:
        """Make the measured pose the law's target."""

    @abc.abstractmethod
    def step(self, now: float, dt: float) -> None:
        """One physics step's actuator commands (after ``mj_step1``)."""

    def on_teleport(self) -> None:
        """The joints were set directly (a reset or a test): the actuators must not pull them back."""

    @abc.abstractmethod
    def tau(self) -> np.ndarray:
        """(n,) joint torques for :class:`~robot_rl.interfaces.RobotState`."""

    @abc.abstractmethod
    def wrench(self, tcp_pos: np.ndarray) -> np.ndarray:
        """(6,) the external wrench at the TCP, base frame, as this arm measures it."""

    @property
    def fault(self) -> str | None:
        """A one-line reason while the law holds the arm on a fault (a sensor's, or the TCP pushed out of the box)."""
        return self.controller.fault

    @abc.abstractmethod
    def recover(self, now: float) -> None:
        """End a fault whose cause is gone; raise ValueError (with the reason) while it persists."""


class TorqueDrive(ArmDrive):
    """Joint torques from the Cartesian impedance law (``robot.controller``)."""

    def __init__(self, world: "SimWorld") -> None:
        super().__init__(world)
        cfg = world.cfg.robot
        self.controller = CartesianImpedanceController(cfg.controller, SafetyBox.from_config(cfg))

    def start(self, now: float) -> None:
        self.controller.start(self.world.arm_state(), now)

    def hold(self, now: float) -> None:
        self.controller.hold(self.world.arm_state(), now)

    def step(self, now: float, dt: float) -> None:
        w = self.world
        w.data.ctrl[w.arm_ctrl] = self.controller.compute(w.arm_state(), now, dt)

    def tau(self) -> np.ndarray:
        tau = self.controller.prev_tau_cmd
        return np.zeros(self.world.arm.dof) if tau is None else tau.copy()

    def wrench(self, tcp_pos: np.ndarray) -> np.ndarray:
        return self.world.gripper_wrench(tcp_pos)

    def recover(self, now: float) -> None:
        arm = self.world.arm_state()
        self.controller.clear_box_fault(arm.pos, arm.quat, now)


class PositionDrive(ArmDrive):
    """Joint position targets from the Cartesian admittance law (``robot.admittance``), through
    differential inverse kinematics; the wrench comes from the wrist force-torque sensor.

    The servo command carries the joint velocity as feed-forward (``q_target + (kv/kp) dq``),
    as a real joint servo does, so the joints follow a commanded velocity without the lag
    a plain PD position servo has; what remains is corrected by the law's tracking term.
    The simulated sensor has no offset and the payload's weight is taken out of its
    reading, so the law is (re)started with a zero reading as its bias: a bias taken while
    the tool pushes on something (a restart after a fault, in contact) would read as a pull
    once it lets go, and the reference would follow that phantom force.
    The target stays within :data:`SERVO_LEAD_SHARE` of the torque limit (``share * limit / kp``)
    of the measured joints: a blocked arm (in contact, or held) pushes with at most that
    much, whatever the twist, instead of winding its servos up to their full torque. When
    the law faults, the servos hold the joints where they are (not where the target had
    got to).
    """

    def __init__(self, world: "SimWorld") -> None:
        super().__init__(world)
        cfg = world.cfg.robot
        self.controller = CartesianAdmittanceController(cfg.admittance, SafetyBox.from_config(cfg))
        m = world.model
        ids = world.arm_ctrl
        self.kp = m.actuator_gainprm[ids, 0].copy()
        self.feedforward = -m.actuator_biasprm[ids, 2] / self.kp  # kv / kp
        joints = world.arm_joint_ids
        self.low, self.high = m.jnt_range[joints, 0].copy(), m.jnt_range[joints, 1].copy()
        self.max_speed = np.asarray(world.arm.max_joint_speed, dtype=np.float64)
        # The servo saturates at its torque limit: a target further than that from the joint adds nothing
        # but wind-up (a blocked arm would push harder and harder once it comes free).
        self.max_lead = SERVO_LEAD_SHARE * m.actuator_forcerange[ids, 1] / self.kp
        self.q_target = world.data.qpos[world.arm_qpos].copy()
        self._faulted = False
        ft = world.arm.ft_site
        self.ft_site = m.site(ft).id
        self.force_adr = int(m.sensor_adr[m.sensor(f"{ft}_force").id])
        self.torque_adr = int(m.sensor_adr[m.sensor(f"{ft}_torque").id])
        self.hand = m.body("hand").id
        self.payload = float(m.body_subtreemass[self.hand])
        self.gravity = m.opt.gravity.copy()

    # --- the measured state --------------------------------------------------------------

    def ft_reading(self) -> np.ndarray:
        """The wrist sensor's reading as a UR reports it: the external wrench on the tool at the
        TCP, base frame, with the payload's weight taken out (force N, then torque Nm).

        MuJoCo's sensors give the force and torque the hand exerts on wrist 3, in the
        sensor site's frame; with the payload's weight removed, that is what the world
        pushes the hand with (plus the hand's own inertia while it accelerates).
        """
        w, d = self.world, self.world.data
        rot = d.site_xmat[self.ft_site].reshape(3, 3)
        site = d.site_xpos[self.ft_site]
        force = rot @ d.sensordata[self.force_adr:self.force_adr + 3]
        torque = rot @ d.sensordata[self.torque_adr:self.torque_adr + 3]
        weight = self.payload * self.gravity
        com = d.subtree_com[self.hand]
        external = -force - weight
        moment = -torque - _cross(com - site, weight)  # about the sensor site
        tcp = d.site_xpos[w.tcp_site]
        return np.concatenate([external, moment + _cross(site - tcp, external)])

    def tcp_state(self) -> TcpState:
        """The law's inputs; valid after mj_step1/mj_forward for the current state."""
        d, site = self.world.data, self.world.tcp_site
        return TcpState(pos=d.site_xpos[site].copy(), quat=mat_to_quat(d.site_xmat[site].reshape(3, 3)),
                        wrench=self.ft_reading())

    # --- ArmDrive --------------------------------------------------------------------------

    def unbiased_state(self) -> TcpState:
        """The measured pose with a zero reading: what the law takes its bias from (see the class docstring)."""
        tcp = self.tcp_state()
        return TcpState(pos=tcp.pos, quat=tcp.quat, wrench=np.zeros(6))

    def start(self, now: float) -> None:
        self.on_teleport()
        self.controller.start(self.unbiased_state(), now)

    def hold(self, now: float) -> None:
        self.controller.hold(self.tcp_state(), now)

    def on_teleport(self) -> None:
        w = self.world
        self.q_target = w.data.qpos[w.arm_qpos].copy()
        w.data.ctrl[w.arm_ctrl] = self.q_target

    def step(self, now: float, dt: float) -> None:
        w, d = self.world, self.world.data
        out = self.controller.compute(self.tcp_state(), now, dt)
        faulted = self.controller.fault is not None
        if faulted and not self._faulted:
            self.q_target = d.qpos[w.arm_qpos].copy()  # hold here, without the push the target had built up
        self._faulted = faulted
        jac = w.tcp_jacobian()
        dq = jac.T @ np.linalg.solve(jac @ jac.T + DLS_DAMPING ** 2 * np.eye(6), out.twist)
        over = float(np.max(np.abs(dq) / self.max_speed))
        if over > 1.0:
            dq = dq / over  # the whole vector, so the TCP keeps its direction
        if not np.all(np.isfinite(dq)):
            dq = np.zeros_like(dq)
        q = d.qpos[w.arm_qpos]
        self.q_target = np.clip(self.q_target + dq * dt, q - self.max_lead, q + self.max_lead)
        self.q_target = np.clip(self.q_target, self.low, self.high)
        d.ctrl[w.arm_ctrl] = self.q_target + self.feedforward * dq

    def tau(self) -> np.ndarray:
        w = self.world
        return w.data.actuator_force[w.arm_ctrl].copy()

    def wrench(self, tcp_pos: np.ndarray) -> np.ndarray:
        out = self.controller.last_output
        return np.zeros(6) if out is None else out.wrench.copy()

    def recover(self, now: float) -> None:
        if self.controller.ft_fault is None:
            tcp = self.tcp_state()
            self.controller.clear_box_fault(tcp.pos, tcp.quat, now)  # the box fault alone: the law runs on
            return
        reading = self.ft_reading()
        limit = self.controller.gains.limit
        if np.any(np.abs(reading) > limit):
            axis = int(np.argmax(np.abs(reading) / limit))
            unit = "N" if axis < 3 else "Nm"
            raise ValueError(f"the force-torque reading is still {reading[axis]:.0f} {unit} on axis {axis + 1} "
                             f"(limit {limit[axis]:g} {unit}): free the tool")
        self.on_teleport()
        self.controller.clear_fault(self.unbiased_state(), now)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` of two 3-vectors (np.cross costs ten times as much, twice per physics step)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])
