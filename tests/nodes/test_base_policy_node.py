"""A base policy in the actor node: the whole loop from pixels, and a base that goes wrong at run time.

The actor node's core (:class:`~robot_rl.nodes.actor.ActorSession`, over its topic backends)
runs against the sim node's core on a thread (tests/support/actor_harness.py), with
``ros.policy: learner`` and ``agent.base.mode: residual``, the base an entry point
(tests/support/base_policies.py):

* from pixels (2 cameras of 32x32, the small encoder of configs/pick_cube_pixels.yaml), a
  learner process's server over gRPC on 127.0.0.1 and the simulated person taking over: every
  step the actor pushed is stored, with the base action the actor computed on that very
  observation, the person's steps flagged, residuals within [-1, 1]; the learner trains and
  its weights come back;
* a base that gives NaN on every third call after it loaded: each such action holds the arm
  (no NaN reaches the controller, which rejects nothing), is counted in the summary, the
  status and ``/diagnostics``, and the episodes run to their end.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytest.importorskip("mujoco")

import base_policies  # noqa: E402  (tests/support)
from actor_harness import CameraLoopback, LoopbackSim  # noqa: E402
from polling import listening_port  # noqa: E402

from robot_rl.agents.residual import BASE_ACTION_KEY  # noqa: E402
from robot_rl.nodes.actor import ActorSession  # noqa: E402
from robot_rl.nodes.diagnostics import diagnostic_fields  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402

PIXELS = "configs/pick_cube_pixels.yaml"
PICK = "configs/pick_cube.yaml"
TOKEN = "base-node-token-0123456789abcdef"
BASE = ["agent.base.mode=residual", "agent.base.source=base_policies:drift", "agent.residual.scale=0.3",
        "agent.hidden_dims=[16,16]", "env.max_episode_steps=12", "ros.state_timeout_s=2.0", "train.random_steps=0",
        "train.torch_threads=1", "train.progress=false", "ros.policy=learner"]


class PixelSim(CameraLoopback):
    """The harness's sim, also sending both camera images (as the sim node does), at 20 Hz."""

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def drift(state: np.ndarray) -> np.ndarray:
    """What base_policies:drift gives for a state (4 action dims: xyz and the gripper)."""
    return np.append(0.4 * np.sin(3.0 * np.asarray(state[:3], np.float64)), -1.0).astype(np.float32)


@pytest.mark.slow
def test_the_whole_loop_from_pixels_with_a_base_in_the_actor_and_a_person_taking_over(tmp_path, monkeypatch):
    from robot_rl.assemble import config_spaces_env
    from robot_rl.data.demos import episode_files, read_episode
    from robot_rl.training.remote.learner_process import LearnerProcess

    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    base_policies.POISON.update(every=0, calls=0, poisoned=0)
    session_sets = [*BASE, "ros.episodes=2", "intervention.device=simulated", "intervention.simulated.probability=1.0",
                    "intervention.simulated.grace_steps=2", "intervention.simulated.takeover_steps=3",
                    "train.batch_size=8", "train.learning_starts=8", "train.utd_ratio=1", "train.scripted_demos=0",
                    "train.eval_every=0", "train.eval_episodes=0", f"train.run_dir={tmp_path / 'run'}",
                    "learning.batch_steps=4", "learning.batch_max_age_s=0.2"]
    learner = LearnerProcess(load_config(PIXELS, session_sets), TOKEN, env_fn=config_spaces_env, evaluate=False,
                             tensorboard=False)
    assert learner.obs_space[BASE_ACTION_KEY].shape == (4,) and learner.obs_space["front"].shape == (32, 32, 3)
    result: dict = {}
    # port 0: the learner binds one nothing else holds and writes it down (a port found free beforehand
    # may be taken by another test's server or connection by the time it binds)
    thread = threading.Thread(target=lambda: result.update(learner.run(port=0, max_seconds=400)), daemon=True)
    thread.start()
    try:
        port = listening_port(tmp_path / "run", thread.is_alive)
        assert port is not None, "the learner stopped before it listened"
    except AssertionError:
        learner.stop()  # one still starting after the wait must not outlive the test
        raise
    cfg = load_config(PIXELS, [*session_sets, f"learning.port={port}"])
    sim = PixelSim(cfg)
    try:
        session = ActorSession(cfg, sim.parts)
        summary = session.run()
        status = session.status()
        # the learner trains on what it got; wait (bounded) until its weights have reached the actor
        end = time.monotonic() + 120
        while learner.learner.updates_done == 0 and time.monotonic() < end:
            time.sleep(0.1)
    finally:
        learner.stop()
        thread.join(180)
        sim.close()
    assert not thread.is_alive() and result, "the learner did not stop"
    pushed = summary["steps"]
    assert summary["episodes"] == 2 and 2 <= pushed <= 24, summary
    assert summary["learner"]["acked_steps"] == pushed and summary["learner"]["dropped_steps"] == 0, summary
    assert summary["base_refused"] == 0 and summary["residual_refused"] == 0 and status["base_refused"] == 0
    assert result["received_steps"] == pushed and result["lost_steps"] == 0 and result["updates"] > 0, result
    assert summary["learner"]["weight_swaps"] >= 1  # the residual's weights came over gRPC
    stored = intervened = 0
    for path in episode_files(tmp_path / "run" / "replay"):
        for step in read_episode(path, learner.obs_space, learner.action_space):
            stored += 1
            assert step.obs["front"].shape == (32, 32, 3) and step.obs["wrist"].shape == (32, 32, 3)
            # the base ran in the actor, on this very observation
            np.testing.assert_allclose(step.obs[BASE_ACTION_KEY], drift(step.obs["state"]), atol=1e-5)
            assert np.all(np.abs(step.action) <= 1.0)
            intervened += int(step.intervened)
    assert stored == pushed
    assert intervened > 0, "the simulated person never took over"


def test_a_non_finite_base_action_at_run_time_holds_the_arm_and_is_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    # no learner answers: the actor acts with its own weights (zero residual: the base's motion)
    cfg = load_config(PICK, [*BASE, "ros.episodes=2", "intervention.device=none", f"learning.port={free_port()}"])
    sim = LoopbackSim(cfg)
    targets: list[np.ndarray] = []
    controller = sim.sim.controller
    on_target = controller.on_target

    def note(pos, quat):
        targets.append(np.array(pos, dtype=float).copy())
        return on_target(pos, quat)

    controller.on_target = note
    from robot_rl.training.remote.actor_process import ActorProcess

    built = ActorProcess.__init__

    def poison_once_loaded(self, *args, **kwargs):  # the base loads (and passes its check) with the actor
        built(self, *args, **kwargs)
        base_policies.POISON.update(every=3, calls=0, poisoned=0)

    monkeypatch.setattr(ActorProcess, "__init__", poison_once_loaded)
    try:
        session = ActorSession(cfg, sim.parts)
        summary = session.run()
        status = session.status()
    finally:
        base_policies.POISON.update(every=0)
        sim.close()
    poisoned = base_policies.POISON["poisoned"]
    assert summary["episodes"] == 2 and summary["steps"] == 24, summary
    assert poisoned >= 8 and summary["base_refused"] == poisoned == status["base_refused"], (summary, poisoned)
    assert summary["last_refused_base_action"].startswith("non-finite actions")
    assert controller.counts["rejected_targets"] == 0 and all(np.isfinite(t).all() for t in targets)
    values = dict(diagnostic_fields(status, name="/actor_node").values)
    assert values["base_refused"] == str(poisoned) and values["residual_refused"] == "0"
