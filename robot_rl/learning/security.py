"""Token check, TLS credentials and channel options shared by learner and actors.

Every call carries ``authorization: Bearer <token>``; :class:`TokenInterceptor` checks it
on the learner before any handler runs (constant-time comparison) and refuses a missing
or wrong token with UNAUTHENTICATED and a message that says which. Without TLS the
token crosses the wire in clear text, so the learner binds to loopback unless TLS is
on or ``learning.insecure_remote`` says otherwise.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

import grpc

from robot_rl.config.learning import LearningConfig
from robot_rl.errors import ConfigError

AUTH_KEY = "authorization"
SCHEME = "Bearer "


def auth_metadata(token: str) -> tuple[tuple[str, str], ...]:
    return ((AUTH_KEY, SCHEME + token),)


class TokenInterceptor(grpc.ServerInterceptor):
    """Refuses every call whose token is missing or wrong, before its handler runs."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("the learner needs a non-empty token")
        self._expected = (SCHEME + token).encode()

    def intercept_service(self, continuation: Any, handler_call_details: Any) -> Any:
        presented = None
        for key, value in handler_call_details.invocation_metadata or ():
            if key == AUTH_KEY:
                presented = value
        if presented is not None and hmac.compare_digest(str(presented).encode(), self._expected):
            return continuation(handler_call_details)
        if presented is None:
            message = "missing token: this learner requires the shared learning token"
        else:
            message = "wrong token: the learning token does not match the learner's"
        return _deny(continuation(handler_call_details), message)


def _deny(handler: Any, message: str) -> Any:
    def abort(request: Any, context: grpc.ServicerContext) -> Any:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    if handler is None:  # unknown method: let gRPC answer UNIMPLEMENTED after the check
        return None
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(abort)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(abort)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(abort)
    return grpc.unary_unary_rpc_method_handler(abort)


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
    ]


def channel_options(cfg: LearningConfig) -> list[tuple[str, Any]]:
    options = common_options(cfg) + [
        ("grpc.initial_reconnect_backoff_ms", int(cfg.reconnect_min_s * 1000)),
        ("grpc.min_reconnect_backoff_ms", int(cfg.reconnect_min_s * 1000)),
        ("grpc.max_reconnect_backoff_ms", int(cfg.reconnect_max_s * 1000)),
    ]
    if cfg.tls.enabled and cfg.tls.server_name:
        options.append(("grpc.ssl_target_name_override", cfg.tls.server_name))
    return options
