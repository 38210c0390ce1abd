"""The whole loop for a task that lives only on a real cell: ConnectorInsert over topics.

The arm is the topics backend: a sim stands in for the arm's driver (robot_rl's sim node
core, :class:`~robot_rl.nodes.sim.SimServer`, on a thread, running a scene of its own,
PickCube's table and cameras), publishing the arm's state and the camera images to the
actor's topic backends and following its targets. It knows nothing of the session's
task, and nothing in the session builds a sim (sim construction raises from the moment
the stand-in is up, and the learner runs in its own process with sim construction and
MuJoCo refused). In order:

1. reset poses are recorded from the arm's measured pose (a file, ``task.params.reset_poses_file``);
2. reward-classifier frames are recorded through the actor (random policy, the person's
   label keys), and a tiny classifier is trained on them;
3. a ``robot-rl learner`` process serves an actor session (``ros.policy: learner``) over
   gRPC for 2 episodes, each reset to the recorded poses in turn; nothing is lost:
   every step the actor pushed is stored in the learner's replay.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from actor_harness import ScriptedPerson
from polling import learner_port

from robot_rl.control.transforms import quat_to_rpy
from robot_rl.nodes.actor import ActorSession, Senders, make_topic_parts
from robot_rl.nodes.description import build_graph
from robot_rl.nodes.sim import SimServer
from robot_rl.reward.dataset import load_frames
from robot_rl.reward.train import save_result, train_classifier
from robot_rl.tasks import load_config
from robot_rl.tasks.real import write_reset_poses

pytest.importorskip("mujoco")
from robot_rl.sim import build_world as BUILD_WORLD  # noqa: E402, N812 - the stand-in arm's, before any patch

REPO = Path(__file__).resolve().parents[2]
CONNECTOR = REPO / "configs" / "connector_insert.yaml"
ARM_SCENE = REPO / "configs" / "pick_cube.yaml"  # the stand-in arm's own scene
TOKEN = "real-only-loop-token-0123456789abcdef"
SIZE = ["cameras.front.width=64", "cameras.front.height=48", "cameras.wrist.width=64", "cameras.wrist.height=48"]
SESSION = [*SIZE, "ros.state_timeout_s=2.0", "reward.image_size=[16,16]", "reward.collect.chunk_frames=4",
           "reward.train_steps=30", "reward.batch_size=8", "reward.eval_every=10", "reward.torch_threads=1",
           "reward.allow_below_bar=true", "reward.encoder.channels=[4]", "reward.encoder.strides=[2]",
           "reward.encoder.latent_dim=4", "reward.hidden_dim=8", "train.torch_threads=1", "train.progress=false",
           "train.batch_size=16",
           "train.learning_starts=5", "agent.hidden_dims=[32,32]", "agent.encoder.channels=[4]",
           "agent.encoder.strides=[2]", "agent.encoder.latent_dim=8", "reset.move_timeout_s=15.0"]
NO_SIM = ("import sys; sys.modules['mujoco'] = None\n"
          "import robot_rl.sim, robot_rl.assemble\n"
          "def refuse(*a, **k): raise SystemExit('a sim was built for a task that has no scene')\n"
          "robot_rl.sim.build_world = refuse; robot_rl.assemble.sim_parts = refuse\n"
          "from robot_rl.cli import main; sys.exit(main(sys.argv[1:]))\n")


class ArmOverTopics:
    """A sim standing in for an arm's driver: the arm's topics, both camera images, targets followed."""

    def __init__(self, cfg, arm_cfg) -> None:
        self.sim = SimServer(arm_cfg)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.next_image = self.next_resend = 0.0
        topics = build_graph(cfg, CONNECTOR).node("actor_node").parameters["topics"]
        senders = Senders(target=lambda p, q: self._locked(self.sim.controller.on_target, p, q),
                          gripper=lambda g: self._locked(self.sim.controller.on_gripper, g))
        self.parts = make_topic_parts(cfg, topics, senders, actor_id="cell", stamp_clock=self.sim.now)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _locked(self, fn, *args):
        with self.lock:
            fn(*args)

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                with self.lock:
                    state = self.sim.tick()
                    if state is not None:
                        robot = self.parts.robot
                        robot.on_twist(state.tcp_twist)
                        robot.on_wrench(state.tcp_wrench)
                        robot.on_joints([f"joint{i}" for i in range(1, 8)] + ["gripper"],
                                        np.append(state.q, state.gripper), np.zeros(8), np.zeros(8))
                        robot.on_pose(state.tcp_pos, state.tcp_quat, self.sim.now())
                    now = time.monotonic()
                    if now >= self.next_image:
                        for name, camera in self.parts.cameras.items():
                            camera.on_image(self.sim.render(name), time.time())
                        self.next_image = now + 0.05
                if time.monotonic() >= self.next_resend:  # the actor node's timer at ros.target_hz
                    self.parts.robot.resend()
                    self.next_resend = time.monotonic() + 0.02
                time.sleep(0.008)
        finally:  # an EGL context is released by the thread it is current in
            self.sim.world.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10.0)


class Labeller(ScriptedPerson):
    """Taps success a few steps into every episode: the frames after it are labelled success."""

    def script(self) -> None:
        book = self.session.book
        for episode in range(self.session.cfg.ros.episodes):
            self.wait(lambda episode=episode: len(book.episodes) >= episode, poll=0.01, timeout=120)
            start = sum(e["length"] for e in book.episodes[:episode])
            self.wait(lambda start=start: book.steps >= start + 4, poll=0.01, timeout=120)
            self.tap("success")


def arm(cfg, monkeypatch) -> ArmOverTopics:
    """The stand-in arm (its own sim world), then sim construction refused for everything else."""
    import robot_rl.assemble
    import robot_rl.sim

    monkeypatch.setattr(robot_rl.sim, "build_world", BUILD_WORLD)  # the stand-in's own world only
    arm_cfg = load_config(ARM_SCENE, [*SIZE, "env.obs_mode=pixels"])
    stand_in = ArmOverTopics(cfg, arm_cfg)

    def refuse(*args, **kwargs):
        raise AssertionError("the session built a sim for a task that has no scene")

    monkeypatch.setattr(robot_rl.sim, "build_world", refuse)  # from here on, nothing builds a sim
    monkeypatch.setattr(robot_rl.assemble, "sim_parts", refuse)
    return stand_in


@pytest.mark.slow
def test_a_real_only_task_learns_over_topics_with_no_sim(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    # 1. reset poses recorded from the arm as it stands, and a second one beside it
    cfg = load_config(CONNECTOR, [*SESSION, "ros.policy=random", "reward.classifier_path=null",
                                  "intervention.device=keyboard", f"ros.reward_frames_dir={tmp_path / 'frames'}",
                                  "ros.episodes=3", "env.max_episode_steps=8"])
    cell = arm(cfg, monkeypatch)
    try:
        state = cell.parts.robot.wait_for_state(30.0)
        low = np.asarray(cfg.robot.workspace.pos_low) + 0.01
        high = np.asarray(cfg.robot.workspace.pos_high) - 0.01
        here = np.clip(state.tcp_pos, low, high)
        poses = [np.concatenate([here, quat_to_rpy(state.tcp_quat)]),
                 np.concatenate([np.clip(here + [0.03, -0.02, -0.04], low, high), quat_to_rpy(state.tcp_quat)])]
        poses_file = write_reset_poses(tmp_path / "reset_poses.json", poses)
        recorded = ["task.params.reset_poses=[]", f"task.params.reset_poses_file={poses_file}"]

        # 2. reward frames through the actor, labelled by the person's keys; a tiny classifier
        cfg = load_config(CONNECTOR, [*SESSION, *recorded, "ros.policy=random", "reward.classifier_path=null",
                                      "intervention.device=keyboard", f"ros.reward_frames_dir={tmp_path / 'frames'}",
                                      "ros.episodes=3", "env.max_episode_steps=8"])
        cell.close()
        cell = arm(cfg, monkeypatch)
        session = ActorSession(cfg, cell.parts)
        person = Labeller(session)
        person.thread.start()
        summary = session.run()
        person.thread.join(10.0)
        assert person.error is None, person.error
        assert summary["episodes"] == 3
        frames = load_frames(tmp_path / "frames")
        assert frames.label.any() and not frames.label.all() and len(frames) >= 20
        result = train_classifier(frames, cfg.reward, seed=0)
        model = tmp_path / "reward.pt"
        save_result(model, result, cfg.reward, task="ConnectorInsert", forced=True)
        assert model.is_file()
        cell.close()

        # 3. a learner process over gRPC and the actor over topics: 2 episodes, nothing lost
        learning = [*SESSION, *recorded, f"reward.classifier_path={model}", "env.max_episode_steps=10"]
        learner = subprocess.Popen(
            [sys.executable, "-c", NO_SIM, "learner", "--config", str(CONNECTOR), "--run-dir", str(tmp_path / "run"),
             "--port", "0", "--no-tensorboard", "--max-seconds", "240",
             *[a for s in learning for a in ("--set", s)]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
            env={**os.environ, "ROBOT_RL_TOKEN": TOKEN})
        try:
            port = learner_port(learner, tmp_path / "run")
            cfg = load_config(CONNECTOR, [*learning, f"learning.port={port}", "ros.policy=learner", "ros.episodes=2",
                                          "intervention.device=none"])
            cell = arm(cfg, monkeypatch)
            session = ActorSession(cfg, cell.parts)
            reward_wrapped = [type(w).__name__ for w in _chain(session.env)]
            assert "ClassifierReward" in reward_wrapped  # success is the classifier's
            routine = cell.parts.task.routine
            summary = session.run()
        finally:
            learner.send_signal(signal.SIGINT)
            out, _ = learner.communicate(timeout=120)
    finally:
        cell.close()
    # An episode may end before env.max_episode_steps (the tiny classifier may call success; a loaded
    # machine may fault a step on stale state): what must hold is that every step pushed is stored.
    pushed = summary["steps"]
    assert summary["episodes"] == 2 and 2 <= pushed <= 20, summary
    assert summary["learner"]["acked_steps"] == pushed and summary["learner"]["dropped_steps"] == 0, summary
    assert routine.next_index == 2 and routine.count == 2  # both recorded poses, in turn
    learned = json.loads(out.strip().splitlines()[-1])
    assert learned["received_steps"] == pushed and learned["lost_steps"] == 0, out[-2000:]
    assert learned["episodes"] == 2
    stored = sorted((tmp_path / "run" / "replay").glob("episode_*.npz"))
    steps = 0
    for path in stored:
        with np.load(path, allow_pickle=False) as logged:
            assert logged["obs/state"].shape[1:] == (13,)  # task.params.proprio: tcp_pos, tcp_quat, tcp_wrench
            assert logged["obs/front"].shape[1:] == (32, 32, 3) and logged["action"].shape[1:] == (3,)
            steps += len(logged["action"])
    assert steps == pushed  # steps pushed == steps stored


def _chain(env):
    while env is not None:
        yield env
        env = getattr(env, "env", None)
