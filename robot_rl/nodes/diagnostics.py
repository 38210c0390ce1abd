"""A node's ``~/status`` as one ``diagnostic_msgs/DiagnosticStatus`` (no ROS needed here).

Every node publishes ``/diagnostics`` (``diagnostic_msgs/msg/DiagnosticArray``, the
absolute name: ``diagnostic_aggregator``, ``rqt_robot_monitor`` and Foxglove read it
there) at ``ros.status_hz`` and on events, next to its JSON ``~/status``. Each message
holds one status for the node, built by :func:`diagnostic_fields`:

* ``name``: the node's fully-qualified name (``/r1/actor_node``), so namespaced
  sessions on one domain stay apart on the one topic;
* ``hardware_id``: what the node drives (``camera front (realsense)``, ``robot franka``,
  ``robot sim``, ``input spacemouse``), empty for the actor;
* ``level``, the rule, first match wins:

  - ERROR: the robot is in a fault (``fault`` set, the node's own or its
    ``controller``'s), the input device is lost (``device_lost``), or the event being
    published is a ``fault``;
  - WARN: the arm holds (``holding``: the watchdog, a rejected target, before the
    first target; or a ``hold`` event), or the node dropped malformed messages in the
    last :data:`DROP_WARN_S` seconds;
  - OK otherwise. (STALE is the aggregator's to set, for a node that went quiet.)

* ``message``: a short summary of why (``ok``, ``fault: ...``, ``holding``,
  ``dropped 3 malformed messages in the last 30 s, most on /robot/target_pose: ...``);
* ``values``: the status flattened to string key/values (nested keys joined with
  ``.``, e.g. ``dropped./robot/target_pose``; lists as JSON; ``None`` as ``""``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

from robot_rl import jsonio

OK, WARN, ERROR, STALE = 0, 1, 2, 3
LEVEL_NAMES = {OK: "OK", WARN: "WARN", ERROR: "ERROR", STALE: "STALE"}
#: a drop keeps the node at WARN this long (a counter that stops rising is history)
DROP_WARN_S = 30.0
#: longest value string sent (a long list in a status stays readable in a monitor)
MAX_VALUE_CHARS = 1000


@dataclass
class DiagnosticFields:
    """The fields of one ``DiagnosticStatus``; ``level`` as an int (the message wants one byte)."""

    level: int
    name: str
    message: str
    hardware_id: str = ""
    values: list[tuple[str, str]] = field(default_factory=list)


def diagnostic_fields(status: dict[str, Any], *, name: str, hardware_id: str = "",
                      recent_drops: int = 0) -> DiagnosticFields:
    """The diagnostic of a node whose ``~/status`` is ``status`` (see the module docstring).

    ``recent_drops``: messages the node dropped in the last :data:`DROP_WARN_S` seconds
    (the caller keeps the time; this stays a pure function).
    """
    controller = status.get("controller") if isinstance(status.get("controller"), dict) else {}
    event = status.get("event") if isinstance(status.get("event"), dict) else {}
    fault = status.get("fault") or controller.get("fault")
    errors, warnings = [], []
    if fault:
        errors.append(f"fault: {fault}")
    if status.get("device_lost"):
        errors.append(f"input device lost: {status['device_lost']}")
    if event.get("event") == "fault" and not fault:
        errors.append(f"fault: {event.get('reason', '?')}")
    if status.get("holding") or controller.get("holding") or event.get("event") == "hold":
        reason = event.get("reason") if event.get("event") == "hold" else None
        warnings.append(f"holding ({reason})" if reason else "holding")
    if recent_drops > 0:
        text = f"dropped {recent_drops} malformed message{'s' if recent_drops != 1 else ''} " \
               f"in the last {DROP_WARN_S:g} s"
        dropped, reasons = status.get("dropped"), status.get("last_drop_reason")
        if isinstance(dropped, dict) and dropped and isinstance(reasons, dict):
            topic = max(dropped, key=lambda t: dropped[t])  # the topic with the most drops, and why
            text += f", most on {topic}" + (f": {reasons[topic]}" if reasons.get(topic) else "")
        warnings.append(text)
    level = ERROR if errors else WARN if warnings else OK
    message = "; ".join(errors + warnings) or "ok"
    return DiagnosticFields(level, name, _clip(message), hardware_id, list(flatten(status)))


def flatten(values: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted key, text)`` for every leaf of a status dict, in its order."""
    for key, value in values.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            yield from flatten(value, name)
        else:
            yield name, _clip(value_text(value))


def value_text(value: Any) -> str:
    """A status value as text: strings as they are, numbers and bools as JSON spells them."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # nan, inf, -inf: JSON has no spelling for them
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (dict, list, tuple)):
        try:
            return jsonio.dumps(value, default=str)
        except (TypeError, ValueError):  # a NaN inside, say: still readable
            return str(value)
    return str(value)  # a numpy scalar, or anything else the node put there


def _clip(text: str) -> str:
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS - 3] + "..."


class DropWindow:
    """How many messages a node dropped in the last ``window_s`` seconds, from its running total."""

    def __init__(self, window_s: float = DROP_WARN_S) -> None:
        self.window_s = window_s
        self._rises: list[tuple[float, int]] = []  # (when, the total before it rose), oldest first
        self._total = 0

    def update(self, total: int, now: float) -> int:
        """Note the node's drop total at ``now`` (seconds, any monotonic clock); the recent drops."""
        if total > self._total:
            self._rises.append((now, self._total))
            self._total = total
        while self._rises and now - self._rises[0][0] > self.window_s:
            self._rises.pop(0)
        return self._total - self._rises[0][1] if self._rises else 0
