"""Config of the learning plane: where the learner listens, how actors reach it, and limits.

One section, ``learning:``, serves both ends. The learner binds ``host:port``; an actor
connects to ``host:port`` unless ``robot-rl actor --learner HOST:PORT`` says otherwise.
Both need the same shared token, taken from the first of ``token``, ``token_file`` and
the environment variable named by ``token_env`` that is set.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

from robot_rl.config.loader import param
from robot_rl.errors import ConfigError


@dataclass
class TlsConfig:
    """Optional TLS. The learner needs ``cert`` and ``key``; an actor trusts ``ca``.

    ``ca`` null means the system's root certificates. ``server_name`` overrides the name
    checked against the learner's certificate (for a self-signed cert made for a name
    other than the host the actor dials).
    """

    enabled: bool = False
    cert: Optional[str] = param(None, doc="learner: PEM certificate chain file")
    key: Optional[str] = param(None, doc="learner: PEM private key file")
    ca: Optional[str] = param(None, doc="actor: PEM root certificate file to trust")
    server_name: Optional[str] = None

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ValueError("tls.cert and tls.key must be given together")


@dataclass
class LearningConfig:
    """The gRPC link between actors and the learner (robot_rl.training.remote)."""

    host: str = param("127.0.0.1", doc="learner: address to bind; actor: learner host")
    port: int = param(50051, min=0, max=65535, doc="0 lets the learner pick a free port")
    token: Optional[str] = param(None, doc="shared secret; prefer token_file or token_env")
    token_file: Optional[str] = param(None, doc="file whose first line is the token")
    token_env: str = param("ROBOT_RL_TOKEN", doc="environment variable holding the token")
    tls: TlsConfig = field(default_factory=TlsConfig)
    insecure_remote: bool = param(False, doc="allow a non-loopback bind without TLS")
    actor_id: Optional[str] = param(None, doc="actor name; null means <hostname>-<pid>")

    batch_steps: int = param(16, min=1, max=4096, doc="N: an actor sends every N steps (and at episode end)")
    batch_max_age_s: float = param(2.0, min=0.01, max=3600.0, doc="a partial batch is sent after this long")
    queue_steps: int = param(20000, min=1, max=10_000_000,
                             doc="actor's bound on unsent steps while the learner is away")
    weights_every_updates: int = param(100, min=1, max=1_000_000_000, doc="K: push weights every K updates ...")
    weights_every_s: float = param(10.0, min=0.05, max=86400.0, doc="... or every T seconds, whichever comes first")

    rpc_deadline_s: float = param(10.0, min=0.1, max=3600.0, doc="deadline of each Register/PushTransitions call")
    keepalive_s: float = param(10.0, min=1.0, max=3600.0, doc="HTTP/2 ping interval on idle connections")
    keepalive_timeout_s: float = param(5.0, min=0.5, max=600.0, doc="a ping unanswered this long drops the link")
    max_message_mb: int = param(64, min=1, max=2047, doc="largest batch or weight message, MiB")
    reconnect_min_s: float = param(0.1, min=0.01, max=600.0, doc="first reconnect delay; doubles per failure")
    reconnect_max_s: float = param(5.0, min=0.01, max=3600.0)
    max_actors: int = param(16, min=1, max=1024, doc="learner: concurrent actors served")
    max_concurrent_calls: int = param(0, min=0, max=8192, doc="learner: authenticated Register/PushTransitions "
                                      "calls served at once, more get RESOURCE_EXHAUSTED and retry "
                                      "(0: 2 x max_actors + 4); weight streams have 2 x max_actors apart")
    max_call_s: float = param(60.0, min=1.0, max=3600.0, doc="learner: longest deadline a Register or "
                              "PushTransitions call may carry; calls without one are refused, so a stalled "
                              "caller cannot hold a slot longer (must be >= rpc_deadline_s)")
    registration_ttl_s: float = param(60.0, min=1.0, max=86400.0, doc="learner: a registered actor that "
                                      "neither pushes nor holds a weight stream this long gives its slot to a "
                                      "new actor when all max_actors slots are taken")
    actor_lease_s: float = param(15.0, min=0.5, max=86400.0, doc="learner: an actor id belongs to the client "
                                 "that registered it (a secret the learner hands out); another client may take "
                                 "it only once the holder has held no weight stream and made no call this long")
    body_timeout_s: float = param(5.0, min=0.1, max=3600.0, doc="learner: a Register or PushTransitions call "
                                  "whose request body has not arrived this long after its headers is cancelled "
                                  "(raise it for large batches over slow links)")
    max_calls_per_connection: int = param(4, min=1, max=1024, doc="learner: Register/PushTransitions calls "
                                          "one connection may have in flight; more get RESOURCE_EXHAUSTED")
    max_waiting_calls: int = param(128, min=1, max=4096, doc="learner: calls waiting for their request body at "
                                   "once; beyond it the one that waited longest (from the host with the most "
                                   "waiting) is cancelled")
    max_episode_steps: int = param(0, min=0, max=10_000_000, doc="learner: most steps of one unfinished "
                                   "episode held per actor; longer ones are refused (0: 2 x "
                                   "env.max_episode_steps + batch_steps)")

    updates: Literal["ratio", "max"] = param(
        "ratio", doc="ratio: train.utd_ratio updates per env step received; max: update as fast as possible")
    checkpoint_every_s: float = param(120.0, min=1.0, max=86400.0, doc="learner: seconds between agent checkpoints")
    log_every_s: float = param(10.0, min=0.1, max=86400.0, doc="seconds between progress lines and per-actor stats")
    actor_max_hz: float = param(0.0, min=0.0, max=100_000.0,
                                doc="actor: cap on env steps per second (0: no cap; "
                                    "a sim actor otherwise runs as fast as the CPU allows)")
    sync_steps: int = param(0, min=0, max=1_000_000_000,
                            doc="sim only: an actor takes at most this many steps per weight "
                                "version while connected (0: never waits)")
    utd_window_s: float = param(60.0, min=1.0, max=86400.0,
                                doc="learner: window over which the effective update-to-data ratio is measured")
    utd_warn_fraction: float = param(0.8, min=0.01, max=1.0,
                                     doc="learner: an effective UTD below this fraction of train.utd_ratio over a "
                                         "window is a warning (once per window) and shows in progress and status")
    run_dir: Optional[str] = param(None, doc="learner: where its run goes (replay, checkpoint, logs); null: "
                                   "<train.run_dir>_learner, apart from robot-rl train's run")
    refusals_fatal: bool = param(False, doc="learner: peers or batches refused for good (wrong token, other "
                                 "spaces, malformed batches) make its exit status 1 (robot-rl learner --strict); "
                                 "by default they are counted and reported and the status stays 0")

    def __post_init__(self) -> None:
        if self.reconnect_max_s < self.reconnect_min_s:
            raise ValueError("learning.reconnect_max_s must be at least reconnect_min_s")
        if self.rpc_deadline_s > self.max_call_s:
            raise ValueError("learning.rpc_deadline_s must be at most learning.max_call_s (the learner refuses "
                             "calls with a longer deadline)")
        if self.token is not None and not self.token.strip():
            raise ValueError("learning.token is empty; remove it or set a secret")

    def resolve_token(self) -> str:
        """The shared token, or a one-line ConfigError saying how to provide one."""
        if self.token:
            return self.token.strip()
        if self.token_file:
            path = Path(self.token_file).expanduser()
            try:
                text = path.read_text().strip().splitlines()
            except OSError as err:
                raise ConfigError(f"learning.token_file {path}: {err.strerror or err}") from None
            if not text or not text[0].strip():
                raise ConfigError(f"learning.token_file {path} is empty")
            return text[0].strip()
        value = os.environ.get(self.token_env, "").strip()
        if value:
            return value
        raise ConfigError(f"no learning token: set the environment variable {self.token_env}, "
                          "learning.token_file or learning.token (the learner and its actors share it)")

    def is_loopback(self) -> bool:
        """True when ``host`` is a loopback address or ``localhost``."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def call_slots(self) -> int:
        """Authenticated Register/PushTransitions calls the learner serves at once."""
        return self.max_concurrent_calls or 2 * self.max_actors + 4

    @property
    def stream_slots(self) -> int:
        """Weight streams the learner serves at once (an actor that reconnects briefly has two)."""
        return 2 * self.max_actors

    def episode_cap(self, env_max_episode_steps: int) -> int:
        """Most steps of one unfinished episode the learner holds per actor."""
        return self.max_episode_steps or 2 * env_max_episode_steps + self.batch_steps

    @property
    def max_message_bytes(self) -> int:
        return min(self.max_message_mb * 1024 * 1024, 2**31 - 1)


def default_actor_id() -> str:
    """The id an actor takes when ``learning.actor_id`` is unset: host name (made safe) and pid."""
    host = "".join(c if c.isalnum() or c in "._-" else "-" for c in socket.gethostname()) or "actor"
    return f"{host[:100]}-{os.getpid()}"
