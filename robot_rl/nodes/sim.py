"""One MuJoCo world run in real time, for the sim node: :class:`SimServer` (no ROS in here).

The sim node publishes what a real robot's controller and camera nodes publish and
takes the same commands; this class is everything behind those topics:

* **Real time.** :meth:`tick` advances physics to the wall clock (the world's
  ``sleep_until`` steps MuJoCo and the impedance law at ``sim.physics_hz``), then
  reads the state through a :class:`~robot_rl.nodes.controller.ControllerCore`, the
  controller node's own rules: no motion before the pose is known, targets through
  ``robot.command``, and the target watchdog on the wall clock. (The sim controller's
  own watchdog, on simulated time, is switched off: the node's replaces it, as on a
  robot.) When the CPU cannot keep up, at most ``max_lag_s`` of simulated time is
  caught up per tick and the rest is dropped, so the sim slows down instead of
  running in bursts; ``status()["lag_dropped_s"]`` says how much.
* **Resets** (:meth:`reset`): the task's reset with the requested seed (the teleport
  shortcut or the scripted reset the config asks for, run as fast as the CPU allows),
  then real time starts over from the new state. A repeated request id is answered
  with the previous answer, without a second reset.
* **Simulated time** (:meth:`now`): MuJoCo's ``data.time``, which runs on across
  resets (a reset's own physics, the teleport's settling or a scripted reset's motion,
  moves it on; no reset rewinds it), so it is a monotonic session clock: the sim node
  publishes it on ``/clock`` and stamps every message with it, and a reset's answer
  carries it too, strictly later than any stamp of the episode before. It runs at the
  wall clock's rate, slower when the CPU cannot keep up.
* **Ground truth** (:meth:`ground_truth`): the task's privileged state and success.
* **Camera frames** (:meth:`camera_transforms`): where the scene's cameras sit, as tf
  transforms of their optical frames (:mod:`robot_rl.nodes.frames`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import numpy as np

from robot_rl.config import Config
from robot_rl.control.transforms import mat_to_quat
from robot_rl.interfaces import RobotState
from robot_rl.nodes.camera import pinhole_k
from robot_rl.nodes.controller import ControllerCore
from robot_rl.nodes.frames import FrameTransform, optical_from_mujoco, relative
from robot_rl.nodes.latest import Percentiles
from robot_rl.nodes.topics import camera_frame_id


class SimServer:
    def __init__(self, cfg: Config, *, cameras: list[str] | None = None, max_lag_s: float = 0.05,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        from robot_rl.sim import build_world
        from robot_rl.tasks import make_task

        self.cfg = cfg
        self.world = build_world(make_task(cfg), list(cfg.cameras) if cameras is None else cameras)
        self.world.robot.controller.watchdog_enabled = False  # the node's wall-clock watchdog replaces it
        self.controller = ControllerCore(self.world.robot, cfg.ros.watchdog_s, clock=clock, wall=wall)
        self.max_lag_s = max_lag_s
        self._clock = clock
        self._sim0 = self._wall0 = self._sim_start = 0.0
        self.lag_dropped_s = 0.0
        self.physics_steps = 0
        self.tick_period = Percentiles()
        self._last_tick: Optional[float] = None
        self.resets = 0
        self._last_reset: Optional[dict[str, Any]] = None
        self.reset({"id": "startup", "seed": int(cfg.seed)})

    # --- time -------------------------------------------------------------------------

    def now(self) -> float:
        """The simulated time, s: the session's clock (see the module docstring)."""
        return self.world.now()

    def _anchor(self) -> None:
        self._wall0, self._sim0 = self._clock(), self.world.now()
        self._sim_start = self._sim0

    def advance(self) -> None:
        """Step physics until simulated time matches the wall clock (see the module docstring)."""
        target = self._sim0 + (self._clock() - self._wall0)
        behind = target - self.world.now()
        if behind > self.max_lag_s:
            dropped = behind - self.max_lag_s
            self._sim0 -= dropped
            self.lag_dropped_s += dropped
            target -= dropped
        before = self.world.data.time
        self.world.sleep_until(target)
        self.physics_steps += int(round((self.world.data.time - before) / self.world.dt))

    def tick(self) -> Optional[RobotState]:
        """Advance to now and read the state through the controller rules (None while faulted)."""
        now = self._clock()
        if self._last_tick is not None:
            self.tick_period.add(now - self._last_tick)
        self._last_tick = now
        self.advance()
        return self.controller.poll()

    # --- episodes ----------------------------------------------------------------------

    def reset(self, request: dict[str, Any]) -> dict[str, Any]:
        """Reset the task with ``request["seed"]``; the answer for ``/sim/reset_done``."""
        if self._last_reset is not None and request["id"] == self._last_reset["id"]:
            return self._last_reset
        before = self.world.now()
        self.world.task.reset(np.random.default_rng(int(request["seed"])))
        if self.world.now() <= before:  # a reset that took no simulated time: one step, so the stamp is later
            self.world.sleep_until(before + self.world.dt)
        self.controller.restart()
        self.controller.poll()  # the new pose is the target: no jump when targets resume
        self._anchor()
        self.resets += 1
        self._last_reset = {"id": request["id"], "seed": int(request["seed"]), "stamp": self.now(),
                            "gripper": float(self.world.task.start_gripper()), "resets": self.resets}
        return self._last_reset

    def ground_truth(self) -> tuple[np.ndarray, bool]:
        """(task state then 1.0/0.0 for success as float64, success)."""
        success = bool(self.world.task.success())
        values = np.append(np.asarray(self.world.task.task_state(), dtype=np.float64), 1.0 if success else 0.0)
        return values, success

    @property
    def state_dim(self) -> int:
        return int(self.world.task.state_dim)

    # --- cameras -----------------------------------------------------------------------

    def render(self, camera: str) -> np.ndarray:
        return self.world.cameras[camera].read().image

    def intrinsics(self, camera: str) -> np.ndarray:
        spec = self.world.cameras[camera].spec
        fovy = float(self.world.model.cam_fovy[self.world.model.camera(camera).id])
        return pinhole_k(fovy, spec.width, spec.height)

    def camera_transforms(self, base_frame: str, tcp_frame: str, *, moving: bool = False) -> list[FrameTransform]:
        """The optical frames of the scene's cameras, from the current state.

        ``moving=False``: the cameras that never move relative to their parent, for
        ``tf_static``: one fixed in the world hangs under ``base_frame`` (the world frame
        is the arm's base), one on the TCP's body (the wrist camera) under ``tcp_frame``.
        ``moving=True``: any other camera (on a moving body that is not the hand), under
        ``base_frame``, for ``tf`` at every state tick.
        """
        model, data = self.world.model, self.world.data
        self.world.forward()
        tcp_site = self.world.tcp_site
        tcp_body = int(model.site_bodyid[tcp_site])
        tcp_pose = (data.site_xpos[tcp_site].copy(), mat_to_quat(data.site_xmat[tcp_site].reshape(3, 3)))
        out = []
        for name in self.world.cameras:
            cam = model.camera(name).id
            body = int(model.cam_bodyid[cam])
            pose = optical_from_mujoco(data.cam_xpos[cam], data.cam_xmat[cam])
            if body == tcp_body:
                fixed, parent = True, tcp_frame
                pose = relative(tcp_pose, pose)
            else:
                fixed, parent = body == 0, base_frame
            if fixed != moving:
                out.append(FrameTransform(parent, camera_frame_id(name), pose[0], pose[1]))
        return out

    def status(self) -> dict[str, Any]:
        elapsed = self._clock() - self._wall0
        return {"sim_time": round(self.world.now(), 3), "resets": self.resets,
                "real_time_factor": round((self.world.now() - self._sim_start) / elapsed, 3) if elapsed > 0 else None,
                "lag_dropped_s": round(self.lag_dropped_s, 3), "physics_steps": self.physics_steps,
                "tick_period": self.tick_period.summary(),
                "controller": self.controller.status(), "law": self.world.robot.controller.stats.summary()}

    def close(self) -> None:
        self.world.close()
