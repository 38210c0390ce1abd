"""The contracts between robot_rl's parts: ``Robot``, ``Camera``, ``Clock``, ``InputDevice``.

Sim and real hardware implement the same interfaces, so ``RobotEnv`` and the nodes
never know which one they drive. Conventions, everywhere in robot_rl:

* positions in metres, in the robot base frame; times in seconds;
* quaternions are ``(w, x, y, z)`` (MuJoCo's order; ROS messages name their fields, so
  the conversion happens once, in robot_rl.ros);
* twists and wrenches are ``(linear xyz, angular xyz)`` in the base frame;
* the gripper is an opening fraction: ``0.0`` closed, ``1.0`` fully open;
* images are ``uint8`` RGB arrays of shape ``(height, width, 3)``.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RobotState:
    """One snapshot of the arm, as the controller sees it."""

    stamp: float
    tcp_pos: np.ndarray  # (3,)
    tcp_quat: np.ndarray  # (4,) w, x, y, z
    tcp_twist: np.ndarray  # (6,) measured TCP velocity
    tcp_wrench: np.ndarray  # (6,) estimated external wrench acting at the TCP
    q: np.ndarray  # (n,) joint positions of an n-joint arm (7 on a Panda, 6 on a UR)
    dq: np.ndarray  # (n,) joint velocities
    # (n,) joint torques: the last commanded ones without gravity on a torque-driven arm,
    # what the joint servos exert on a position-driven one
    tau: np.ndarray
    gripper: float  # opening fraction, 0 closed .. 1 open

    def replace(self, **changes: object) -> "RobotState":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Frame:
    """The latest image of a camera, with the time it was taken (robot clock)."""

    image: np.ndarray  # (H, W, 3) uint8 RGB
    stamp: float
    depth: np.ndarray | None = None  # (H, W) uint16 millimetres, if the camera has depth


class Robot(abc.ABC):
    """An arm with a compliant Cartesian controller (impedance or admittance) and a gripper.

    Contract:
    * ``state()`` never blocks for long; it returns the newest state the backend has.
    * ``command()`` sets the target the controller pulls toward. Backends check it with
      :mod:`robot_rl.control.commands` and clip it to their safety box. A command they
      cannot use (non-finite, malformed, any wrong type, in the pose or the gripper) is
      rejected whole and counted, never raised and never half-applied: the arm then
      holds the pose measured when the bad command arrived, until a good one comes.
      It returns immediately (True when the command was accepted); motion happens in the
      controller loop (MuJoCo physics steps, a 1 kHz torque loop, or a ros2_control
      controller), which moves its target toward the new one at bounded speed.
    * ``hold()`` makes the current measured pose the target: the arm stops where it is.
    * When the arm stops itself, ``state()`` and ``command()`` raise
      :class:`robot_rl.errors.RobotFault` until ``recover()`` succeeds.
    * A backend never moves before it knows the current pose: its first target is the
      pose it measured at start.
    """

    @abc.abstractmethod
    def state(self) -> RobotState:
        """The newest robot state."""

    @abc.abstractmethod
    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        """Set the target TCP pose (and optionally the gripper opening fraction); False if rejected."""

    @abc.abstractmethod
    def hold(self) -> None:
        """Hold the current pose."""

    def set_posture(self, q: np.ndarray | None, stiffness: float | None = None) -> bool:
        """Pull the arm's redundant (null-space) motion toward joint angles ``q``.

        The Cartesian target still holds the TCP, so the TCP stays where the controller
        keeps it while the elbow moves: that is how a joint-space reset runs through the
        same law, safety box, error clip and watchdog as the policy. ``stiffness`` is the
        null-space stiffness in Nm/rad (damping 2*sqrt(stiffness)); None keeps the
        configured one. ``q=None`` restores the configured posture and gains
        (``robot.controller.rest_posture``, ``nullspace_stiffness``); so does the
        controller's watchdog hold. ``q`` is clipped into ``robot.controller.joint_low`` ..
        ``joint_high`` and ``stiffness`` to ``max_posture_stiffness``; a malformed or
        non-finite one is rejected and counted (False), never raised. Backends without a
        null-space posture raise NotImplementedError.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot set a null-space posture")

    def recover(self) -> None:
        """Clear a fault (see :class:`robot_rl.errors.RobotFault`) and restart the
        controller at the measured pose; raises RobotFault if the arm stays faulted.
        Backends that cannot fault need not override it."""

    def close(self) -> None:
        """Release the hardware or simulation; holding first where that matters."""


class Camera(abc.ABC):
    """A source of RGB frames.

    Contract: ``read()`` returns the newest frame, a ``uint8`` ``(H, W, 3)`` RGB image
    whose size is fixed for the camera's lifetime. It raises
    :class:`robot_rl.errors.DeviceError` when the device is gone.
    """

    name: str = "camera"

    @abc.abstractmethod
    def read(self) -> Frame:
        """The newest frame."""

    def close(self) -> None:
        """Stop streaming and release the device."""


class Clock(abc.ABC):
    """Time as the control loop sees it.

    In ``RobotEnv`` over MuJoCo, sleeping advances the physics (so sim runs as fast as
    the CPU allows, deterministically); on hardware and on topics it is the wall clock.
    """

    @abc.abstractmethod
    def now(self) -> float:
        """Seconds on this clock."""

    @abc.abstractmethod
    def sleep_until(self, t: float) -> None:
        """Return once ``now() >= t`` (immediately when already past)."""


@dataclass
class InputCommand:
    """What an input device asks for at one instant.

    ``twist`` is a normalised end-effector velocity command in ``[-1, 1]`` per axis
    (linear xyz, angular xyz), in the base frame, after deadband and axis mapping.
    Flags are edge-free levels, except the ``*_pressed`` fields, which are true only in
    the read where the button went down.
    """

    twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    buttons: tuple[int, ...] = ()
    intervene: bool = False  # the human is acting now
    gripper_toggle_pressed: bool = False
    close_gripper: bool | None = None  # absolute gripper request, if the device has one
    success_pressed: bool = False
    failure_pressed: bool = False
    pause_pressed: bool = False
    stop_pressed: bool = False


class InputDevice(abc.ABC):
    """A human input device (SpaceMouse, keyboard) or a simulated human.

    Contract: ``read()`` never blocks; it returns the device's state at call time. When
    the device goes away mid-use it raises :class:`robot_rl.errors.DeviceError`; the
    caller ends the intervention and keeps its data.
    """

    @abc.abstractmethod
    def read(self) -> InputCommand:
        """The current command."""

    def close(self) -> None:
        """Release the device."""
