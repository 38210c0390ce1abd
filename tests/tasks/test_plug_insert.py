"""PlugInsert, the keyed plug: its expert, that the slot really demands the yaw, its scripted
reset, its backward task run reset-free, and reward frames recorded through the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.assemble import make_env
from robot_rl.cli import main
from robot_rl.reset.backward import make_backward_expert
from robot_rl.reward.dataset import load_frames
from robot_rl.tasks import load_config
from robot_rl.training.reset_free import BACKWARD, FORWARD, ForwardBackward

PLUG = "configs/plug_insert.yaml"


def run_episode(env, expert, seed=None):
    """One episode of ``expert``: the plug's yaw off the slot's at the start, and the last step's info."""
    obs, _ = env.reset(seed=seed)
    start_yaw = env.unwrapped.task.yaw_error()
    expert.reset()
    done, info = False, {}
    while not done:
        obs, _, terminated, truncated, info = env.step(expert.act(obs))
        done = terminated or truncated
    return start_yaw, info


def test_the_expert_turns_and_inserts_the_plug_from_turned_starts():
    env = make_env(load_config(PLUG))
    task = env.unwrapped.task
    expert = task.make_expert(env)
    assert env.action_space.shape == (4,)  # x, y, z and the turn about z
    start_yaws = []
    for i in range(8):
        start_yaw, info = run_episode(env, expert, seed=100 + i)
        start_yaws.append(abs(start_yaw))
        assert info["success"], f"episode {i}"
        assert abs(task.yaw_error()) < 0.07 and task.plug_tip()[2] < task.socket_top()[2]
    assert max(start_yaws) > 0.1  # the plug did start turned, past what the slot admits
    env.close()


def _finish(env, expert):
    """Play the episode already reset to its end; whether it succeeded."""
    done, info = False, {}
    while not done:
        _, _, terminated, truncated, info = env.step(expert.act())
        done = terminated or truncated
    return info["success"]


@pytest.mark.parametrize("turned,inserts", [(0.04, True), (0.12, False), (-0.12, False)])
def test_the_slot_admits_the_plug_only_near_its_yaw(turned, inserts):
    """The expert lines the plug up ``turned`` rad off the slot's yaw and pushes: past the
    slot's few degrees it rests on the board, however hard it pushes."""
    env = make_env(load_config(PLUG, ["env.max_episode_steps=30"]))
    task = env.unwrapped.task
    expert = task.make_expert(env)
    expert.yaw_offset = turned
    _, info = run_episode(env, expert, seed=3)
    assert bool(info["success"]) == inserts
    if not inserts:
        assert abs(task.plug_tip()[2] - task.socket_top()[2]) < 2e-3  # on the board, at the slot's mouth
    env.close()


def test_the_scripted_reset_pulls_the_plug_out_and_turns_it_again():
    cfg = load_config(PLUG, ["reset.mode=scripted"])
    env = make_env(cfg)
    task = env.unwrapped.task
    expert = task.make_expert(env)
    assert run_episode(env, expert, seed=0)[1]["success"]
    yaws = []
    for _ in range(3):
        env.reset()
        stats = task.reset_routine.history[-1]
        assert stats.kind == "PlugInsert" and stats.violations == 0 and stats.error_clipped_cycles == 0
        assert task.object_in_start_range() and task.plug_tip()[2] > task.socket_top()[2]
        yaws.append(task.yaw_error())
        expert.reset()
        assert _finish(env, expert)  # a scripted reset leaves a start the expert solves
    assert np.ptp(yaws) > 0.01  # every reset draws a new turn
    env.close()


def test_forward_and_backward_alternate_reset_free(monkeypatch):
    fb = ForwardBackward(load_config(PLUG), seed=0)
    monkeypatch.setattr(fb.world, "set_arm_joints", lambda *a, **k: pytest.fail("a teleport ran"))
    fb.set_policies(fb.task.make_expert(fb.forward_env, seed=1), make_backward_expert(fb.backward_env, seed=2))
    order = [(d, steps[-1].success) for d, steps in (fb.run_episode() for _ in range(4))]
    assert order == [(FORWARD, True), (BACKWARD, True)] * 2
    assert fb.backward_task.goal_dim == 4 and fb.teleports == 0 and fb.report.reset_totals.violations == 0
    fb.close()


def test_record_rewards_writes_labelled_frames_for_the_plug(tmp_path, capsys):
    out = tmp_path / "frames"
    tiny = ["cameras.front.width=32", "cameras.front.height=32", "cameras.wrist.width=32",
            "cameras.wrist.height=32", "reward.image_size=[16,16]", "reward.collect.hold_steps=2"]
    code = main(["record-rewards", "--config", PLUG, "--out", str(out), "--frames", "300", "--seed", "1",
                 *[a for s in tiny for a in ("--set", s)]])
    assert code == 0, capsys.readouterr().err
    frames = load_frames(out)
    assert len(frames) == 300 and frames.images["front"].shape == (300, 16, 16, 3)
    assert frames.meta["task"] == "PlugInsert"
    assert frames.label.any() and not frames.label.all()  # inserted and not-yet-inserted frames
    assert set(frames.meta["tags"]) == {"insert_hold", "mouth", "turned", "beside", "random"}
    tags = {frames.meta["tags"][t] for t in frames.tag}
    assert {"insert_hold", "turned"} <= tags  # the turned plug at the slot's mouth: the hard negative
