"""Node and topic names, resolved and validated as rcl does (DDS backend).

``chatter`` in namespace ``/robot`` is ``/robot/chatter``; ``~/state`` of node ``arm`` in
``/robot`` is ``/robot/arm/state``; ``/chatter`` is itself. The DDS topic of a ROS topic
is ``rt`` + its fully-qualified name (``rt/robot/chatter``), as in rmw_cyclonedds_cpp.
"""

from __future__ import annotations

import re

from robot_rl.errors import ConfigError

_TOKEN = r"[A-Za-z_][A-Za-z0-9_]*"
_NODE_NAME = re.compile(_TOKEN)
_FQ_NAME = re.compile(rf"(/{_TOKEN})+")
_NAMESPACE = re.compile(rf"/|(/{_TOKEN})+")
DDS_TOPIC_PREFIX = "rt"


def validate_node_name(name: str) -> str:
    if not isinstance(name, str) or not _NODE_NAME.fullmatch(name):
        raise ConfigError(f"invalid node name {name!r}: use letters, digits and '_', not starting with a digit")
    return name


def normalize_namespace(namespace: str | None) -> str:
    ns = namespace or "/"
    if not ns.startswith("/"):
        ns = "/" + ns
    if len(ns) > 1 and ns.endswith("/"):
        ns = ns[:-1]
    if not _NAMESPACE.fullmatch(ns):
        raise ConfigError(f"invalid namespace {namespace!r}")
    return ns


def resolve_topic_name(topic: str, node_name: str, namespace: str) -> str:
    """The fully-qualified name of ``topic`` as seen from node ``namespace``/``node_name``."""
    if not isinstance(topic, str) or not topic:
        raise ConfigError(f"invalid topic name {topic!r}: it is empty")
    if topic.startswith("~"):
        rest = topic[1:]
        if rest and not rest.startswith("/"):
            raise ConfigError(f"invalid topic name {topic!r}: '~' must be followed by '/'")
        base = namespace.rstrip("/") + "/" + node_name
        resolved = base + rest
    elif topic.startswith("/"):
        resolved = topic
    else:
        resolved = namespace.rstrip("/") + "/" + topic
    if not _FQ_NAME.fullmatch(resolved):
        raise ConfigError(f"invalid topic name {topic!r}: tokens are letters, digits and '_', not starting "
                          "with a digit, separated by single '/', with no trailing '/'")
    return resolved


def dds_topic_name(fq_topic: str) -> str:
    return DDS_TOPIC_PREFIX + fq_topic
