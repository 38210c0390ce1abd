"""What a client holding the shared token can try against a learner, as reusable attackers.

The learning plane's own tests and ``bench/learner_attacks.py`` run these against a real
:class:`~robot_rl.training.remote.server.LearnerServer` over loopback, next to a
legitimate :class:`~robot_rl.training.remote.client.ActorClient`, and measure what the
legitimate actor still gets:

* :class:`StalledCalls` opens calls with the token that send their headers and never a
  body (the request iterator yields nothing), each on a connection of its own, and
  opens a new one whenever the learner ends one: the "header flood" that once left
  every actor at 0 steps/s.
* :func:`try_takeover` registers another actor's id with a new incarnation and, if the
  learner lets it, pushes a finished episode under that name.
* :func:`paced_rate` streams whole synthetic episodes through an actor at a fixed
  rate and returns the steps/s the learner acknowledged: a paced actor (as a robot at
  its control rate) shows starvation, not the CPU the attack costs.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import grpc
import numpy as np

from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.codec import encode_batch, encode_spaces
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.proto import learning_pb2_grpc as pb_grpc
from robot_rl.training.remote.security import auth_metadata
from robot_rl.training.remote.spaces import EnvSpaces

SERVICE = "/robot_rl.learning.v1.Learner/"
REGISTER, PUSH, WEIGHTS = SERVICE + "Register", SERVICE + "PushTransitions", SERVICE + "StreamWeights"
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)


class StalledCalls:
    """``count`` calls with the token that send headers and never a body, held open until :meth:`stop`.

    Call ``i`` goes over connection ``i % connections`` (each a channel with a
    connection of its own). When the learner ends a call, a new one takes its place
    after ``pause`` s. ``codes`` counts how the learner ended them.
    """

    def __init__(self, target: str, token: str, *, count: int = 60, connections: int | None = None,
                 method: str = REGISTER, timeout: float | None = 60.0, pause: float = 0.05) -> None:
        n = count if connections is None else max(1, connections)
        self.channels = [grpc.insecure_channel(target, options=OWN_CONNECTION) for _ in range(n)]
        self.count, self.method, self.timeout, self.pause = count, method, timeout, pause
        self.metadata = auth_metadata(token)
        self.opened = 0
        self.codes: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stalled-calls", daemon=True)

    def start(self) -> "StalledCalls":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(30.0)
        for channel in self.channels:
            channel.close()

    def __enter__(self) -> "StalledCalls":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _open(self, i: int) -> tuple[Any, threading.Event]:
        done = threading.Event()

        def never_sends():  # headers go out; no message ever does
            done.wait(600.0)
            return
            yield

        channel = self.channels[i % len(self.channels)]
        kwargs: dict[str, Any] = dict(request_serializer=lambda m: m, response_deserializer=lambda b: b)
        if self.method == WEIGHTS:
            call = channel.stream_stream(self.method, **kwargs)(never_sends(), metadata=self.metadata,
                                                                timeout=self.timeout)
        else:
            call = channel.stream_unary(self.method, **kwargs).future(never_sends(), metadata=self.metadata,
                                                                      timeout=self.timeout)
        call.add_done_callback(lambda c: (done.set(), self._record(c)))
        self.opened += 1
        return call, done

    def _record(self, call: Any) -> None:
        name = call.code().name
        with self._lock:
            self.codes[name] = self.codes.get(name, 0) + 1

    def _run(self) -> None:
        slots = [self._open(i) for i in range(self.count)]
        while not self._stopped.wait(self.pause):
            for i, (call, _) in enumerate(slots):
                if call.done():
                    slots[i] = self._open(i)
        for call, done in slots:
            call.cancel()
            done.set()


def try_takeover(target: str, token: str, spaces: EnvSpaces, actor_id: str, *, episode_id: int = 10**9,
                 length: int = 4, secret: bytes = b"") -> tuple[str, str]:
    """Register ``actor_id`` with a new incarnation and push one finished episode under it.

    Returns (status name of the first refused call, or "OK" when both went through; its details).
    """
    channel = grpc.insecure_channel(target, options=OWN_CONNECTION)
    stub = pb_grpc.LearnerStub(channel)
    md = auth_metadata(token)
    incarnation = uuid.uuid4().hex[:12]
    try:
        reply = stub.Register(pb.RegisterRequest(actor_id=actor_id, incarnation=incarnation,
                                                 spaces=encode_spaces(spaces), secret=secret),
                              metadata=md, timeout=10.0)
        steps = list(syn.episode(spaces, episode_id, length, np.random.default_rng(episode_id)))
        msg = encode_batch(steps, spaces, actor_id=actor_id, incarnation=incarnation, seq=reply.acked_seq + 1)
        msg.secret = reply.secret
        stub.PushTransitions(msg, metadata=md, timeout=10.0)
        return "OK", ""
    except grpc.RpcError as err:
        return err.code().name, err.details() or ""
    finally:
        channel.close()


def paced_rate(client: ActorClient, spaces: EnvSpaces, seconds: float, hz: float, first_episode: int,
               length: int = 20, seed: int = 0) -> tuple[float, int, int]:
    """Submit whole episodes at ``hz`` steps/s for about ``seconds``.

    Returns (steps/s the learner acknowledged meanwhile, steps submitted, next episode id).
    """
    rng = np.random.default_rng(seed + first_episode)
    acked_before, t0 = client.outbox.acked_steps, time.monotonic()
    submitted, episode, next_tick = 0, first_episode, t0
    while time.monotonic() - t0 < seconds:
        for step in syn.episode(spaces, episode, length, rng):
            client.submit(step)
            submitted += 1
            next_tick += 1.0 / hz
            time.sleep(max(0.0, next_tick - time.monotonic()))
        episode += 1
    elapsed = time.monotonic() - t0
    return (client.outbox.acked_steps - acked_before) / elapsed, submitted, episode
