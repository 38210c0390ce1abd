"""Recording a person's demos through the actor node's core: ``ros.policy=human`` and ``ros.demos_dir``.

The actor's ActorSession runs over its topic backends against the sim on a thread
(``LoopbackSim`` of test_graph_actor: messages replaced by direct calls). The person
is synthetic /spacenav input fed into the actor's TopicInput, exactly what the
intervention node publishes for a keyboard: a twist, then the success, failure and
stop action buttons of /spacenav/joy.
"""

from __future__ import annotations

import numpy as np
import pytest
from actor_harness import PICK, LoopbackSim, ScriptedPerson  # noqa: E402

from robot_rl.data.demos import episode_files, load_demos, read_manifest  # noqa: E402
from robot_rl.errors import ConfigError  # noqa: E402
from robot_rl.nodes.actor import ActorSession, Senders, make_topic_parts  # noqa: E402
from robot_rl.nodes.description import build_graph  # noqa: E402
from robot_rl.nodes.intervention import operator_to_spacenav  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402


class Person(ScriptedPerson):
    """Plays /spacenav input by the actor's progress: move up, label success; label failure; stop."""

    def __init__(self, session: ActorSession) -> None:
        super().__init__(session)
        self.on_disk_after_first: list[str] | None = None

    def script(self) -> None:
        book = self.session.book
        up = operator_to_spacenav(np.array([0.0, 0.0, 0.5, 0.0, 0.0, 0.0]))  # operator up: robot +z
        self.wait(lambda: book.steps >= 4, while_waiting=lambda: self.device.on_twist(up))
        self.device.on_twist(np.zeros(6))
        self.wait(lambda: book.steps >= 5)
        self.tap("success")
        self.wait(lambda: len(book.episodes) >= 1)
        first = book.steps
        self.wait(lambda: book.steps >= first + 1)
        self.on_disk_after_first = [p.name for p in episode_files(self.session.cfg.ros.demos_dir)]
        self.tap("failure")
        self.wait(lambda: len(book.episodes) >= 2)
        second = book.steps
        self.wait(lambda: book.steps >= second + 1)
        self.tap("stop")


@pytest.mark.parametrize("keep_failed", [False, True])
def test_human_policy_records_the_persons_episodes_as_they_end(tmp_path, keep_failed):
    demos = tmp_path / "demos"
    cfg = load_config(PICK, ["ros.policy=human", "intervention.device=keyboard", f"ros.demos_dir={demos}",
                             f"ros.demos_keep_failed={str(keep_failed).lower()}", "ros.state_timeout_s=2.0",
                             "env.relative_pose=false", "env.max_episode_steps=40"])
    sim = LoopbackSim(cfg)
    try:
        session = ActorSession(cfg, sim.parts)
        person = Person(session)
        person.thread.start()
        summary = session.run()
        person.thread.join(5.0)
    finally:
        sim.close()
    assert person.error is None, person.error
    assert summary["stopped"] and summary["episodes"] == 2 and summary["successes"] == 1, summary
    assert [e["ended"] for e in session.book.episodes] == ["terminated", "truncated", "stop"]
    assert person.on_disk_after_first == ["episode_000000.npz"]  # written as it ended, mid-session
    manifest = read_manifest(demos)
    assert manifest["source"] == "keyboard" and manifest["task"] == "PickCube"
    episodes = load_demos(demos, session.env.observation_space, session.env.action_space)
    if keep_failed:  # the failure label's episode too; never the stopped one
        assert len(episodes) == 2 and not episodes[1][-1].success and episodes[1][-1].truncated
        assert len(episodes[1]) == session.book.episodes[1]["length"]
    else:
        assert len(episodes) == 1  # the failed and the stopped episodes are not kept
    ep = episodes[0]
    assert ep[-1].success and ep[-1].terminated and len(ep) == session.book.episodes[0]["length"]
    intervened = np.array([s.intervened for s in ep])
    actions = np.stack([s.action for s in ep])
    assert intervened[:3].all() and not intervened[-1]  # moving took over; the label step is the hold's
    assert (actions[intervened, 2] > 0.4).all()  # the person's "up", recorded as the executed action
    np.testing.assert_allclose(actions[~intervened], 0.0, atol=1e-6)  # the hold policy: no motion
    assert ep[-1].next_obs["state"][2] > ep[0].obs["state"][2] + 0.02  # and the arm went up


def test_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="ros.demos_dir is written by an actor acting on its own"):
        load_config(PICK, ["ros.policy=learner", f"ros.demos_dir={tmp_path}"])
    cfg = load_config(PICK, ["ros.policy=human", f"ros.demos_dir={tmp_path}"])  # intervention.device: none
    topics = build_graph(cfg, PICK).node("actor_node").parameters["topics"]
    parts = make_topic_parts(cfg, topics, Senders(lambda p, q: None, lambda g: None, lambda r: None), actor_id="x")
    with pytest.raises(ConfigError, match="ros.policy is 'human' but intervention.device is 'none'"):
        ActorSession(cfg, parts)
