"""A gamepad in the node graph: the intervention node reads it raw, the actor interprets it.

First the logic (no DDS): the same events read by a gamepad on the actor's own machine
and by the raw gamepad of the intervention node, encoded on ``/spacenav/*`` and read back
by the actor's ``TopicInput``, give the same command. Then the real path: the
intervention node runs the real ``Gamepad`` driver over a fake ``/dev/input/js0``,
publishes over DDS, and an unplug mid-use ends the person's input with neutral messages.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fake_gamepad import AXIS, BUTTON, FULL, FakeJoystickNodes  # noqa: E402  (tests/support)
from graph_harness import PICK  # noqa: E402
from intervention_session import actor_side, intervention_session

from robot_rl.nodes.intervention import ACTION_BUTTONS, JOY_BUTTONS, TopicInput, encode, raw_device_config  # noqa: E402
from robot_rl.tasks import config_from_dict, load_config  # noqa: E402
from robot_rl_drivers.input.gamepad import Gamepad  # noqa: E402

FIELDS = ("intervene", "gripper_toggle_pressed", "close_gripper", "success_pressed", "failure_pressed",
          "pause_pressed", "stop_pressed")


def settle(device: Gamepad, pad) -> None:
    from contract_rigs import wait_until  # tests/support

    wait_until(lambda: device.events_received >= pad.written, 2.0, "the gamepad reader")


def test_the_actor_reads_a_gamepad_over_topics_as_it_reads_it_directly(tmp_path):
    nodes = FakeJoystickNodes(tmp_path)
    here, there = nodes.add(), nodes.add()
    cfg = config_from_dict({"intervention": {
        "device": "gamepad", "intervene_mode": "toggle", "axis_map": ["-y", "x", "z"],
        "gamepad": {"deadband": 0.2, "scale": [1.0, 0.5, 1.0, 1.0, 1.0, 1.0]}}}, file="pad.yaml").intervention
    local = Gamepad(cfg, nodes=nodes)  # js0, the first pad
    raw_cfg = raw_device_config(cfg)
    raw = Gamepad(dataclasses.replace(raw_cfg, gamepad=dataclasses.replace(raw_cfg.gamepad, path=there.path)),
                  nodes=nodes)
    actor = TopicInput(cfg, timeout_s=5.0)
    read = []
    try:
        script = [
            [("axis", AXIS["lx"], int(0.6 * FULL)), ("axis", AXIS["ry"], -FULL)],  # right and up
            [("button", BUTTON["lb"], 1)],  # close held
            [("button", BUTTON["a"], 1), ("button", BUTTON["a"], 0)],  # success tapped between two reads
            [("button", BUTTON["x"], 1), ("button", BUTTON["x"], 0), ("axis", AXIS["lx"], 0),
             ("axis", AXIS["ry"], 0)],  # take over (toggled on), sticks released
            [("button", BUTTON["lb"], 0), ("button", BUTTON["rb"], 1)],  # open held
            [("axis", AXIS["dpad_x"], FULL), ("button", BUTTON["back"], 1)],  # roll right, stop
        ]
        for events in script:
            for pad, device in ((here, local), (there, raw)):
                pad.events(*events)
                settle(device, pad)
            twist, buttons = encode(raw.read())  # the intervention node's tick
            actor.on_twist(twist)
            actor.on_joy(tuple(buttons))
            a, b = local.read(), actor.read()
            np.testing.assert_allclose(a.twist, b.twist, atol=1e-9)
            for f in FIELDS:
                assert getattr(a, f) == getattr(b, f), (events, f)
            read.append(b)
        # operator right 0.6 -> (0.6 - 0.2) / 0.8 = 0.5 on robot y (axis map), at its 0.5 gain; up -> robot z
        np.testing.assert_allclose(read[0].twist, [0.0, 0.25, 1.0, 0.0, 0.0, 0.0], atol=1e-4)
        assert read[1].close_gripper is True and read[2].success_pressed and not read[3].success_pressed
        assert read[3].intervene and not np.any(read[3].twist)  # toggled on, not moving
        last = read[-1]  # D-pad right rolls right: operator +ry is robot -rx under ["-y", "x", "z"]
        np.testing.assert_allclose(last.twist, [0.0, 0.0, 0.0, -1.0, 0.0, 0.0], atol=1e-9)
        assert last.stop_pressed and last.close_gripper is False and last.intervene
    finally:
        local.close()
        raw.close()
        nodes.close()


def test_the_intervention_node_serves_a_gamepad_and_an_unplug_ends_the_input(tmp_path, monkeypatch):
    session, probe = intervention_session(tmp_path, monkeypatch, {
        "device": "gamepad", "intervene_mode": "toggle", "axis_map": ["-y", "x", "z"], "gamepad": {"deadband": 0.1}},
        "pad")
    nodes = FakeJoystickNodes(tmp_path / "input")
    pad = nodes.add()
    try:
        from robot_rl.nodes.intervention_node import InterventionNode

        actor, joys = actor_side(probe, session.intervention)
        device = Gamepad(raw_device_config(session.intervention), nodes=nodes)  # as the node opens it
        node = probe.add(InterventionNode(device=device))
        assert probe.spin_until(lambda: len(joys) > 3, 20), "the node publishes nothing"
        # the person: left stick right, LB held (close), A tapped (success)
        pad.events(("axis", AXIS["lx"], int(0.55 * FULL)), ("button", BUTTON["lb"], 1))
        pad.events(("button", BUTTON["a"], 1), ("button", BUTTON["a"], 0))
        success = ACTION_BUTTONS["success"]
        assert probe.spin_until(lambda: any(b[1][success] == 1 for b in joys), 20), "the success press never came"
        probe.spin(0.2)
        cmd = actor.read()
        assert cmd.close_gripper is True and cmd.success_pressed and cmd.intervene  # moving a stick takes over
        np.testing.assert_allclose(cmd.twist, [0.0, (0.55 - 0.1) / 0.9, 0.0, 0.0, 0.0, 0.0], atol=1e-4)
        assert not actor.read().success_pressed  # a press counts once
        # unplugged mid-use: one warning in the node, then neutral input (the intervention ends)
        pad.unplug()
        assert probe.spin_until(lambda: node.device.lost, 20)
        assert "gamepad 'Microsoft X-Box 360 pad'" in node.device.error and "went away" in node.device.error
        probe.spin(0.3)
        cmd = actor.read()
        assert not np.any(cmd.twist) and cmd.close_gripper is None and not cmd.success_pressed
        assert len(joys[-1][1]) == JOY_BUTTONS and not any(joys[-1][1])
        assert node.status()["dropped_messages"] == 0
    finally:
        probe.close()
        nodes.close()
    assert device._closed


def test_a_gamepad_session_starts_the_intervention_node_and_the_actor_reads_its_topics(tmp_path):
    from robot_rl.nodes.description import build_graph

    g = build_graph(load_config(PICK, ["intervention.device=gamepad+keyboard"]), PICK)
    assert g.names == ["sim_node", "intervention_node", "actor_node"]
    assert {"spacenav_twist", "spacenav_joy"} <= set(g.node("actor_node").parameters["topics"])
    g = build_graph(load_config(PICK, ["intervention.device=gamepad+simulated"]), PICK)
    assert "intervention_node" in g.names  # the person's pad over topics, the simulated person in the actor
