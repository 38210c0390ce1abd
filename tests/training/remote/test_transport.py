"""Actors and a learner over real gRPC on 127.0.0.1: streaming, weights, outages, restarts."""

import threading
import time

import grpc
import numpy as np
import pytest
from polling import eventually
from transition_sinks import Recorder

from robot_rl.config.learning import LearningConfig
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.codec import encode_batch, encode_spaces
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.proto import learning_pb2_grpc as pb_grpc
from robot_rl.training.remote.security import auth_metadata
from robot_rl.training.remote.server import LearnerServer

TOKEN = "test-token-0123456789"
SPACES = syn.make_spaces(cameras=("front", "wrist"), image_size=32)


def config(**kw):
    base = dict(port=0, batch_steps=8, batch_max_age_s=0.2, reconnect_min_s=0.05, reconnect_max_s=0.3,
                rpc_deadline_s=5.0)
    base.update(kw)
    return LearningConfig(**base)


@pytest.fixture
def learner():
    servers = []

    def start(cfg=None, port=None, **kw):
        sink = Recorder()
        server = LearnerServer(cfg or config(), SPACES, sink, TOKEN, **kw)
        server.start(port=port)
        servers.append(server)
        return server, sink

    yield start
    for server in servers:
        server.stop(0)


@pytest.fixture
def actors():
    clients = []

    def start(port, actor_id, cfg=None, token=TOKEN, spaces=SPACES):
        client = ActorClient(cfg or config(), spaces, token, target=f"127.0.0.1:{port}", actor_id=actor_id)
        clients.append(client.start())
        return client

    yield start
    for client in clients:
        client.close()


def feed(client, first_episode, episodes, length, seed=0, **kw):
    rng = np.random.default_rng(seed)
    for e in range(first_episode, first_episode + episodes):
        for step in syn.episode(SPACES, e, length, rng, **kw):
            client.submit(step)


def test_two_actors_stream_steps_and_both_get_increasing_weight_versions(learner, actors):
    server, sink = learner()
    a, b = actors(server.port, "robot-a"), actors(server.port, "robot-b")
    assert a.wait_connected(5) and b.wait_connected(5)
    seen = {"robot-a": [], "robot-b": []}
    rng = np.random.default_rng(0)
    for round_ in range(4):
        feed(a, 2 * round_, 2, 15, seed=round_, intervene_every=5)
        feed(b, 2 * round_, 2, 10, seed=100 + round_)
        server.publish_weights(syn.policy_weights(rng), learner_updates=100 * round_)
        for client in (a, b):  # the control loop takes whatever is newest, never waiting
            assert eventually(lambda client=client: client.weights.version >= server.weight_version, 5)
            seen[client.actor_id].append(client.take_weights().version)
    assert seen["robot-a"] == seen["robot-b"] == [1, 2, 3, 4]
    assert a.flush(10) and b.flush(10)
    assert server.received_steps == a.env_steps + b.env_steps == 8 * 15 + 8 * 10
    assert sink.got("robot-a") == [(e, t) for e in range(8) for t in range(15)]  # in order, once
    assert sink.got("robot-b") == [(e, t) for e in range(8) for t in range(10)]
    stats = server.actor_stats()
    assert stats["robot-a"].steps == 120 and stats["robot-a"].episodes == 8
    assert stats["robot-a"].intervention_steps == 8 * 3 and stats["robot-b"].intervention_steps == 0
    assert stats["robot-a"].weight_version_sent == 4 and stats["robot-a"].report.env_steps > 0


def test_actor_keeps_stepping_while_learner_is_away_then_drains_in_order(learner, actors):
    port = syn.free_port()
    client = actors(port, "robot-a")
    started = time.perf_counter()
    feed(client, 0, 10, 20)  # 200 steps with nobody listening
    assert time.perf_counter() - started < 2.0, "submit waited on the network"
    time.sleep(0.5)
    assert not client.connected and client.outbox.queued_steps == 200
    assert "UNAVAILABLE" in client.last_error
    server, sink = learner(port=port)
    assert client.flush(15)
    assert sink.got("robot-a") == [(e, t) for e in range(10) for t in range(20)]
    assert client.stats()["dropped_steps"] == 0


def test_overflow_while_away_is_counted_and_reported_to_the_learner(learner, actors):
    port = syn.free_port()
    client = actors(port, "robot-a", cfg=config(queue_steps=40))
    feed(client, 0, 5, 20)
    assert client.outbox.dropped_steps == 60
    server, sink = learner(port=port)
    assert client.flush(10)
    got = sink.got("robot-a")
    assert len(got) == 40 and got == sorted(got)
    assert len(got) + client.outbox.dropped_steps == client.env_steps
    assert eventually(lambda: server.actor_stats()["robot-a"].report.dropped_steps == 60)


def test_restarted_learner_gets_the_unfinished_episode_again_and_never_a_held_batch(learner, actors):
    port = syn.free_port()
    first, sink1 = learner(port=port)
    client = actors(port, "robot-a")
    rng = np.random.default_rng(5)
    ep0 = list(syn.episode(SPACES, 0, 12, rng))
    ep1 = list(syn.episode(SPACES, 1, 20, rng))
    for step in ep0 + ep1[:10]:
        client.submit(step)
    assert client.flush(10)
    held = first.acked()[("robot-a", client.incarnation)]
    first.stop(0)  # the learner dies; it had persisted episode 0 (its batches up to seq 2)
    feed(client, 50, 1, 4)  # meanwhile the actor goes on... (episode ids need not be contiguous)
    second, sink2 = learner(port=port, acked={("robot-a", client.incarnation): 2})
    assert held > 2
    for step in ep1[10:]:
        client.submit(step)
    assert client.flush(15)
    got = sink2.got("robot-a")
    assert got[:10] == [(1, t) for t in range(10)]  # the retained part of episode 1, resent
    assert sorted(got) == [(1, t) for t in range(20)] + [(50, t) for t in range(4)]
    assert all(k[0] != 0 for k in got)
    assert client.stats()["resent_steps"] == 10


def test_a_resent_batch_is_acked_but_stored_once(learner):
    server, sink = learner()
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.LearnerStub(channel)
        md = auth_metadata(TOKEN)
        reply = stub.Register(pb.RegisterRequest(actor_id="r", incarnation="x", spaces=encode_spaces(SPACES)),
                              metadata=md, timeout=5)
        steps = list(syn.episode(SPACES, 0, 4, np.random.default_rng(0)))
        msg = encode_batch(steps, SPACES, actor_id="r", incarnation="x", seq=1)
        msg.secret = reply.secret
        first = stub.PushTransitions(msg, metadata=md, timeout=5)
        again = stub.PushTransitions(msg, metadata=md, timeout=5)
    assert (first.accepted, first.duplicate) == (4, False)
    assert (again.accepted, again.duplicate) == (0, True)
    assert sink.calls == 1 and server.actor_stats()["r"].duplicates == 1


def test_push_before_register_is_not_found(learner):
    server, _ = learner()
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        steps = list(syn.episode(SPACES, 0, 2, np.random.default_rng(0)))
        msg = encode_batch(steps, SPACES, actor_id="ghost", incarnation="x", seq=1)
        with pytest.raises(grpc.RpcError) as err:
            pb_grpc.LearnerStub(channel).PushTransitions(msg, metadata=auth_metadata(TOKEN), timeout=5)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and "register" in err.value.details()


def test_weight_swaps_do_not_stall_the_control_loop(learner, actors):
    server, _ = learner()
    client = actors(server.port, "robot-a")
    assert client.wait_connected(5)
    rng = np.random.default_rng(1)
    big = syn.policy_weights(rng, extra_params=2_000_000)  # 8 MB per version
    stop = threading.Event()

    def publish():
        while not stop.is_set():
            big["head.bias"] = big["head.bias"] + 1
            server.publish_weights(big)
            time.sleep(0.1)

    publisher = threading.Thread(target=publish)
    publisher.start()
    worst, versions, steps = 0.0, [], 0
    try:
        episodes = syn.episode(SPACES, 0, 10_000, rng)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:  # a 100 Hz control loop
            t0 = time.perf_counter()
            new = client.take_weights()
            if new is not None:
                versions.append(new.version)
            client.submit(next(episodes))
            worst = max(worst, time.perf_counter() - t0)
            steps += 1
            time.sleep(0.01)
    finally:
        stop.set()
        publisher.join()
    assert len(versions) >= 3 and versions == sorted(set(versions))
    # Learner and actor share this process (and its GIL) here, so the loop runs slower than
    # 100 Hz; what matters is that it kept going and no single step waited on a transfer.
    assert steps > 50
    print(f"control steps: {steps} in 2 s, worst step {worst * 1000:.1f} ms, versions {versions}")
    assert worst < 0.25, f"a control step waited {worst:.3f} s"


def test_weights_of_a_learner_started_afresh_are_not_ignored_as_old(learner, actors):
    port = syn.free_port()
    first, _ = learner(port=port)
    client = actors(port, "robot-a")
    rng = np.random.default_rng(2)
    for _ in range(5):
        first.publish_weights(syn.policy_weights(rng))
    assert eventually(lambda: client.weights.version == 5, 5)
    assert client.take_weights().version == 5
    first.stop(0)
    second, _ = learner(port=port)  # a new run: versions start at 1 again
    fresh = syn.policy_weights(rng)
    second.publish_weights(fresh)
    assert eventually(lambda: client.learner_id == second.learner_id, 10)
    assert eventually(lambda: client.weights.version == 1, 10)
    got = client.take_weights()
    assert got.version == 1 and np.array_equal(got.tensors["head.weight"], fresh["head.weight"])
