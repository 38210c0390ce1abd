"""A training session as a graph of nodes, built from one session YAML (no ROS needed).

:func:`build_graph` reads a :class:`~robot_rl.config.Config` and says which nodes run,
from which executables, with which parameters. Two front ends start the same graph:

* ``ros2 launch robot_rl session.launch.py config:=...`` (``launch/*.launch.py``): one
  ``launch_ros`` ``Node`` per :class:`NodeSpec`, parameters from the params file;
* ``robot-rl launch configs/<task>.yaml``: :class:`robot_rl.nodes.launcher.Launcher`
  starts each node as a process, ``python -m robot_rl.nodes.<executable> --ros-args
  -r __node:=<name> [-r __ns:=/<ns>] [-r <from>:=<to> ...] --params-file <file>``.

The session's namespace (``ros.namespace``; empty: the root) is every node's namespace,
and the nodes' topic names are relative (:mod:`robot_rl.nodes.topics`), so two sessions
in ``r1`` and ``r2`` share a DDS domain without hearing each other. In a namespace the
params file keys every node by its fully-qualified name (``/r1/actor_node:``: rclpy
matches a params file entry to the node's fully-qualified name or ``/**``, nothing
else), and every node gets the remap ``/clock:=/<ns>/clock`` (:data:`NAMESPACED_REMAPS`):
rclpy's TimeSource reads the absolute ``/clock``, and two sim sessions must not share
one clock.

Which nodes, by ``robot.backend``:

* ``sim``: ``sim_node`` (the MuJoCo arm and its cameras, publishing what the real
  controller and camera nodes publish) and ``actor_node``;
* ``franka``, ``ros2_control`` (every real-arm backend): ``controller_node``, one
  ``camera_<name>`` node (executable ``camera_node``) per configured camera, and
  ``actor_node``;
* ``topics``: the arm's topics come from elsewhere (another vendor's driver):
  camera nodes and ``actor_node`` only;

plus ``intervention_node`` when ``intervention.device`` names a SpaceMouse or keyboard
(unless ``ros.input_node`` is false: then e.g. ``spacenav_node`` publishes /spacenav),
and, first, ``recorder_node`` when ``ros.record.enabled`` (:mod:`robot_rl.nodes.recorder`).
A camera with ``backend: topic`` (any robot backend) gets no node of ours: another driver
publishes it (realsense2_camera, ...) and the actor reads the topic its config names.
In a sim session every node also gets ``use_sim_time: true``: the sim node publishes its
simulated time on ``/clock`` and the nodes' clocks and stamps follow it.
Every node gets ``config`` (the session YAML, absolute) and its ``topics.*``, with the
config's ``ros.topics`` names in place of the defaults (:func:`~robot_rl.nodes.topics.remap_topics`).
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
from robot_rl.nodes.topics import (
    CLOCK,
    INPUT,
    ROBOT_COMMANDS,
    ROBOT_STATE,
    SIM,
    actor_cameras,
    camera_frame_id,
    remap_topics,
    topic_parameters,
)

NODE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
PACKAGE = "robot_rl"
#: absolute topics that move under the session's namespace when it has one (``/clock`` -> ``/<ns>/clock``)
NAMESPACED_REMAPS = (CLOCK,)


@dataclass
class NodeSpec:
    """One node of the graph: its name, the executable (console script), its parameters."""

    name: str
    executable: str
    parameters: dict[str, Any] = field(default_factory=dict)
    #: topic remaps (from, to), applied by both front ends (``-r from:=to`` / launch_ros ``remappings``)
    remaps: list[tuple[str, str]] = field(default_factory=list)

    @property
    def module(self) -> str:
        """The Python module ``robot-rl launch`` runs with ``python -m``."""
        return f"{PACKAGE}.nodes.{self.executable}"


@dataclass
class GraphDescription:
    """The nodes of one session; writes the params file both front ends hand to them."""

    config: Path
    nodes: list[NodeSpec]
    namespace: str = ""  # "" (the root) or "/r1"

    def node(self, name: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [spec.name for spec in self.nodes]

    def fully_qualified_name(self, spec: NodeSpec) -> str:
        return f"{self.namespace}/{spec.name}"

    def params_key(self, spec: NodeSpec) -> str:
        """The node's key in the params file: its name, or in a namespace its fully-qualified name."""
        return self.fully_qualified_name(spec) if self.namespace else spec.name

    def params_file_text(self) -> str:
        """A ROS 2 params file: ``<node>: {ros__parameters: {...}}`` for every node (see :meth:`params_key`)."""
        doc = {self.params_key(spec): {"ros__parameters": spec.parameters} for spec in self.nodes}
        return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)

    def write_params_file(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "params.yaml"
        path.write_text(self.params_file_text(), encoding="utf-8")
        return path

    def command(self, spec: NodeSpec, params_file: str | Path, python: str = sys.executable) -> list[str]:
        """The command line ``robot-rl launch`` runs for one node."""
        ros_args = ["-r", f"__node:={spec.name}"]
        if self.namespace:
            ros_args += ["-r", f"__ns:={self.namespace}"]
        for frm, to in spec.remaps:
            ros_args += ["-r", f"{frm}:={to}"]
        return [python, "-m", spec.module, "--ros-args", *ros_args, "--params-file", str(params_file)]

    def describe(self, params_file: str | Path) -> str:
        """Human-readable: one command per node."""
        return "\n".join(f"{spec.name}: {shlex.join(self.command(spec, params_file))}" for spec in self.nodes)


def build_graph(cfg: Config, config_path: str | Path) -> GraphDescription:
    """The session's nodes (see the module docstring); ConfigError for a config no graph fits."""
    from robot_rl.nodes.camera import image_topic, own_cameras
    from robot_rl_drivers.cameras import camera_spec
    from robot_rl_drivers.robots import robot_spec

    path = Path(config_path).resolve()
    base: dict[str, Any] = {"config": str(path)}
    if cfg.robot.backend == "sim":  # the sim node publishes /clock: every node's clock follows it
        base["use_sim_time"] = True
    robot_topics = [*ROBOT_STATE, *ROBOT_COMMANDS]
    backend = cfg.robot.backend
    nodes: list[NodeSpec] = []
    for name, cam in cfg.cameras.items():
        if not NODE_NAME.match(name):
            raise ConfigError(f"{path}: camera name '{name}' cannot name a ROS node or topic (letters, digits, _)")
        cam_spec = camera_spec(cam.backend)
        if not cam_spec.reads_topic and cam_spec.simulated != (backend == "sim"):
            raise ConfigError(f"{path}: cameras.{name}.backend is '{cam.backend}' but robot.backend is '{backend}': "
                              "a sim session has sim (or topic) cameras only, a real one real (or topic) cameras only")
    ours = own_cameras(cfg)  # a topic camera is another driver's: no node of ours publishes it

    if backend == "sim":
        nodes.append(NodeSpec("sim_node", "sim_node", {
            **base, "topics": topic_parameters([*robot_topics, *SIM], ours, ("image", "info"))}))
    else:
        if robot_spec(backend).node == "controller_node":  # a real arm: our controller node runs its backend
            nodes.append(NodeSpec("controller_node", "controller_node",
                                  {**base, "topics": topic_parameters(robot_topics)}))
        for name in ours:
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
    for name, parts in nodes[-1].parameters["topics"].get("cameras", {}).items():
        parts["image"] = image_topic(cfg, name, parts["image"])
    for spec in nodes:  # ros.topics: the config's names for the robot-state, command and input topics
        spec.parameters["topics"] = remap_topics(spec.parameters["topics"], cfg.ros.topics.remaps())
    if cfg.ros.record.enabled:  # first, so it listens before anything is published (robot_rl.nodes.recorder)
        from robot_rl.nodes.recorder import NODE, recorder_parameters

        nodes.insert(0, NodeSpec(NODE, NODE, {**base, "use_sim_time": False, **recorder_parameters(cfg, nodes)}))
    namespace = cfg.ros.namespace
    if namespace:
        for spec in nodes:
            spec.remaps.extend((topic, namespace + topic) for topic in NAMESPACED_REMAPS)
    return GraphDescription(path, nodes, namespace)
