"""PegInsert's own parts: its scripted reset pulls an inserted peg out through the controller."""

from __future__ import annotations

from robot_rl.assemble import make_env
from robot_rl.tasks import load_config

PEG = "configs/peg_insert.yaml"


def test_peg_reset_pulls_an_inserted_peg_out_through_the_controller():
    cfg = load_config(PEG, ["reset.mode=scripted"])
    env = make_env(cfg)
    task = env.unwrapped.task
    env.reset(seed=0)
    expert = task.make_expert(env)
    done, info = False, {}
    while not done:
        _, _, terminated, truncated, info = env.step(expert.act())
        done = terminated or truncated
    assert info["success"] and task.peg_tip()[2] < task.hole_top()[2]  # the peg is in the hole
    env.reset()
    stats = task.reset_routine.history[-1]
    assert stats.kind == "PegInsert"
    assert task.peg_tip()[2] > task.hole_top()[2] and task.object_in_start_range()
    assert stats.violations == 0 and stats.error_clipped_cycles == 0
    env.close()
