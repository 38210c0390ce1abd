"""The learner's end of the learning plane: a gRPC server that takes experience in and
streams weights out.

:class:`LearnerServer` owns the gRPC server, the token check, the registered actors and
their statistics. What happens to the experience is not its business: each accepted
batch goes to a :class:`TransitionSink` (the learner process, or a test's recorder),
and the training loop calls :meth:`LearnerServer.publish_weights` whenever it has new
policy weights.

Contract with the sink:
* ``receive`` is called from gRPC worker threads: concurrently for different actors, in
  order and one at a time for one actor incarnation. It must be thread-safe.
* It is called once per batch; a resent batch whose seq the server already holds (also
  across a learner restart, through ``acked`` given at start) is acknowledged without
  calling it again.
* Raising :class:`PayloadError` refuses that batch with INVALID_ARGUMENT; the actor and
  everyone else keep going.
* When it returns, the batch counts as held: the actor drops it from its queue.

A learner that restarts passes ``acked`` (highest seq it holds per actor incarnation)
and ``weight_version`` (the last version it published), so resent batches are
recognised and weight versions keep increasing across restarts.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from concurrent import futures
from dataclasses import asdict, dataclass, field
from typing import Iterator, Mapping, Protocol

import grpc
import numpy as np

from robot_rl.config.learning import LearningConfig
from robot_rl.data.transition import Step
from robot_rl.learning import security
from robot_rl.learning.codec import ActorReport, decode_batch, decode_spaces, encode_weights
from robot_rl.learning.errors import LearningError, PayloadError
from robot_rl.learning.proto import learning_pb2 as pb
from robot_rl.learning.proto import learning_pb2_grpc as pb_grpc
from robot_rl.learning.spaces import EnvSpaces
from robot_rl.learning.weights import WeightBoard

log = logging.getLogger(__name__)

ACTOR_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class TransitionSink(Protocol):
    def receive(self, actor_id: str, incarnation: str, seq: int, steps: list[Step]) -> None:
        """Take one batch of Steps (non-last Steps have ``next_obs == {}``)."""


@dataclass
class ActorStats:
    """What the learner knows about one actor (by actor id)."""

    actor_id: str
    incarnation: str = ""
    registrations: int = 0
    last_seen_unix: float = 0.0
    batches: int = 0
    steps: int = 0
    intervention_steps: int = 0
    episodes: int = 0
    successes: int = 0
    duplicates: int = 0
    rejected: int = 0
    weights_sent: int = 0
    weight_version_sent: int = 0
    streaming: bool = False
    report: ActorReport = field(default_factory=ActorReport)

    def as_dict(self) -> dict:
        return asdict(self)


class LearnerServer:
    """Serves Register, PushTransitions and StreamWeights for any number of actors."""

    def __init__(self, cfg: LearningConfig, spaces: EnvSpaces, sink: TransitionSink, token: str, *,
                 acked: Mapping[tuple[str, str], int] | None = None, weight_version: int = 0) -> None:
        self.cfg = cfg
        self.spaces = spaces
        self.sink = sink
        self.learner_id = uuid.uuid4().hex[:12]
        self._token = token
        self._board: WeightBoard[pb.Weights] = WeightBoard(weight_version)
        self._lock = threading.Lock()
        self._acked: dict[tuple[str, str], int] = dict(acked or {})
        self._actor_locks: dict[tuple[str, str], threading.Lock] = {}
        self._registered: dict[str, str] = {}  # actor id -> current incarnation
        self._stats: dict[str, ActorStats] = {}
        self._server: grpc.Server | None = None
        self.port: int | None = None
        self.received_steps = 0

    # -- lifecycle ------------------------------------------------------------------------
    def start(self, host: str | None = None, port: int | None = None) -> int:
        """Bind and serve; returns the port (useful with port 0)."""
        host = self.cfg.host if host is None else host
        port = self.cfg.port if port is None else port
        if not self.cfg.tls.enabled and not _loopback(host) and not self.cfg.insecure_remote:
            raise LearningError(f"refusing to listen on {host}:{port} without TLS: the token would cross "
                                "the network in clear text (enable learning.tls, or set "
                                "learning.insecure_remote: true on a trusted network)")
        workers = 2 * self.cfg.max_actors + 4  # one weight stream + one push per actor, and spare
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="learner-rpc"),
                             interceptors=[security.TokenInterceptor(self._token)],
                             options=security.server_options(self.cfg), maximum_concurrent_rpcs=workers)
        pb_grpc.add_LearnerServicer_to_server(_Service(self), server)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            if self.cfg.tls.enabled:
                bound = server.add_secure_port(address, security.server_credentials(self.cfg))
            else:
                bound = server.add_insecure_port(address)
        except RuntimeError as err:
            raise LearningError(f"learner cannot listen on {address}: {err} (is another learner running?)") from None
        if not bound:
            raise LearningError(f"learner cannot listen on {address} (port in use?)")
        server.start()
        self._server, self.port = server, bound
        log.info("learner %s listening on %s:%d (%s)", self.learner_id, host, bound,
                 "TLS" if self.cfg.tls.enabled else "no TLS")
        return bound

    def stop(self, grace: float | None = 1.0) -> None:
        self._board.close()
        if self._server is not None:
            self._server.stop(grace).wait()
            self._server = None

    # -- training loop side ---------------------------------------------------------------
    def publish_weights(self, tensors: Mapping[str, np.ndarray], learner_updates: int = 0) -> int:
        """Make ``tensors`` the newest weight version for every actor; returns its number."""
        with self._lock:
            version = self._board.version + 1
            msg = encode_weights(tensors, version=version, learner_updates=learner_updates)
            self._board.publish(version, msg)
        return version

    @property
    def weight_version(self) -> int:
        return self._board.version

    def actor_stats(self) -> dict[str, ActorStats]:
        with self._lock:
            return {k: ActorStats(**{**v.as_dict(), "report": ActorReport(**asdict(v.report))})
                    for k, v in self._stats.items()}

    def acked(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._acked)

    # -- handlers (called by _Service) ----------------------------------------------------
    def _register(self, request: pb.RegisterRequest, context: grpc.ServicerContext) -> pb.RegisterReply:
        actor_id = request.actor_id
        if not ACTOR_ID.match(actor_id) or not request.incarnation:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"actor id {actor_id!r} must be 1-128 of [A-Za-z0-9._-], with an incarnation")
        try:
            spaces = decode_spaces(request.spaces)
        except PayloadError as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"actor '{actor_id}': bad spaces: {err}")
        diff = self.spaces.mismatch(spaces)
        if diff:
            log.warning("refused actor %s: %s", actor_id, diff)
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"actor '{actor_id}' refused: its spaces differ from the learner's: {diff}")
        with self._lock:
            if actor_id not in self._stats and len(self._stats) >= self.cfg.max_actors:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                              f"learner already serves {self.cfg.max_actors} actors (learning.max_actors)")
            stats = self._stats.setdefault(actor_id, ActorStats(actor_id))
            stats.incarnation = request.incarnation
            stats.registrations += 1
            stats.last_seen_unix = time.time()
            self._registered[actor_id] = request.incarnation
            key = (actor_id, request.incarnation)
            self._actor_locks.setdefault(key, threading.Lock())
            acked = self._acked.get(key, 0)
        log.info("actor %s registered (incarnation %s, acked seq %d)", actor_id, request.incarnation, acked)
        return pb.RegisterReply(learner_id=self.learner_id, weight_version=self._board.version, acked_seq=acked)

    def _push(self, request: pb.TransitionBatch, context: grpc.ServicerContext) -> pb.BatchAck:
        actor_id, incarnation, seq = request.actor_id, request.incarnation, int(request.seq)
        key = (actor_id, incarnation)
        with self._lock:
            registered = self._registered.get(actor_id) == incarnation
            actor_lock = self._actor_locks.get(key)
        if not registered or actor_lock is None:
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f"actor '{actor_id}' is not registered with learner {self.learner_id}; register first")
        with actor_lock:
            with self._lock:
                stats = self._stats[actor_id]
                stats.last_seen_unix = time.time()
                if seq <= self._acked.get(key, 0):
                    stats.duplicates += 1
                    return pb.BatchAck(seq=seq, accepted=0, duplicate=True)
            try:
                batch = decode_batch(request, self.spaces)
                self.sink.receive(actor_id, incarnation, seq, batch.steps)
            except PayloadError as err:
                with self._lock:
                    stats.rejected += 1
                log.warning("refused a batch from actor %s: %s", actor_id, err)
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"batch {seq} from actor '{actor_id}': {err}")
            except Exception as err:  # the sink failed (disk full, ...): the actor retries later
                log.exception("could not store batch %d of actor %s", seq, actor_id)
                context.abort(grpc.StatusCode.INTERNAL, f"learner could not store batch {seq}: {err}")
            steps = batch.steps
            with self._lock:
                self._acked[key] = seq
                self.received_steps += len(steps)
                stats.batches += 1
                stats.steps += len(steps)
                stats.intervention_steps += sum(1 for s in steps if s.intervened)
                stats.episodes += sum(1 for s in steps if s.last)
                stats.successes += sum(1 for s in steps if s.last and s.success)
                stats.report = batch.report
        return pb.BatchAck(seq=seq, accepted=len(steps), duplicate=False)

    def _stream(self, request: pb.WeightsRequest, context: grpc.ServicerContext) -> Iterator[pb.Weights]:
        actor_id = request.actor_id
        with self._lock:
            stats = self._stats.get(actor_id)
            if actor_id not in self._registered or stats is None:
                stats = None
        if stats is None:
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f"actor '{actor_id}' is not registered with learner {self.learner_id}; register first")
        have = int(request.have_version)
        stats.streaming = True
        try:
            while context.is_active():
                got = self._board.wait_newer(have, timeout=0.5)
                if got is None:
                    if self._server is None:
                        return
                    continue
                have, msg = got
                yield msg
                with self._lock:
                    stats.weights_sent += 1
                    stats.weight_version_sent = have
        finally:
            stats.streaming = False


class _Service(pb_grpc.LearnerServicer):
    def __init__(self, server: LearnerServer) -> None:
        self._server = server

    def Register(self, request, context):  # noqa: N802 (gRPC method names)
        return self._server._register(request, context)

    def PushTransitions(self, request, context):  # noqa: N802
        return self._server._push(request, context)

    def StreamWeights(self, request, context):  # noqa: N802
        yield from self._server._stream(request, context)


def _loopback(host: str) -> bool:
    return LearningConfig(host=host).is_loopback()
