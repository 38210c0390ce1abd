"""What a session's recorder records: the plan behind ``recorder_node`` (``ros.record``).

With ``ros.record.enabled``, :func:`recorder_spec` adds a ``recorder_node`` to the session
graph (:mod:`robot_rl.nodes.description`), first, so it listens before anything is
published. It records the session's robot-plane topics, read from the graph itself:
every ``topics.*`` parameter of every node (images and camera_info, joint_states,
tcp_*, target_pose, gripper command, posture, spacenav twist/joy, the sim's topics),
each node's ``~/status``, and the standard topics robot_rl's nodes publish (tf,
tf_static, ``/diagnostics``; ``/clock`` in sim). ``ros.record.topics`` narrows that
to the names listed. Names stay as the graph has them (relative names resolve in the
recorder's namespace, which is the session's), so the bag holds the topics' full names.

Each topic has a kind, which decides the recorder's subscription and the QoS the bag
says was offered (what ``ros2 bag play`` publishes with):

===========  ======================================  =====================================
kind         subscription                            offered (robot_rl's publishers)
===========  ======================================  =====================================
``image``    reliable, keep-last 100                 reliable, keep-last 1
``stream``   reliable, keep-last 1000                reliable, keep-last 10
``event``    reliable, keep-last 1000                reliable, keep-last 10
``static``   reliable, transient-local, keep-last    reliable, transient-local, keep-last 1
             100 (latched transforms published
             before it started reach it too)
``clock``    best-effort, keep-last 1000             best-effort, keep-last 1
===========  ======================================  =====================================

A reliable subscription with a deep queue loses nothing a publisher delivers; what a
publisher's own keep-last history drops before delivery (an image replaced while the
network was busy) never reached anyone.

Parameters of the node: ``config`` (for ``ros.record``), and three string arrays of equal
length, ``record.topics`` (names), ``record.types`` (``pkg/msg/Name``) and ``record.kinds``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from robot_rl.config import Config
from robot_rl.errors import ConfigError
from robot_rl.nodes.topics import CLOCK, DIAGNOSTICS, TF, TF_STATIC

NODE = "recorder_node"

#: the message type of each ``topics.*`` key of the graph's nodes (cameras: ``image``, ``info``)
TYPES_BY_KEY = {
    "joint_states": "sensor_msgs/msg/JointState",
    "tcp_pose": "geometry_msgs/msg/PoseStamped",
    "tcp_twist": "geometry_msgs/msg/TwistStamped",
    "tcp_wrench": "geometry_msgs/msg/WrenchStamped",
    "target_pose": "geometry_msgs/msg/PoseStamped",
    "gripper_command": "std_msgs/msg/Float64",
    "posture": "sensor_msgs/msg/JointState",
    "spacenav_twist": "geometry_msgs/msg/Twist",
    "spacenav_joy": "sensor_msgs/msg/Joy",
    "sim_reset": "std_msgs/msg/String",
    "sim_reset_done": "std_msgs/msg/String",
    "sim_task_state": "sensor_msgs/msg/JointState",
    "sim_success": "std_msgs/msg/Bool",
    "image": "sensor_msgs/msg/Image",
    "info": "sensor_msgs/msg/CameraInfo",
}
COMPRESSED_IMAGE = "sensor_msgs/msg/CompressedImage"
STREAM_KEYS = ("joint_states", "tcp_pose", "tcp_twist", "tcp_wrench", "sim_task_state", "sim_success")
STATUS_TYPE = "std_msgs/msg/String"
#: topics robot_rl's nodes publish besides their ``topics.*`` ones: (name, type, kind, sim only)
STANDARD_TOPICS = (
    (TF, "tf2_msgs/msg/TFMessage", "stream", False),
    (TF_STATIC, "tf2_msgs/msg/TFMessage", "static", False),
    (DIAGNOSTICS, "diagnostic_msgs/msg/DiagnosticArray", "event", False),
    (CLOCK, "rosgraph_msgs/msg/Clock", "clock", True),
)
KINDS = ("image", "stream", "event", "static", "clock")


@dataclass(frozen=True)
class RecordedTopic:
    name: str  # as the graph names it (relative names resolve in the session namespace)
    type_name: str  # pkg/msg/Name
    kind: str  # one of KINDS


def _walk(topics: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """``(key, name)`` for every topic in a node's nested ``topics:`` parameter (camera parts by part)."""
    if isinstance(topics, dict):
        for k, v in topics.items():
            yield from _walk(v, k)
    elif isinstance(topics, str):
        yield key, topics


def _kind(key: str) -> str:
    if key in ("image", "info"):
        return "image"
    return "stream" if key in STREAM_KEYS else "event"


def session_topics(cfg: Config, nodes: list[Any]) -> list[RecordedTopic]:
    """Every topic the graph's nodes use or publish (see the module docstring), each once, in order."""
    found: dict[str, RecordedTopic] = {}

    def add(name: str, type_name: str, kind: str) -> None:
        if name not in found:
            found[name] = RecordedTopic(name, type_name, kind)

    for spec in nodes:
        for key, name in _walk(spec.parameters.get("topics", {})):
            type_name = TYPES_BY_KEY.get(key)
            if type_name is None:
                raise ConfigError(f"the recorder does not know the message type of topics.{key} ({name}) "
                                  f"of {spec.name}")
            if key == "image" and name.endswith("/compressed"):
                type_name = COMPRESSED_IMAGE  # a topic camera read with compressed transport
            add(name, type_name, _kind(key))
    for spec in nodes:
        add(f"{spec.name}/status", STATUS_TYPE, "event")
    sim = cfg.robot.backend == "sim"
    for name, type_name, kind, sim_only in STANDARD_TOPICS:
        if sim or not sim_only:
            add(name, type_name, kind)
    return list(found.values())


def _bare(name: str) -> str:
    return name.lstrip("/")


def select_topics(topics: list[RecordedTopic], wanted: list[str]) -> list[RecordedTopic]:
    """``topics`` narrowed to ``ros.record.topics`` (all when empty); ConfigError for a name the session lacks.

    A leading ``/`` does not matter: ``/joint_states`` and ``joint_states`` name the same
    topic of a session in the root namespace.
    """
    if not wanted:
        return list(topics)
    by_name = {_bare(t.name): t for t in topics}
    unknown = [w for w in wanted if _bare(w) not in by_name]
    if unknown:
        raise ConfigError(f"ros.record.topics: {', '.join(unknown)} is not a topic of this session "
                          f"(it has: {', '.join(sorted(by_name))})")
    picked = {_bare(w) for w in wanted}
    return [t for t in topics if _bare(t.name) in picked]


def recorder_parameters(cfg: Config, nodes: list[Any]) -> dict[str, Any]:
    """The recorder node's ``record.*`` parameters for a graph of ``nodes`` (its own excluded)."""
    topics = select_topics(session_topics(cfg, nodes), cfg.ros.record.topics)
    return {"record": {"topics": [t.name for t in topics], "types": [t.type_name for t in topics],
                       "kinds": [t.kind for t in topics]}}


def parse_parameters(names: list[str], types: list[str], kinds: list[str]) -> list[RecordedTopic]:
    """The node's three arrays back into topics; ValueError for arrays that do not line up."""
    if not (len(names) == len(types) == len(kinds)):
        raise ValueError(f"record.topics, record.types and record.kinds must be equally long "
                         f"({len(names)}, {len(types)}, {len(kinds)})")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"record.kinds: {bad[0]!r} is not one of {', '.join(KINDS)}")
    if not names:
        raise ValueError("record.topics is empty: nothing to record")
    return [RecordedTopic(n, t, k) for n, t, k in zip(names, types, kinds)]


def bag_path(directory: str | Path, now: Optional[datetime.datetime] = None) -> Path:
    """A new bag folder under ``directory``: ``session_<YYYYmmdd>_<HHMMSS>`` (``_2``, ``_3``... if taken)."""
    now = now or datetime.datetime.now()
    base = Path(directory) / f"session_{now:%Y%m%d_%H%M%S}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}_{n}")
    return path


def subscription_depth(kind: str) -> int:
    return {"image": 100, "static": 100}.get(kind, 1000)


def offered_depth(kind: str) -> int:
    return 1 if kind in ("image", "static", "clock") else 10
