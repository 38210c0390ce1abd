"""Which configured arms have a null-space posture (the joint reset's way in).

A 6-DoF arm has none; a robot over topics cannot say so itself, so the actor's reset
asks the config (:func:`robot_rl_drivers.robots.arm_has_posture`).
"""

from __future__ import annotations

import pytest

from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config
from robot_rl_drivers.robots import arm_has_posture

REAL = ["env.obs_mode=pixels"]
UR = [*REAL, "robot.backend=ur", "robot.hardware.ip=127.0.0.1"]
FRANKA = [*REAL, "robot.backend=franka", "robot.hardware.ip=127.0.0.1"]
FZI = [*REAL, "robot.backend=ros2_control", "robot.hardware.contract=cartesian_controllers",
       "robot.hardware.joint_names=[a,b,c,d,e,f]"]


@pytest.mark.parametrize("overrides, expected", [
    ([], True),
    (["sim.arm=ur5e"], False),
    (UR, False),
    (FZI, False),
    ([*REAL, "robot.backend=ros2_control", "robot.hardware.contract=crisp"], True),
    ([*REAL, "robot.backend=franka", "robot.hardware.ip=127.0.0.1"], True),
    ([*REAL, "robot.backend=franka", "robot.hardware.ip=127.0.0.1", "robot.hardware.mode=ros2_control",
      "robot.hardware.ros2_control.posture_topic=null"], False),
], ids=["sim panda", "sim ur5e", "ur", "ros2_control fzi", "ros2_control crisp", "franka torque",
        "franka ros2_control without posture"])
def test_arm_has_posture_follows_the_arm_and_its_contract(overrides, expected):
    cfg = load_config(resolve_config("pick_cube"), overrides)
    assert arm_has_posture(cfg) is expected


@pytest.mark.parametrize("overrides, has_mover", [(UR, False), (FZI, False),
                                                   (FRANKA, True)],
                         ids=["ur", "ros2_control fzi", "franka"])
def test_the_actor_s_reset_gives_only_an_arm_with_a_posture_a_joint_mover(overrides, has_mover):
    from robot_rl.nodes.task import RobotResetTask

    task = RobotResetTask(load_config(resolve_config("pick_cube"), overrides), robot=object(), clock=object())
    assert (task.routine.joint_mover is not None) is has_mover
