"""A hardware reset leaves the gripper as the task starts: PegInsert keeps the peg in its fingers."""

import numpy as np
import pytest

import robot_rl.reset.robot_reset as robot_reset
from robot_rl.nodes.task import RobotResetTask
from robot_rl.tasks import load_config


@pytest.mark.parametrize("config, overrides, expected", [
    ("configs/peg_insert.yaml", [], 0.0),
    ("configs/pick_cube.yaml", [], 1.0),
    ("configs/peg_insert.yaml", ["reset.gripper=0.3"], 0.3),
])
def test_robot_reset_task_asks_for_the_task_gripper(monkeypatch, config, overrides, expected):
    asked = []

    class RecordingReset:
        def __init__(self, robot, clock, cfg, joint_mover=None):
            pass

        def run(self, rng, gripper=1.0, release_first=False):
            asked.append(gripper)

    monkeypatch.setattr(robot_reset, "RobotReset", RecordingReset)
    task = RobotResetTask(load_config(config, overrides), robot=None, clock=None)
    task.reset(np.random.default_rng(0))
    assert asked == [expected] and task.start_gripper() == expected
