"""A person with a gamepad takes over the sim arm, and pulls the pad out mid-episode.

The real ``Gamepad`` driver over a fake ``/dev/input/js0`` (tests/support/fake_gamepad.py),
built by the assembly (``with_person``) as the trainer and the actors build it, inside
the actor loop that records every step. The unplug takes the path an unplugged
SpaceMouse takes: one warning, the takeover ends, the policy has the arm again (here a
policy that asks for no motion, so the arm holds), and every step is kept.
"""

from __future__ import annotations

import logging

import numpy as np
from contract_rigs import wait_until  # tests/support
from fake_gamepad import AXIS, BUTTON, FULL, FakeJoystickNodes  # tests/support

from robot_rl.assemble import make_env, with_person
from robot_rl.data.rollout import ActorLoop
from robot_rl.tasks import load_config


class StillPolicy:
    """A policy that asks for no motion and keeps the gripper as it is."""

    def act(self, obs):
        return np.zeros(4, np.float32)


def test_a_gamepad_takeover_then_an_unplug_mid_episode_keeps_every_step_and_the_arm_holds(tmp_path, caplog):
    nodes = FakeJoystickNodes(tmp_path)
    pad = nodes.add()
    cfg = load_config("configs/pick_cube.yaml", ["intervention.device=gamepad", "env.max_episode_steps=16"])
    env = with_person(make_env(cfg), cfg, joystick_nodes=nodes)
    gamepad = env.device.device  # HumanIntervention -> FailSafeInput -> Gamepad
    world = env.unwrapped.task.world
    loop = ActorLoop(env, StillPolicy(), seed=0)
    caplog.set_level(logging.WARNING)

    def act(*events):
        if events:
            pad.events(*events)
        wait_until(lambda: gamepad.events_received >= pad.written, 2.0, "the gamepad reader")

    try:
        loop.reset()
        act(("axis", AXIS["ry"], -FULL))  # right stick up: the arm rises
        z0 = world.data.site_xpos[world.tcp_site][2]
        steps = [loop.step() for _ in range(4)]
        z_up = world.data.site_xpos[world.tcp_site][2]
        act(("button", BUTTON["lb"], 1))  # and close the gripper while still rising
        steps.append(loop.step())
        pad.unplug()  # pulled out mid-takeover, stick still pushed
        wait_until(lambda: not gamepad.connected, 2.0, "the reader to see the unplug")
        steps.append(loop.step())
        held_at = env.unwrapped.target_pose[0]  # where the arm was sent on the step the pad went away
        while not steps[-1].last:
            steps.append(loop.step())
            assert np.allclose(env.unwrapped.target_pose[0], held_at, atol=1e-9), "the arm was sent elsewhere"
        tcp = world.data.site_xpos[world.tcp_site].copy()
    finally:
        env.close()
        nodes.close()
    assert all(s.intervened for s in steps[:5]) and not any(s.intervened for s in steps[5:])
    assert z_up > z0 + 0.01  # the person's "up" moved the arm
    assert steps[4].action[3] == 1.0  # LB: the recorded action closes the gripper
    assert len(steps) == 16 and steps[-1].truncated and all(s.episode_id == 0 for s in steps)  # the episode ran on
    assert np.linalg.norm(tcp - held_at) < 0.005, (held_at, tcp)  # the arm holds there once the person is gone
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "gamepad 'Microsoft X-Box 360 pad'" in warnings[0] and "went away" in warnings[0]
    assert gamepad._closed and pad.closed_files == 1
