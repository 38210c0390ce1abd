"""The actor's end of the learning plane: steps go up, weights come down, in the background.

The control loop only ever calls three cheap methods:

* :meth:`ActorClient.submit` queues a Step in the bounded :class:`Outbox` (never blocks
  on the network);
* :meth:`ActorClient.take_weights` returns the newest complete weight version not taken
  yet, or None, so new weights are swapped in between control steps;
* :meth:`ActorClient.check` raises the one fatal error, if any (refused token, spaces
  that differ from the learner's), as a one-line :class:`LearningError`.

Two threads do the talking. The sender registers (again after every reconnect), then
sends sealed batches in order and drops each from the outbox only when the learner
acknowledged it. The receiver holds a StreamWeights call open and puts every version
into a :class:`WeightSlot`. Both retry transient failures (learner away or busy,
deadline, restart) with exponential backoff and jitter, up to ``learning.reconnect_max_s``;
refusals that retrying cannot fix (UNAUTHENTICATED, FAILED_PRECONDITION) are fatal. A
batch refused with INVALID_ARGUMENT can never be stored: it is dropped and counted
(``rejected_steps``). OUT_OF_RANGE means the learner takes another seq next: the sender
registers again, which tells it which, and renumbers its queue from there (see
:mod:`robot_rl.training.remote.server` for every status).

The actor id belongs to this client while it is registered: Register hands it a
secret, which every later call carries. ALREADY_EXISTS (another live client holds the
id, e.g. this actor's previous process, not yet silent for the learner's
``learning.actor_lease_s``) and PERMISSION_DENIED (the id was taken over while this
client was silent) are retried: the sender registers again with backoff, its queue
kept, and the log says why in one line every few seconds.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from typing import Any

import grpc

from robot_rl.config.learning import LearningConfig, default_actor_id
from robot_rl.data.transition import Step
from robot_rl.training.remote import security
from robot_rl.training.remote.codec import ActorReport, WeightVersion, decode_weights, encode_batch, encode_spaces
from robot_rl.training.remote.errors import LearningError, PayloadError, SpacesMismatch
from robot_rl.training.remote.outbox import Outbox
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.proto import learning_pb2_grpc as pb_grpc
from robot_rl.training.remote.spaces import EnvSpaces
from robot_rl.training.remote.weights import WeightSlot

log = logging.getLogger(__name__)

FATAL = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.UNIMPLEMENTED}
ID_REFUSED = {grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.PERMISSION_DENIED}  # the id is another client's


class Backoff:
    """Exponential delays with jitter: min, 2*min, 4*min ... up to max, each times U(0.5, 1)."""

    def __init__(self, min_s: float, max_s: float) -> None:
        self.min_s, self.max_s = min_s, max_s
        self.failures = 0

    def next(self) -> float:
        delay = min(self.max_s, self.min_s * (2 ** min(self.failures, 30)))
        self.failures += 1
        return delay * random.uniform(0.5, 1.0)

    def reset(self) -> None:
        self.failures = 0


class ActorClient:
    """Streams an actor's Steps to the learner and receives its weights, in background threads."""

    def __init__(self, cfg: LearningConfig, spaces: EnvSpaces, token: str, *, target: str | None = None,
                 actor_id: str | None = None) -> None:
        self.cfg = cfg
        self.spaces = spaces
        self.target = target or f"{cfg.host}:{cfg.port}"
        self.actor_id = actor_id or cfg.actor_id or default_actor_id()
        self.incarnation = uuid.uuid4().hex[:12]
        self._secret = b""  # the learner's proof that this client holds actor_id (RegisterReply.secret)
        self.outbox = Outbox(cfg.batch_steps, cfg.queue_steps, cfg.batch_max_age_s)
        self.weights = WeightSlot()
        self._metadata = security.auth_metadata(token)
        self._stop = threading.Event()
        self._registered = threading.Event()
        self._fatal: LearningError | None = None
        self._lock = threading.Lock()
        self._channel: grpc.Channel | None = None
        self._stub: pb_grpc.LearnerStub | None = None
        self._stream_call: Any = None
        self._threads: list[threading.Thread] = []
        self._encoded: tuple[Any, int, pb.TransitionBatch] | None = None  # (batch, its seq, message)
        self._warned_at = 0.0
        self._dropped_warned = 0
        self._outage_warned = False  # the current outage was warned about (reset when the learner answers)
        self.learner_id = ""
        self.env_steps = 0
        self.episodes = 0
        self.batches_sent = 0
        self.connects = 0
        self.last_error = ""
        self.weight_version = 0  # version the control loop runs (set by take_weights)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> "ActorClient":
        options = security.channel_options(self.cfg)
        if self.cfg.tls.enabled:
            self._channel = grpc.secure_channel(self.target, security.channel_credentials(self.cfg), options)
        else:
            self._channel = grpc.insecure_channel(self.target, options)
        self._stub = pb_grpc.LearnerStub(self._channel)
        for name, fn in (("sender", self._send_loop), ("weights", self._receive_loop)):
            thread = threading.Thread(target=fn, name=f"actor-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self, flush_timeout: float = 0.0) -> bool:
        """Stop the threads; first wait up to ``flush_timeout`` s for the queue to drain.

        Returns True when nothing was left unsent.
        """
        flushed = self.flush(flush_timeout) if flush_timeout > 0 and self._fatal is None else False
        self._stop.set()
        call = self._stream_call
        if call is not None:
            call.cancel()
        for thread in self._threads:
            thread.join(timeout=5.0)
        if self._channel is not None:
            self._channel.close()
        left = self.outbox.queued_steps
        if left:
            log.warning("actor %s stopped with %d steps unsent", self.actor_id, left)
        return flushed or left == 0

    def __enter__(self) -> "ActorClient":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- control-loop side ----------------------------------------------------------------
    def submit(self, step: Step) -> None:
        """Queue one env step for the learner. Never blocks on the network.

        The Step's arrays must not be modified afterwards (they are sent as they are).
        """
        self.outbox.add(step)
        self.env_steps += 1
        if step.last:
            self.episodes += 1
        dropped = self.outbox.dropped_steps
        if dropped != self._dropped_warned and time.monotonic() - self._warned_at > 5.0 and \
                (self.connects or not self._dropped_warned):  # never connected: the first drop is said once
            self._warned_at, self._dropped_warned = time.monotonic(), dropped
            log.warning("actor %s: local queue full (%d steps), %d steps dropped so far "
                        "(%d of them interventions); learner %s unreachable: %s", self.actor_id,
                        self.cfg.queue_steps, dropped, self.outbox.dropped_intervention_steps,
                        self.target, self.last_error or "?")

    def take_weights(self) -> WeightVersion | None:
        """The newest complete weight version not taken yet, or None (never waits)."""
        weights = self.weights.take()
        if weights is not None:
            self.weight_version = weights.version
        return weights

    def check(self) -> None:
        """Raise the fatal error, if the learner refused this actor for good."""
        if self._fatal is not None:
            raise self._fatal

    def flush(self, timeout: float) -> bool:
        """Wait until every queued step is acknowledged (True) or ``timeout``/fatal (False)."""
        deadline = time.monotonic() + timeout
        self.outbox.seal()
        while time.monotonic() < deadline:
            if self._fatal is not None:
                return False
            if self.outbox.wait_empty(min(0.2, max(0.0, deadline - time.monotonic()))):
                return True
        return self.outbox.queued_steps == 0

    @property
    def connected(self) -> bool:
        return self._registered.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._registered.wait(timeout)

    def stats(self) -> dict[str, Any]:
        box = self.outbox
        return {
            "actor_id": self.actor_id, "connected": self.connected, "learner_id": self.learner_id,
            "connects": self.connects, "env_steps": self.env_steps, "episodes": self.episodes,
            "acked_steps": box.acked_steps, "queued_steps": box.queued_steps,
            "dropped_steps": box.dropped_steps, "dropped_intervention_steps": box.dropped_intervention_steps,
            "rejected_steps": box.rejected_steps, "resent_steps": box.resent_steps, "batches_sent": self.batches_sent,
            "weights": self.weights.state(), "weight_version": self.weight_version,
            "last_error": self.last_error,
        }

    # -- background threads ---------------------------------------------------------------
    def _report(self) -> ActorReport:
        box = self.outbox
        return ActorReport(self.env_steps, self.episodes, box.dropped_steps, box.dropped_intervention_steps,
                           box.queued_steps, self.weight_version)

    def _register(self) -> None:
        assert self._stub is not None
        reply = self._stub.Register(
            pb.RegisterRequest(actor_id=self.actor_id, incarnation=self.incarnation,
                               spaces=encode_spaces(self.spaces), secret=self._secret),
            timeout=self.cfg.rpc_deadline_s, metadata=self._metadata)
        if reply.learner_id != self.learner_id:
            resent = self.outbox.requeue_retained() if self.learner_id else 0
            if self.learner_id and reply.weight_version < self.weights.version:
                self.weights.rebase()  # a learner started afresh: its version numbers start over
            log.info("actor %s connected to learner %s at %s (weights v%d%s)", self.actor_id,
                     reply.learner_id, self.target, reply.weight_version,
                     f"; resending {resent} steps of the unfinished episode" if resent else "")
        self.learner_id = reply.learner_id
        self._secret = reply.secret
        self.connects += 1
        self._outage_warned = False
        self.outbox.ack(reply.acked_seq)
        self.outbox.renumber(reply.acked_seq + 1)  # the learner takes that seq next
        self._registered.set()

    def _send_loop(self) -> None:
        backoff = Backoff(self.cfg.reconnect_min_s, self.cfg.reconnect_max_s)
        while not self._stop.is_set():
            if not self._registered.is_set():
                try:
                    self._register()
                    backoff.reset()
                except grpc.RpcError as err:
                    if err.code() == grpc.StatusCode.INVALID_ARGUMENT:
                        self._fail(LearningError(f"learner {self.target} refused to register actor "
                                                 f"'{self.actor_id}': {err.details()}"))
                    if self._stop.is_set() or not self._handle(err, "registering with"):
                        return
                    self._stop.wait(backoff.next())
                    continue
            batch = self.outbox.next_batch(timeout=0.2)
            if batch is None:
                continue
            try:
                msg = self._encode(batch)
                msg.secret = self._secret
                ack = self._stub.PushTransitions(msg, timeout=self.cfg.rpc_deadline_s, metadata=self._metadata)
            except LearningError as err:
                self._fail(err)
                return
            except grpc.RpcError as err:
                self.outbox.release()
                if self._stop.is_set() or not self._handle(err, "sending to"):
                    return
                code = err.code()
                if code == grpc.StatusCode.INVALID_ARGUMENT:
                    n = self.outbox.reject(batch.seq)
                    log.error("learner refused batch %d (%d steps) of actor %s for good: %s",
                              batch.seq, n, self.actor_id, err.details())
                    continue
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED:  # learner busy: the same batch, later
                    self._stop.wait(backoff.next())
                    continue
                if code in ID_REFUSED:  # taken over while silent: ask for the id back, after a backoff
                    self._registered.clear()
                    self._stop.wait(backoff.next())
                    continue
                # Register again: the learner may have restarted, or (OUT_OF_RANGE) takes
                # another seq next, which its reply says.
                self._registered.clear()
                if code not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.OUT_OF_RANGE):
                    self._stop.wait(backoff.next())
                continue
            self.outbox.ack(ack.seq)
            self.batches_sent += 1
            backoff.reset()

    def _receive_loop(self) -> None:
        backoff = Backoff(self.cfg.reconnect_min_s, self.cfg.reconnect_max_s)
        while not self._stop.is_set():
            if not self._registered.wait(0.2):
                continue
            try:
                call = self._stub.StreamWeights(
                    pb.WeightsRequest(actor_id=self.actor_id, have_version=self.weights.version,
                                      secret=self._secret),
                    metadata=self._metadata)
                self._stream_call = call
                for msg in call:
                    try:
                        self.weights.put(decode_weights(msg))
                    except PayloadError as err:
                        log.error("actor %s ignored weight version %d: %s", self.actor_id, msg.version, err)
                    backoff.reset()
            except grpc.RpcError as err:
                if self._stop.is_set():
                    return
                if not self._handle(err, "receiving weights from"):
                    return
                if err.code() == grpc.StatusCode.NOT_FOUND or err.code() in ID_REFUSED:
                    self._registered.clear()  # learner restarted, or the id was taken: the sender registers again
            if not self._stop.is_set():
                self._stop.wait(backoff.next())

    def _encode(self, batch: Any) -> pb.TransitionBatch:
        if self._encoded is None or self._encoded[0] is not batch or self._encoded[1] != batch.seq:
            msg = encode_batch(batch.steps, self.spaces, actor_id=self.actor_id, incarnation=self.incarnation,
                               seq=batch.seq, report=self._report())
            size = msg.ByteSize()
            if size > self.cfg.max_message_bytes:
                raise LearningError(f"a batch of {len(batch.steps)} steps is {size / 2**20:.1f} MiB, above "
                                    f"learning.max_message_mb={self.cfg.max_message_mb}; lower learning.batch_steps")
            self._encoded = (batch, batch.seq, msg)
        return self._encoded[2]

    def _handle(self, err: grpc.RpcError, doing: str) -> bool:
        """Record a failed call; False (after recording the fatal error) when retrying cannot help."""
        code, details = err.code(), err.details() or ""
        self.last_error = f"{code.name}: {details}"
        if code in FATAL:
            what = SpacesMismatch if code == grpc.StatusCode.FAILED_PRECONDITION else LearningError
            self._fail(what(f"learner {self.target} refused actor '{self.actor_id}' ({code.name}): {details}"))
            return False
        now = time.monotonic()
        quiet = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE)
        if code in ID_REFUSED and now - self._warned_at > 5.0:
            self._warned_at = now
            log.warning("actor %s: learner %s refused its id while %s it (%s); retrying, %d steps queued",
                        self.actor_id, self.target, doing, self.last_error, self.outbox.queued_steps)
        elif code not in quiet and self.connects and not self._outage_warned:
            # once per outage: a learner never reached is the actor process's one notice (what to start),
            # and a learner that went away is said once until it answers again, not every few seconds
            self._warned_at, self._outage_warned = now, True
            log.warning("actor %s: learner %s unreachable or busy while %s it (%s); retrying quietly until "
                        "it answers, %d steps queued", self.actor_id, self.target, doing, self.last_error,
                        self.outbox.queued_steps)
        elif code not in quiet:
            log.debug("actor %s: learner %s: %s while %s it", self.actor_id, self.target, self.last_error, doing)
        return True

    def _fail(self, err: LearningError) -> None:
        with self._lock:
            if self._fatal is None:
                self._fatal = err
                log.error("%s", err)
        self._stop.set()
        call = self._stream_call
        if call is not None:
            call.cancel()
