"""The 7-DoF Panda-like arm: torque actuators, driven by the Cartesian impedance law.

The arm is written from the Franka Panda's published kinematics (Craig's modified DH
parameters, joint limits and torque limits from Franka's documentation) with primitive
geoms only, so the scene needs no downloaded assets and renders fast on a CPU.
Each DH row (a_{i-1}, d_i, alpha_{i-1}) becomes a body placed at
``RotX(alpha) * (a, 0, 0) + RotX(alpha) * (0, 0, d)`` with orientation ``RotX(alpha)``,
rotating about its local z axis.

Link geoms are visual only (the arm never needs self-collision here); the hand, the
fingers and whatever a task attaches to the hand collide with the world.
"""

from __future__ import annotations

import numpy as np

from robot_rl.config.sections import HOME_Q, PANDA_JOINT_HIGH, PANDA_JOINT_LOW, PANDA_TORQUE_LIMITS
from robot_rl.sim.arm import ArmSpec, quat_rotx, vec

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
JOINT_LIMITS = tuple(zip(PANDA_JOINT_LOW, PANDA_JOINT_HIGH))
TORQUE_LIMITS = PANDA_TORQUE_LIMITS
# Approximate link masses (kg), close to the identified Panda values.
LINK_MASSES = (3.0, 2.5, 2.5, 2.4, 2.4, 1.6, 0.8)
LINK_RADII = (0.06, 0.06, 0.055, 0.055, 0.05, 0.045, 0.04)
JOINT_NAMES = tuple(f"joint{i + 1}" for i in range(7))


def arm_xml(hand: str) -> str:
    """The arm body chain from base to ``hand`` (the hand's body element), as one MJCF <body>."""
    inner = hand
    for i in reversed(range(7)):
        lo, hi = JOINT_LIMITS[i]
        inner = f"""
<body name="link{i + 1}" pos="{vec(_body_pos(i))}" quat="{quat_rotx(PANDA_DH[i][2])}">
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
    return f'<geom class="link" fromto="{vec(start)} {vec(end)}" size="{radius}" mass="{mass}"/>'


def actuators_xml() -> str:
    """One torque motor per joint, limited to the Panda's joint torque limits."""
    return "\n".join(
        f'<motor name="motor{i + 1}" joint="joint{i + 1}" ctrlrange="{-t} {t}"/>'
        for i, t in enumerate(TORQUE_LIMITS))


PANDA = ArmSpec(
    name="panda", joint_names=JOINT_NAMES, home=HOME_Q, actuation="torque", posture=True,
    joint_defaults='armature="0.1" damping="0.5"', chain_xml=arm_xml, actuators_xml=actuators_xml,
    hand_mount=f'pos="0 0 {FLANGE_D}" quat="0.9238795 0 0 -0.3826834"')
