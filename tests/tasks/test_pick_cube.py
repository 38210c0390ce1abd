"""PickCube's own parts: its scripted reset carries a held cube to a new spot in range; its decoys."""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.assemble import make_env
from robot_rl.errors import RobotRLError
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


def _expert_episodes(sets: list[str], episodes: int = 3) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The state observations and the decoys' places over a few noisy expert episodes."""
    env = make_env(load_config(PICK, sets))
    task = env.unwrapped.task
    expert = task.make_expert(env, noise=0.3, seed=0)
    states, decoys = [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        expert.reset()
        decoys.append(task.decoy_xy())
        done = False
        while not done:
            states.append(np.asarray(obs["state"]).copy())
            obs, _, terminated, truncated, _ = env.step(expert.act())
            done = terminated or truncated
    env.close()
    return states, decoys


def test_decoys_are_placed_in_range_apart_from_the_cube_and_change_nothing_but_the_images():
    plain, none = _expert_episodes([])
    with_decoys, places = _expert_episodes(["task.params.decoys=3"])
    assert all(p.shape == (0, 2) for p in none)
    # Visual only, drawn from a child generator: every state observation is the same.
    assert len(plain) == len(with_decoys)
    assert all(np.array_equal(a, b) for a, b in zip(plain, with_decoys))
    cfg = load_config(PICK, ["task.params.decoys=3"])
    env = make_env(cfg)
    task = env.unwrapped.task
    model = task.world.model
    p = cfg.task.params
    seen = []
    for ep in range(5):
        env.reset(seed=10 + ep)
        xy = task.decoy_xy()
        seen.append(xy)
        assert xy.shape == (3, 2)
        assert np.all(np.abs(xy - np.asarray(p.cube_xy_center)) <= np.asarray(p.cube_xy_range) + 1e-9)
        points = np.vstack([task.cube_pos()[:2], xy])
        gaps = [np.linalg.norm(a - b) for i, a in enumerate(points) for b in points[i + 1:]]
        assert min(gaps) > 2 * p.cube_half_size  # no two footprints' centres closer than a cube's width
    assert not np.allclose(seen[0], seen[1])  # they move between episodes
    for i in range(3):
        geom = model.geom(f"decoy{i}")
        assert geom.contype[0] == 0 and geom.conaffinity[0] == 0  # nothing touches them
    env.close()


def test_a_decoy_count_out_of_range_is_refused_naming_the_key():
    for bad in ("4", "-1", "nan"):
        with pytest.raises((RobotRLError, ValueError), match="decoys"):
            load_config(PICK, [f"task.params.decoys={bad}"])


def test_the_scripted_reset_moves_the_decoys_too():
    env = make_env(load_config(PICK, ["reset.mode=scripted", "task.params.decoys=2"]))
    task = env.unwrapped.task
    env.reset(seed=3)
    before = task.decoy_xy()
    env.reset()
    assert task.reset_routine.history[-1].kind != "setup"
    after = task.decoy_xy()
    assert not np.allclose(before, after)
    assert min(np.linalg.norm(after - task.cube_pos()[:2], axis=1)) > 2 * task.params.cube_half_size
    env.close()
