"""``--ros-args`` on the command line and ROS 2 params files, as rcl reads them (DDS backend).

Supported inside ``--ros-args ... [--]`` (several such sections may appear):

* ``-p NAME:=VALUE`` / ``--param``: VALUE is parsed as YAML (``3`` int, ``3.0`` double,
  ``true`` bool, ``[1, 2]`` an array, anything else a string);
* ``--params-file FILE``: a ROS 2 params file (below);
* ``-r FROM:=TO`` / ``--remap``: a topic remap, or ``__node:=NAME`` / ``__ns:=/NS``;
  ``NODE:FROM:=TO`` limits it to one node;
* ``--log-level [NAME:=]LEVEL``; logging switches (``--enable-*-logs``,
  ``--disable-*-logs``, ``--log-config-file``) and ``-e/--enclave`` are accepted and ignored.

Anything else inside ``--ros-args`` is an error, as in rcl. Params files look like::

    camera_node:            # or /ns/camera_node, or /** for every node
      ros__parameters:
        fps: 30
        topic: /camera/wrist/color/image_raw
        intrinsics: {fx: 600.0}      # nested keys become "intrinsics.fx"

Sources apply in command-line order; a later value for the same name wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from robot_rl.config.yaml_text import parse_yaml
from robot_rl.errors import ConfigError
from robot_rl.ros.errors import ParameterError

_IGNORED_FLAGS = {"--enable-rosout-logs", "--disable-rosout-logs", "--enable-stdout-logs",
                  "--disable-stdout-logs", "--enable-external-lib-logs", "--disable-external-lib-logs"}
_IGNORED_WITH_VALUE = {"--log-config-file", "-e", "--enclave", "--log-file-name"}


@dataclass
class RosArguments:
    """What the ROS part of a command line asks for."""

    node_name: str | None = None
    namespace: str | None = None
    remaps: list[tuple[str | None, str, str]] = field(default_factory=list)  # (node or None, from, to)
    log_level: str | None = None
    # ("file", path, {pattern: {name: value}}) or ("param", name, value), in command-line order
    sources: list[tuple] = field(default_factory=list)

    def parameter_overrides(self, node_fqn: str) -> dict[str, Any]:
        """Parameter values for the node with fully-qualified name ``node_fqn`` ("/ns/name")."""
        values: dict[str, Any] = {}
        for source in self.sources:
            if source[0] == "param":
                values[source[1]] = source[2]
                continue
            for pattern, params in source[2].items():
                if node_name_matches(pattern, node_fqn):
                    values.update(params)
        return values


def split_ros_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the tokens inside ``--ros-args`` sections, every other token)."""
    ros, other, inside = [], [], False
    for token in argv:
        if token == "--ros-args":
            inside = True
        elif token == "--" and inside:
            inside = False
        elif inside:
            ros.append(token)
        else:
            other.append(token)
    return ros, other


def remove_ros_args(args: list[str]) -> list[str]:
    """rclpy.utilities.remove_ros_args: the command line without its ``--ros-args`` sections."""
    return split_ros_args(list(args))[1]


def parse_ros_args(argv: list[str]) -> RosArguments:
    """Parse the ``--ros-args`` sections of ``argv`` (a bad token is one ParameterError)."""
    tokens, _ = split_ros_args(argv)
    out = RosArguments()
    i = 0

    def value_of(flag: str) -> str:
        nonlocal i
        i += 1
        if i >= len(tokens):
            raise ParameterError(f"--ros-args: {flag} needs a value")
        return tokens[i]

    while i < len(tokens):
        token = tokens[i]
        if token in ("-p", "--param"):
            name, value = _split_assignment(value_of(token), token)
            out.sources.append(("param", name, _parse_value(value, f"-p {name}")))
        elif token == "--params-file":
            path = value_of(token)
            out.sources.append(("file", path, load_params_file(path)))
        elif token in ("-r", "--remap"):
            lhs, to = _split_assignment(value_of(token), token)
            node, _, frm = lhs.rpartition(":") if ":" in lhs else (None, "", lhs)
            if frm == "__node":
                out.node_name = to
            elif frm == "__ns":
                out.namespace = to if to.startswith("/") else "/" + to
            else:
                out.remaps.append((node or None, frm, to))
        elif token == "--log-level":
            out.log_level = value_of(token).rpartition(":=")[2]
        elif token in _IGNORED_FLAGS:
            pass
        elif token in _IGNORED_WITH_VALUE:
            value_of(token)
        else:
            raise ParameterError(f"--ros-args: unknown argument {token!r}")
        i += 1
    return out


def _split_assignment(text: str, flag: str) -> tuple[str, str]:
    if ":=" not in text:
        raise ParameterError(f"--ros-args: {flag} expects NAME:=VALUE, got {text!r}")
    name, value = text.split(":=", 1)
    if not name:
        raise ParameterError(f"--ros-args: {flag} has an empty name in {text!r}")
    return name, value


def _parse_value(text: str, where: str) -> Any:
    try:
        value = parse_yaml(text, source=where) if text.strip() else ""
    except ConfigError as err:
        raise ParameterError(f"cannot parse value {text[:80]!r}: {err}") from None
    return _check_value(value, where)


def _check_value(value: Any, where: str) -> Any:
    if value is None:
        raise ParameterError(f"{where}: a parameter value cannot be empty/null")
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        kinds = {bool if isinstance(v, bool) else type(v) for v in value}
        if len(kinds) > 1 or not kinds <= {bool, int, float, str}:
            raise ParameterError(f"{where}: an array parameter needs values of one type "
                                 f"(bool, int, float or str), got {value!r}")
        return value
    raise ParameterError(f"{where}: unsupported parameter value {value!r}")


def load_params_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """``{node name pattern: {parameter name: value}}`` from a ROS 2 params file."""
    path = Path(path)
    try:
        doc = parse_yaml(path.read_text(encoding="utf-8"), source=f"params file {path}")
    except OSError as err:
        raise ParameterError(f"params file {path}: cannot read: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ParameterError(f"params file {path}: is not UTF-8 text") from None
    except ConfigError as err:  # not YAML, too large, too deep, an alias bomb, duplicate keys
        raise ParameterError(str(err)) from None
    if not isinstance(doc, dict):
        raise ParameterError(f"params file {path}: expected a mapping of node names at the top level")
    out: dict[str, dict[str, Any]] = {}
    _collect_nodes(doc, "", path, out)
    return out


def _collect_nodes(mapping: dict, prefix: str, path: Path, out: dict) -> None:
    for key, value in mapping.items():
        key = str(key)
        if key == "ros__parameters":
            if not prefix:
                raise ParameterError(f"params file {path}: ros__parameters must sit under a node name")
            if not isinstance(value, dict):
                raise ParameterError(f"params file {path}: {prefix}.ros__parameters must be a mapping")
            params: dict[str, Any] = {}
            _flatten(value, "", path, prefix, params)
            out.setdefault(prefix, {}).update(params)
        elif isinstance(value, dict):
            _collect_nodes(value, f"{prefix}/{key.strip('/')}" if prefix else "/" + key.strip("/"), path, out)
        else:
            raise ParameterError(f"params file {path}: '{prefix}/{key}' is not under ros__parameters")


def _flatten(mapping: dict, prefix: str, path: Path, node: str, out: dict) -> None:
    for key, value in mapping.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            _flatten(value, name, path, node, out)
        else:
            out[name] = _check_value(value, f"params file {path}: {node}: {name}")


def params_file_text(nodes: dict[str, dict[str, Any]]) -> str:
    """A ROS 2 params file for ``{node name: {parameter: value}}`` (nested dicts stay nested).

    What a launch description writes so that ``ros2 launch`` (rcl) and ``robot-rl launch``
    (this module) hand every node the same parameters.
    """
    for node, params in nodes.items():
        for name, value in _flat_items(params):
            _check_value(value, f"node {node}: parameter {name}")
    doc = {node: {"ros__parameters": params} for node, params in nodes.items()}
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def _flat_items(mapping: dict, prefix: str = ""):
    for key, value in mapping.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            yield from _flat_items(value, name)
        else:
            yield name, value


def node_name_matches(pattern: str, node_fqn: str) -> bool:
    """rcl's node-name matching in params files: ``/**`` any namespaces, ``*`` one token."""
    if not pattern.startswith("/"):
        pattern = "/" + pattern
    regex = ""
    for part in re.split(r"(/\*\*|\*)", pattern):
        if part == "/**":
            regex += r"(/[^/]+)*"
        elif part == "*":
            regex += r"[^/]*"
        else:
            regex += re.escape(part)
    return re.fullmatch(regex, node_fqn) is not None
