"""controller_node on a real backend over a fake arm library, as the node tests run it
(tests/nodes/test_controller_node*.py): a real-cell config, the session whose node process
finds the fake, and the robot topics a probe watches.

The fake library (tests/support/fake_pylibfranka.py, fake_rtde.py) runs in the node's own
process (and the loop process it spawns), so it is found through ``PYTHONPATH`` and told
its scenario through an environment variable naming a JSON file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from graph_harness import PICK, Probe, Session, private_env

from robot_rl.ros import convert
from robot_rl.ros import messages as m

SUPPORT = Path(__file__).resolve().parent


def real_cell_config(tmp_path: Path, name: str, robot: dict[str, Any], reset: dict[str, Any]) -> Path:
    """pick_cube with ``robot`` and ``reset`` as given, and as a real cell has it: no cameras
    configured here and no ground-truth object state. Written to ``<tmp_path>/<name>.yaml``."""
    cfg = yaml.safe_load(PICK.read_text())
    cfg["robot"] = robot
    cfg["cameras"] = {}
    cfg["env"].update(obs_mode="pixels", cameras=[])  # a real cell: no ground-truth object state
    cfg["reset"] = reset
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def fake_backend_session(tmp_path: Path, monkeypatch: Any, config: Path, *, lib: str, scenario_env: str,
                         log: str) -> tuple[Session, Probe]:
    """The session of ``config`` with controller_node's ``robot_lib`` set to the fake ``lib``,
    whose scenario (a log under ``<tmp_path>/<log>``) ``scenario_env`` names; and a probe in it."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"log": str(tmp_path / log)}))
    env = private_env()
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    env[scenario_env] = str(scenario)
    session = Session(tmp_path, [], env, config=config)
    session.graph.node("controller_node").parameters["robot_lib"] = lib
    session.params = session.graph.write_params_file(tmp_path)
    return session, Probe(monkeypatch, env)


class RobotTopics(NamedTuple):
    """What a probe hears from a robot node, and the publishers that command it."""

    poses: list  # (arrival time, (pos, quat)) from /robot/tcp_pose
    joints: list  # (arrival time, (names, q, dq, effort)) from /joint_states
    statuses: list  # the node's status dicts
    target: Any  # publisher of /robot/target_pose
    posture: Any  # publisher of /robot/posture


def watch_robot(probe: Probe, node: str) -> RobotTopics:
    """Subscribe ``probe`` to robot node ``node``'s state and status, and make its command publishers."""
    return RobotTopics(
        poses=probe.collect(m.PoseStamped, "/robot/tcp_pose", convert.pose_from_msg, depth=500),
        joints=probe.collect(m.JointState, "/joint_states", convert.joint_state_from_msg, depth=10),
        statuses=probe.statuses(node),
        target=probe.node.create_publisher(m.PoseStamped, "/robot/target_pose", 10),
        posture=probe.node.create_publisher(m.JointState, "/robot/posture", 10),
    )
