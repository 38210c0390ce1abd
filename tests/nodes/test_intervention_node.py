"""intervention_node -> /spacenav/twist + /spacenav/joy -> the actor's TopicInput, over DDS.

The node runs in the test process with a scripted raw device in place of the hardware
(the SpaceMouse and keyboard drivers are tested at their library boundary in
tests/drivers); what the node publishes, and how the actor reads it back, is the real path.
"""

from __future__ import annotations

import numpy as np
from intervention_session import actor_side, intervention_session

from robot_rl.errors import DeviceError  # noqa: E402
from robot_rl.interfaces import InputCommand, InputDevice  # noqa: E402


class ScriptedDevice(InputDevice):
    """Raw reads (as from a device opened with raw_device_config): one per node tick, then neutral/lost."""

    def __init__(self, script: list[InputCommand], then_lost: bool = False) -> None:
        self.script = list(script)
        self.then_lost = then_lost
        self.closed = False

    def read(self) -> InputCommand:
        if self.script:
            return self.script.pop(0)
        if self.then_lost:
            raise DeviceError("SpaceMouse stopped responding (unplugged?)")
        return InputCommand()

    def close(self) -> None:
        self.closed = True


def test_what_the_human_does_reaches_the_actor_as_the_same_command(tmp_path, monkeypatch):
    session, probe = intervention_session(tmp_path, monkeypatch, {
        "device": "spacemouse+keyboard", "intervene_mode": "toggle", "axis_map": ["-y", "x", "z"],
        "spacemouse": {"deadband": 0.1, "buttons": {"close_gripper": 0, "open_gripper": 1}}}, "hil")
    try:
        from robot_rl.nodes.intervention_node import InterventionNode

        actor, joys = actor_side(probe, session.intervention)
        push = np.array([0.6, 0.0, 0.0, 0.0, 0.0, 0.0])  # operator frame: right
        # the node's ticks: idle, then the puck pushed right with the left button held, and a
        # keyboard tap of "success" (the keyboard's intervene key down in the same read)
        script = [InputCommand()] * 30 + [InputCommand(twist=push, buttons=(1, 0))] * 3 \
            + [InputCommand(twist=push, buttons=(1, 0), success_pressed=True, intervene=True)] \
            + [InputCommand(twist=push, buttons=(1, 0))] * 300
        device = ScriptedDevice(script, then_lost=True)
        node = probe.add(InterventionNode(device=device))
        assert probe.spin_until(lambda: any(b[1][0] == 1 for b in joys), 20), "no button press arrived"
        probe.spin(0.2)
        cmd = actor.read()
        assert cmd.close_gripper is True and cmd.success_pressed and cmd.intervene  # motion and the intervene tap
        assert np.allclose(cmd.twist, [0.0, (0.6 - 0.1) / 0.9, 0.0, 0.0, 0.0, 0.0])  # robot y is operator x
        assert not actor.read().success_pressed  # a press counts once
        # the device goes away: one warning, then neutral input (the intervention ends)
        assert probe.spin_until(lambda: node.device.lost, 20)
        probe.spin(0.3)
        cmd = actor.read()
        assert not np.any(cmd.twist) and cmd.close_gripper is None
        assert len(joys[-1][1]) == 40 and not any(joys[-1][1])
        assert node.status()["dropped_messages"] == 0
    finally:
        probe.close()
    assert device.closed
