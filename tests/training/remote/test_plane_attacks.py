"""Safety of the learner's gRPC plane: nobody without the token can lock actors out, and
bad input from any client is refused with a status that tells it what to do, counted in
the learner's status, while the learner keeps serving and loses nothing it recorded.

All traffic goes to 127.0.0.1, in bounded numbers, for bounded times.
"""

import threading
import time

import grpc
import numpy as np
import pytest
from polling import eventually
from transition_sinks import Recorder

from robot_rl.config.learning import LearningConfig
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.assembler import EpisodeAssembler
from robot_rl.training.remote.attacks import PUSH, REGISTER, WEIGHTS, paced_rate
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.codec import encode_batch, encode_spaces
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.proto import learning_pb2_grpc as pb_grpc
from robot_rl.training.remote.security import auth_metadata
from robot_rl.training.remote.server import EXPECTED_SEQ, LearnerServer

TOKEN = "safety-token-0123456789"
SPACES = syn.make_spaces(cameras=("front",), image_size=16)


def config(**kw):
    base = dict(port=0, batch_steps=8, batch_max_age_s=0.1, reconnect_min_s=0.05, reconnect_max_s=0.3,
                rpc_deadline_s=5.0)
    base.update(kw)
    return LearningConfig(**base)


@pytest.fixture
def server():
    srv = LearnerServer(config(), SPACES, Recorder(), TOKEN)
    srv.start(host="127.0.0.1")
    yield srv
    srv.stop(0)


class SlowCallers:
    """``count`` calls that send headers (no or a wrong token) and never a body.

    Each one holds its call open; when the learner ends it, it opens a new one after
    ``pause`` s, up to ``max_calls`` calls in all, until :meth:`stop`. A call's request
    iterator blocks until that call is over, so the channel has sent the headers and
    nothing else.
    """

    def __init__(self, port, count=200, channels=10, pause=0.25, max_calls=2000, methods=(REGISTER, PUSH, WEIGHTS),
                 metadata=None, timeout=30.0):
        self.channels = [grpc.insecure_channel(f"127.0.0.1:{port}") for _ in range(channels)]
        self.count, self.pause, self.max_calls = count, pause, max_calls
        self.methods, self.metadata, self.timeout = methods, metadata, timeout
        self.stopped = threading.Event()
        self.opened = 0
        self.codes = {}
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _metadata(self, i):
        if self.metadata is not None:
            return self.metadata
        return None if i % 2 else (("authorization", "Bearer not-the-token"),)

    def _open(self, i):
        done = threading.Event()

        def never_sends():
            done.wait(30.0)
            return
            yield  # a generator that yields nothing: headers go out, no message ever does

        channel, method = self.channels[i % len(self.channels)], self.methods[i % len(self.methods)]
        kwargs = dict(request_serializer=lambda m: m, response_deserializer=lambda b: b)
        if method == WEIGHTS:  # a response stream: the call object is a future as well
            future = channel.stream_stream(method, **kwargs)(never_sends(), metadata=self._metadata(i),
                                                             timeout=self.timeout)
        else:
            future = channel.stream_unary(method, **kwargs).future(never_sends(), metadata=self._metadata(i),
                                                                   timeout=self.timeout)
        future.add_done_callback(lambda f: (done.set(), self._record(f)))
        self.opened += 1
        return future, done

    def _record(self, future):
        code = future.code()
        with self.lock:
            self.codes[code.name] = self.codes.get(code.name, 0) + 1

    def _run(self):
        slots = [self._open(i) for i in range(self.count)]
        while not self.stopped.wait(self.pause):
            for i, (future, _) in enumerate(slots):
                if future.done() and self.opened < self.max_calls:
                    slots[i] = self._open(i)
        for future, done in slots:
            future.cancel()
            done.set()

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopped.set()
        self.thread.join(10.0)
        for channel in self.channels:
            channel.close()


def test_200_slow_unauthenticated_callers_do_not_slow_a_streaming_actor(server):
    target = f"127.0.0.1:{server.port}"
    actor = ActorClient(config(), SPACES, TOKEN, target=target, actor_id="robot").start()
    late = ActorClient(config(), SPACES, TOKEN, target=target, actor_id="late")
    attackers = None
    try:
        assert actor.wait_connected(30)
        calm, n1, episode = paced_rate(actor, SPACES, 2.0, 100, 0)
        assert actor.flush(30)
        attackers = SlowCallers(server.port).start()
        time.sleep(0.5)  # every slot the attackers can take is taken
        late.start()  # a new actor registers in the middle of the attack
        under_attack, n2, episode = paced_rate(actor, SPACES, 3.0, 100, episode)
        assert late.wait_connected(30), f"a new actor could not register: {late.last_error}"
        assert actor.flush(30) and actor.outbox.queued_steps == 0  # while the attack goes on
    finally:
        if attackers is not None:
            attackers.stop()
        actor.close()
        late.close()
    got = server.sink.got("robot")
    print(f"\nlegit actor: {calm:.0f} steps/s alone, {under_attack:.0f} steps/s under 200 slow unauthenticated "
          f"callers ({attackers.opened} calls: {attackers.codes}); {n1 + n2} submitted, {len(got)} stored, "
          f"refusals {server.refusals()}")
    assert len(got) == n1 + n2 == actor.env_steps  # nothing lost
    assert got == sorted(got)
    assert actor.outbox.dropped_steps == 0 and actor.outbox.rejected_steps == 0
    assert under_attack > 0  # the actor kept streaming (before the fix: 0 steps/s, 300 queued)
    assert server.refusals().get("unauthenticated", 0) >= 200
    # UNAVAILABLE: streams beyond the learner's HTTP/2 limit per connection (grpc.max_concurrent_streams),
    # refused before the client has heard of the limit.
    assert set(attackers.codes) <= {"UNAUTHENTICATED", "CANCELLED", "UNAVAILABLE"}


# ----------------------------------------------------------------------------- authenticated but slow

def test_authenticated_callers_without_a_body_are_limited_per_connection_and_cancelled_after_body_timeout():
    srv = LearnerServer(config(body_timeout_s=1.0), SPACES, Recorder(), TOKEN)
    srv.start(host="127.0.0.1")
    actor = ActorClient(config(), SPACES, TOKEN, target=f"127.0.0.1:{srv.port}", actor_id="robot").start()
    token = (("authorization", f"Bearer {TOKEN}"),)
    undated = stalled = None
    try:
        assert actor.wait_connected(30)
        # Without a deadline a call could wait for its body forever: refused at once.
        undated = SlowCallers(srv.port, count=6, channels=1, max_calls=6, methods=(PUSH,), metadata=token,
                              timeout=None).start()
        assert eventually(lambda: undated.codes.get("INVALID_ARGUMENT", 0) == 6, 30), undated.codes
        # With one, at most max_calls_per_connection (4) of them wait on one connection, the rest are told
        # "busy" at once; the learner cancels the 4 when their body has not come within body_timeout_s,
        # long before their own 30 s deadline.
        t0 = time.monotonic()
        stalled = SlowCallers(srv.port, count=10, channels=1, max_calls=10, methods=(PUSH,), metadata=token,
                              timeout=30.0).start()
        assert eventually(lambda: stalled.codes.get("RESOURCE_EXHAUSTED", 0) == 6, 30), stalled.codes
        _, submitted, _ = paced_rate(actor, SPACES, 1.0, 100, 0)
        assert eventually(lambda: stalled.codes.get("CANCELLED", 0) == 4, 30), stalled.codes
        assert time.monotonic() - t0 < 20.0
        assert actor.flush(30), actor.last_error
    finally:
        for callers in (undated, stalled):
            if callers is not None:
                callers.stop()
        actor.close()
        srv.stop(0)
    assert len(srv.sink.got("robot")) == submitted and actor.outbox.dropped_steps == 0
    refused = srv.refusals()
    assert refused["no_deadline"] == 6 and refused["connection_limit"] == 6 and refused["body_timeout"] == 4


# ----------------------------------------------------------------------------- registration slots

def test_registrations_that_never_stream_expire_and_free_their_slot():
    srv = LearnerServer(config(max_actors=2, registration_ttl_s=0.5), SPACES, Recorder(), TOKEN)
    srv.start(host="127.0.0.1")
    try:
        raw = Raw(srv.port)
        raw.register("idle-a", "i1")
        raw.register("idle-b", "i1")
        with pytest.raises(grpc.RpcError) as err:
            raw.register("new", "i1")
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "registration_ttl_s" in err.value.details()
        time.sleep(0.6)  # both idle past the TTL: the longest idle gives its slot up
        raw.register("new", "i1")
        with pytest.raises(grpc.RpcError) as err:
            raw.push(batch(SPACES, "idle-a", "i1", 1, 0, 4))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND  # an actor would register again
        raw.close()
    finally:
        srv.stop(0)
    stats = srv.actor_stats()
    assert not stats["idle-a"].registered and stats["idle-b"].registered and stats["new"].registered
    assert srv.refusals()["actors_full"] == 1


# ----------------------------------------------------------------------------- the learning protocol

class Raw:
    """A hand-driven client: every call with the token, a deadline and the secret of the id it registered."""

    def __init__(self, port):
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = pb_grpc.LearnerStub(self.channel)
        self.md = auth_metadata(TOKEN)
        self.secrets = {}

    def register(self, actor_id, incarnation, spaces=None):
        request = pb.RegisterRequest(actor_id=actor_id, incarnation=incarnation,
                                     secret=self.secrets.get(actor_id, b""))
        request.spaces.CopyFrom(spaces if spaces is not None else encode_spaces(SPACES))
        reply = self.stub.Register(request, metadata=self.md, timeout=5)
        assert len(reply.secret) == 32
        self.secrets[actor_id] = reply.secret
        return reply

    def push(self, msg):
        if not msg.secret:
            msg.secret = self.secrets.get(msg.actor_id, b"")
        return self.stub.PushTransitions(msg, metadata=self.md, timeout=5)

    def refused(self, msg):
        """The status code a push of ``msg`` is refused with, and the call error."""
        with pytest.raises(grpc.RpcError) as err:
            self.push(msg)
        return err.value.code(), err.value

    def close(self):
        self.channel.close()


def batch(spaces, actor_id, incarnation, seq, episode_id, length, first_step=0, ends=None, seed=0):
    """Steps ``first_step`` ... of an episode of ``length`` as one batch message."""
    steps = list(syn.episode(spaces, episode_id, length, np.random.default_rng(seed + episode_id)))
    chunk = steps[first_step:first_step + (ends or length)]
    return encode_batch(chunk, spaces, actor_id=actor_id, incarnation=incarnation, seq=seq)


@pytest.fixture
def assembled():
    """A learner whose sink is the real EpisodeAssembler (no disk), holding at most 40 open steps per actor."""
    asm = EpisodeAssembler(None, max_open_steps=40)
    srv = LearnerServer(config(), SPACES, asm, TOKEN)
    srv.start(host="127.0.0.1")
    raw = Raw(srv.port)
    yield srv, asm, raw
    raw.close()
    srv.stop(0)


def test_an_out_of_order_batch_is_refused_with_the_seq_to_send_and_nothing_is_lost(assembled):
    srv, asm, raw = assembled
    raw.register("r", "x")
    parts = [batch(SPACES, "r", "x", seq, 0, 40, first_step=8 * (seq - 1), ends=8) for seq in range(1, 6)]
    assert raw.push(parts[0]).accepted == 8
    code, err = raw.refused(parts[2])  # seq 3 before seq 2
    assert code == grpc.StatusCode.OUT_OF_RANGE and "takes 2 next" in err.details()
    assert dict(err.trailing_metadata())[EXPECTED_SEQ] == "2"
    for part in parts[1:]:
        ack = raw.push(part)
        assert ack.accepted == 8 and not ack.duplicate
    assert raw.push(parts[4]).duplicate  # a resend of what it holds is acked, once
    episodes = asm.take()
    assert [len(e.steps) for e in episodes] == [40] and asm.lost_steps == 0
    assert srv.actor_stats()["r"].out_of_order == 1 and srv.refusals()["out_of_order"] == 1


def test_an_actor_renumbers_its_queue_when_the_learner_expects_another_seq(assembled):
    srv, asm, _ = assembled
    actor = ActorClient(config(), SPACES, TOKEN, target=f"127.0.0.1:{srv.port}", actor_id="robot").start()
    try:
        assert actor.wait_connected(30)
        feed(actor, 0, 2, 10)
        assert actor.flush(30)
        actor.outbox.renumber(50)  # the actor's numbering went astray (a bug, a lost ack ...)
        feed(actor, 2, 2, 10)
        assert actor.flush(30), actor.last_error
    finally:
        actor.close()
    assert [len(e.steps) for e in asm.take()] == [10] * 4 and asm.lost_steps == 0
    assert srv.actor_stats()["robot"].out_of_order >= 1 and actor.outbox.rejected_steps == 0


def mutations():
    """(name, change to a valid 4-step batch message, the words the refusal must hold)."""
    def data(key, values):
        return lambda m: setattr(m.obs[key], "data", np.asarray(values, np.float32).tobytes())

    def action(value):
        def change(m):
            a = np.frombuffer(m.action.data, np.float32).copy()
            a[5] = value
            m.action.data = a.tobytes()
        return change

    def column(name, value):
        return lambda m: getattr(m, name).__setitem__(1, value)

    def shape(dims, key="state"):
        def change(m):
            del m.obs[key].shape[:]
            m.obs[key].shape.extend(dims)
            m.obs[key].data = b""
        return change

    return [
        ("nan obs", data("state", np.full((4, 11), np.nan)), "NaN"),
        ("inf obs", data("state", np.full((4, 11), np.inf)), "NaN or infinite"),
        ("nan reward", column("reward", float("nan")), "'reward' holds NaN"),
        ("-inf reward", column("reward", float("-inf")), "'reward' holds NaN"),
        ("huge reward", column("reward", 1e30), "'reward' holds values beyond"),
        ("huge penalty", column("grasp_penalty", -1e300), "'grasp_penalty' holds values beyond"),
        ("huge action", action(1e30), "outside the action space"),
        ("slightly out action", action(1.01), "outside the action space"),
        ("nan action", action(np.nan), "NaN"),
        ("inf action", action(-np.inf), "NaN"),
        ("0 x 2^62 dims", shape([0, 2**62]), "larger than any message"),
        ("2^40 x 2^40 dims", shape([2**40, 2**40]), "larger than any message"),
        ("negative dim", shape([4, -11]), "invalid shape"),
        ("too many dims", shape([1] * 40), "invalid shape"),
        ("empty data", shape([4, 11]), "bytes do not fill"),
        ("short data", lambda m: setattr(m.obs["front"], "data", m.obs["front"].data[:-1]), "bytes do not fill"),
        ("wrong dtype", lambda m: setattr(m.obs["state"], "dtype", "float64"), "bytes do not fill"),
        ("unknown dtype", lambda m: setattr(m.action, "dtype", "object"), "unknown dtype"),
        ("missing column", lambda m: m.ClearField("reward"), "column 'reward'"),
        ("stray key", lambda m: m.obs["extra"].CopyFrom(m.obs["state"]), "obs keys differ"),
        ("stray next_obs", lambda m: m.next_obs.add(index=1), "not a distinct episode end"),
    ]


def test_bad_batches_are_refused_as_invalid_argument_counted_and_the_learner_keeps_serving(assembled):
    srv, asm, raw = assembled
    raw.register("r", "x")
    cases = mutations()
    for i, (name, change, words) in enumerate(cases):
        msg = batch(SPACES, "r", "x", 1, 0, 4, seed=i)
        change(msg)
        code, err = raw.refused(msg)  # seq 1 every time: nothing refused was stored
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (name, code, err.details())
        assert words in err.details(), (name, err.details())
    assert raw.push(batch(SPACES, "r", "x", 1, 0, 4)).accepted == 4
    assert srv.actor_stats()["r"].rejected == len(cases) and srv.actor_stats()["r"].steps == 4
    refused = srv.refusals()
    assert refused["non_finite"] == 6 and refused["out_of_space"] == 4
    assert sum(refused.values()) == len(cases) and [len(e.steps) for e in asm.take()] == [4]


def test_fast_alternating_good_and_bad_batches_store_every_good_one(assembled):
    srv, asm, raw = assembled
    raw.register("r", "x")
    for seq in range(1, 41):
        bad = batch(SPACES, "r", "x", seq, seq, 3)
        bad.reward[0] = float("nan") if seq % 2 else 1e30
        assert raw.refused(bad)[0] == grpc.StatusCode.INVALID_ARGUMENT
        assert raw.push(batch(SPACES, "r", "x", seq, seq, 3)).accepted == 3
    assert len(asm.take()) == 40 and srv.actor_stats()["r"].rejected == 40


@pytest.mark.parametrize("actor_id", ["robot\n", "robot\r\n", "", "-robot", "a" * 129, "ro bot", "röbot", "a/b"])
def test_bad_actor_ids_are_refused(assembled, actor_id):
    srv, _, raw = assembled
    with pytest.raises(grpc.RpcError) as err:
        raw.register(actor_id, "x")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert srv.actor_stats() == {} and srv.refusals() == {"bad_actor_id": 1}


def test_bad_incarnations_and_spaces_are_refused_not_crashed_on(assembled):
    srv, _, raw = assembled
    for incarnation in ("", "x\n", "x" * 65):
        with pytest.raises(grpc.RpcError) as err:
            raw.register("r", incarnation)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    spaces = encode_spaces(SPACES)
    del spaces.action.shape[:]
    spaces.action.shape.extend([0, 2**62])
    with pytest.raises(grpc.RpcError) as err:
        raw.register("r", "x", spaces)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "larger than any message" in err.value.details()
    assert srv.refusals() == {"bad_actor_id": 3, "bad_spaces": 1}


def test_an_episode_that_never_ends_is_capped_and_the_actor_goes_on(assembled):
    srv, asm, _ = assembled  # at most 40 open steps per actor
    actor = ActorClient(config(), SPACES, TOKEN, target=f"127.0.0.1:{srv.port}", actor_id="robot").start()
    try:
        assert actor.wait_connected(30)
        feed(actor, 0, 1, 60)  # 60 steps, batches of 8: the 6th batch would hold the 41st-48th step
        assert actor.flush(30) and asm.open_steps() == 40
        feed(actor, 1, 1, 10)
        assert actor.flush(30)
    finally:
        actor.close()
    assert actor.outbox.rejected_steps == 20 and actor.outbox.dropped_steps == 0
    assert [len(e.steps) for e in asm.take()] == [10]  # the next episode, whole
    assert asm.lost_steps == 40 and asm.open_steps() == 0  # the capped one, counted as lost
    assert srv.refusals() == {"episode_too_long": 3}


def test_alternating_incarnations_keep_memory_bounded_and_finished_episodes(assembled):
    srv, asm, raw = assembled
    for round_ in range(20):
        incarnation = f"inc{round_ % 2}"
        ack = raw.register("r", incarnation)
        seq = ack.acked_seq + 1
        raw.push(batch(SPACES, "r", incarnation, seq, round_, 10, ends=10))  # a whole episode
        raw.push(batch(SPACES, "r", incarnation, seq + 1, 100 + round_, 30, ends=20))  # half of the next
        assert asm.open_steps() <= 40
    assert len(asm.take()) == 20  # every finished episode is kept
    assert asm.open_steps() == 20 and asm.lost_steps == 19 * 20  # each switch dropped the other's open part
    assert srv.actor_stats()["r"].registrations == 20


def test_a_sink_failure_is_unavailable_and_the_batch_comes_again():
    class Flaky(Recorder):
        fail = 2

        def receive(self, actor_id, incarnation, seq, steps):
            if self.fail:
                self.fail -= 1
                raise OSError("disk full")
            super().receive(actor_id, incarnation, seq, steps)

    srv = LearnerServer(config(), SPACES, Flaky(), TOKEN)
    srv.start(host="127.0.0.1")
    actor = ActorClient(config(), SPACES, TOKEN, target=f"127.0.0.1:{srv.port}", actor_id="robot").start()
    try:
        feed(actor, 0, 1, 8)
        assert actor.flush(30)
    finally:
        actor.close()
        srv.stop(0)
    assert srv.sink.got("robot") == [(0, t) for t in range(8)] and srv.refusals() == {"store_failed": 2}


def feed(client, first_episode, episodes, length, seed=0):
    rng = np.random.default_rng(seed)
    for e in range(first_episode, first_episode + episodes):
        for step in syn.episode(SPACES, e, length, rng):
            client.submit(step)


def test_weight_streams_give_their_place_back_however_they_end():
    srv = LearnerServer(config(max_actors=1), SPACES, Recorder(), TOKEN)  # 2 weight streams at once
    srv.start(host="127.0.0.1")
    raw = Raw(srv.port)
    try:
        raw.register("robot", "i1")
        srv.publish_weights(syn.policy_weights(np.random.default_rng(0)))
        # More streams than places, one after the other: cancelled, or timed out. Each must
        # give its place back (waited for generously: a loaded machine notices a cancel late).
        for _ in range(10):
            call = raw.stub.StreamWeights(pb.WeightsRequest(actor_id="robot", secret=raw.secrets["robot"]),
                                        metadata=raw.md, timeout=30)
            assert next(call).version == 1
            call.cancel()
            assert eventually(lambda: not srv.actor_stats()["robot"].streaming, 30)
        for _ in range(3):
            with pytest.raises(grpc.RpcError) as err:
                for _ in raw.stub.StreamWeights(pb.WeightsRequest(actor_id="robot", have_version=1,
                                                                 secret=raw.secrets["robot"]),
                                                metadata=raw.md, timeout=0.3):
                    pass
            assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED  # admitted, then timed out
            assert eventually(lambda: not srv.actor_stats()["robot"].streaming, 30)
    finally:
        raw.close()
        srv.stop(0)
    assert "busy" not in srv.refusals()
