"""Recording reward-classifier frames through the actor node's core: ``ros.reward_frames_dir``.

The actor's ActorSession runs over its topic backends against the sim on a thread
(``LoopbackSim`` of test_graph_actor, here also publishing both camera images). The
person is synthetic /spacenav input fed into the actor's TopicInput, exactly what the
intervention node publishes for a keyboard: the success, failure, pause and stop action
buttons of /spacenav/joy. Every read of that device is logged, so the test knows which
step saw each press, and the labels on disk are checked against that log.
"""

from __future__ import annotations

import numpy as np
import pytest
from actor_harness import PICK, CameraLoopback, ScriptedPerson  # noqa: E402

from robot_rl.errors import ConfigError, DeviceError  # noqa: E402
from robot_rl.interfaces import InputCommand, InputDevice  # noqa: E402
from robot_rl.nodes.actor import ActorSession, Senders, make_topic_parts  # noqa: E402
from robot_rl.nodes.description import build_graph  # noqa: E402
from robot_rl.nodes.topics import actor_cameras  # noqa: E402
from robot_rl.reward.dataset import chunk_paths, load_frames  # noqa: E402
from robot_rl.reward.labels import KeyLabels, LabelKeyTap  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402

EPISODE_STEPS = 8
RECORDING = ["intervention.device=keyboard", "ros.state_timeout_s=2.0", "env.relative_pose=false",
             f"env.max_episode_steps={EPISODE_STEPS}", "cameras.front.width=64", "cameras.front.height=48",
             "cameras.wrist.width=64", "cameras.wrist.height=48", "reward.image_size=[32,24]",
             "reward.collect.chunk_frames=4"]


def log_reads(device) -> list[tuple[bool, bool, bool, bool]]:
    """Log (success, failure, pause, stop) of every read of ``device`` (one read per actor step)."""
    reads: list[tuple[bool, bool, bool, bool]] = []
    read = device.read

    def logged() -> InputCommand:
        cmd = read()
        reads.append((cmd.success_pressed, cmd.failure_pressed, cmd.pause_pressed, cmd.stop_pressed))
        return cmd

    device.read = logged
    return reads


class Person(ScriptedPerson):
    """Taps label keys at given steps of given episodes (``plan``: episode -> [(step, action)])."""

    def __init__(self, session: ActorSession, plan: dict[int, list[tuple[int, str]]]) -> None:
        super().__init__(session)
        self.plan = plan
        self.chunks_before_stop: int | None = None

    def script(self) -> None:
        book = self.session.book
        for episode, taps in sorted(self.plan.items()):
            self.wait(lambda episode=episode: len(book.episodes) >= episode, poll=0.01)
            start = sum(e["length"] for e in book.episodes[:episode])
            for step, action in taps:
                self.wait(lambda start=start, step=step: book.steps >= start + step, poll=0.01)
                if action == "stop":
                    self.chunks_before_stop = len(chunk_paths(self.session.cfg.ros.reward_frames_dir))
                self.tap(action)


def expected_frames(reads, episodes) -> list[tuple[int, bool]]:
    """(episode, label) of every frame the spec asks for, from the presses each step saw.

    Each episode starts labelled failure; success / failure presses set the label of that
    step's frame and the following ones; pause toggles recording; a stop step has no frame.
    """
    out, paused, i = [], False, 0
    for episode, record in enumerate(episodes):
        success = False
        for _ in range(record["length"]):
            s, f, p, stop = reads[i]
            i += 1
            if stop:
                break
            paused ^= p
            success = (success or s) and not f
            if not paused:
                out.append((episode, success))
    return out


def run_session(cfg, plan):
    sim = CameraLoopback(cfg)
    try:
        reads = log_reads(sim.parts.input)
        session = ActorSession(cfg, sim.parts)
        person = Person(session, plan)
        person.thread.start()
        summary = session.run()
        person.thread.join(5.0)
    finally:
        sim.close()
    assert person.error is None, person.error
    return session, summary, reads, person


def test_a_person_labels_frames_with_keys_while_holding_the_arm(tmp_path, capsys):
    frames_dir = tmp_path / "frames"
    cfg = load_config(PICK, ["ros.policy=human", f"ros.reward_frames_dir={frames_dir}", *RECORDING])
    plan = {0: [(2, "success"), (4, "pause"), (6, "pause")],  # failure, success, not recorded, success
            1: [(2, "success"), (5, "failure")],              # failure, success, failure again
            2: [(3, "success")],
            3: [(2, "success"), (5, "stop")]}                 # the stop ends the session
    session, summary, reads, person = run_session(cfg, plan)

    # The keys labelled and did not end episodes: three time limits, then the stop.
    assert summary["stopped"], summary
    assert [e["ended"] for e in session.book.episodes] == ["truncated"] * 3 + ["stop"]
    assert [e["length"] for e in session.book.episodes[:3]] == [EPISODE_STEPS] * 3
    assert len(reads) == session.book.steps  # the device was read once per step, by the intervention alone
    assert sum(r[0] for r in reads) == 4 and sum(r[1] for r in reads) == 1  # each press seen exactly once
    assert sum(r[2] for r in reads) == 2 and sum(r[3] for r in reads) == 1

    data = load_frames(frames_dir)
    expected = expected_frames(reads, session.book.episodes)
    pause, resume = [i for i, r in enumerate(reads) if r[2]]
    assert resume - pause >= 1  # steps pause .. resume-1 are not recorded; the stop step has no frame either
    assert len(data) == len(expected) == session.book.steps - 1 - (resume - pause)
    assert data.label.tolist() == [label for _, label in expected]
    # Episodes on disk are the actor's episodes, in order; steps count frames within each.
    episode_of = np.unique(data.episode, return_inverse=True)[1]
    assert episode_of.tolist() == [e for e, _ in expected]
    for e in range(4):
        labels = data.label[episode_of == e]
        assert not labels[0] and labels.any()  # failure first, success after the press
        assert data.step[episode_of == e].tolist() == list(range(len(labels)))
    assert not data.label[episode_of == 1][-1]  # the failure key set it back

    meta = data.meta
    assert meta["cameras"] == cfg.reward.cameras == ["front", "wrist"]
    assert meta["image_size"] == [32, 24] and meta["label_source"] == "keys" and meta["task"] == "PickCube"
    for cam in ("front", "wrist"):
        assert data.images[cam].shape == (len(data), 24, 32, 3) and data.images[cam].dtype == np.uint8
        assert data.images[cam].std() > 5.0  # rendered scenes, not blank frames
    assert not np.array_equal(data.images["front"], data.images["wrist"])

    # Chunks of 4 were on disk while the session ran; the partial one was written at the end.
    assert person.chunks_before_stop >= 3
    assert len(chunk_paths(frames_dir)) == -(-len(data) // 4) and not list(frames_dir.glob("*.tmp"))

    # The directory trains with the unchanged train-reward command.
    from robot_rl.cli import main

    tiny = ["reward.image_size=[32,24]", "reward.train_steps=10", "reward.batch_size=8", "reward.eval_every=5",
            "reward.encoder.channels=[4]", "reward.encoder.strides=[2]", "reward.encoder.latent_dim=4",
            "reward.hidden_dim=4", "reward.torch_threads=1", "reward.calibration_fraction=0.25",
            "reward.test_fraction=0.25"]
    out = tmp_path / "reward.pt"
    code = main(["train-reward", "--config", PICK, "--data", str(frames_dir), "--out", str(out), "--force",
                 *[a for item in tiny for a in ("--set", item)]])
    assert code == 0 and out.exists(), capsys.readouterr().err


@pytest.mark.parametrize("policy", ["random", "checkpoint", "expert"])
def test_every_local_policy_records(tmp_path, policy):
    frames_dir = tmp_path / "frames"
    sets = [f"ros.policy={policy}", f"ros.reward_frames_dir={frames_dir}", *RECORDING]
    if policy == "checkpoint":  # trained on state alone; the recording env observes the cameras too
        import torch

        from robot_rl.agents.policy import Policy
        from robot_rl.assemble import make_env
        from robot_rl.config import to_dict
        from robot_rl.data.spaces import spaces_spec
        from robot_rl.training.checkpoint import save_checkpoint

        sets += ["agent.hidden_dims=[32, 32]", f"ros.checkpoint={tmp_path / 'run'}"]
        env = make_env(load_config(PICK, sets[2:]))
        torch.manual_seed(0)
        saved = Policy(load_config(PICK, sets).agent, env.observation_space, env.action_space)
        env.close()
        save_checkpoint(tmp_path / "run", {"kind": "test", "config": to_dict(load_config(PICK, sets)),
                                           "spaces": spaces_spec(env.observation_space, env.action_space),
                                           "agent": {"policy": saved.state_dict()}})
    cfg = load_config(PICK, sets)
    session, _, reads, _ = run_session(cfg, {0: [(2, "success"), (4, "stop")]})
    data = load_frames(frames_dir)
    expected = expected_frames(reads, session.book.episodes)
    assert data.label.tolist() == [label for _, label in expected]
    assert data.label.any() and not data.label[0] and len(data) == len(reads) - 1


def test_a_second_session_appends(tmp_path):
    frames_dir = tmp_path / "frames"
    cfg = load_config(PICK, ["ros.policy=random", f"ros.reward_frames_dir={frames_dir}", *RECORDING])
    _, _, reads, _ = run_session(cfg, {0: [(2, "success"), (4, "stop")]})
    first = load_frames(frames_dir)
    assert first.label.any() and len(first) == len(reads) - 1
    _, _, reads, _ = run_session(cfg, {0: [(3, "stop")]})
    both = load_frames(frames_dir)
    assert len(both) == len(first) + len(reads) - 1
    assert not both.label[len(first):].any()  # a new session starts labelled failure
    assert len(np.unique(both.episode)) == 2  # its episode got a new id


def _session(cfg):
    topics = build_graph(cfg, PICK).node("actor_node").parameters["topics"]
    parts = make_topic_parts(cfg, topics, Senders(lambda p, q: None, lambda g: None, lambda r: None), actor_id="x")
    return ActorSession(cfg, parts)


def test_config_errors(tmp_path):
    frames = f"ros.reward_frames_dir={tmp_path}"
    with pytest.raises(ConfigError, match="ros.reward_frames_dir is written by an actor acting on its own"):
        load_config(PICK, ["ros.policy=learner", frames])
    with pytest.raises(ConfigError, match="record reward frames and demos in separate sessions"):
        load_config(PICK, ["ros.policy=human", frames, f"ros.demos_dir={tmp_path / 'd'}"])
    with pytest.raises(ConfigError, match="labels frames with the person's keys but intervention.device is 'none'"):
        _session(load_config(PICK, ["ros.policy=expert", frames]))
    with pytest.raises(ConfigError, match=r"lacks \['front', 'wrist'\].*env.policy_keys"):
        _session(load_config(PICK, ["ros.policy=human", "intervention.device=keyboard", frames,
                                    "env.policy_keys=[state]"]))
    # The actor subscribes to the reward cameras, although the policy observes state only.
    cfg = load_config(PICK, ["ros.policy=human", "intervention.device=keyboard", frames])
    assert actor_cameras(cfg) == ["front", "wrist"] and actor_cameras(load_config(PICK)) == []
    session = _session(cfg)
    assert {"state", "front", "wrist"} <= set(session.env.observation_space.spaces)


class Script(InputDevice):
    """Hands out the given commands, one per read; raises DeviceError when they run out."""

    def __init__(self, commands: list[InputCommand]) -> None:
        self.commands = list(commands)
        self.closed = False

    def read(self) -> InputCommand:
        if not self.commands:
            raise DeviceError("keyboard unplugged")
        return self.commands.pop(0)

    def close(self) -> None:
        self.closed = True


def test_the_tap_gives_each_press_to_one_reader_once():
    tap = LabelKeyTap(Script([InputCommand(twist=np.ones(6), intervene=True, success_pressed=True),
                              InputCommand(pause_pressed=True, stop_pressed=True),
                              InputCommand(pause_pressed=True, failure_pressed=True),
                              InputCommand(gripper_toggle_pressed=True)]))
    labels = KeyLabels(tap.labels)
    moved = tap.read()  # the intervention's read: motion stays, the label press is taken out
    assert moved.intervene and np.allclose(moved.twist, 1.0) and not moved.success_pressed
    assert labels.read(None).success is True
    assert labels.read(None).success is True  # no new read, no new press
    assert tap.read().stop_pressed  # stop reaches the intervention (it ends the session)
    assert not tap.read().pause_pressed  # pause does not: it would hold the arm
    got = tap.labels.read()  # two pauses in one label read cancel out; the failure and the stop remain
    assert not got.pause_pressed and got.failure_pressed and got.stop_pressed
    assert tap.read().gripper_toggle_pressed
    with pytest.raises(DeviceError, match="unplugged"):
        tap.read()
    with pytest.raises(DeviceError, match="labels cannot change"):
        tap.labels.read()
    tap.labels.close()
    assert not tap.device.closed  # the labels do not close the intervention's device
    tap.close()
    assert tap.device.closed
