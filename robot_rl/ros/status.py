"""What both backends add to an rclpy node: the bad-input rule and a status report.

The rule: a message a node cannot use is dropped, with a warning, and counted; the node
keeps running. "Cannot use" means :class:`robot_rl.ros.errors.MessageError`, raised by
the DDS decoder for malformed CDR and by :mod:`robot_rl.ros.convert` for a message of
the wrong kind (an ``mono8`` image where ``rgb8`` is needed, a data size that does not
match, a non-finite pose). Any other exception in a callback is a bug and propagates,
as it does in rclpy.

``node.status()`` reports, per topic, messages handled and dropped; ``node.dropped_messages``
is the total. Warnings are at most one per topic per second, each saying how many drops
it stands for.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Callable

from robot_rl.ros.errors import MessageError

WARN_INTERVAL_S = 1.0


class NodeStatusMixin:
    """Mixed into both backends' ``Node``; call :meth:`_init_status` from ``__init__``."""

    _backend_name = "?"

    def _init_status(self) -> None:
        self._received: Counter[str] = Counter()
        self._dropped: Counter[str] = Counter()
        self._last_drop_reason: dict[str, str] = {}
        self._drop_warned_at: dict[str, float] = {}
        self._drops_since_warning: Counter[str] = Counter()

    @property
    def dropped_messages(self) -> int:
        """Messages dropped by this node so far, over all topics."""
        return sum(self._dropped.values())

    def status(self) -> dict[str, Any]:
        """Counters for logs, tests and health checks (plain data, JSON-serialisable)."""
        return {
            "node": self.get_fully_qualified_name(),  # type: ignore[attr-defined]
            "backend": self._backend_name,
            "received": dict(self._received),
            "dropped": dict(self._dropped),
            "dropped_messages": self.dropped_messages,
            "last_drop_reason": dict(self._last_drop_reason),
        }

    def _guard_callback(self, topic: str, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """Wrap a subscription callback so that a MessageError drops the message, not the node."""

        def on_message(msg: Any) -> None:
            try:
                callback(msg)
            except MessageError as err:
                self._drop_message(topic, str(err))
            else:
                self._received[topic] += 1

        on_message.__wrapped__ = callback  # type: ignore[attr-defined]
        return on_message

    def _drop_message(self, topic: str, reason: str) -> None:
        self._dropped[topic] += 1
        self._drops_since_warning[topic] += 1
        self._last_drop_reason[topic] = reason
        now = time.monotonic()
        if now - self._drop_warned_at.get(topic, -WARN_INTERVAL_S) >= WARN_INTERVAL_S:
            n = self._drops_since_warning.pop(topic)
            self._drop_warned_at[topic] = now
            more = f" ({n} dropped on this topic since the last warning)" if n > 1 else ""
            self.get_logger().warning(f"dropped a message on {topic}: {reason}{more}")  # type: ignore[attr-defined]
