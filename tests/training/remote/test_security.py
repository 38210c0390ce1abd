"""Token, TLS, bad payloads, space mismatches and limits on the learning plane."""

import logging
import re
import shutil
import subprocess
import threading

import grpc
import numpy as np
import pytest
from polling import eventually

from robot_rl.config.learning import LearningConfig, TlsConfig
from robot_rl.errors import ConfigError
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.codec import encode_batch, encode_spaces
from robot_rl.training.remote.errors import LearningError, SpacesMismatch
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.proto import learning_pb2_grpc as pb_grpc
from robot_rl.training.remote.refusals import Refusals
from robot_rl.training.remote.security import auth_metadata
from robot_rl.training.remote.server import LearnerServer

TOKEN = "s3cret-token-for-tests"
SPACES = syn.make_spaces(cameras=("front",), image_size=16)


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.steps = 0

    def receive(self, actor_id, incarnation, seq, steps):
        with self.lock:
            self.steps += len(steps)


def cfg(**kw):
    return LearningConfig(**{"port": 0, "batch_steps": 4, "batch_max_age_s": 0.1, "reconnect_min_s": 0.05,
                             "reconnect_max_s": 0.2, **kw})


@pytest.fixture
def server():
    srv = LearnerServer(cfg(), SPACES, Counter(), TOKEN)
    srv.start()
    yield srv
    srv.stop(0)


def wait_fatal(client, timeout=30.0):
    """The client's fatal error, waited for: a loaded machine may take seconds to reach it; None if it never comes."""
    caught: list[LearningError] = []

    def fatal() -> bool:
        try:
            client.check()
        except LearningError as err:
            caught.append(err)
            return True
        return False

    eventually(fatal, timeout)
    return caught[0] if caught else None


def test_wrong_token_is_refused_with_one_clear_line(server):
    client = ActorClient(cfg(), SPACES, "not-the-token", target=f"127.0.0.1:{server.port}", actor_id="a").start()
    try:
        err = wait_fatal(client)
    finally:
        client.close()
    assert err is not None, "an actor with a wrong token was not refused"
    text = str(err)
    assert "\n" not in text and "UNAUTHENTICATED" in text and "wrong token" in text
    assert f"127.0.0.1:{server.port}" in text and "'a'" in text
    assert server.actor_stats() == {}  # it never got as far as registering


def test_missing_token_is_refused_on_every_method(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.LearnerStub(channel)
        calls = [
            lambda md: stub.Register(pb.RegisterRequest(actor_id="a", incarnation="i",
                                                        spaces=encode_spaces(SPACES)), metadata=md),
            lambda md: stub.PushTransitions(pb.TransitionBatch(actor_id="a"), metadata=md),
            lambda md: next(iter(stub.StreamWeights(pb.WeightsRequest(actor_id="a"), metadata=md))),
        ]
        for call in calls:
            for md, words in ((None, "missing token"), ((("authorization", "Bearer nope"),), "wrong token")):
                with pytest.raises(grpc.RpcError) as err:
                    call(md)
                assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
                assert words in err.value.details()


def test_malformed_payload_is_refused_and_the_other_actor_keeps_streaming(server):
    good = ActorClient(cfg(), SPACES, TOKEN, target=f"127.0.0.1:{server.port}", actor_id="good").start()
    rng = np.random.default_rng(0)
    try:
        assert good.wait_connected(5)
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = pb_grpc.LearnerStub(channel)
            md = auth_metadata(TOKEN)
            secret = stub.Register(pb.RegisterRequest(actor_id="evil", incarnation="i",
                                                      spaces=encode_spaces(SPACES)), metadata=md, timeout=5).secret
            steps = list(syn.episode(SPACES, 0, 4, rng))
            bad_bytes = encode_batch(steps, SPACES, actor_id="evil", incarnation="i", seq=1)
            bad_bytes.obs["front"].data = bad_bytes.obs["front"].data[:100]
            # a refused batch is not stored, so the learner still takes seq 1 next
            bad_dtype = encode_batch(steps, SPACES, actor_id="evil", incarnation="i", seq=1)
            bad_dtype.action.dtype = "float128"
            bad_nan = encode_batch(steps, SPACES, actor_id="evil", incarnation="i", seq=1)
            bad_nan.obs["state"].data = np.full((4, 11), np.nan, np.float32).tobytes()
            for i, msg in enumerate((bad_bytes, bad_dtype, bad_nan)):
                msg.secret = secret  # the caller holds "evil": its batches are refused for what they hold
                for step in syn.episode(SPACES, i, 6, rng):  # the good actor streams meanwhile
                    good.submit(step)
                with pytest.raises(grpc.RpcError) as err:
                    stub.PushTransitions(msg, metadata=md, timeout=5)
                assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert ["bytes do not fill", "unknown dtype 'float128'", "NaN"][i] in err.value.details()
        for step in syn.episode(SPACES, 3, 6, rng):
            good.submit(step)
        assert good.flush(10)
        good.check()
    finally:
        good.close()
    assert server.sink.steps == 24
    stats = server.actor_stats()
    assert stats["evil"].rejected == 3 and stats["evil"].steps == 0
    assert stats["good"].steps == 24 and stats["good"].rejected == 0


def test_actor_with_other_spaces_is_refused_naming_the_key(server):
    other = syn.make_spaces(cameras=("front",), image_size=24)
    client = ActorClient(cfg(), other, TOKEN, target=f"127.0.0.1:{server.port}", actor_id="a").start()
    try:
        err = wait_fatal(client)
    finally:
        client.close()
    assert isinstance(err, SpacesMismatch)
    assert "observation key 'front'" in str(err) and "shape (24, 24, 3) vs (16, 16, 3)" in str(err)
    assert "FAILED_PRECONDITION" in str(err)


def test_oversized_batches_are_refused_at_both_ends(server):
    big = syn.make_spaces(cameras=("front",), image_size=16)
    # The batch must go out full: 2,000 steps of 16x16 images are over 1 MiB. With the fixture's
    # 0.1 s batch age, a submitter slowed by a loaded machine sent partial batches under the
    # limit and the refusal never came; an age of an hour leaves only the count to send it.
    client = ActorClient(cfg(max_message_mb=1, batch_steps=2000, batch_max_age_s=3600.0), big, TOKEN,
                         target=f"127.0.0.1:{server.port}", actor_id="a").start()
    try:
        for step in syn.episode(big, 0, 2000, np.random.default_rng(0)):
            client.submit(step)
        err = wait_fatal(client)
    finally:
        client.close()
    assert err is not None and "lower learning.batch_steps" in str(err)
    small = LearnerServer(cfg(max_message_mb=1), SPACES, Counter(), TOKEN)
    small.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{small.port}",
                                   options=[("grpc.max_send_message_length", 8 << 20)]) as channel:
            stub = pb_grpc.LearnerStub(channel)
            md = auth_metadata(TOKEN)
            stub.Register(pb.RegisterRequest(actor_id="a", incarnation="i", spaces=encode_spaces(SPACES)),
                          metadata=md, timeout=5)
            steps = list(syn.episode(SPACES, 0, 2000, np.random.default_rng(0)))
            with pytest.raises(grpc.RpcError) as err:
                stub.PushTransitions(encode_batch(steps, SPACES, actor_id="a", incarnation="i", seq=1), metadata=md,
                                     timeout=5)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        small.stop(0)


def test_learner_will_not_listen_beyond_loopback_without_tls():
    srv = LearnerServer(cfg(host="0.0.0.0"), SPACES, Counter(), TOKEN)
    with pytest.raises(LearningError, match="without TLS"):
        srv.start()


def test_second_learner_on_the_same_port_fails_clearly(server):
    other = LearnerServer(cfg(), SPACES, Counter(), TOKEN)
    with pytest.raises(LearningError, match="cannot listen"):
        other.start(port=server.port)


def test_token_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("ROBOT_RL_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="ROBOT_RL_TOKEN"):
        LearningConfig().resolve_token()
    monkeypatch.setenv("ROBOT_RL_TOKEN", " from-env \n")
    assert LearningConfig().resolve_token() == "from-env"
    path = tmp_path / "token"
    path.write_text("from-file\n")
    assert LearningConfig(token_file=str(path)).resolve_token() == "from-file"
    assert LearningConfig(token="inline", token_file=str(path)).resolve_token() == "inline"
    with pytest.raises(ConfigError, match="token_file"):
        LearningConfig(token_file=str(tmp_path / "absent")).resolve_token()


# ----------------------------------------------------------------------------- TLS

def self_signed(directory, name):
    key, cert = directory / f"{name}.key", directory / f"{name}.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=robot-rl-learner",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return str(cert), str(key)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_tls_with_a_self_signed_certificate(tmp_path):
    cert, key = self_signed(tmp_path, "learner")
    other_cert, _ = self_signed(tmp_path, "stranger")
    sink = Counter()
    srv = LearnerServer(cfg(tls=TlsConfig(enabled=True, cert=cert, key=key)), SPACES, sink, TOKEN)
    srv.start()
    target = f"127.0.0.1:{srv.port}"
    trusted = ActorClient(cfg(tls=TlsConfig(enabled=True, ca=cert)), SPACES, TOKEN, target=target, actor_id="tls")
    plain = ActorClient(cfg(), SPACES, TOKEN, target=target, actor_id="plain")
    wrong_ca = ActorClient(cfg(tls=TlsConfig(enabled=True, ca=other_cert)), SPACES, TOKEN, target=target,
                           actor_id="wrong-ca")
    try:
        for client in (trusted, plain, wrong_ca):
            client.start()
        for step in syn.episode(SPACES, 0, 10, np.random.default_rng(0)):
            trusted.submit(step)
            plain.submit(step)
        assert trusted.flush(10)
        srv.publish_weights({"w": np.ones(3, np.float32)})
        assert eventually(lambda: trusted.weights.version >= 1, 30)
        assert trusted.weights.version == 1
        # Waited for, not slept: on a loaded machine the refused handshakes take longer.
        assert eventually(lambda: plain.last_error and wrong_ca.last_error, 30)
        assert not plain.connected and not wrong_ca.connected
        assert plain.last_error.startswith("UNAVAILABLE") and wrong_ca.last_error.startswith("UNAVAILABLE")
        assert "CERTIFICATE_VERIFY_FAILED" in wrong_ca.last_error
    finally:
        for client in (trusted, plain, wrong_ca):
            client.close()
        srv.stop(0)
    assert sink.steps == 10
    assert set(srv.actor_stats()) == {"tls"}


def _refusal_lines(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name == "robot_rl.training.remote.refusals" and r.levelno == logging.WARNING]


def test_a_wrong_token_call_is_logged_once_with_the_peer_and_the_reason(server, caplog):
    caplog.set_level(logging.WARNING, logger="robot_rl.training.remote.refusals")
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.LearnerStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            stub.Register(pb.RegisterRequest(actor_id="a", incarnation="i"), timeout=30,
                          metadata=(("authorization", "Bearer nope"),))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    lines = _refusal_lines(caplog)
    assert len(lines) == 1, lines
    assert "127.0.0.1" in lines[0] and "unauthenticated" in lines[0] and "wrong token" in lines[0], lines


def test_a_flood_of_refusals_logs_a_bounded_number_of_lines_whose_counts_add_up(caplog):
    caplog.set_level(logging.WARNING, logger="robot_rl.training.remote.refusals")
    now = [0.0]
    refusals = Refusals(log_every_s=10.0, clock=lambda: now[0])
    for i in range(100):
        now[0] = i * 0.5  # 50 s of refusals from one peer
        refusals.count("unauthenticated", "wrong token", "ipv4:10.0.0.7:%d" % (40000 + i))
    refusals.flush()
    lines = _refusal_lines(caplog)
    assert 2 <= len(lines) <= 7, lines  # the first, about one per 10 s, the rest at flush
    assert all("10.0.0.7" in ln and "unauthenticated" in ln for ln in lines), lines
    counts = [1] + [int(re.search(r"refused (\d+) more", ln).group(1)) for ln in lines[1:]]
    assert sum(counts) == 100 == refusals.snapshot()["unauthenticated"], lines
    # A second peer and a second cause each get their own first line.
    refusals.count("unauthenticated", "wrong token", "ipv6:[::1]:5000")
    refusals.count("bad_spaces", "bad spaces", "ipv4:10.0.0.7:1")
    new = _refusal_lines(caplog)[len(lines):]
    assert len(new) == 2 and "::1" in new[0] and "bad_spaces" in new[1], new
