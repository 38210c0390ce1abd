"""The actor node's policy: a poisoned checkpoint is refused in one line; NaN at run time holds the arm.

* ``ros.policy: checkpoint`` with a checkpoint poisoned so that no NaN/inf check sees it
  (normalizer variance -1, weights x1e38, a bias of 1e30) is one CheckpointError line
  naming the file, from :func:`checkpoint_policy` and from the session that starts with it.
* A policy that gives NaN on every third step of each episode, run by the actor's core
  against the sim's controller core (tests/support/actor_harness.py): the held steps send
  the very target the arm already had (the controller's target does not move and it
  rejects nothing), they are counted in the summary, ``~/status`` and ``/diagnostics``,
  and the session runs its episodes to the end.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("mujoco")

from actor_harness import LoopbackSim  # noqa: E402  (tests/support)
from poisoned_checkpoints import (  # noqa: E402
    PICK,
    SMALL,
    huge_bias,
    pick_cube_run,
    rewrite_policy,
    variance_minus_one,
    weights_times_1e38,
)

from robot_rl.nodes.actor import ActorSession, checkpoint_policy  # noqa: E402
from robot_rl.nodes.diagnostics import WARN, diagnostic_fields  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402
from robot_rl.training.checkpoint import CheckpointError  # noqa: E402


@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    return pick_cube_run(tmp_path_factory.mktemp("actor_check") / "run")[1]


@pytest.mark.parametrize("poison, words", [
    (variance_minus_one, "the policy cannot act: normalizer variance of 'state'[0] is -1"),
    (weights_times_1e38, "the policy computes non-finite values on sampled observations"),
    (huge_bias, "far outside the action space before the squash"),
])
def test_a_poisoned_checkpoint_is_refused_in_one_line(good_run, tmp_path, poison, words):
    from robot_rl.assemble import make_env

    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    cfg = load_config(PICK, [*SMALL, "ros.policy=checkpoint", f"ros.checkpoint={run}"])
    env = make_env(cfg)
    try:
        checkpoint_policy(cfg, env)  # the good one loads
        path = rewrite_policy(run, poison)
        with pytest.raises(CheckpointError) as err:
            checkpoint_policy(cfg, env)
    finally:
        env.close()
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: ") and words in message, message


def test_a_session_with_a_poisoned_checkpoint_ends_in_that_one_line(good_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    path = rewrite_policy(run, variance_minus_one)
    cfg = load_config(PICK, [*SMALL, "ros.policy=checkpoint", f"ros.checkpoint={run}", "ros.episodes=1",
                             "ros.state_timeout_s=2.0"])
    sim = LoopbackSim(cfg)
    try:
        session = ActorSession(cfg, sim.parts)
        with pytest.raises(CheckpointError, match="normalizer variance of 'state'") as err:
            session.run()
    finally:
        sim.close()
    assert str(err.value).startswith(f"{path}: ") and session.book.steps == 0  # nothing acted


class NanOnEveryThird:
    """Small alternating x moves; NaN on steps 2, 5, 8, ... of each episode. Notes the targets it sees."""

    def __init__(self, env, received: list) -> None:
        self.env, self.received = env, received
        self.t, self.episode = 0, -1
        self.seen: list[tuple[int, int, bool, np.ndarray, np.ndarray]] = []

    def reset(self) -> None:
        self.t, self.episode = 0, self.episode + 1

    def act(self, obs) -> np.ndarray:
        target = self.env.unwrapped.target_pose[0]  # what the env sent last
        controller = np.array(self.received[-1][0], dtype=float) if self.received else np.full(3, np.nan)
        bad = self.t % 3 == 2
        self.seen.append((self.episode, self.t, bad, target, controller))
        self.t += 1
        if bad:
            return np.full(4, np.nan, np.float32)
        return np.array([0.25 if self.t % 2 else -0.25, 0.0, 0.0, 0.0], np.float32)


def test_nan_actions_hold_the_arm_are_counted_and_the_session_goes_on(monkeypatch):
    cfg = load_config(PICK, [*SMALL, "ros.policy=checkpoint", "ros.checkpoint=unused", "ros.episodes=2",
                             "ros.state_timeout_s=2.0"])
    sim = LoopbackSim(cfg)
    received: list = []
    controller = sim.sim.controller
    on_target = controller.on_target

    def note(pos, quat):
        received.append((np.array(pos, dtype=float).copy(), np.array(quat, dtype=float).copy()))
        return on_target(pos, quat)

    controller.on_target = note  # the sender calls it by attribute: every target the controller gets
    policies = []
    monkeypatch.setattr("robot_rl.nodes.actor.checkpoint_policy",
                        lambda cfg, env, keys=None: policies.append(NanOnEveryThird(env, received)) or policies[-1])
    try:
        session = ActorSession(cfg, sim.parts)
        summary = session.run()
        status = session.status()
    finally:
        sim.close()
    seen = policies[0].seen
    assert summary["episodes"] == 2 and summary["steps"] == 24 == len(seen), summary
    assert summary["refused_actions"] == 8 and status["refused_actions"] == 8
    assert [e["refused_actions"] for e in session.book.episodes] == [4, 4]
    assert controller.counts["rejected_targets"] == 0  # no NaN ever reached the controller
    held = moved = 0
    for (ep, t, bad, target, got), (ep2, _, _, target2, got2) in zip(seen, seen[1:]):
        if ep != ep2:
            continue  # a reset moves the target
        step = float(np.max(np.abs(target2 - target)))
        if bad:  # the held step sent the target the arm already had, to the controller too
            assert step < 1e-9, (ep, t, target, target2)
            assert np.allclose(got2, got, atol=1e-9) and np.allclose(got2, target2, atol=1e-9)
            held += 1
        else:
            assert step > 1e-3, (ep, t, step)  # a good step moves it: the check above could fail
            moved += 1
    assert held == 6 and moved == 16
    fields = diagnostic_fields(status, name="/actor_node")
    values = dict(fields.values)
    assert values["refused_actions"] == "8" and values["last_refused_action"].startswith("non-finite actions")
    assert fields.level == WARN and "holding" in fields.message  # the last step of the session was held
