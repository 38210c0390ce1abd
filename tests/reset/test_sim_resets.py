"""Scripted resets on the MuJoCo tasks: objects back in range, robot in the box, the
controller never violated, no teleport; the joint reset; the env's reset.mode switch.

(Each task's own reset is tested beside the task, in tests/tasks/.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from robot_rl.assemble import make_env
from robot_rl.reset.robot_reset import RobotReset
from robot_rl.reset.sim import SimJointMover
from robot_rl.reset.soak import reset_soak
from robot_rl.tasks import load_config, make_task

PICK = "configs/pick_cube.yaml"
PEG = "configs/peg_insert.yaml"


@pytest.mark.parametrize("config,resets", [(PICK, 4), (PEG, 6)])
def test_consecutive_scripted_resets_after_disturbing_episodes(config, resets):
    """CI-sized version of the 50-reset soak (bench/auto_reset.py runs 50 per task)."""
    cfg = load_config(config, ["reset.mode=scripted", "reset.joint_reset_every=3"])
    result = reset_soak(cfg, make_env(cfg), resets, seed=1)
    summary = result.as_dict()
    assert result.failures == [], summary
    assert result.resets == resets
    assert result.in_range == resets and result.in_box == resets, summary
    assert result.teleports == 0
    # No violation (box-clipped or rejected target, watchdog hold) and, stricter, no
    # pose-error clipping: resets are slow enough that the law never limits them.
    assert result.totals.violations == 0, summary
    assert result.totals.error_clipped_cycles == 0, summary
    assert result.totals.cycles > 0 and result.totals.targets_sent > 0
    assert result.totals.joint_resets >= 1
    assert result.totals.max_pos_error < 0.008, summary


def test_joint_reset_removes_null_space_drift():
    from robot_rl.sim import build_world

    cfg = load_config(PICK, ["reset.joint_reset_every=1"])
    world = build_world(make_task(cfg), [])
    world.task.reset(np.random.default_rng(0))
    controller = world.robot.controller
    mover = SimJointMover(world, cfg)
    q_reset = mover.reset_joints()
    # Let the elbow drift: a different rest posture for a while (the TCP target stays put).
    saved = controller.gains
    drifted = np.asarray(saved.rest_posture) + np.array([0.5, 0, -0.5, 0, 0.3, 0, 0])
    world.robot.set_posture(drifted, 40.0)
    state = world.robot.state()
    t_end = world.now() + 3.0
    while world.now() < t_end:
        world.robot.command(state.tcp_pos, state.tcp_quat)
        world.sleep_until(world.now() + 0.1)
    world.robot.set_posture(None)
    assert not controller.posture_override  # the law slews back to the configured posture
    drift = np.max(np.abs(world.robot.state().q - q_reset))
    assert drift > 0.2

    before = dataclasses.asdict(controller.stats)
    reset = RobotReset(world.robot, world, cfg, mover)
    stats = reset.run(np.random.default_rng(1))
    assert stats.joint_resets == 1 and stats.extra["joint_error"] <= cfg.reset.joint_tolerance
    assert stats.violations == 0 and stats.error_clipped_cycles == 0
    assert controller.gains is saved  # the controller's own gains are back
    assert controller.stats.cycles > before["cycles"]
    # The reset ended at a perturbed pose, so the joints are near (not at) the reset
    # posture; the drift of the elbow is gone.
    assert np.max(np.abs(world.robot.state().q - q_reset)) < 0.1 < drift


def test_env_reset_mode_switch(monkeypatch):
    from robot_rl.assemble import make_env

    env = make_env(load_config(PICK, ["reset.mode=scripted"]))
    task = env.unwrapped.task
    env.reset(seed=0)
    env.reset()
    assert [s.kind for s in task.reset_routine.history] == ["setup", "PickCube"]
    # The arm is at rest and the controller holds the measured pose: the first step cannot jump.
    state = env.unwrapped.robot.state()
    controller = env.unwrapped.robot.controller
    assert np.linalg.norm(controller.target_pos - state.tcp_pos) < 1e-3 and controller.holding
    obs, *_ = env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    assert np.linalg.norm(env.unwrapped.robot.state().tcp_pos - state.tcp_pos) < 2e-3
    env.close()

    # The sim shortcut stays explicit: mode teleport (and auto in sim) never installs a routine.
    env = make_env(load_config(PICK, ["reset.mode=teleport"]))
    calls = []
    task = env.unwrapped.task
    original = task.teleport
    monkeypatch.setattr(task, "teleport", lambda rng: (calls.append(1), original(rng)))
    env.reset(seed=0)
    env.reset()
    assert task.reset_routine is None and len(calls) == 2
    env.close()


def test_a_joint_reset_posture_outside_the_box_is_refused_before_moving():
    from robot_rl.reset.motion import ResetError
    from robot_rl.sim import build_world

    cfg = load_config(PICK, ["reset.joint_reset_q=[0.0, 0.0, 0.0, -0.5, 0.0, 0.5, 0.785]"])  # arm nearly upright
    world = build_world(make_task(cfg), [])
    world.task.reset(np.random.default_rng(0))
    reset = RobotReset(world.robot, world, cfg, SimJointMover(world, cfg))
    sent = world.robot.controller.stats.cycles
    with pytest.raises(ResetError, match=r"reset.joint_reset_q puts the TCP at .* outside the safety box"):
        reset.run(np.random.default_rng(0))
    assert reset.recorder.stats.box_clipped_targets == 0  # nothing outside the box was sent
    assert world.robot.controller.stats.cycles > sent
    world.close()
