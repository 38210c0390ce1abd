"""RobotEnv: a gymnasium env over a ``Robot``, ``Camera``s, a ``Clock`` and an ``EpisodeTask``.

It never knows whether it drives MuJoCo, a Franka, or topics from a controller node.

Action (7-D, in ``[-1, 1]``): end-effector deltas ``x y z rx ry rz`` in the base frame,
scaled by ``env.action_scale_pos`` (m) and ``env.action_scale_rot`` (rad), and a gripper
command: ``> 0.5`` closes, ``< -0.5`` opens, anything between keeps the gripper as it is.
Each step moves the commanded target by the delta (orientation composes onto the last
target, so a zero rotation holds the orientation), keeps the target within
``lead`` of the measured pose so that pushing against contact cannot wind it up,
clips it to the safety box, sends it, and sleeps to the next control tick.

Observation: ``{"state": float32 vector, <camera>: uint8 (H, W, 3), ...}``. The state
vector is proprioception (see :data:`PROPRIO_LAYOUT`), followed by the task's
privileged state in the ``state`` and ``both`` modes. Cameras appear in ``pixels`` and
``both``. Reward is sparse: 1 on success, which also terminates the episode.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.control.safety import SafetyBox
from robot_rl.control.transforms import quat_conj, quat_mul, quat_to_rotvec, rotvec_to_quat
from robot_rl.envs.task import EpisodeTask
from robot_rl.errors import RobotFault
from robot_rl.interfaces import Camera, Clock, Robot, RobotState

log = logging.getLogger("robot_rl.env")

# name -> (start, stop) in the proprioceptive part of obs["state"]
PROPRIO_LAYOUT: dict[str, tuple[int, int]] = {
    "tcp_pos": (0, 3),
    "tcp_quat": (3, 7),  # w x y z, w >= 0
    "tcp_twist": (7, 13),  # m/s, rad/s
    "tcp_wrench": (13, 19),  # N / 10 and Nm, clipped to +-10
    "gripper": (19, 20),  # opening fraction
}
PROPRIO_DIM = 20
WRENCH_SCALE = np.array([0.1, 0.1, 0.1, 1.0, 1.0, 1.0])
LEAD_FACTOR = 2.0  # the target may lead the measured pose by this many full-scale steps

ACTION_DIMS = ("x", "y", "z", "rx", "ry", "rz", "gripper")


def recover_or_ask(robot: Robot, fault: RobotFault, ask: Callable[[str], str] = input) -> None:
    """Recover once; if the arm stays faulted, ask the person at the robot, then retry.

    Without an interactive terminal nobody can be asked: the fault is raised as a
    one-line error (every transition recorded so far has already been handed on).
    """
    try:
        robot.recover()
        log.info("robot recovered after: %s", fault)
        return
    except RobotFault as again:
        if not sys.stdin or not sys.stdin.isatty():
            raise RobotFault(f"robot fault and automatic recovery failed ({again}); "
                             "fix the robot and restart with --resume") from None
        while True:
            ask(f"robot fault, automatic recovery failed: {again}\n"
                "Fix the robot (release the user stop, move it out of the limit), then press Enter: ")
            try:
                robot.recover()
                return
            except RobotFault as still:
                again = still


def gripper_target(command: float, current_target: float) -> float:
    """The gripper opening requested by a gripper action value (see module docstring)."""
    if command > 0.5:
        return 0.0
    if command < -0.5:
        return 1.0
    return current_target


class RobotEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, cfg: Config, robot: Robot, cameras: dict[str, Camera], clock: Clock,
                 task: EpisodeTask, render_mode: str | None = None) -> None:
        self.cfg = cfg
        self.robot = robot
        self.clock = clock
        self.task = task
        self.render_mode = render_mode
        self.period = 1.0 / cfg.env.control_hz
        self.box = SafetyBox.from_config(cfg.robot)
        self.use_task_state = cfg.env.obs_mode in ("state", "both")
        self.camera_names = list(cfg.env.cameras) if cfg.env.obs_mode != "state" else []
        self.cameras = {n: cameras[n] for n in self.camera_names}
        self._all_cameras = cameras
        state_dim = PROPRIO_DIM + (task.state_dim if self.use_task_state else 0)
        spaces: dict[str, gym.Space] = {
            "state": gym.spaces.Box(-np.inf, np.inf, (state_dim,), dtype=np.float32)}
        for name in self.camera_names:
            c = cfg.cameras[name]
            spaces[name] = gym.spaces.Box(0, 255, (c.height, c.width, 3), dtype=np.uint8)
        self.observation_space = gym.spaces.Dict(spaces)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (7,), dtype=np.float32)
        self.scale = np.array([cfg.env.action_scale_pos] * 3 + [cfg.env.action_scale_rot] * 3)
        self.lead = LEAD_FACTOR * self.scale
        self._state: RobotState | None = None
        self._target_pos = np.zeros(3)
        self._target_quat = np.array([1.0, 0.0, 0.0, 0.0])
        self._gripper = 1.0
        self._next_tick = 0.0
        self.fault_handler: Callable[[Robot, RobotFault], None] = recover_or_ask
        self.reset_pose: tuple[np.ndarray, np.ndarray] | None = None
        self.episode_count = 0  # resets so far; lets observers notice a new episode

    # --- gymnasium API --------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.episode_count += 1
        try:
            self.task.reset(self.np_random)
        except RobotFault as fault:  # a reset is robot motion too: recover, then try once more
            log.error("robot fault during reset: %s", fault)
            self.fault_handler(self.robot, fault)
            self.task.reset(self.np_random)
        self._state = self.robot.state()
        self._target_pos = self._state.tcp_pos.copy()
        self._target_quat = self._state.tcp_quat.copy()
        self._gripper = self.task.start_gripper()
        self.reset_pose = (self._state.tcp_pos.copy(), self._state.tcp_quat.copy())
        self._next_tick = self.clock.now() + self.period
        return self._observe(), {"success": False}

    def step(self, action: np.ndarray):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(7), -1.0, 1.0)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"non-finite action {a.tolist()}")
        try:
            self.apply_action(a)
            self.clock.sleep_until(self._next_tick)
            self._next_tick = max(self._next_tick + self.period, self.clock.now())
            self._state = self.robot.state()
        except RobotFault as fault:
            return self._fault_step(fault)
        obs = self._observe()
        success = self.task.success()
        info = {"success": success, "gripper_target": self._gripper}
        return obs, float(success), success, False, info

    def render(self) -> np.ndarray | None:
        """Every camera the env has, side by side (in the order they were given; shorter
        images padded with black at the bottom), so one video shows the whole scene."""
        if self.render_mode != "rgb_array" or not self._all_cameras:
            return None
        images = [np.asarray(camera.read().image) for camera in self._all_cameras.values()]
        height = max(image.shape[0] for image in images)
        return np.concatenate([np.pad(image, ((0, height - image.shape[0]), (0, 0), (0, 0))) for image in images],
                              axis=1)

    def render_views(self) -> dict[str, np.ndarray]:
        """Each camera's current image by name, in :meth:`render`'s order (a video names them on the
        frames: :func:`robot_rl.training.frames.camera_tiles`); empty when not rendering."""
        if self.render_mode != "rgb_array":
            return {}
        return {name: np.asarray(camera.read().image) for name, camera in self._all_cameras.items()}

    def close(self) -> None:
        self.robot.close()

    def _fault_step(self, fault: RobotFault):
        """The arm stopped itself: end the episode as failed, keep its data, recover."""
        log.error("robot fault mid-episode, ending the episode as failed: %s", fault)
        if isinstance(fault.state, RobotState):
            self._state = fault.state
        self.fault_handler(self.robot, fault)
        info = {"success": False, "robot_fault": str(fault), "gripper_target": self._gripper}
        return self._observe(), 0.0, False, True, info

    @property
    def robot_state(self) -> RobotState:
        """The robot state measured at the end of the last step (or reset)."""
        return self._state

    @property
    def gripper_command(self) -> float:
        """The gripper opening last commanded (1 open, 0 closed)."""
        return self._gripper

    @property
    def target_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The pose last sent to the robot (after lead limiting and box clipping)."""
        return self._target_pos.copy(), self._target_quat.copy()

    # --- pieces -----------------------------------------------------------------
    def apply_action(self, a: np.ndarray) -> None:
        """Turn a 7-D normalised action into a clipped target pose and send it."""
        state = self._state
        delta = a[:6] * self.scale
        pos = self._target_pos + delta[:3]
        pos = state.tcp_pos + np.clip(pos - state.tcp_pos, -self.lead[:3], self.lead[:3])
        quat = quat_mul(rotvec_to_quat(delta[3:]), self._target_quat)
        lead = quat_to_rotvec(quat_mul(quat, quat_conj(state.tcp_quat)))
        quat = quat_mul(rotvec_to_quat(np.clip(lead, -self.lead[3:], self.lead[3:])), state.tcp_quat)
        pos, quat, _ = self.box.clip(pos, quat)
        self._target_pos, self._target_quat = pos, quat
        self._gripper = gripper_target(float(a[6]), self._gripper)
        self.robot.command(pos, quat, self._gripper)

    def proprio(self, state: RobotState) -> np.ndarray:
        quat = state.tcp_quat if state.tcp_quat[0] >= 0 else -state.tcp_quat
        wrench = np.clip(state.tcp_wrench * WRENCH_SCALE, -10.0, 10.0)
        return np.concatenate([state.tcp_pos, quat, state.tcp_twist, wrench, [state.gripper]])

    def _observe(self) -> dict[str, np.ndarray]:
        parts = [self.proprio(self._state)]
        if self.use_task_state:
            parts.append(self.task.task_state())
        obs = {"state": np.concatenate(parts).astype(np.float32)}
        for name, camera in self.cameras.items():
            obs[name] = camera.read().image
        return obs


@dataclass
class EnvParts:
    """The backend pieces a RobotEnv runs on: sim, over topics, or hardware alike."""

    robot: Robot
    cameras: dict[str, Camera]
    clock: Clock
    task: EpisodeTask
