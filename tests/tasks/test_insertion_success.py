"""An insertion succeeds only with the tip down in the opening, not beside the board.

The arm's workspace reaches past the board's edge on every insertion config, and there the
held part's tip goes as low as an inserted one, on the table. Driving to a corner of the
workspace and straight down scored "success" in 20 of 20 PlugInsert episodes and 11 of 20
PegInsert ones before the success check asked for the opening's footprint. An untrained
actor's constant mean action does exactly that, so it was a reward any learner collected.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.assemble import make_actor_env
from robot_rl.sim.fixture import inserted
from robot_rl.tasks import load_config

CONFIGS = ["configs/peg_insert.yaml", "configs/peg_insert_hard.yaml", "configs/plug_insert.yaml",
           "configs/plug_insert_hard.yaml"]


def _opening(task) -> tuple[np.ndarray, np.ndarray]:
    """The part's tip and the opening's top centre, for either insertion task."""
    if hasattr(task, "peg_tip"):
        return task.peg_tip(), task.hole_top()
    return task.plug_tip(), task.socket_top()


@pytest.mark.parametrize("config", CONFIGS)
def test_pushing_down_beside_the_board_is_no_success(config):
    cfg = load_config(config)
    env = make_actor_env(cfg, "demos")
    task = env.unwrapped.task
    low, high = np.asarray(cfg.robot.workspace.pos_low), np.asarray(cfg.robot.workspace.pos_high)
    corners = [(x, y) for x in (low[0], high[0]) for y in (low[1], high[1])]
    deepest = []
    try:
        for episode in range(8):
            env.reset(seed=episode)
            corner = np.asarray(corners[episode % 4])
            for _ in range(cfg.env.max_episode_steps):
                tip, top = _opening(task)
                action = np.zeros(env.action_space.shape[0], np.float32)
                action[:2] = np.clip((corner - tip[:2]) / 0.01, -1.0, 1.0)
                action[2] = -1.0 if np.linalg.norm(corner - tip[:2]) < 0.01 else 0.3
                _, _, terminated, truncated, info = env.step(action)
                assert not info["success"] and not task.success(), f"episode {episode}: beside the board"
                if terminated or truncated:
                    break
            tip, top = _opening(task)
            deepest.append(top[2] - tip[2])
    finally:
        env.close()
    # the attack did reach below the depth the old check asked for (beside the board, on the table)
    assert max(deepest) >= cfg.task.params.insert_depth


def test_inserted_asks_for_depth_and_footprint():
    top = np.array([0.55, 0.0, 0.03])
    assert inserted(np.array([0.55, 0.0, 0.01]), top, (0.0105, 0.0105), 0.015)
    assert inserted(np.array([0.5605, -0.0105, 0.015]), top, (0.0105, 0.0105), 0.015)  # on the edges
    assert not inserted(np.array([0.55, 0.0, 0.0151]), top, (0.0105, 0.0105), 0.015)  # not deep enough
    assert not inserted(np.array([0.62, 0.07, 0.0]), top, (0.0105, 0.0105), 0.015)  # beside the board
    assert not inserted(np.array([0.55, 0.011, 0.0]), top, (0.0105, 0.0105), 0.015)  # 0.5 mm past the side
    assert inserted(np.array([0.565, 0.0, 0.01]), top, (0.017, 0.0055), 0.015)  # a slot: x and y apart
    assert not inserted(np.array([0.55, 0.006, 0.01]), top, (0.017, 0.0055), 0.015)
    for bad in (np.nan, np.inf, -np.inf):  # a non-finite tip is never an insertion
        assert not inserted(np.array([bad, 0.0, 0.0]), top, (0.0105, 0.0105), 0.015)
    assert not inserted(np.array([0.55, 0.0, np.nan]), top, (0.0105, 0.0105), 0.015)
