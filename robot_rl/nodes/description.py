"""A training session as a graph of nodes, built from one session YAML (no ROS needed).

:func:`build_graph` reads a :class:`~robot_rl.config.Config` and says which nodes run,
from which executables, with which parameters. Two front ends start the same graph:

* ``ros2 launch robot_rl session.launch.py config:=...`` (``launch/*.launch.py``): one
  ``launch_ros`` ``Node`` per :class:`NodeSpec`, parameters from the params file;
* ``robot-rl launch configs/<task>.yaml``: :class:`robot_rl.nodes.launcher.Launcher`
  starts each node as a process, ``python -m robot_rl.nodes.<executable> --ros-args
  -r __node:=<name> --params-file <file>``.

Which nodes, by ``robot.backend``:

* ``sim``: ``sim_node`` (the MuJoCo arm and its cameras, publishing what the real
  controller and camera nodes publish) and ``actor_node``;
* ``franka``: ``controller_node``, one ``camera_<name>`` node (executable
  ``camera_node``) per configured camera, and ``actor_node``;
* ``topics``: the arm's topics come from elsewhere (another vendor's driver):
  camera nodes and ``actor_node`` only;

plus ``intervention_node`` when ``intervention.device`` names a SpaceMouse or keyboard
(unless ``ros.input_node`` is false: then e.g. ``spacenav_node`` publishes /spacenav).
Every node gets ``config`` (the session YAML, absolute) and its ``topics.*``.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from robot_rl.config import Config
from robot_rl.errors import ConfigError
from robot_rl.nodes.intervention import topic_devices
from robot_rl.nodes.topics import INPUT, ROBOT_COMMANDS, ROBOT_STATE, SIM, camera_frame_id, topic_parameters

NODE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
PACKAGE = "robot_rl"


@dataclass
class NodeSpec:
    """One node of the graph: its name, the executable (console script), its parameters."""

    name: str
    executable: str
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def module(self) -> str:
        """The Python module ``robot-rl launch`` runs with ``python -m``."""
        return f"{PACKAGE}.nodes.{self.executable}"


@dataclass
class GraphDescription:
    """The nodes of one session; writes the params file both front ends hand to them."""

    config: Path
    nodes: list[NodeSpec]

    def node(self, name: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [spec.name for spec in self.nodes]

    def params_file_text(self) -> str:
        """A ROS 2 params file: ``<node>: {ros__parameters: {...}}`` for every node."""
        doc = {spec.name: {"ros__parameters": spec.parameters} for spec in self.nodes}
        return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)

    def write_params_file(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "params.yaml"
        path.write_text(self.params_file_text(), encoding="utf-8")
        return path

    def command(self, spec: NodeSpec, params_file: str | Path, python: str = sys.executable) -> list[str]:
        """The command line ``robot-rl launch`` runs for one node."""
        return [python, "-m", spec.module, "--ros-args", "-r", f"__node:={spec.name}",
                "--params-file", str(params_file)]

    def describe(self, params_file: str | Path) -> str:
        """Human-readable: one command per node."""
        return "\n".join(f"{spec.name}: {shlex.join(self.command(spec, params_file))}" for spec in self.nodes)


def build_graph(cfg: Config, config_path: str | Path) -> GraphDescription:
    """The session's nodes (see the module docstring); ConfigError for a config no graph fits."""
    from robot_rl.nodes.actor import actor_cameras

    path = Path(config_path).resolve()
    base = {"config": str(path)}
    robot_topics = [*ROBOT_STATE, *ROBOT_COMMANDS]
    backend = cfg.robot.backend
    nodes: list[NodeSpec] = []
    for name, cam in cfg.cameras.items():
        if not NODE_NAME.match(name):
            raise ConfigError(f"{path}: camera name '{name}' cannot name a ROS node or topic (letters, digits, _)")
        if (cam.backend == "sim") != (backend == "sim"):
            raise ConfigError(f"{path}: cameras.{name}.backend is '{cam.backend}' but robot.backend is '{backend}': "
                              "a sim session has sim cameras only, a real one real cameras only")

    if backend == "sim":
        nodes.append(NodeSpec("sim_node", "sim_node", {
            **base, "topics": topic_parameters([*robot_topics, *SIM], list(cfg.cameras), ("image", "info"))}))
    else:
        if backend == "franka":
            nodes.append(NodeSpec("controller_node", "controller_node",
                                  {**base, "topics": topic_parameters(robot_topics)}))
        for name in cfg.cameras:
            nodes.append(NodeSpec(f"camera_{name}", "camera_node", {
                **base, "camera": name, "frame_id": camera_frame_id(name),
                "topics": topic_parameters([], [name], ("image", "info"))["cameras"][name]}))

    devices = topic_devices(cfg.intervention)
    if devices and cfg.ros.input_node:
        nodes.append(NodeSpec("intervention_node", "intervention_node",
                              {**base, "topics": topic_parameters(list(INPUT))}))

    sim_topics = ["sim_reset", "sim_reset_done", "sim_task_state"] if backend == "sim" else []
    actor_topics = robot_topics + sim_topics + (list(INPUT) if devices else [])
    nodes.append(NodeSpec("actor_node", "actor_node",
                          {**base, "topics": topic_parameters(actor_topics, actor_cameras(cfg))}))
    return GraphDescription(path, nodes)
