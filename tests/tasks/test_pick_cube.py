"""PickCube's own parts: its scripted reset carries a held cube to a new spot in range."""

from __future__ import annotations

import numpy as np

from robot_rl.assemble import make_env
from robot_rl.tasks import load_config

PICK = "configs/pick_cube.yaml"


def test_pick_cube_reset_carries_a_held_cube_to_a_new_spot():
    cfg = load_config(PICK, ["reset.mode=scripted"])
    env = make_env(cfg)
    task = env.unwrapped.task
    env.reset(seed=2)
    expert = task.make_expert(env)
    done, info = False, {}
    while not done:
        _, _, terminated, truncated, info = env.step(expert.act())
        done = terminated or truncated
    assert info["success"]  # the cube is up in the gripper
    lifted = task.cube_pos()
    env.reset()
    routine = task.reset_routine
    stats = routine.history[-1]
    assert stats.attempts == 1  # placed straight away, no grasp needed first
    cube = task.cube_pos()
    assert task.object_in_start_range() and abs(routine.cube_yaw()) <= cfg.task.params.cube_yaw_range + 0.02
    assert routine.in_range()
    assert np.linalg.norm(cube[:2] - lifted[:2]) > 1e-3
    assert stats.violations == 0 and stats.error_clipped_cycles == 0
    env.close()
