"""What a rosbag2 MCAP file says about each topic: its ``ros2msg`` schema and its offered QoS.

* :func:`msg_definition` is the *complete* message definition rosbag2 stores as a
  channel's schema (``ros2msg`` encoding, rosbag2's docs/message_definition_encoding.md):
  the type's ``.msg`` text first, then every type it uses, each after a line of 80
  ``=`` and a line ``MSG: pkg/Name``, depth first, dependencies in sorted order, each
  once. Comments and constants are left out (the encoding allows it; they change
  neither the wire format nor the decoding), so Foxglove and ``rosbags`` decode the
  messages with no ROS install.
* :func:`qos_profile` is one entry of ``offered_qos_profiles``, in rosbag2's version-9
  spelling (``keep_last``, ``reliable``, durations as ``{sec, nsec}``); ``ros2 bag
  play`` publishes each topic with the reliability and durability recorded there.
"""

from __future__ import annotations

from typing import Any

import yaml

from robot_rl.ros.messages import REGISTRY, Message
from robot_rl.ros.messages.base import Field

SEPARATOR = "=" * 80
#: rmw's "infinite" duration (RMW_DURATION_INFINITE), as rosbag2 writes it for an unset deadline, lifespan, lease
INFINITE = {"sec": 9223372036, "nsec": 854775807}

#: the history depth of robot_rl's publisher profiles (robot_rl.nodes.common.qos) by kind; all reliable, volatile
PUBLISHER_QOS = {"image": 1, "stream": 10, "event": 10}


def short_name(type_name: str) -> str:
    """``sensor_msgs/msg/Image`` -> ``sensor_msgs/Image`` (the spelling of ``.msg`` files and ``MSG:`` lines)."""
    pkg, _, name = type_name.split("/")
    return f"{pkg}/{name}"


def message_class(type_name: str) -> type[Message]:
    """Our class for a ``pkg/msg/Name`` type; KeyError naming the known types if there is none."""
    try:
        return REGISTRY[type_name]
    except KeyError:
        raise KeyError(f"no message type {type_name!r} (known: {', '.join(sorted(REGISTRY))})") from None


def _field_line(f: Field) -> str:
    base = short_name(f.base) if f.is_message else f.base
    suffix = "[]" if f.kind == "sequence" else f"[{f.size}]" if f.kind == "array" else ""
    line = f"{base}{suffix} {f.name}"
    if f.default is not None:
        line += f" {f.default!r}"
    return line


def msg_text(cls: type[Message]) -> str:
    """The fields of one type as ``.msg`` lines (nested types spelled ``pkg/Name``)."""
    return "\n".join(_field_line(f) for f in cls._fields) + "\n"


def msg_definition(cls: type[Message]) -> str:
    """The complete ``ros2msg`` definition of ``cls`` (see the module docstring)."""
    seen: set[str] = set()

    def text_with_dependencies(c: type[Message]) -> str:
        out = msg_text(c)
        for dep in sorted({f.base for f in c._fields if f.is_message}, key=short_name):
            if dep in seen:
                continue
            seen.add(dep)
            out += f"{SEPARATOR}\nMSG: {short_name(dep)}\n" + text_with_dependencies(REGISTRY[dep])
        return out

    seen.add(cls._type)
    return text_with_dependencies(cls)


def qos_profile(depth: int, reliability: str = "reliable", durability: str = "volatile") -> dict[str, Any]:
    """One offered QoS profile as rosbag2 (metadata version 9) writes it."""
    return {"history": "keep_last", "depth": int(depth), "reliability": reliability, "durability": durability,
            "deadline": dict(INFINITE), "lifespan": dict(INFINITE), "liveliness": "automatic",
            "liveliness_lease_duration": dict(INFINITE), "avoid_ros_namespace_conventions": False}


def qos_yaml(profiles: list[dict[str, Any]]) -> str:
    """``offered_qos_profiles`` as the string an MCAP channel's metadata holds (rosbag2's YAML)."""
    return yaml.safe_dump(profiles, sort_keys=False, default_flow_style=False) if profiles else ""
