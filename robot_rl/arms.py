"""Published facts about the arms robot_rl drives, written once for the sim arms and the drivers.

Core (no hardware library): the sim UR5e (:mod:`robot_rl.sim.ur5e`) and the UR backend
(:mod:`robot_rl_drivers.robots.ur`) name the same joints from here.
"""

from __future__ import annotations

#: A UR's six joints, as ur_description names them (the UR backend and the sim UR5e publish these).
UR_JOINT_NAMES = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                  "wrist_3_joint")
