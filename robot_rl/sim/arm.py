"""What every sim arm shares: the :class:`ArmSpec` description, the parallel-jaw hand and MJCF helpers.

An arm module (:mod:`robot_rl.sim.panda`, :mod:`robot_rl.sim.ur5e`) describes its
kinematic chain, its joints and its actuators as one :class:`ArmSpec`; the scene
(:mod:`robot_rl.sim.model`) puts whichever arm ``sim.arm`` names at the world origin
and mounts the same hand on its flange, so every task grasps, inserts and renders
the same way on either arm. The hand's TCP site and wrist camera are part of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

TCP_OFFSET = 0.1034  # hand base to the point between the fingertips
FINGER_TRAVEL = 0.04  # per finger, metres; 0.08 fully open
GRIPPER_KP = 400.0
GRIPPER_FORCE = 70.0  # N, the Franka Hand's continuous force


@dataclass(frozen=True)
class ArmSpec:
    """One arm model: what the scene, the world and the drives need to know about it.

    ``chain_xml(hand)`` is the arm's body chain from its base to the flange as one MJCF
    ``<body>``, with ``hand`` (the hand's ``<body>``, from :func:`hand_xml`) on the
    flange; ``actuators_xml()`` its arm actuators, one per joint in ``joint_names``
    order (the scene lists them first, so ``ctrl[:dof]`` drives the arm).
    ``actuation`` says what they take: joint torques (``"torque"``, driven by the
    Cartesian impedance law) or joint positions (``"position"``, driven by the
    admittance law through differential IK). ``posture``: whether the arm has a
    null-space posture to set (a redundant, torque-driven arm). ``home``: the joint
    angles inverse kinematics starts from. ``ft_site``: the site of the wrist
    force-torque sensor (sensors ``<ft_site>_force`` and ``<ft_site>_torque``), if any.
    """

    name: str
    joint_names: tuple[str, ...]
    home: tuple[float, ...]
    actuation: Literal["torque", "position"]
    posture: bool
    joint_defaults: str  # attributes of the arm joints' default class
    chain_xml: Callable[[str], str]
    actuators_xml: Callable[[], str]
    hand_mount: str  # pos/quat attributes of the hand body in the flange's body
    ft_site: str | None = None
    max_joint_speed: tuple[float, ...] | None = None  # rad/s per joint, for position-driven arms
    sensors_xml: str = ""

    @property
    def dof(self) -> int:
        return len(self.joint_names)


def quat_rotx(alpha: float) -> str:
    """An MJCF quaternion of a rotation by ``alpha`` about x."""
    return f"{np.cos(alpha / 2):.9f} {np.sin(alpha / 2):.9f} 0 0"


def vec(v) -> str:
    """An MJCF vector."""
    return " ".join(f"{float(x):.6g}" for x in v)


def hand_xml(hand_extra: str, mount: str, sensor_site: str = "") -> str:
    """The hand, two coupled fingers and the TCP site, as the flange's child body.

    ``mount``: the hand body's ``pos``/``quat`` attributes in the flange's body;
    ``sensor_site``: an MJCF ``<site>`` at the hand's base, where an arm measures the
    wrist wrench (the hand is the child body of the force-torque sensor).
    """
    return f"""
<body name="hand" {mount}>
  {sensor_site}<geom class="hand" type="box" pos="0 0 0.03" size="0.02 0.095 0.025" mass="0.6"/>
  <geom class="hand" type="cylinder" pos="0 0 0.0" size="0.04 0.01" mass="0.1"/>
  <site name="tcp" pos="0 0 {TCP_OFFSET}" size="0.004" rgba="1 0 0 1" group="4"/>
  <camera name="wrist" pos="0.065 0 0.035" xyaxes="0 1 0 0.94 0 0.34" fovy="75"/>
  {hand_extra}
  <body name="finger_left" pos="0 0 0.0584">
    <joint name="finger_left" type="slide" axis="0 1 0" range="0 {FINGER_TRAVEL}" class="finger"/>
    <geom class="finger" type="box" pos="0 0.008 0.02" size="0.01 0.008 0.02" mass="0.02"/>
    <geom class="pad" type="box" pos="0 0.0045 0.043" size="0.009 0.0045 0.0095"/>
  </body>
  <body name="finger_right" pos="0 0 0.0584">
    <joint name="finger_right" type="slide" axis="0 -1 0" range="0 {FINGER_TRAVEL}" class="finger"/>
    <geom class="finger" type="box" pos="0 -0.008 0.02" size="0.01 0.008 0.02" mass="0.02"/>
    <geom class="pad" type="box" pos="0 -0.0045 0.043" size="0.009 0.0045 0.0095"/>
  </body>
</body>"""
