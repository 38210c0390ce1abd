"""The ``ros2 launch`` front end of the session graph (``launch/*.launch.py`` call this).

Launch arguments:

* ``config``: the session YAML (a path, or a name such as ``pick_cube``: looked up in
  the source tree's ``configs/`` and the installed ``share/robot_rl/configs``);
* ``set``: overrides, ``;``-separated, e.g. ``set:='ros.policy=expert;ros.episodes=3'``
  (then the effective config is written to ``<run_dir>/session.yaml`` for the nodes);
* ``run_dir``: where the params file goes (default: a new temporary directory);
* ``namespace``: every node's namespace, e.g. ``namespace:=r1`` (topics ``/r1/joint_states``,
  ...); it replaces the config's ``ros.namespace``; empty (the default): a namespace an
  including launch file pushed (``PushRosNamespace``), else the config's; ``/``: the root
  namespace whatever the config says. Every node's params-file key and ``/clock`` remap
  follow it (:mod:`robot_rl.nodes.description`).

It builds the same :class:`~robot_rl.nodes.description.GraphDescription` that
``robot-rl launch`` runs, writes its params file, and starts one ``launch_ros`` Node per
node with that params file. When any node exits the whole session stops, as under
``robot-rl launch``: a node that exits with 0 (an actor that finished its episodes)
emits ``Shutdown``, and the session ends with exit status 0; a node that dies (a non-zero
exit, or a signal such as ``kill -9``) while the session runs raises :class:`NodeDied`,
which launch reports in one line (``Caught exception in launch ...: node sim_node died
(exit code -9: SIGKILL)``) before it shuts the others down, and ``ros2 launch`` ends with
exit status 1, so a script can tell a crash from a finished session. Imports
launch/launch_ros, so only a sourced ROS 2 can import this module.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml


def _nodes(context: Any) -> list[Any]:
    from launch.actions import Shutdown
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    from robot_rl.config import to_dict
    from robot_rl.nodes.description import PACKAGE, build_graph
    from robot_rl.tasks import load_config
    path = _resolve(LaunchConfiguration("config").perform(context))
    overrides = [o.strip() for o in LaunchConfiguration("set").perform(context).split(";") if o.strip()]
    # the argument, else a namespace pushed by an including launch file (PushRosNamespace), else the config's
    namespace = LaunchConfiguration("namespace").perform(context).strip() or \
        (context.launch_configurations.get("ros_namespace") or "").strip()
    if namespace:
        overrides.append(f"ros.namespace={namespace}")  # validated with the rest of the config
    cfg = load_config(path, overrides)
    run_dir = LaunchConfiguration("run_dir").perform(context)
    run_dir = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="robot_rl_launch_"))
    run_dir.mkdir(parents=True, exist_ok=True)
    if overrides:
        path = run_dir / "session.yaml"
        path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
    graph = build_graph(cfg, path)
    params = str(graph.write_params_file(run_dir))
    return [Node(package=PACKAGE, executable=spec.executable, name=spec.name, namespace=graph.namespace,
                 parameters=[params], remappings=list(spec.remaps), output="screen",
                 on_exit=on_node_exit(spec.name, Shutdown)) for spec in graph.nodes]


class NodeDied(RuntimeError):
    """A node of the session died while it ran: ``ros2 launch`` reports it and exits with 1."""


def on_node_exit(name: str, shutdown: Any) -> Any:
    """The ``on_exit`` handler of node ``name``: ``shutdown`` (launch's ``Shutdown`` action class)
    after a clean exit; :class:`NodeDied` for a non-zero exit while the session is not already
    shutting down (a node stopped by the shutdown's own signals is no crash)."""
    def handle(event: Any, context: Any) -> list[Any]:
        from robot_rl.nodes.launcher import describe_exit  # numpy and PyYAML only: fine in ros2's Python

        code = int(event.returncode)
        if code != 0 and not context.is_shutdown:
            raise NodeDied(f"node {name} died ({describe_exit(code)}); the session ends with exit status 1")
        return [shutdown(reason=f"{name} exited ({describe_exit(code)})")]
    return handle


def _resolve(config: str) -> Path:
    """A config path, or a name looked up in the source tree and the installed share/ folders."""
    from robot_rl.paths import resolve_config

    return resolve_config(config)


def generate_launch_description(config: str = "", overrides: str = "") -> Any:
    """A LaunchDescription for the session ``config`` (a default the launch argument may replace)."""
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    from launch import LaunchDescription

    config_arg = DeclareLaunchArgument("config", default_value=config, description="session YAML or config name") \
        if config else DeclareLaunchArgument("config", description="session YAML or config name, e.g. pick_cube")
    return LaunchDescription([
        config_arg,
        DeclareLaunchArgument("set", default_value=overrides,
                              description="config overrides, ';'-separated: 'ros.policy=expert;ros.episodes=3'"),
        DeclareLaunchArgument("run_dir", default_value="", description="where the params file goes"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="every node's namespace, e.g. r1 (default: the config's ros.namespace; "
                                          "'/': the root)"),
        OpaqueFunction(function=_nodes),
    ])
