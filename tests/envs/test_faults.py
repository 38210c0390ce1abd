"""A reflex mid-episode ends the episode as failed, keeps its data and recovers the arm."""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.assemble import make_env
from robot_rl.envs import EnvParts
from robot_rl.envs.robot_env import recover_or_ask
from robot_rl.errors import RobotFault
from robot_rl.interfaces import Robot
from robot_rl.sim import build_world
from robot_rl.tasks import load_config, make_task


class ReflexRobot(Robot):
    """The sim arm, except that it faults at a chosen command, like a Franka reflex."""

    def __init__(self, inner, fault_at: int, recoveries_failing: int = 0):
        self.inner = inner
        self.fault_at = fault_at
        self.commands = 0
        self.faulted = False
        self.recover_calls = 0
        self.recoveries_failing = recoveries_failing

    def state(self):
        if self.faulted:
            raise RobotFault("cartesian_reflex", state=self.inner.state())
        return self.inner.state()

    def command(self, pos, quat, gripper=None):
        self.commands += 1
        if self.commands == self.fault_at:
            self.faulted = True
        if self.faulted:
            raise RobotFault("cartesian_reflex: collision detected")
        self.inner.command(pos, quat, gripper)

    def hold(self):
        self.inner.hold()

    def recover(self):
        self.recover_calls += 1
        if self.recover_calls <= self.recoveries_failing:
            raise RobotFault("user stop pressed")
        self.faulted = False
        self.inner.start()


def faulty_env(fault_at: int, recoveries_failing: int = 0):
    cfg = load_config("configs/pick_cube.yaml")
    world = build_world(make_task(cfg), [])
    robot = ReflexRobot(world.robot, fault_at, recoveries_failing)
    return make_env(cfg, parts=EnvParts(robot, {}, world, world.task)), robot


def test_reflex_ends_the_episode_as_failed_and_recovers():
    env, robot = faulty_env(fault_at=3)
    env.reset(seed=0)
    steps = []
    for _ in range(5):
        obs, reward, terminated, truncated, info = env.step(np.zeros(4, np.float32))
        steps.append((reward, terminated, truncated, info))
        if terminated or truncated:
            break
    assert len(steps) == 3
    reward, terminated, truncated, info = steps[-1]
    assert truncated and not terminated and reward == 0.0 and not info["success"]
    assert "cartesian_reflex" in info["robot_fault"]
    assert robot.recover_calls == 1 and not robot.faulted
    assert env.observation_space.contains(obs)
    env.reset(seed=1)  # the next episode runs normally
    env.step(np.zeros(4, np.float32))


def test_failed_recovery_asks_the_human_then_retries(monkeypatch):
    _, robot = faulty_env(fault_at=1, recoveries_failing=2)
    robot.faulted = True

    class Terminal:
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", Terminal())
    asked = []
    recover_or_ask(robot, RobotFault("reflex"), ask=lambda prompt: asked.append(prompt) or "")
    assert robot.recover_calls == 3 and len(asked) == 2 and "user stop pressed" in asked[0]
    assert not robot.faulted


def test_failed_recovery_without_a_person_is_one_clear_error():
    _, robot = faulty_env(fault_at=1, recoveries_failing=5)
    robot.faulted = True
    with pytest.raises(RobotFault, match="automatic recovery failed"):
        recover_or_ask(robot, RobotFault("reflex"))
