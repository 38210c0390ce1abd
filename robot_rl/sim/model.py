"""The MuJoCo scene: a 7-DoF Panda-like arm, a parallel-jaw gripper, a table, two cameras.

The arm is written from the Franka Panda's published kinematics (Craig's modified DH
parameters, joint limits and torque limits from Franka's documentation) with primitive
geoms only, so the scene needs no downloaded assets and renders fast on a CPU.
Each DH row (a_{i-1}, d_i, alpha_{i-1}) becomes a body placed at
``RotX(alpha) * (a, 0, 0) + RotX(alpha) * (0, 0, d)`` with orientation ``RotX(alpha)``,
rotating about its local z axis.

Link geoms are visual only (the arm never needs self-collision here); the hand, the
fingers and whatever a task attaches to the hand collide with the world. Tasks add
their objects through :class:`SceneParts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robot_rl.config.sections import PANDA_JOINT_HIGH, PANDA_JOINT_LOW, PANDA_TORQUE_LIMITS

# Modified DH parameters of the Panda: (a_{i-1}, d_i, alpha_{i-1}).
PANDA_DH = (
    (0.0, 0.333, 0.0),
    (0.0, 0.0, -np.pi / 2),
    (0.0, 0.316, np.pi / 2),
    (0.0825, 0.0, np.pi / 2),
    (-0.0825, 0.384, -np.pi / 2),
    (0.0, 0.0, np.pi / 2),
    (0.088, 0.0, np.pi / 2),
)
FLANGE_D = 0.107
TCP_OFFSET = 0.1034  # flange to the point between the fingertips
JOINT_LIMITS = tuple(zip(PANDA_JOINT_LOW, PANDA_JOINT_HIGH))
TORQUE_LIMITS = PANDA_TORQUE_LIMITS
# Approximate link masses (kg), close to the identified Panda values.
LINK_MASSES = (3.0, 2.5, 2.5, 2.4, 2.4, 1.6, 0.8)
LINK_RADII = (0.06, 0.06, 0.055, 0.055, 0.05, 0.045, 0.04)
FINGER_TRAVEL = 0.04  # per finger, metres; 0.08 fully open
GRIPPER_KP = 400.0
GRIPPER_FORCE = 70.0  # N, the Franka Hand's continuous force


def _quat_rotx(alpha: float) -> str:
    return f"{np.cos(alpha / 2):.9f} {np.sin(alpha / 2):.9f} 0 0"


def _vec(v) -> str:
    return " ".join(f"{float(x):.6g}" for x in v)


@dataclass
class CameraSpec:
    name: str
    width: int
    height: int


@dataclass
class SceneParts:
    """What a task adds to the scene (MJCF snippets)."""

    worldbody: str = ""  # bodies and geoms in <worldbody>
    hand: str = ""  # geoms rigidly attached to the hand (e.g. a held peg)
    assets: str = ""
    contact: str = ""  # <exclude>/<pair> elements
    defaults: str = ""
    extra: list[str] = field(default_factory=list)


def arm_xml(hand_extra: str = "") -> str:
    """The arm body chain from base to fingers, as one MJCF <body> element."""
    inner = _hand_xml(hand_extra)
    for i in reversed(range(7)):
        lo, hi = JOINT_LIMITS[i]
        inner = f"""
<body name="link{i + 1}" pos="{_vec(_body_pos(i))}" quat="{_quat_rotx(PANDA_DH[i][2])}">
  <joint name="joint{i + 1}" axis="0 0 1" range="{lo} {hi}" class="arm"/>
  {_link_geom(i)}
  {inner}
</body>"""
    return f"""
<body name="link0" pos="0 0 0">
  <geom class="link" type="cylinder" pos="0 0 0.07" size="0.07 0.07" mass="4"/>
  {inner}
</body>"""


def _body_pos(i: int) -> np.ndarray:
    """Origin of link i+1 in the frame of link i, from the DH row."""
    a, d, alpha = PANDA_DH[i]
    return np.array([a, -d * np.sin(alpha), d * np.cos(alpha)])


def _link_geom(i: int) -> str:
    """A capsule along the link's skeleton: its origin to the next joint (or flange)."""
    start = np.array([0.0, 0.0, -0.19]) if i == 0 else np.zeros(3)
    end = _body_pos(i + 1) if i < 6 else np.array([0.0, 0.0, FLANGE_D])
    mass, radius = LINK_MASSES[i], LINK_RADII[i]
    if np.linalg.norm(end - start) < 1e-6:
        return f'<geom class="link" type="sphere" size="{radius}" mass="{mass}"/>'
    return f'<geom class="link" fromto="{_vec(start)} {_vec(end)}" size="{radius}" mass="{mass}"/>'


def _hand_xml(hand_extra: str) -> str:
    """Flange, hand, two coupled fingers and the TCP site (in link7's frame)."""
    return f"""
<body name="hand" pos="0 0 {FLANGE_D}" quat="0.9238795 0 0 -0.3826834">
  <geom class="hand" type="box" pos="0 0 0.03" size="0.02 0.095 0.025" mass="0.6"/>
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


def scene_xml(parts: SceneParts, cameras: list[CameraSpec], physics_hz: float) -> str:
    """The whole MJCF document for one task."""
    offw = max([c.width for c in cameras] + [64])
    offh = max([c.height for c in cameras] + [64])
    motors = "\n".join(
        f'<motor name="motor{i + 1}" joint="joint{i + 1}" ctrlrange="{-t} {t}"/>'
        for i, t in enumerate(TORQUE_LIMITS))
    return f"""
<mujoco model="robot_rl_panda_{'_'.join(c.name for c in cameras) or 'nocam'}">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{1.0 / physics_hz:.6g}" integrator="implicitfast" cone="elliptic" impratio="10"/>
  <visual>
    <global offwidth="{offw}" offheight="{offh}"/>
    <quality shadowsize="0" offsamples="0"/>
    <headlight ambient="0.45 0.45 0.45" diffuse="0.5 0.5 0.5" specular="0 0 0"/>
  </visual>
  <asset>
    <texture name="grid" type="2d" builtin="checker" width="64" height="64"
             rgb1="0.62 0.55 0.45" rgb2="0.58 0.51 0.42"/>
    <material name="table" texture="grid" texrepeat="6 6"/>
    {parts.assets}
  </asset>
  <default>
    <default class="arm">
      <joint armature="0.1" damping="0.5"/>
    </default>
    <default class="link">
      <geom type="capsule" contype="0" conaffinity="0" group="1" rgba="0.92 0.92 0.95 1"/>
    </default>
    <default class="hand">
      <geom contype="1" conaffinity="1" group="1" rgba="0.2 0.2 0.22 1" friction="1 0.005 0.0001"/>
    </default>
    <default class="finger">
      <joint armature="0.01" damping="5" frictionloss="0"/>
      <geom contype="1" conaffinity="1" group="1" rgba="0.3 0.3 0.32 1" friction="1 0.005 0.0001"/>
    </default>
    <default class="pad">
      <geom contype="1" conaffinity="1" group="1" rgba="0.1 0.1 0.1 1" mass="0.005"
            friction="1.5 0.01 0.0005" condim="4" solref="0.004 1" solimp="0.95 0.99 0.001"/>
    </default>
    {parts.defaults}
  </default>
  <worldbody>
    <light name="sun" pos="0.6 -0.4 1.5" dir="-0.2 0.3 -1" directional="true" diffuse="0.6 0.6 0.6" castshadow="false"/>
    <geom name="table" type="box" pos="0.5 0 -0.02" size="0.6 0.6 0.02" material="table" contype="1" conaffinity="1"/>
    <camera name="front" pos="0.92 0 0.42" xyaxes="0 1 0 -0.747 0 0.664" fovy="42"/>
    {arm_xml(parts.hand)}
    {parts.worldbody}
  </worldbody>
  <contact>
    <exclude body1="hand" body2="finger_left"/>
    <exclude body1="hand" body2="finger_right"/>
    {parts.contact}
  </contact>
  <equality>
    <joint joint1="finger_left" joint2="finger_right" polycoef="0 1 0 0 0" solref="0.005 1"/>
  </equality>
  <actuator>
    {motors}
    <position name="gripper" joint="finger_left" kp="{GRIPPER_KP}" kv="20" ctrlrange="0 {FINGER_TRAVEL}"
              forcerange="{-GRIPPER_FORCE} {GRIPPER_FORCE}"/>
  </actuator>
  {''.join(parts.extra)}
</mujoco>
"""
