"""``robot-rl launch``: start a session's node graph as processes, without ROS 2.

    robot-rl launch configs/pick_cube.yaml --set ros.policy=expert --set ros.episodes=3

Starts the nodes ``ros2 launch robot_rl session.launch.py config:=...`` starts (see
:mod:`robot_rl.nodes.description`), each as ``python -m robot_rl.nodes.<node>
--ros-args -r __node:=<name> --params-file <run dir>/params.yaml``, and prints their
output prefixed with the node's name. The nodes use rclpy when it imports (a sourced
ROS 2) and the DDS backend otherwise. ``--namespace r1`` (or ``ros.namespace``) runs every
node in ``/r1`` (``-r __ns:=/r1``). Ctrl-C stops every node cleanly; a node that
exits ends the session and is reported. Progress (the nodes up, the episodes finished)
goes to stderr. With ``--set``, the effective config is written
to ``<run dir>/session.yaml`` and every node loads that one.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from robot_rl.config import to_dict
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="session YAML, e.g. configs/pick_cube.yaml (or a name: pick_cube)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set ros.policy=expert")
    parser.add_argument("--run-dir", help="where the params file (and session.yaml) go (default: a new temp dir)")
    parser.add_argument("--namespace", metavar="NS",
                        help="every node's ROS namespace, e.g. r1 (topics /r1/joint_states, ...): the same as "
                             "--set ros.namespace=NS; '/' for the root namespace")
    parser.add_argument("--stop-timeout", type=float, default=10.0,
                        help="seconds each node gets to exit after SIGINT before SIGTERM, then SIGKILL")
    parser.add_argument("--dry-run", action="store_true", help="print the nodes' commands and params file, start none")
    parser.add_argument("--no-progress", action="store_true",
                        help="no bar; a status line only when it starts, once a minute and at the end"
                             " (nodes up, episodes)")


def run(args: argparse.Namespace) -> int:
    from robot_rl.nodes.description import build_graph
    from robot_rl.nodes.launcher import Launcher

    path = resolve_config(args.config)
    if args.namespace is not None:
        args.overrides = [*args.overrides, f"ros.namespace={args.namespace}"]
    cfg = load_config(path, args.overrides)
    run_dir = Path(args.run_dir) if args.run_dir else Path(tempfile.mkdtemp(prefix="robot_rl_launch_"))
    run_dir.mkdir(parents=True, exist_ok=True)
    if args.overrides:
        path = run_dir / "session.yaml"
        path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
    graph = build_graph(cfg, path)
    if args.dry_run:
        from robot_rl.nodes.actor import check_start

        check_start(cfg)  # what the nodes would refuse at start, without starting them
        params = graph.write_params_file(run_dir)
        print(graph.describe(params))
        print(f"--- {params}")
        print(params.read_text(), end="")
        return 0
    return Launcher(graph, run_dir, stop_timeout_s=args.stop_timeout, episodes=cfg.ros.episodes,
                    progress=cfg.train.progress and not args.no_progress,
                    progress_every_s=cfg.learning.log_every_s).run()
