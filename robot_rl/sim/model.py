"""The MuJoCo scene: an arm (``sim.arm``), a parallel-jaw hand, a table, two cameras.

Every arm (:mod:`robot_rl.sim.panda`, :mod:`robot_rl.sim.ur5e`) stands at the world
origin, which is its base frame, and carries the same hand (:mod:`robot_rl.sim.arm`), so
a task's workspace box, reset pose and cameras fit either. Tasks add their objects
through :class:`SceneParts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from robot_rl.errors import ConfigError
from robot_rl.sim.arm import FINGER_TRAVEL, GRIPPER_FORCE, GRIPPER_KP, TCP_OFFSET, ArmSpec, hand_xml
from robot_rl.sim.panda import PANDA
from robot_rl.sim.ur5e import UR5E

__all__ = ["ARMS", "FINGER_TRAVEL", "TCP_OFFSET", "CameraSpec", "SceneParts", "arm_spec", "scene_xml"]

#: The sim arms by ``sim.arm`` name.
ARMS: dict[str, ArmSpec] = {arm.name: arm for arm in (PANDA, UR5E)}


def arm_spec(name: str) -> ArmSpec:
    """The arm called ``name`` (``sim.arm``); a ConfigError names the known ones."""
    if name not in ARMS:
        raise ConfigError(f"unknown sim.arm '{name}' (known: {', '.join(ARMS)})")
    return ARMS[name]


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


def scene_xml(parts: SceneParts, cameras: list[CameraSpec], physics_hz: float, arm: ArmSpec = PANDA) -> str:
    """The whole MJCF document for one task, on ``arm``."""
    offw = max([c.width for c in cameras] + [64])
    offh = max([c.height for c in cameras] + [64])
    site = f'<site name="{arm.ft_site}" size="0.01" group="4"/>\n  ' if arm.ft_site else ""
    hand = hand_xml(parts.hand, arm.hand_mount, site)
    sensors = f"<sensor>{arm.sensors_xml}\n  </sensor>" if arm.sensors_xml else ""
    return f"""
<mujoco model="robot_rl_{arm.name}_{'_'.join(c.name for c in cameras) or 'nocam'}">
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
      <joint {arm.joint_defaults}/>
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
    {arm.chain_xml(hand)}
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
    {arm.actuators_xml()}
    <position name="gripper" joint="finger_left" kp="{GRIPPER_KP}" kv="20" ctrlrange="0 {FINGER_TRAVEL}"
              forcerange="{-GRIPPER_FORCE} {GRIPPER_FORCE}"/>
  </actuator>
  {sensors}
  {''.join(parts.extra)}
</mujoco>
"""
