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
* It is called once per batch, in seq order without gaps; a resent batch whose seq the
  server already holds (also across a learner restart, through ``acked`` given at
  start) is acknowledged without calling it again.
* Raising :class:`PayloadError` refuses that batch with INVALID_ARGUMENT; the actor and
  everyone else keep going. The sink must then hold nothing of that batch.
* When it returns, the batch counts as held: the actor drops it from its queue.
* An optional ``forget(actor_id, incarnation)`` is called when an actor incarnation can
  send no more (a new incarnation of the actor registered, or its registration expired
  and its slot went to another actor): the sink drops what it holds open for it.

A batch is either stored or refused, with a status that says what the actor should do:

==================== ==========================================================
status               meaning, and what :class:`~robot_rl.training.remote.client.ActorClient` does
==================== ==========================================================
OK, duplicate=False  stored; the actor drops the batch from its queue
OK, duplicate=True   held already (a resend); the actor drops it
OUT_OF_RANGE         its seq is not the next one; trailing metadata ``expected-seq``
                     says which is; the actor renumbers its queue from there and resends
INVALID_ARGUMENT     malformed, or can never be stored (non-finite or out-of-space
                     values, episode longer than the learner holds); the actor drops
                     and counts it, and goes on with the next batch
NOT_FOUND            not registered (learner restarted, or the slot expired): register
PERMISSION_DENIED    the call lacks the secret of the actor id's holder: register again
                     (presenting the secret it has)
ALREADY_EXISTS       Register for an actor id another live client holds: retry later
RESOURCE_EXHAUSTED   learner busy or all actor slots taken: retry after a backoff
UNAVAILABLE          the learner could not store it (disk): retry after a backoff
UNAUTHENTICATED      missing or wrong token: fatal
FAILED_PRECONDITION  spaces differ from the learner's: fatal
==================== ==========================================================

An actor id belongs to the client that registered it. Register hands out a secret
(``secrets.token_bytes(32)``) that every later call for that id must carry: pushes
(every step and every episode boundary), weight streams, and a Register with a new
incarnation. A Register without it, for an id whose holder is live (a weight stream
open, or a call within ``learning.actor_lease_s``), is refused with ALREADY_EXISTS and
the holder's open episode is untouched. Once the holder has been silent for the lease
(a process killed with -9 closes its stream at once; a host that vanished, after the
keepalive timeout), a new client may take the id: the old incarnation is forgotten
(the sink counts its unfinished episode as lost and logs it), the new one gets a fresh
secret. That is how an actor restarted after a crash gets its id back; until then it
retries, and its log says why. Steps are never stored under an id without its secret.

Every refusal is counted by cause (:meth:`LearnerServer.refusals`, and per actor in
:class:`ActorStats`) and each cause is logged once.

A learner given a holders file (``holders_file``; the learner process keeps
``<run_dir>/learner/holders.json``) writes the digest of every held id's secret there and
reads it back when it restarts (:mod:`robot_rl.training.remote.holders`): a holder from
before the restart that presents its secret keeps its id, and anyone else waits out the
lease, counted from the restart.

A learner that restarts passes ``acked`` (highest seq it holds per actor incarnation)
and ``weight_version`` (the last version it published), so resent batches are
recognised and weight versions keep increasing across restarts.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import threading
import time
import uuid
from concurrent import futures
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, Protocol

import grpc
import numpy as np

from robot_rl.config.learning import LearningConfig
from robot_rl.data.transition import Step
from robot_rl.training.remote import holders, security
from robot_rl.training.remote.codec import ActorReport, DecodedBatch, decode_batch, decode_spaces, encode_weights
from robot_rl.training.remote.errors import LearningError, PayloadError
from robot_rl.training.remote.intake import Intake
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.proto import learning_pb2_grpc as pb_grpc
from robot_rl.training.remote.refusals import Refusals, peer_host
from robot_rl.training.remote.spaces import EnvSpaces
from robot_rl.training.remote.weights import WeightBoard

log = logging.getLogger(__name__)

ACTOR_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # always used with fullmatch
INCARNATION = re.compile(r"[A-Za-z0-9._-]{1,64}")
EXPECTED_SEQ = "expected-seq"  # trailing metadata of an OUT_OF_RANGE refusal
STATS_KEPT_PER_SLOT = 4  # statistics of actors gone are kept for up to 4 x max_actors ids


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
    rejected: int = 0  # batches refused as malformed or unstorable (INVALID_ARGUMENT)
    out_of_order: int = 0  # batches refused with OUT_OF_RANGE (not the next seq)
    registered: bool = False  # holds one of the learner's max_actors slots
    weights_sent: int = 0
    takeovers_refused: int = 0  # Register calls for this id from a client without its secret, refused
    takeovers: int = 0  # times a new client took this id after its holder fell silent for actor_lease_s
    weight_version_sent: int = 0
    streaming: bool = False
    report: ActorReport = field(default_factory=ActorReport)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Holder:
    """Who holds an actor id: the secret handed out (empty for a holder read back after a
    restart until it presents it), its digest, where from, and when it last called."""

    secret: bytes
    peer: str
    last_call: float  # time.monotonic()
    digest: bytes = b""

    def __post_init__(self) -> None:
        if self.secret and not self.digest:
            self.digest = holders.digest(self.secret)

    def proven_by(self, presented: bytes) -> bool:
        """``presented`` is this holder's secret (compared in constant time)."""
        return bool(presented) and hmac.compare_digest(self.digest, holders.digest(presented))


class LearnerServer:
    """Serves Register, PushTransitions and StreamWeights for any number of actors."""

    def __init__(self, cfg: LearningConfig, spaces: EnvSpaces, sink: TransitionSink, token: str, *,
                 acked: Mapping[tuple[str, str], int] | None = None, weight_version: int = 0,
                 holders_file: Path | None = None) -> None:
        self.cfg = cfg
        self.spaces = spaces
        self.sink = sink
        self.learner_id = uuid.uuid4().hex[:12]
        self._token = token
        self._board: WeightBoard[pb.Weights] = WeightBoard(weight_version)
        self._lock = threading.Lock()
        self._acked: dict[tuple[str, str], int] = dict(acked or {})
        self._actor_locks: dict[tuple[str, str], threading.Lock] = {}
        self._registered: dict[str, str] = {}  # actor id -> current incarnation (the max_actors slots)
        self._holders: dict[str, _Holder] = {}  # actor id -> its holder, for every registered id
        self._streams: dict[str, int] = {}  # actor id -> weight streams open
        self._stats: dict[str, ActorStats] = {}
        self._holders_file = holders_file
        if holders_file is not None:  # a restart: the holders before it keep their ids for the lease
            restarted = time.monotonic()
            for actor_id, d in holders.load_holders(holders_file, ACTOR_ID).items():
                self._holders[actor_id] = _Holder(b"", "", restarted, d)
                self._stats[actor_id] = ActorStats(actor_id)
        self._refusals = Refusals()
        self._interceptor: security.TokenInterceptor | None = None
        self._intake: Intake | None = None
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
        # Calls are counted after the token check (security.py, intake.py); gRPC's own
        # maximum_concurrent_rpcs would count unauthenticated and stalled calls too, so it is not used.
        self._intake = Intake(calls=self.cfg.call_slots, streams=self.cfg.stream_slots,
                              per_connection=self.cfg.max_calls_per_connection,
                              max_waiting=self.cfg.max_waiting_calls, body_timeout_s=self.cfg.body_timeout_s,
                              refusals=self._refusals)
        self._interceptor = security.TokenInterceptor(self._token, intake=self._intake,
                                                      max_call_s=self.cfg.max_call_s, refusals=self._refusals)
        pool = futures.ThreadPoolExecutor(max_workers=self._intake.threads, thread_name_prefix="learner-rpc")
        server = grpc.server(pool, interceptors=[self._interceptor], options=security.server_options(self.cfg))
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
        if self._interceptor is not None:
            self._interceptor.close()
        if self._intake is not None:
            self._intake.close()
        self._refusals.flush()

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

    def refusals(self) -> dict[str, int]:
        """Refused calls and batches so far, by cause (unauthenticated, busy, out_of_order, ...)."""
        return self._refusals.snapshot()

    def calls(self) -> dict[str, int]:
        """Authenticated calls now waiting for their body, running, and weight streams (intake.py)."""
        return self._intake.snapshot() if self._intake is not None else {}

    def acked(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._acked)

    # -- handlers (called by _Service) ----------------------------------------------------
    def _refuse(self, context: grpc.ServicerContext, cause: str, code: grpc.StatusCode, message: str) -> None:
        """Count, log (rate-limited per peer and cause: Refusals), and end the call with ``code``."""
        self._refusals.count(cause, message, context.peer())
        context.abort(code, message)

    def _register(self, request: pb.RegisterRequest, context: grpc.ServicerContext) -> pb.RegisterReply:
        actor_id, incarnation = request.actor_id, request.incarnation
        if not ACTOR_ID.fullmatch(actor_id) or not INCARNATION.fullmatch(incarnation):
            self._refuse(context, "bad_actor_id", grpc.StatusCode.INVALID_ARGUMENT,
                         f"actor id {actor_id[:200]!r} must be 1-128 of [A-Za-z0-9._-] (starting with a letter "
                         f"or digit), with an incarnation of 1-64 such characters")
        try:
            spaces = decode_spaces(request.spaces)
        except (ValueError, TypeError, OverflowError, MemoryError) as err:  # PayloadError, or a case it missed
            self._refuse(context, "bad_spaces", grpc.StatusCode.INVALID_ARGUMENT,
                         f"actor '{actor_id}': bad spaces: {err}")
        diff = self.spaces.mismatch(spaces)
        if diff:
            self._refuse(context, "spaces_mismatch", grpc.StatusCode.FAILED_PRECONDITION,
                         f"actor '{actor_id}' refused: its spaces differ from the learner's: {diff}")
        peer = context.peer()
        with self._lock:
            held = self._check_holder(actor_id, request.secret, peer)
            acked = self._admit(actor_id, incarnation, peer) if held is None and self._take_slot(actor_id) else None
            secret = self._holders[actor_id].secret if acked is not None else b""
        if held is not None:
            self._refuse(context, "id_held", grpc.StatusCode.ALREADY_EXISTS, held)
        if acked is None:
            self._refuse(context, "actors_full", grpc.StatusCode.RESOURCE_EXHAUSTED,
                         f"learner already serves {self.cfg.max_actors} actors (learning.max_actors); a slot "
                         "frees when an actor is idle for learning.registration_ttl_s; retry later")
        log.info("actor %s registered from %s (incarnation %s, acked seq %d)", actor_id, peer_host(peer),
                 incarnation, acked)
        return pb.RegisterReply(learner_id=self.learner_id, weight_version=self._board.version, acked_seq=acked,
                                secret=secret)

    def _check_holder(self, actor_id: str, presented: bytes, peer: str) -> str | None:
        """None when this caller may hold ``actor_id``; else why not (holds the lock).

        The caller may if nobody holds the id, if it presents the holder's secret, or if the
        holder has been silent (no weight stream, no call) for ``learning.actor_lease_s``:
        then the id is taken over and the old holder's secret is void.
        """
        holder = self._holders.get(actor_id)
        if holder is None:
            return None
        if holder.proven_by(presented):
            holder.secret = presented  # a holder read back after a restart has it again
            return None
        silent = time.monotonic() - holder.last_call
        stats = self._stats[actor_id]
        if self._streams.get(actor_id) or silent < self.cfg.actor_lease_s:
            stats.takeovers_refused += 1
            if self._streams.get(actor_id):
                live = "holds a weight stream"
            elif not holder.secret:
                live = f"held it before the learner restarted {silent:.1f} s ago"
            else:
                live = f"called {silent:.1f} s ago"
            return (f"actor id '{actor_id}' belongs to another client ({peer_host(holder.peer)}, which {live}); "
                    f"{'the secret presented is not its secret' if presented else 'no secret was presented'}. "
                    f"A client may take it once the holder has been silent for learning.actor_lease_s "
                    f"({self.cfg.actor_lease_s:g} s); choose another learning.actor_id if this is another actor")
        log.warning("actor id %s taken over by %s: its holder (%s) was silent for %.1f s (learning.actor_lease_s)",
                    actor_id, peer_host(peer), peer_host(holder.peer), silent)
        stats.takeovers += 1
        old = self._registered.get(actor_id)
        if old is None:  # a holder from before a restart that never came back
            self._holders.pop(actor_id)
            self._save_holders()
            return None
        self._release(actor_id)  # the old incarnation can send no more; the new holder starts afresh
        self._acked.pop((actor_id, old), None)
        return None

    def _take_slot(self, actor_id: str) -> bool:
        """True when ``actor_id`` holds a slot or one is free, expiring an idle one if needed (holds the lock)."""
        if actor_id in self._registered or len(self._registered) < self.cfg.max_actors:
            return True
        now = time.time()
        idle = [(self._stats[a].last_seen_unix, a) for a in self._registered
                if not self._streams.get(a) and now - self._stats[a].last_seen_unix > self.cfg.registration_ttl_s]
        if not idle:
            return False
        _, gone = min(idle)
        log.info("actor %s idle for %.0f s: its slot goes to a new actor", gone, now - self._stats[gone].last_seen_unix)
        self._release(gone)
        return True

    def _release(self, actor_id: str) -> None:
        """``actor_id`` gives its slot up; its incarnation can send no more (holds the lock)."""
        incarnation = self._registered.pop(actor_id)
        if self._holders.pop(actor_id, None) is not None:
            self._save_holders()
        self._stats[actor_id].registered = False
        self._actor_locks.pop((actor_id, incarnation), None)
        self._forget(actor_id, incarnation)

    def _admit(self, actor_id: str, incarnation: str, peer: str) -> int:
        """Record a registration (holds the lock); returns the seq the learner holds up to."""
        previous = self._registered.get(actor_id)
        if previous is not None and previous != incarnation:
            self._actor_locks.pop((actor_id, previous), None)
            self._forget(actor_id, previous)  # that process is gone: its open episode never ends
        stats = self._stats.get(actor_id)
        if stats is None:
            stats = self._stats[actor_id] = ActorStats(actor_id)
            self._prune_stats()
        stats.incarnation = incarnation
        stats.registrations += 1
        stats.registered = True
        stats.last_seen_unix = time.time()
        self._registered[actor_id] = incarnation
        holder = self._holders.get(actor_id)
        if holder is None:
            holder = self._holders[actor_id] = _Holder(secrets.token_bytes(32), peer, 0.0)
            self._save_holders()
        holder.last_call = time.monotonic()
        key = (actor_id, incarnation)
        self._actor_locks.setdefault(key, threading.Lock())
        return self._acked.get(key, 0)

    def _owns(self, actor_id: str, presented: bytes) -> str | None:
        """None when ``presented`` is the secret of ``actor_id``'s holder (or nobody holds it); else why not.

        Holds the lock. A call that proves it is the holder counts as a sign of life.
        """
        holder = self._holders.get(actor_id)
        if holder is None:
            return None  # not registered: the caller gets NOT_FOUND and registers
        if not holder.proven_by(presented):
            return (f"it does not carry the secret the learner gave the client that holds this actor id "
                    f"({'none' if not presented else 'a wrong one'} presented); register to get one")
        holder.last_call = time.monotonic()
        return None

    def _save_holders(self) -> None:
        """Write the held ids' secret digests to the holders file, if there is one (holds the lock).

        A write that fails is logged, not raised: the learner serves on, and a restart then
        reads the last file that was written whole (or none)."""
        if self._holders_file is None:
            return
        try:
            holders.save_holders(self._holders_file, {a: h.digest for a, h in self._holders.items()})
        except OSError as err:
            log.error("could not write %s (%s): after a restart the learner may not know every actor id's holder",
                      self._holders_file, err)

    def _forget(self, actor_id: str, incarnation: str) -> None:
        forget = getattr(self.sink, "forget", None)
        if forget is not None:
            forget(actor_id, incarnation)

    def _prune_stats(self) -> None:
        """Keep statistics of at most STATS_KEPT_PER_SLOT x max_actors ids (holds the lock)."""
        gone = sorted((s.last_seen_unix, a) for a, s in self._stats.items()
                      if a not in self._registered and a not in self._holders)  # a holder from before a restart
        for _, actor_id in gone[:max(0, len(self._stats) - STATS_KEPT_PER_SLOT * self.cfg.max_actors)]:
            del self._stats[actor_id]

    def _push(self, request: pb.TransitionBatch, context: grpc.ServicerContext) -> pb.BatchAck:
        actor_id, incarnation, seq = request.actor_id, request.incarnation, int(request.seq)
        key = (actor_id, incarnation)
        with self._lock:
            owned = self._owns(actor_id, request.secret)
            registered = self._registered.get(actor_id) == incarnation
            actor_lock = self._actor_locks.get(key)
            stats = self._stats.get(actor_id)
        if owned is not None:
            self._refuse(context, "wrong_secret", grpc.StatusCode.PERMISSION_DENIED,
                         f"batch {seq} for actor '{actor_id[:200]}' refused, nothing stored: {owned}")
        if not registered or actor_lock is None or stats is None:
            self._refuse(context, "not_registered", grpc.StatusCode.NOT_FOUND,
                         f"actor '{actor_id[:200]}' is not registered with learner {self.learner_id}; "
                         "register first")
        with actor_lock:
            with self._lock:
                stats.last_seen_unix = time.time()
                expected = self._acked.get(key, 0) + 1
                if seq < expected:
                    stats.duplicates += 1
                    return pb.BatchAck(seq=seq, accepted=0, duplicate=True)
                if seq > expected:
                    stats.out_of_order += 1
            if seq > expected:
                context.set_trailing_metadata(((EXPECTED_SEQ, str(expected)),))
                self._refuse(context, "out_of_order", grpc.StatusCode.OUT_OF_RANGE,
                             f"batch {seq} from actor '{actor_id}' is not the next one: the learner holds up to "
                             f"{expected - 1} and takes {expected} next; it did not store batch {seq}")
            batch = self._decode(request, context, stats)
            self._store(batch, context, stats)
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

    def _decode(self, request: pb.TransitionBatch, context: grpc.ServicerContext, stats: ActorStats) -> DecodedBatch:
        """The batch's Steps, or INVALID_ARGUMENT: no malformed input ends as INTERNAL or UNKNOWN."""
        try:
            return decode_batch(request, self.spaces)
        except PayloadError as err:
            cause, problem = err.cause, str(err)
        except (ValueError, TypeError, OverflowError, MemoryError) as err:  # a case the checks missed
            cause, problem = "undecodable", f"{type(err).__name__}: {err}"
        self._reject(context, stats, cause, f"batch {request.seq} from actor '{request.actor_id}': {problem}")
        raise AssertionError("unreachable")  # context.abort raised

    def _store(self, batch: DecodedBatch, context: grpc.ServicerContext, stats: ActorStats) -> None:
        try:
            self.sink.receive(batch.actor_id, batch.incarnation, batch.seq, batch.steps)
        except PayloadError as err:  # e.g. an episode longer than the learner holds
            self._reject(context, stats, err.cause,
                         f"batch {batch.seq} from actor '{batch.actor_id}': {err}")
        except Exception as err:  # the sink failed (disk full, ...): the actor retries later
            log.exception("could not store batch %d of actor %s", batch.seq, batch.actor_id)
            self._refuse(context, "store_failed", grpc.StatusCode.UNAVAILABLE,
                         f"learner could not store batch {batch.seq} ({err}); retry later")

    def _reject(self, context: grpc.ServicerContext, stats: ActorStats, cause: str, message: str) -> None:
        with self._lock:
            stats.rejected += 1
        self._refuse(context, cause, grpc.StatusCode.INVALID_ARGUMENT, message)

    def _stream(self, request: pb.WeightsRequest, context: grpc.ServicerContext) -> Iterator[pb.Weights]:
        actor_id = request.actor_id
        with self._lock:
            owned = self._owns(actor_id, request.secret)
            stats = self._stats.get(actor_id) if actor_id in self._registered and owned is None else None
            if stats is not None:
                self._streams[actor_id] = self._streams.get(actor_id, 0) + 1
                stats.streaming = True
        if owned is not None:
            self._refuse(context, "wrong_secret", grpc.StatusCode.PERMISSION_DENIED,
                         f"weights for actor '{actor_id[:200]}' refused: {owned}")
        if stats is None:
            self._refuse(context, "not_registered", grpc.StatusCode.NOT_FOUND,
                         f"actor '{actor_id[:200]}' is not registered with learner {self.learner_id}; "
                         "register first")
        have = int(request.have_version)
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
            with self._lock:
                self._streams[actor_id] -= 1
                if not self._streams[actor_id]:
                    del self._streams[actor_id]
                stats.streaming = actor_id in self._streams
                stats.last_seen_unix = time.time()
                holder = self._holders.get(actor_id)
                if holder is not None and hmac.compare_digest(holder.secret, request.secret):
                    holder.last_call = time.monotonic()  # the lease runs from the stream's end


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
