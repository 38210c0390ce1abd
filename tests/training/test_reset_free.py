"""Forward-backward practice mechanics: the two directions alternate by the rules, no
teleport ever runs after setup, each direction's data reaches its own learner, and all
moves between episodes go through the controller without violations.

(``bench/reset_free.py`` runs the 30-minute version and reports the success rates.)
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.reset.backward import make_backward_expert
from robot_rl.tasks import load_config
from robot_rl.training.reset_free import BACKWARD, FORWARD, ForwardBackward, collect_demos, practice

TINY_AGENT = ["agent.hidden_dims=[32, 32]", "train.batch_size=32", "train.learning_starts=20", "train.utd_ratio=1",
              "train.torch_threads=1"]


def forbid_teleports(fb: ForwardBackward, monkeypatch) -> None:
    """From here on, any write of the arm's joints or the objects' poses fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a teleport ran during reset-free practice")

    monkeypatch.setattr(fb.world, "set_arm_joints", refuse)
    monkeypatch.setattr(fb.task, "place_objects", refuse)


# PickCube's backward task ends with the gripper lifted clear above the cube, so each
# later forward episode starts after a scripted robot reset; PegInsert's ends at a start pose.
@pytest.mark.parametrize("config,robot_resets", [("configs/pick_cube.yaml", 2), ("configs/peg_insert.yaml", 0)])
def test_experts_alternate_reset_free_and_both_succeed(config, robot_resets, monkeypatch):
    fb = ForwardBackward(load_config(config), seed=0)
    forbid_teleports(fb, monkeypatch)
    order = []
    fb.set_policies(fb.task.make_expert(fb.forward_env, seed=1), make_backward_expert(fb.backward_env, seed=2))
    for _ in range(6):
        direction, steps = fb.run_episode()
        order.append((direction, steps[-1].success))
    # The scripted experts always succeed, so the directions strictly alternate.
    assert order == [(FORWARD, True), (BACKWARD, True)] * 3
    assert fb.teleports == 0 and fb.report.recoveries == 0 and fb.report.robot_resets == robot_resets
    totals = fb.report.reset_totals
    assert totals.resets == 6 and totals.violations == 0 and totals.error_clipped_cycles == 0
    # The backward task's goal is part of its observation and changes every episode.
    assert fb.backward_env.observation_space["state"].shape[0] == fb.forward_env.observation_space["state"].shape[0] \
        + fb.backward_task.goal_dim
    fb.close()


def test_after_a_failed_forward_episode_the_forward_task_goes_again(monkeypatch):
    """PickCube: no cube in the hand, so no backward episode; a robot reset, no recovery."""
    fb = ForwardBackward(load_config("configs/pick_cube.yaml", ["env.max_episode_steps=5"]), seed=0)
    forbid_teleports(fb, monkeypatch)

    class Down:
        def act(self, obs):
            return np.array([0.0, 0.0, -1.0, 1.0], dtype=np.float32)  # down, close the gripper

    fb.set_policies(Down(), make_backward_expert(fb.backward_env))
    for _ in range(3):
        direction, steps = fb.run_episode()
        assert direction == FORWARD and not steps[-1].success
    assert fb.report.robot_resets == 2 and fb.report.recoveries == 0 and fb.report.backward.episodes == 0
    assert fb.task.object_in_start_range() and fb.teleports == 0
    assert fb.report.reset_totals.violations == 0
    fb.close()


def test_a_cube_out_of_range_is_recovered_by_the_robot_not_a_teleport(monkeypatch):
    cfg = load_config("configs/pick_cube.yaml")
    fb = ForwardBackward(cfg, seed=0)
    # Knock the cube out of its range (as a pushing policy could), before practice starts.
    d = fb.world.data
    d.qpos[fb.task._qpos:fb.task._qpos + 2] = [0.6, 0.12]
    fb.world.forward()
    fb.world.sleep_until(fb.world.now() + 0.2)
    assert not fb.spec.forward_ready()
    forbid_teleports(fb, monkeypatch)
    fb.set_policies(fb.task.make_expert(fb.forward_env, seed=1), make_backward_expert(fb.backward_env, seed=2))
    direction, steps = fb.run_episode()
    assert direction == FORWARD and fb.report.recoveries == 1 and fb.teleports == 0
    assert fb.report.reset_totals.violations == 0 and fb.report.reset_totals.error_clipped_cycles == 0
    fb.close()


def test_a_cube_pushed_out_of_range_is_picked_up_and_handed_to_the_backward_policy(monkeypatch):
    fb = ForwardBackward(load_config("configs/pick_cube.yaml", ["env.max_episode_steps=3"]), seed=0)
    forbid_teleports(fb, monkeypatch)
    task = fb.task

    class Pusher:
        """Stands still, while (as if pushed) the cube ends up out of its range."""

        def act(self, obs):
            fb.world.data.qpos[task._qpos:task._qpos + 2] = [0.6, 0.11]
            fb.world.forward()
            return np.zeros(4, dtype=np.float32)

    fb.set_policies(Pusher(), make_backward_expert(fb.backward_env, seed=2))
    direction, steps = fb.run_episode()
    assert direction == FORWARD and not fb.task.object_in_start_range()
    direction, steps = fb.run_episode()  # the scripted pick-up, then the backward expert puts it back
    assert direction == BACKWARD and fb.report.pick_ups == 1 and steps[-1].success
    assert fb.task.object_in_start_range() and fb.teleports == 0 and fb.report.recoveries == 0
    assert fb.report.reset_totals.violations == 0 and fb.report.reset_totals.error_clipped_cycles == 0
    fb.close()


def test_a_backward_policy_that_keeps_failing_gets_a_scripted_reset_after_max_in_row(monkeypatch):
    cfg = load_config("configs/pick_cube.yaml", ["reset.forward_backward.max_backward_in_row=2",
                                                 "reset.forward_backward.backward_max_steps=3"])
    fb = ForwardBackward(cfg, seed=0)
    forbid_teleports(fb, monkeypatch)

    class Hold:
        def act(self, obs):
            return np.zeros(4, dtype=np.float32)  # keeps the cube up in the closed gripper

    fb.set_policies(fb.task.make_expert(fb.forward_env, seed=1), Hold())
    order = [fb.run_episode()[0] for _ in range(4)]
    assert order == [FORWARD, BACKWARD, BACKWARD, FORWARD]
    assert fb.report.recoveries == 1 and fb.report.pick_ups == 0 and fb.teleports == 0
    assert fb.report.backward.successes == 0
    fb.close()


def test_practice_feeds_each_learner_its_own_direction(monkeypatch, one_torch_thread):
    from robot_rl.training.learner import Learner

    cfg = load_config("configs/peg_insert.yaml", TINY_AGENT)
    fb = ForwardBackward(cfg, seed=0)
    forbid_teleports(fb, monkeypatch)
    demos = collect_demos(fb, fb.task.make_expert(fb.forward_env, noise=0.2, seed=1),
                          make_backward_expert(fb.backward_env, noise=0.2, seed=2), episodes=2)
    assert len(demos[FORWARD]) == 2 and len(demos[BACKWARD]) == 2
    learners = {d: Learner(cfg.agent, cfg.train, env.observation_space, env.action_space, seed=i)
                for i, (d, env) in enumerate(((FORWARD, fb.forward_env), (BACKWARD, fb.backward_env)))}
    for d in learners:
        learners[d].add_demos(demos[d])
    seen = {FORWARD: 0, BACKWARD: 0}
    episodes = []

    def on_episode(direction, step, fb_):
        episodes.append(direction)

    original_ingest = {d: learners[d].ingest for d in learners}
    for d in learners:
        def ingest(step, d=d):
            seen[d] += 1
            assert step.obs["state"].shape == learners[d].obs_space["state"].shape
            original_ingest[d](step)
        learners[d].ingest = ingest
    fb.report = type(fb.report)()
    result = practice(fb, learners, sim_seconds=15.0, on_episode=on_episode)
    assert result.sim_s >= 15.0
    # PegInsert: the backward task runs after every forward episode, and vice versa.
    assert episodes[: len(episodes) // 2 * 2] == [FORWARD, BACKWARD] * (len(episodes) // 2) and len(episodes) >= 2
    for d in (FORWARD, BACKWARD):
        assert seen[d] > 0 and learners[d].env_steps == seen[d]
        assert len(learners[d].demo) == sum(len(e) for e in demos[d])
        assert learners[d].updates_done > 0
    assert result.report.forward.steps + result.report.backward.steps == sum(seen.values())
    assert fb.teleports == 0 and result.report.reset_totals.violations == 0
    assert result.report.reset_totals.error_clipped_cycles == 0
    fb.close()
