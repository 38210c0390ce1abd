"""intervention_node in a test process, heard as the actor hears it (tests/nodes): the
session config, a probe whose node takes the node's parameters, and the actor's side.

The intervention node publishes the person's input on ``/spacenav/twist`` and
``/spacenav/joy``; the actor reads it back with :class:`~robot_rl.nodes.intervention.TopicInput`,
which the probe feeds here, so a test checks what the actor would read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from graph_harness import PICK, Probe, private_env

from robot_rl.nodes.intervention import TopicInput
from robot_rl.ros import convert
from robot_rl.ros import messages as m
from robot_rl.tasks import load_config


def intervention_session(tmp_path: Path, monkeypatch: Any, intervention: dict[str, Any],
                         name: str) -> tuple[Any, Probe]:
    """pick_cube with ``intervention`` (written to ``<tmp_path>/<name>.yaml``), loaded, and a
    probe whose node has that config and the ``/spacenav/*`` topics as parameters."""
    cfg = yaml.safe_load(PICK.read_text())
    cfg["intervention"] = intervention
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump(cfg))
    session = load_config(config)
    probe = Probe(monkeypatch, private_env(), ros_args=["-p", f"config:={config}",
                                                        "-p", "topics.spacenav_twist:=/spacenav/twist",
                                                        "-p", "topics.spacenav_joy:=/spacenav/joy"])
    return session, probe


def actor_side(probe: Probe, intervention: Any) -> tuple[TopicInput, list]:
    """The actor's TopicInput fed from the probe's subscriptions, and every Joy's buttons as
    (arrival time, buttons)."""
    actor = TopicInput(intervention, timeout_s=1.0)
    probe.node.create_subscription(m.Twist, "/spacenav/twist", lambda msg: actor.on_twist(
        convert.twist_from_msg(msg)), 50)
    joys = probe.collect(m.Joy, "/spacenav/joy", lambda msg: convert.joy_from_msg(msg)[1], depth=200)
    probe.node.create_subscription(m.Joy, "/spacenav/joy", lambda msg: actor.on_joy(
        convert.joy_from_msg(msg)[1]), 200)
    return actor, joys
