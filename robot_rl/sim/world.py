"""One MuJoCo world: model, data, the physics loop with the arm's control law, rendering.

:class:`SimWorld` is the sim backend's ``Clock``: sleeping advances physics, and every
physics step runs the arm's control law through its drive (:mod:`robot_rl.sim.drive`:
the Cartesian impedance law on the torque-driven Panda, the admittance law on the
position-driven UR5e; ``mj_step1`` → law → ``mj_step2``, so the law sees the state of
the step it acts on). ``sim.arm`` picks the arm. Its ``robot`` and ``cameras`` are the
sim implementations of the ``Robot`` and ``Camera`` interfaces.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import numpy as np

_GL_FROM_USER = "MUJOCO_GL" in os.environ  # set in the environment, not robot_rl's default
os.environ.setdefault("MUJOCO_GL", "egl")


def render_fix(backend: str, from_user: bool = _GL_FROM_USER) -> str:
    """What to do when MuJoCo's renderer cannot start with ``MUJOCO_GL=backend``.

    robot_rl renders offscreen with EGL unless told otherwise; a backend set in the
    environment that needs a display (glfw) or is unknown is fixed by unsetting it, not by
    installing EGL. Only EGL and OSMesa failing for themselves need a system package."""
    install_egl = "apt-get install libegl1 libgl1-mesa-dri (Mesa's EGL)"
    if backend == "egl":
        return f"install EGL: {install_egl}; or apt-get install libosmesa6 and set MUJOCO_GL=osmesa"
    if backend == "osmesa":
        return ("install OSMesa: apt-get install libosmesa6; or unset MUJOCO_GL to render with EGL "
                f"(needs {install_egl})")
    where = "set in your environment" if from_user else "set"
    return (f"MUJOCO_GL={backend} is {where} and cannot render offscreen here: unset it (unset MUJOCO_GL; "
            "robot_rl then renders with EGL, no display needed) or set MUJOCO_GL=egl or MUJOCO_GL=osmesa")


try:
    import mujoco  # noqa: E402  (MUJOCO_GL must be set before the import)
except ImportError as _err:
    from robot_rl.errors import RobotRLError, install_extra

    raise RobotRLError(f"MuJoCo is not installed ({_err}); install the sim extra: {install_extra('sim')}") from None
except Exception as _err:  # noqa: BLE001 - a broken GL backend fails inside mujoco's import
    from robot_rl.errors import RenderError

    raise RenderError(
        f"cannot load MuJoCo's renderer backend MUJOCO_GL={os.environ['MUJOCO_GL']} "
        f"({type(_err).__name__}: {str(_err).splitlines()[0] if str(_err) else ''}); "
        f"{render_fix(os.environ['MUJOCO_GL'])}") from None

from robot_rl.config import Config  # noqa: E402
from robot_rl.control import ArmState, CartesianAdmittanceController, CartesianImpedanceController  # noqa: E402
from robot_rl.control.commands import BadCommand, robot_command  # noqa: E402
from robot_rl.control.transforms import mat_to_quat, quat_conj, quat_mul, quat_to_rotvec  # noqa: E402
from robot_rl.errors import RenderError, RobotFault  # noqa: E402
from robot_rl.interfaces import Camera, Clock, Frame, Robot, RobotState  # noqa: E402
from robot_rl.sim.drive import ArmDrive, PositionDrive, TorqueDrive  # noqa: E402
from robot_rl.sim.model import FINGER_TRAVEL, CameraSpec, arm_spec, scene_xml  # noqa: E402

if TYPE_CHECKING:
    from robot_rl.sim.task import SimTask

log = logging.getLogger("robot_rl.sim")

GRIPPER_BODIES = ("hand", "finger_left", "finger_right")


class SimWorld(Clock):
    """The MuJoCo arm (``sim.arm``), its controller, the task's objects and the cameras."""

    def __init__(self, cfg: Config, task: "SimTask", cameras: list[str] | None = None) -> None:
        self.cfg = cfg
        self.task = task
        names = list(cfg.cameras) if cameras is None else cameras
        specs = [CameraSpec(n, cfg.cameras[n].width, cfg.cameras[n].height) for n in names]
        self.arm = arm_spec(cfg.sim.arm)
        self.model = mujoco.MjModel.from_xml_string(
            scene_xml(task.scene_parts(), specs, cfg.sim.physics_hz, self.arm))
        self.data = mujoco.MjData(self.model)
        self.dt = float(self.model.opt.timestep)
        self.tcp_site = self.model.site("tcp").id
        self.arm_joint_ids = np.array([self.model.joint(n).id for n in self.arm.joint_names])
        self.arm_qpos = np.array([self.model.joint(n).qposadr[0] for n in self.arm.joint_names])
        self.arm_dof = np.array([self.model.joint(n).dofadr[0] for n in self.arm.joint_names])
        self.arm_ctrl = np.arange(self.arm.dof)  # the scene lists the arm's actuators first
        self.finger_qpos = np.array([self.model.joint(n).qposadr[0] for n in ("finger_left", "finger_right")])
        self.finger_dof = np.array([self.model.joint(n).dofadr[0] for n in ("finger_left", "finger_right")])
        self.gripper_body_ids = self._subtree_ids(self.model.body("hand").id)
        self.gripper_actuator = self.model.actuator("gripper").id
        self._jac = np.zeros((6, self.model.nv))
        self._renderers: dict[tuple[int, int], mujoco.Renderer] = {}
        self.drive: ArmDrive = TorqueDrive(self) if self.arm.actuation == "torque" else PositionDrive(self)
        self.robot = SimRobot(self)
        self.cameras: dict[str, SimCamera] = {s.name: SimCamera(self, s) for s in specs}
        task.bind(self)

    # --- Clock -------------------------------------------------------------------
    def now(self) -> float:
        return float(self.data.time)

    def sleep_until(self, t: float) -> None:
        while self.data.time < t - 0.5 * self.dt:
            self.physics_step()

    # --- physics -----------------------------------------------------------------
    def physics_step(self) -> None:
        m, d = self.model, self.data
        mujoco.mj_step1(m, d)
        self.drive.step(float(d.time), self.dt)
        mujoco.mj_step2(m, d)

    def tcp_jacobian(self) -> np.ndarray:
        """(6, n) TCP Jacobian of the arm's joints (linear rows, then angular); valid after mj_step1/mj_forward."""
        mujoco.mj_jacSite(self.model, self.data, self._jac[:3], self._jac[3:], self.tcp_site)
        return self._jac[:, self.arm_dof].copy()

    def arm_state(self) -> ArmState:
        """The law's inputs; valid after mj_step1/mj_forward for the current state."""
        m, d = self.model, self.data
        jacp, jacr = self._jac[:3], self._jac[3:]
        mujoco.mj_jacSite(m, d, jacp, jacr, self.tcp_site)
        return ArmState(  # indexing by an index array copies already; the site's row is a view
            q=d.qpos[self.arm_qpos],
            dq=d.qvel[self.arm_dof],
            pos=d.site_xpos[self.tcp_site].copy(),
            quat=mat_to_quat(d.site_xmat[self.tcp_site].reshape(3, 3)),
            jac=self._jac[:, self.arm_dof].copy(),  # C order: the law's products round as they always have
            bias=d.qfrc_bias[self.arm_dof],
        )

    def forward(self) -> None:
        mujoco.mj_forward(self.model, self.data)

    def set_arm_joints(self, q: np.ndarray, gripper: float = 1.0) -> None:
        """Teleport the arm (sim shortcut for resets and tests); zero its velocities."""
        d = self.data
        d.qpos[self.arm_qpos] = q
        d.qvel[self.arm_dof] = 0.0
        d.qpos[self.finger_qpos] = gripper * FINGER_TRAVEL
        d.qvel[self.finger_dof] = 0.0
        d.ctrl[self.gripper_actuator] = gripper * FINGER_TRAVEL
        d.qacc_warmstart[:] = 0.0
        self.forward()
        self.drive.on_teleport()

    def solve_ik(self, pos: np.ndarray, quat: np.ndarray, q_init: np.ndarray | None = None,
                 iters: int = 200, tol: float = 1e-5) -> np.ndarray:
        """Joint angles that put the TCP at (pos, quat): damped least squares with a
        posture term (a redundant arm's rest posture; an arm without one starts from its
        home posture, so it stays on that branch), on a scratch MjData so the world's state
        is untouched."""
        m = self.model
        scratch = mujoco.MjData(m)
        rest = np.asarray(self.cfg.robot.controller.rest_posture if self.arm.posture else self.arm.home)
        q = rest.copy() if q_init is None else np.asarray(q_init, dtype=float).copy()
        lo, hi = m.jnt_range[self.arm_joint_ids, 0], m.jnt_range[self.arm_joint_ids, 1]
        jac = np.zeros((6, m.nv))
        for _ in range(iters):
            scratch.qpos[self.arm_qpos] = q
            mujoco.mj_kinematics(m, scratch)
            mujoco.mj_comPos(m, scratch)
            cur_pos = scratch.site_xpos[self.tcp_site]
            cur_quat = mat_to_quat(scratch.site_xmat[self.tcp_site].reshape(3, 3))
            err = np.concatenate([pos - cur_pos, quat_to_rotvec(quat_mul(quat, quat_conj(cur_quat)))])
            if np.linalg.norm(err) < tol:
                break
            mujoco.mj_jacSite(m, scratch, jac[:3], jac[3:], self.tcp_site)
            j = jac[:, self.arm_dof]
            lam = 1e-4
            dq = j.T @ np.linalg.solve(j @ j.T + lam * np.eye(6), err)
            null = np.eye(self.arm.dof) - np.linalg.pinv(j) @ j
            dq += null @ (0.1 * (rest - q))
            q = np.clip(q + dq, lo, hi)
        return q

    # --- contacts ---------------------------------------------------------------
    def gripper_wrench(self, tcp_pos: np.ndarray) -> np.ndarray:
        """External wrench on the gripper (contacts + applied forces), at the TCP, base frame."""
        m, d = self.model, self.data
        wrench = np.zeros(6)
        f6 = np.zeros(6)
        for i in range(d.ncon):
            con = d.contact[i]
            b1 = m.geom_bodyid[con.geom1]
            b2 = m.geom_bodyid[con.geom2]
            in1, in2 = b1 in self.gripper_body_ids, b2 in self.gripper_body_ids
            if in1 == in2:
                continue
            mujoco.mj_contactForce(m, d, i, f6)
            frame = con.frame.reshape(3, 3)
            force = frame.T @ f6[:3]  # force on geom2 from geom1, world frame
            if in1:
                force = -force
            wrench[:3] += force
            wrench[3:] += np.cross(con.pos - tcp_pos, force)
        for b in self.gripper_body_ids:
            f = d.xfrc_applied[b]
            if np.any(f):
                wrench[:3] += f[:3]
                wrench[3:] += f[3:] + np.cross(d.xipos[b] - tcp_pos, f[:3])
        return wrench

    def _subtree_ids(self, root: int) -> set[int]:
        ids = {root}
        for b in range(self.model.nbody):
            parent = b
            while parent > 0:
                if parent == root:
                    ids.add(b)
                    break
                parent = self.model.body_parentid[parent]
        return ids

    # --- rendering ----------------------------------------------------------------
    def render(self, camera: str, width: int, height: int) -> np.ndarray:
        key = (width, height)
        renderer = self._renderers.get(key)
        if renderer is None:
            renderer = self._renderers[key] = _make_renderer(self.model, width, height)
        renderer.update_scene(self.data, camera=camera)
        return renderer.render()

    def close(self) -> None:
        for r in self._renderers.values():
            r.close()
        self._renderers.clear()


def _make_renderer(model: mujoco.MjModel, width: int, height: int) -> "mujoco.Renderer":
    """An offscreen renderer with the settings that make CPU rendering ~25x faster."""
    model.vis.quality.shadowsize = 0
    model.vis.quality.offsamples = 0
    try:
        renderer = mujoco.Renderer(model, height=height, width=width)
    except Exception as err:  # noqa: BLE001 - any GL failure means the same to the user
        backend = os.environ.get("MUJOCO_GL", "egl")
        raise RenderError(
            f"cannot start the MuJoCo offscreen renderer (MUJOCO_GL={backend}): "
            f"{str(err).splitlines()[0] if str(err) else type(err).__name__}; {render_fix(backend)}") from None
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
    return renderer


class SimRobot(Robot):
    """The MuJoCo arm behind the ``Robot`` interface, whichever arm and law (:attr:`SimWorld.drive`).

    On the UR5e a saturated force-torque reading makes the admittance law hold the arm
    with a one-line fault; on either arm so does an external force that pushes the TCP more
    than ``robot.workspace.outside_margin_m`` outside the box (the law then holds the
    nearest pose in the box, so the arm comes back when the force goes). Like a real arm
    that stopped itself, :meth:`state` and :meth:`command` then raise
    :class:`~robot_rl.errors.RobotFault` until :meth:`recover`.
    """

    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.gripper_target = 1.0

    @property
    def controller(self) -> CartesianImpedanceController | CartesianAdmittanceController:
        """The arm's control law (the impedance law on the Panda, the admittance law on the UR5e)."""
        return self.world.drive.controller

    def start(self) -> None:
        """(Re)start the controller at the measured pose: no jump."""
        self.world.forward()
        self.world.drive.start(self.world.now())

    def state(self) -> RobotState:
        state = self._measure()
        self._raise_fault(state)
        return state

    def _measure(self) -> RobotState:
        w, d = self.world, self.world.data
        w.forward()  # kinematics of the current qpos (mj_step2 leaves them one step old)
        q, dq = d.qpos[w.arm_qpos].copy(), d.qvel[w.arm_dof].copy()
        site = w.tcp_site
        pos = d.site_xpos[site].copy()
        twist = w.tcp_jacobian() @ dq
        fingers = d.qpos[w.finger_qpos]
        return RobotState(
            stamp=w.now(), tcp_pos=pos, tcp_quat=mat_to_quat(d.site_xmat[site].reshape(3, 3)), tcp_twist=twist,
            tcp_wrench=w.drive.wrench(pos), q=q, dq=dq, tau=w.drive.tau(),
            gripper=float(np.clip(fingers.sum() / (2 * FINGER_TRAVEL), 0.0, 1.0)))

    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        """See :meth:`Robot.command`: a bad gripper value rejects the pose too (never half a command)."""
        if self.world.drive.fault is not None:
            self._raise_fault(self._measure())
        try:
            pos, quat, opening = robot_command(pos, quat, gripper)
        except BadCommand as err:
            return self.controller.reject(str(err))
        if not self.controller.set_target(pos, quat, self.world.now()):
            return False  # before start(): the controller says so
        if opening is not None:
            self.gripper_target = opening
            self.world.data.ctrl[self.world.gripper_actuator] = self.gripper_target * FINGER_TRAVEL
        return True

    def hold(self) -> None:
        self.world.drive.hold(self.world.now())

    def set_posture(self, q: np.ndarray | None, stiffness: float | None = None) -> bool:
        if not self.world.arm.posture:
            raise NotImplementedError(f"the sim {self.world.arm.name} has no null-space posture (6 joints)")
        return self.controller.set_posture(q, stiffness)

    def recover(self) -> None:
        """End a fault once its cause is gone: a force-torque reading back within its limits (the law
        restarts at the measured pose), a TCP back within half the outside margin of the box (the law
        keeps holding the pose it held); RobotFault while it is not."""
        if self.world.drive.fault is None:
            return
        self.world.forward()
        try:
            self.world.drive.recover(self.world.now())
        except ValueError as err:
            raise RobotFault(f"sim {self.world.arm.name}: {self.world.drive.fault}; recovery failed: {err}") from None

    def _raise_fault(self, state: RobotState) -> None:
        """RobotFault (with the state measured now, for the episode's last step) while the law holds on a fault."""
        fault = self.world.drive.fault
        if fault is not None:
            raise RobotFault(f"sim {self.world.arm.name}: {fault}", state=state)

    def close(self) -> None:
        self.world.close()


class SimCamera(Camera):
    """A MuJoCo camera rendered offscreen on demand."""

    def __init__(self, world: SimWorld, spec: CameraSpec) -> None:
        self.world = world
        self.name = spec.name
        self.spec = spec

    def read(self) -> Frame:
        image = self.world.render(self.name, self.spec.width, self.spec.height)
        return Frame(image=image, stamp=self.world.now())
