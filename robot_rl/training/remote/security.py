"""Token check, admission, TLS credentials and channel options shared by learner and actors.

Every call carries ``authorization: Bearer <token>``; :class:`TokenInterceptor` checks it
on the learner before any handler runs (constant-time comparison) and refuses a missing
or wrong token with UNAUTHENTICATED and a message that says which. Without TLS the
token crosses the wire in clear text, so the learner binds to loopback unless TLS is
on or ``learning.insecure_remote`` says otherwise.

Capacity belongs to callers with the token. gRPC's sync server would run a
unary-request handler (the one that refuses too) only once the request body arrived, so
a caller that sends headers and never a body held a thread and a concurrency slot for
as long as it liked: 200 of them locked every actor out. Here:

* a refused call gets a *stream-request* handler that aborts without reading the
  request (the wire does not tell the server whether the client called unary or
  streaming), on a small pool of its own, so it ends right after its headers and never
  touches the threads that serve actors;
* an authenticated call is counted by :class:`~robot_rl.training.remote.intake.Intake`:
  a few calls per connection, a bounded number waiting for their body, each for at most
  ``learning.body_timeout_s`` (the longest-waiting one is cancelled when too many wait),
  and only calls whose body arrived take one of the places that do work; beyond them
  the caller gets RESOURCE_EXHAUSTED at once and retries later. A token holder's
  stalled calls thus never take a place from a caller that sends its body;
* an admitted Register or PushTransitions must carry a deadline of at most
  ``max_call_s`` (every actor sets ``learning.rpc_deadline_s``).
"""

from __future__ import annotations

import hmac
import threading
from concurrent import futures
from pathlib import Path
from typing import Any, Callable, Iterator

import grpc

from robot_rl.config.learning import LearningConfig
from robot_rl.errors import ConfigError
from robot_rl.training.remote.intake import Intake, Ticket
from robot_rl.training.remote.refusals import Refusals

AUTH_KEY = "authorization"
SCHEME = "Bearer "
DEADLINE_SLACK_S = 1.0  # clocks of client and server differ a little


def auth_metadata(token: str) -> tuple[tuple[str, str], ...]:
    return ((AUTH_KEY, SCHEME + token),)


class TokenInterceptor(grpc.ServerInterceptor):
    """Refuses calls without the token before any handler runs, and counts the others in ``intake``.

    Without ``intake`` only the token is checked (and admitted calls are passed on
    unchanged).
    """

    def __init__(self, token: str, *, intake: Intake | None = None, max_call_s: float = 60.0,
                 refusals: Refusals | None = None) -> None:
        if not token:
            raise ValueError("the learner needs a non-empty token")
        self._expected = (SCHEME + token).encode()
        self._intake = intake
        self._max_call_s = max_call_s
        self.refusals = refusals or Refusals()
        # Refusals never wait for anything; two threads of their own keep them off the actors' threads.
        self._refusal_pool = futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="learner-refuse")

    def close(self) -> None:
        self._refusal_pool.shutdown(wait=False, cancel_futures=True)

    def intercept_service(self, continuation: Any, handler_call_details: Any) -> Any:
        handler = continuation(handler_call_details)
        if handler is None:  # unknown method: gRPC answers UNIMPLEMENTED
            return None
        presented = None
        for key, value in handler_call_details.invocation_metadata or ():
            if key == AUTH_KEY:
                presented = value
        if presented is None or not hmac.compare_digest(str(presented).encode(), self._expected):
            which = "missing token: this learner requires the shared learning token" if presented is None \
                else "wrong token: the learning token does not match the learner's"
            return self._refuse(handler, "unauthenticated", grpc.StatusCode.UNAUTHENTICATED, which)
        if self._intake is None:
            return handler
        ticket = self._intake.headers(bool(handler.response_streaming))
        return _admitted(handler, self._intake, ticket, self._max_call_s, self.refusals)

    def _refuse(self, handler: Any, cause: str, code: grpc.StatusCode, message: str) -> Any:
        """A handler that ends the call at once, without waiting for its request body."""
        def abort(request_iterator: Any, context: grpc.ServicerContext) -> Any:
            self.refusals.count(cause, message, context.peer())
            context.abort(code, message)

        abort.experimental_thread_pool = self._refusal_pool  # type: ignore[attr-defined]
        if handler.response_streaming:
            return grpc.stream_stream_rpc_method_handler(abort)
        return grpc.stream_unary_rpc_method_handler(abort)


def _admitted(handler: Any, intake: Intake, ticket: Ticket, max_call_s: float, refusals: Refusals) -> Any:
    """``handler`` as a stream-request handler that reads its one request itself, counted by ``intake``.

    Register and PushTransitions must carry a deadline of at most ``max_call_s``. The
    call's place in ``intake`` is given back when it is over, whatever happened.
    """
    kwargs = {"request_deserializer": handler.request_deserializer,
              "response_serializer": handler.response_serializer}

    def refuse(context: grpc.ServicerContext, cause: str, code: grpc.StatusCode, message: str) -> None:
        refusals.count(cause, message, context.peer())
        context.abort(code, message)

    def admit(request_iterator: Iterator[Any], context: grpc.ServicerContext, short: bool) -> Any:
        """The call's request once it may run; ends the call otherwise."""
        refused = intake.start(ticket, context.peer(), context)
        if refused is not None:
            refuse(context, "connection_limit", grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        if short:
            remaining = context.time_remaining()
            if remaining is None or remaining > max_call_s + DEADLINE_SLACK_S:
                refuse(context, "no_deadline", grpc.StatusCode.INVALID_ARGUMENT,
                       f"this call needs a deadline of at most {max_call_s:g} s (learning.max_call_s); "
                       "set learning.rpc_deadline_s below it")
        request = _one_request(request_iterator, context)
        refused = intake.arrived(ticket)
        if refused is not None:
            if ticket.cause:  # cancelled while its body came in: counted when it was cancelled
                context.abort(grpc.StatusCode.CANCELLED, refused)
            refuse(context, "busy", grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        return request

    if handler.response_streaming:
        def stream(request_iterator: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
            leave = _Once(lambda: intake.leave(ticket))
            if not context.add_callback(leave):  # runs when the stream ends, however it ends
                leave()
            try:
                request = admit(request_iterator, context, short=False)
            except BaseException:
                leave()
                raise
            return handler.unary_stream(request, context)

        return grpc.stream_stream_rpc_method_handler(stream, **kwargs)

    def unary(request_iterator: Iterator[Any], context: grpc.ServicerContext) -> Any:
        try:
            return handler.unary_unary(admit(request_iterator, context, short=True), context)
        finally:
            intake.leave(ticket)

    return grpc.stream_unary_rpc_method_handler(unary, **kwargs)


class _Once:
    """Calls ``fn`` the first time it is called, never again."""

    def __init__(self, fn: Callable[[], None]) -> None:
        self._fn: Callable[[], None] | None = fn
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            fn, self._fn = self._fn, None
        if fn is not None:
            fn()


def _one_request(request_iterator: Iterator[Any], context: grpc.ServicerContext) -> Any:
    """The single request of a unary call (ends the call if the client sent none, or it was cancelled)."""
    try:
        for request in request_iterator:
            return request
    except grpc.RpcError:  # cancelled (by the client, or by Intake for a body that never came)
        context.abort(grpc.StatusCode.CANCELLED, "call cancelled before its request arrived")
    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "this method takes exactly one request message")


def _read(path: str | None, what: str) -> bytes:
    if path is None:
        raise ConfigError(f"learning.tls.{what} is required when learning.tls.enabled is true")
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as err:
        raise ConfigError(f"learning.tls.{what} {path}: {err.strerror or err}") from None


def server_credentials(cfg: LearningConfig) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials([(_read(cfg.tls.key, "key"), _read(cfg.tls.cert, "cert"))])


def channel_credentials(cfg: LearningConfig) -> grpc.ChannelCredentials:
    root = _read(cfg.tls.ca, "ca") if cfg.tls.ca else None
    return grpc.ssl_channel_credentials(root_certificates=root)


def common_options(cfg: LearningConfig) -> list[tuple[str, Any]]:
    """Message limits and keepalive, for both ends."""
    return [
        ("grpc.max_send_message_length", cfg.max_message_bytes),
        ("grpc.max_receive_message_length", cfg.max_message_bytes),
        ("grpc.keepalive_time_ms", int(cfg.keepalive_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(cfg.keepalive_timeout_s * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]


def server_options(cfg: LearningConfig) -> list[tuple[str, Any]]:
    return common_options(cfg) + [
        # Accept the actors' keepalive pings (they ping every keepalive_s, even when idle).
        ("grpc.http2.min_ping_interval_without_data_ms", int(cfg.keepalive_s * 1000 / 2)),
        ("grpc.http2.min_time_between_pings_ms", int(cfg.keepalive_s * 1000 / 2)),
        # One learner per port: a second one must fail to bind instead of sharing it.
        ("grpc.so_reuseport", 0),
        # HTTP/2 streams one connection may open at once: an actor needs 2; more wait on the
        # client's side, before they reach the learner (intake.py bounds the rest).
        ("grpc.max_concurrent_streams", 2 * cfg.max_calls_per_connection + 2),
        # A connection that carries no call for 5 minutes is closed (clients reconnect when needed).
        ("grpc.max_connection_idle_ms", 300_000),
    ]


def channel_options(cfg: LearningConfig) -> list[tuple[str, Any]]:
    options = common_options(cfg) + [
        # A connection of its own: the learner bounds calls per connection, and clients in one
        # process would otherwise share one.
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.initial_reconnect_backoff_ms", int(cfg.reconnect_min_s * 1000)),
        ("grpc.min_reconnect_backoff_ms", int(cfg.reconnect_min_s * 1000)),
        ("grpc.max_reconnect_backoff_ms", int(cfg.reconnect_max_s * 1000)),
    ]
    if cfg.tls.enabled and cfg.tls.server_name:
        options.append(("grpc.ssl_target_name_override", cfg.tls.server_name))
    return options
