"""The actor node's core without processes: its env over topic backends, stop, bookkeeping, policies.

A thread plays the sim node through the same core objects the nodes use (SimServer on
one side, the actor's TopicRobot / SimTopicTask on the other), with messages replaced
by direct calls; what is checked is the actor's behaviour, not the transport.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from actor_harness import PICK, LoopbackSim  # noqa: E402  (tests/support)

from robot_rl.errors import ConfigError
from robot_rl.nodes.actor import ActorSession, Senders, checkpoint_policy, make_topic_parts
from robot_rl.nodes.description import build_graph
from robot_rl.tasks import load_config


def test_the_expert_succeeds_through_the_topic_backends_and_episodes_are_booked():
    cfg = load_config(PICK, ["ros.policy=expert", "ros.episodes=2", "ros.state_timeout_s=2.0"])
    sim = LoopbackSim(cfg)
    try:
        session = ActorSession(cfg, sim.parts)
        summary = session.run()
    finally:
        sim.close()
    assert summary["episodes"] == 2 and summary["successes"] == 2, summary
    assert [e["ended"] for e in session.book.episodes] == ["terminated", "terminated"]
    assert summary["step_latency"]["n"] == summary["steps"] and summary["reset_time"]["n"] == 2
    assert sim.sim.controller.counts["targets"] >= summary["steps"]


def test_stop_ends_the_episode_at_the_next_step_without_moving_the_arm():
    cfg = load_config(PICK, ["ros.policy=random", "ros.state_timeout_s=2.0"])
    sim = LoopbackSim(cfg)
    try:
        session = ActorSession(cfg, sim.parts)
        timer = threading.Timer(2.0, session.stop)
        timer.start()
        started = time.monotonic()
        summary = session.run()
        took = time.monotonic() - started
    finally:
        sim.close()
    assert summary["stopped"] and summary["episodes"] == 0  # the stopped episode is not a finished one
    assert session.book.episodes[-1]["ended"] == "stop"
    assert took < 2.0 + 1.0


def test_stop_cuts_a_wait_for_a_sim_that_is_not_there():
    cfg = load_config(PICK, ["ros.policy=expert", "ros.startup_timeout_s=60"])
    topics = build_graph(cfg, PICK).node("actor_node").parameters["topics"]
    parts = make_topic_parts(cfg, topics, Senders(lambda p, q: None, lambda g: None, lambda r: None), actor_id="x")
    session = ActorSession(cfg, parts)
    threading.Timer(0.5, session.stop).start()
    started = time.monotonic()
    summary = session.run()
    assert time.monotonic() - started < 3.0 and summary["stopped"] and summary["steps"] == 0


def test_a_checkpoint_policy_acts_like_the_saved_one(tmp_path):
    import torch

    from robot_rl.agents.policy import Policy
    from robot_rl.assemble import make_env
    from robot_rl.config import to_dict
    from robot_rl.data.spaces import spaces_spec
    from robot_rl.training.checkpoint import CheckpointError, save_checkpoint

    cfg = load_config(PICK, ["agent.hidden_dims=[32, 32]", f"ros.checkpoint={tmp_path}"])
    env = make_env(cfg)
    torch.manual_seed(3)
    saved = Policy(cfg.agent, env.observation_space, env.action_space)
    save_checkpoint(tmp_path, {"kind": "test", "config": to_dict(cfg),
                               "spaces": spaces_spec(env.observation_space, env.action_space),
                               "agent": {"policy": saved.state_dict()}})
    policy = checkpoint_policy(cfg, env)
    obs, _ = env.reset(seed=0)
    assert np.allclose(policy.act(obs), saved.act(obs, deterministic=True))
    other = load_config(PICK, ["agent.hidden_dims=[16]", f"ros.checkpoint={tmp_path}"])
    with pytest.raises(CheckpointError, match=r"does not fit this config: .*'agent.hidden_dims' is \[32, 32\]"):
        checkpoint_policy(other, env)
    with pytest.raises(ConfigError, match="names no run directory"):
        checkpoint_policy(load_config(PICK), env)
    env.close()


def test_a_real_robot_s_joint_reset_runs_over_the_posture_topic():
    """RobotResetTask (a real arm's resets) with its joint reset, against the sim node's controller core."""
    from robot_rl.nodes.task import RobotResetTask

    # No null-space spring between joint resets: like joint friction on a real arm, nothing
    # then pulls a drifted elbow back, so only the joint reset can.
    cfg = load_config(PICK, ["reset.joint_reset_every=2", "ros.state_timeout_s=2.0",
                             "robot.controller.nullspace_stiffness=0.0"])
    sim = LoopbackSim(cfg)
    world, core = sim.sim.world, sim.sim.controller
    rest = np.asarray(cfg.robot.controller.rest_posture)  # the joint reset's goal: no reset.joint_reset_q
    try:
        task = RobotResetTask(cfg, sim.parts.robot, sim.parts.clock)
        sim.parts.robot.wait_for_state()
        task.reset(np.random.default_rng(0))  # resets 1, 3, 5, ... are joint resets: this one from the start
        settled = sim.parts.robot.state().q  # as near the rest posture as the held reset pose allows
        with sim.lock:  # the elbow drifts while the TCP holds, as over many episodes
            world.robot.set_posture(rest + np.array([0.5, 0, -0.5, 0, 0.3, 0, 0]), 40.0)
        time.sleep(3.0)
        with sim.lock:
            world.robot.set_posture(None)
        drift = np.max(np.abs(sim.parts.robot.state().q - settled))
        postures = core.counts["postures"]
        task.reset(np.random.default_rng(1))  # reset 2: Cartesian only, the drift stays
        kept = np.max(np.abs(sim.parts.robot.state().q - settled))
        assert core.counts["postures"] == postures
        task.reset(np.random.default_rng(2))  # reset 3: a joint reset again
        after = np.max(np.abs(sim.parts.robot.state().q - settled))
    finally:
        sim.close()
    stats = task.routine.recorder.stats
    print(f"\njoint reset over topics: drift from the first joint reset's posture {drift:.3f} rad -> {kept:.3f} "
          f"after a Cartesian reset -> {after:.3f} after a joint reset")
    assert drift > 0.2 and kept > 0.2 and after < 0.5 * kept
    assert task.routine.count == 3 and stats.violations == 0
    assert core.counts["postures"] > postures + 10 and core.counts["rejected_postures"] == 0
    assert not core.posture_active and world.robot.controller.gains is world.robot.controller.base_gains
