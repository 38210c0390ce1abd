"""The 6-DoF UR5e-like arm: joint position servos, a wrist force-torque sensor, driven by the admittance law.

The chain is written from Universal Robots' published DH parameters of the UR5e
(standard DH: ``d1 0.1625, a2 -0.425, a3 -0.3922, d4 0.1333, d5 0.0997, d6 0.0996``,
``alpha pi/2, 0, 0, pi/2, -pi/2, 0``), its link masses and its joint torque and speed
limits, with primitive geoms only. Each DH row ``T = RotZ(theta) TransZ(d) TransX(a)
RotX(alpha)`` becomes a body that rotates about its local z axis (``theta``), with the
next body at ``(a, 0, d)`` turned by ``RotX(alpha)``. The base frame is the DH base
frame, as a UR reports its TCP pose: at zero joint angles the arm reaches along -x, so
the arm faces the table (+x) with the shoulder turned by about pi.

Like a UR, whose controller compensates gravity and servoes joint positions, the links
are gravity-compensated (``gravcomp``) and each joint has a stiff position servo
limited to the joint's torque. The wrist force-torque sensor sits between wrist 3 and
the hand (the site ``ft_sensor`` at the hand's base), so it measures everything the
hand and what it holds push on the arm with.
"""

from __future__ import annotations

import numpy as np

from robot_rl.arms import UR_JOINT_NAMES
from robot_rl.sim.arm import ArmSpec, quat_rotx, vec

# Standard DH parameters of the UR5e, one row per joint: (a_i, d_i, alpha_i).
UR5E_DH = (
    (0.0, 0.1625, np.pi / 2),
    (-0.425, 0.0, 0.0),
    (-0.3922, 0.0, 0.0),
    (0.0, 0.1333, np.pi / 2),
    (0.0, 0.0997, -np.pi / 2),
    (0.0, 0.0996, 0.0),
)
JOINT_NAMES = UR_JOINT_NAMES
LINK_NAMES = ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link")
LINK_MASSES = (3.761, 8.058, 2.846, 1.37, 1.3, 0.365)  # kg, Universal Robots' published values
LINK_RADII = (0.06, 0.054, 0.04, 0.035, 0.035, 0.032)
JOINT_LIMITS = (2 * np.pi, 2 * np.pi, np.pi, 2 * np.pi, 2 * np.pi, 2 * np.pi)  # +- rad
TORQUE_LIMITS = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)  # Nm
MAX_JOINT_SPEED = (np.pi,) * 6  # rad/s
SERVO_KP = (6000.0, 6000.0, 4000.0, 1000.0, 1000.0, 1000.0)  # Nm/rad of the joint position servos
ARMATURE = (0.1, 0.1, 0.05, 0.02, 0.02, 0.02)  # kg m^2, the gearboxes' reflected rotor inertia
# Tool pointing down over the table at x = 0.5 m: the branch inverse kinematics starts from.
HOME = (2.87, -1.49, 1.97, -2.06, -np.pi / 2, -1.84)


def arm_xml(hand: str) -> str:
    """The arm body chain from base to ``hand`` (the hand's body element, on wrist 3), as one MJCF <body>."""
    inner = hand
    for i in reversed(range(6)):
        pos, quat = _body_frame(i)
        lim = JOINT_LIMITS[i]
        inner = f"""
<body name="{LINK_NAMES[i]}" pos="{vec(pos)}" quat="{quat}" gravcomp="1">
  <joint name="{JOINT_NAMES[i]}" axis="0 0 1" range="{-lim:.6f} {lim:.6f}" armature="{ARMATURE[i]}" class="arm"/>
  {_link_geom(i)}
  {inner}
</body>"""
    return f"""
<body name="base_link" pos="0 0 0">
  <geom class="link" type="cylinder" pos="0 0 0.045" size="0.075 0.045" mass="4"/>
  {inner}
</body>"""


def _body_frame(i: int) -> tuple[np.ndarray, str]:
    """Where the body of joint ``i`` sits in its parent: the previous DH row's offset and twist."""
    if i == 0:
        return np.zeros(3), quat_rotx(0.0)
    a, d, alpha = UR5E_DH[i - 1]
    return np.array([a, 0.0, d]), quat_rotx(alpha)


def _link_geom(i: int) -> str:
    """A capsule along the link's skeleton: its joint to the next joint (or the flange)."""
    a, d, _ = UR5E_DH[i]
    return (f'<geom class="link" fromto="0 0 0 {vec((a, 0.0, d))}" size="{LINK_RADII[i]}" '
            f'mass="{LINK_MASSES[i]}"/>')


def actuators_xml() -> str:
    """One critically damped joint position servo per joint, limited to the joint's torque."""
    return "\n".join(
        f'<position name="{n}" joint="{n}" kp="{kp}" dampratio="1" forcerange="{-t} {t}" '
        f'ctrlrange="{-lim:.6f} {lim:.6f}"/>'
        for n, kp, t, lim in zip(JOINT_NAMES, SERVO_KP, TORQUE_LIMITS, JOINT_LIMITS))


SENSORS = """
  <force name="ft_sensor_force" site="ft_sensor"/>
  <torque name="ft_sensor_torque" site="ft_sensor"/>"""

UR5E = ArmSpec(
    name="ur5e", joint_names=JOINT_NAMES, home=HOME, actuation="position", posture=False,
    joint_defaults='damping="0.5"', chain_xml=arm_xml, actuators_xml=actuators_xml,
    hand_mount=f'pos="0 0 {UR5E_DH[5][1]}"', ft_site="ft_sensor", max_joint_speed=MAX_JOINT_SPEED,
    sensors_xml=SENSORS)
