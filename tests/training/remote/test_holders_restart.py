"""A restarted learner still knows who held which actor id (``learner/holders.json``).

Before the file, a learner restart forgot every holder's secret, and any token holder
could register a live actor's id before that actor reconnected. Now the actor that held
the id gets it back with its secret, an intruder waits out the lease counted from the
restart, only digests are on disk, and a damaged file is one line naming it.
"""

import json
import os

import numpy as np
import pytest
from polling import eventually

from robot_rl.config.learning import LearningConfig
from robot_rl.errors import RobotRLError
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.assembler import EpisodeAssembler
from robot_rl.training.remote.attacks import try_takeover
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.holders import FORMAT, digest, load_holders
from robot_rl.training.remote.server import ACTOR_ID, LearnerServer

TOKEN = "holders-restart-0123456789"
SPACES = syn.make_spaces(cameras=(), image_size=16)
LENGTH = 10


def config(**kw):
    base = dict(port=0, batch_steps=4, batch_max_age_s=0.1, reconnect_min_s=0.05, reconnect_max_s=0.3,
                rpc_deadline_s=5.0)
    base.update(kw)
    return LearningConfig(**base)


def learner(holders_file, lease=30.0, acked=None):
    asm = EpisodeAssembler(None, max_open_steps=4 * LENGTH)
    return LearnerServer(config(actor_lease_s=lease), SPACES, asm, TOKEN, holders_file=holders_file, acked=acked), asm


def submit_episode(client, episode_id):
    for step in syn.episode(SPACES, episode_id, LENGTH, np.random.default_rng(episode_id)):
        client.submit(step)


def test_a_restarted_learner_gives_the_actor_its_id_back_and_refuses_an_intruder_meanwhile(tmp_path):
    file = tmp_path / "holders.json"
    first, asm = learner(file)
    port = first.start(host="127.0.0.1")
    target = f"127.0.0.1:{port}"
    actor = ActorClient(config(), SPACES, TOKEN, target=target, actor_id="legit").start()
    second = None
    try:
        assert actor.wait_connected(30)
        submit_episode(actor, 0)
        assert actor.flush(30), actor.last_error
        secret = actor._secret
        text = file.read_text()
        assert json.loads(text)["holders"] == {"legit": digest(secret).hex()}
        assert secret.hex() not in text  # the digest only
        acked = first.acked()
        first.stop(0)
        second, asm2 = learner(file, acked=acked)
        second.start(host="127.0.0.1", port=port)
        # Right after the restart, before the actor is back: no secret, or a wrong one, is refused.
        for presented in (b"", os.urandom(32)):
            code, details = try_takeover(target, TOKEN, SPACES, "legit", secret=presented)
            assert code == "ALREADY_EXISTS", (code, details)
            assert "held it before the learner restarted" in details and "\n" not in details
        submit_episode(actor, 1)  # the actor reconnects with its secret and carries on
        assert actor.flush(60), actor.last_error
        assert eventually(lambda: [e.meta["episode_id"] for e in asm2.take()] == [1], 30)
    finally:
        actor.close()
        first.stop(0)
        if second is not None:
            second.stop(0)
    stats = second.actor_stats()["legit"]
    assert stats.takeovers_refused == 2 and stats.takeovers == 0
    assert [e.meta["episode_id"] for e in asm.take()] == [0]
    assert asm2.lost_steps == 0 and second.refusals()["id_held"] == 2
    assert json.loads(file.read_text())["holders"] == {"legit": digest(secret).hex()}


def test_a_holder_that_never_comes_back_loses_its_id_after_the_lease_from_the_restart(tmp_path):
    file = tmp_path / "holders.json"
    file.write_text(json.dumps({"format": FORMAT, "holders": {"gone": digest(b"old secret").hex()}}))
    srv, _ = learner(file, lease=1.0)
    srv.start(host="127.0.0.1")
    target = f"127.0.0.1:{srv.port}"
    try:
        assert try_takeover(target, TOKEN, SPACES, "gone")[0] == "ALREADY_EXISTS"
        assert eventually(lambda: try_takeover(target, TOKEN, SPACES, "gone")[0] == "OK", 20)
        held = json.loads(file.read_text())["holders"]
        assert list(held) == ["gone"] and held["gone"] != digest(b"old secret").hex()  # the new holder's
    finally:
        srv.stop(0)
    assert srv.actor_stats()["gone"].takeovers == 1


def test_a_fresh_learner_without_the_file_has_no_holders(tmp_path):
    srv, _ = learner(tmp_path / "none.json")
    srv.start(host="127.0.0.1")
    try:
        assert try_takeover(f"127.0.0.1:{srv.port}", TOKEN, SPACES, "anyone")[0] == "OK"
    finally:
        srv.stop(0)
    assert list(json.loads((tmp_path / "none.json").read_text())["holders"]) == ["anyone"]


GOOD = digest(b"x").hex()


@pytest.mark.parametrize("body,fragment", [
    ("", "unreadable"),
    ("{not json", "unreadable"),
    (b"\xff\xfe\x00garbage", "unreadable"),
    ("[]", f"not a '{FORMAT}' file"),
    (json.dumps({"format": "other/1", "holders": {}}), f"not a '{FORMAT}' file"),
    (json.dumps({"format": FORMAT, "holders": []}), f"not a '{FORMAT}' file"),
    (json.dumps({"format": FORMAT, "holders": {"bad id!": GOOD}}), "actor id 'bad id!' is not one"),
    (json.dumps({"format": FORMAT, "holders": {"a": "zz" * 32}}), "not a SHA-256 in hex"),
    (json.dumps({"format": FORMAT, "holders": {"a": GOOD[:-2]}}), "not a SHA-256 in hex"),
    (json.dumps({"format": FORMAT, "holders": {"a": 1e308}}), "not a SHA-256 in hex"),
    ('{"format": "' + FORMAT + '", "holders": {"a": NaN}}', "not a SHA-256 in hex"),
    ('{"format": "' + FORMAT + '", "holders": {"a": Infinity}}', "not a SHA-256 in hex"),
    (json.dumps({"format": FORMAT, "holders": {f"a{i}": GOOD for i in range(10_001)}}), "10001 holders"),
    ("[" * 100_000 + "]" * 100_000, "unreadable"),
    (" " * (5 << 20), "bytes (at most"),
])
def test_a_damaged_holders_file_is_one_line_naming_it_and_is_left_as_it_was(tmp_path, body, fragment):
    file = tmp_path / "holders.json"
    (file.write_bytes if isinstance(body, bytes) else file.write_text)(body)
    before = file.read_bytes()
    with pytest.raises(RobotRLError) as err:
        learner(file)
    text = str(err.value)
    assert "\n" not in text and str(file) in text and fragment in text and "delete it" in text, text
    assert file.read_bytes() == before
    with pytest.raises(RobotRLError):
        load_holders(file, ACTOR_ID)
