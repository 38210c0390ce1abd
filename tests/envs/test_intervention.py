"""Intervention semantics: the human's command replaces the policy's, flags and labels,
pause/stop, RLIF penalty, device loss; and the simulated intervener."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from robot_rl.assemble import make_env, with_person
from robot_rl.envs.intervention import HumanIntervention
from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputCommand, InputDevice
from robot_rl.tasks import load_config


class ScriptedDevice(InputDevice):
    """Plays a list of commands, then neutral ones; raises DeviceError where the list says so."""

    def __init__(self, commands):
        self.commands = list(commands)
        self.reads = 0

    def read(self) -> InputCommand:
        self.reads += 1
        if not self.commands:
            return InputCommand()
        cmd = self.commands.pop(0)
        if isinstance(cmd, Exception):
            raise cmd
        return cmd


def env_with(commands, penalty=0.0):
    env = make_env(load_config("configs/pick_cube.yaml"))
    device = ScriptedDevice(commands)
    wrapped = HumanIntervention(env, device, penalty=penalty, sleep=lambda s: None)
    wrapped.reset(seed=0)
    return wrapped, device


def test_human_command_replaces_the_policy_action_and_is_flagged():
    up = InputCommand(twist=np.array([0, 0, 1.0, 0, 0, 0]), intervene=True)
    env, _ = env_with([up, up, InputCommand()])
    world = env.unwrapped.task.world
    z0 = world.data.site_xpos[world.tcp_site][2]
    policy_down = np.array([0, 0, 1.0, 0], np.float32)  # in the reset frame, +z is down
    _, _, _, _, info1 = env.step(policy_down)
    _, _, _, _, info2 = env.step(policy_down)
    z_after_human = world.data.site_xpos[world.tcp_site][2]
    _, _, _, _, info3 = env.step(np.zeros(4, np.float32))
    assert info1["intervened"] and info2["intervened"] and not info3["intervened"]
    assert z_after_human > z0 + 0.01  # the human's "up" won over the policy's "down"
    # The recorded action is the human's, expressed in the policy's (reset-frame) space.
    np.testing.assert_allclose(info1["intervene_action"], [0, 0, -1.0, 0], atol=1e-4)
    assert "intervene_action" not in info3


def test_gripper_buttons_labels_and_episode_statistics():
    grab = InputCommand(close_gripper=True)
    env, _ = env_with([grab, InputCommand(), InputCommand(gripper_toggle_pressed=True),
                       InputCommand(intervene=True), InputCommand(success_pressed=True)])
    infos = [env.step(np.zeros(4, np.float32))[4] for _ in range(4)]
    assert infos[0]["intervened"] and infos[0]["intervene_action"][3] == 1.0
    assert env.unwrapped.gripper_command == 0.0 or infos[2]["intervene_action"][3] == -1.0
    assert infos[2]["intervene_action"][3] == -1.0  # toggle while closed opens
    _, reward, terminated, truncated, info = env.step(np.zeros(4, np.float32))
    assert terminated and not truncated and reward == 1.0 and info["human_label"] == "success"
    assert info["episode_interventions"] == 2  # steps 1 and 3-4 are two takeovers
    assert info["episode_intervention_steps"] == 3
    assert info["intervention_rate"] == pytest.approx(3 / 5)


def test_failure_and_stop_end_the_episode():
    env, _ = env_with([InputCommand(failure_pressed=True)])
    _, _, terminated, truncated, info = env.step(np.zeros(4, np.float32))
    assert truncated and not terminated and info["human_label"] == "failure" and not info["success"]
    env, _ = env_with([InputCommand(stop_pressed=True)])
    _, _, terminated, truncated, info = env.step(np.zeros(4, np.float32))
    assert truncated and info["stop"]


def test_pause_holds_until_pressed_again():
    env, device = env_with([InputCommand(pause_pressed=True), InputCommand(), InputCommand(),
                            InputCommand(pause_pressed=True)])
    _, _, _, _, info = env.step(np.zeros(4, np.float32))
    assert device.reads == 4 and not info["intervened"]


def test_rlif_penalty_on_takeover_only():
    go = InputCommand(twist=np.array([0.5, 0, 0, 0, 0, 0]), intervene=True)
    env, _ = env_with([go, go], penalty=0.5)
    rewards = [env.step(np.zeros(4, np.float32))[1] for _ in range(3)]
    assert rewards == [-0.5, 0.0, 0.0]


def test_unplugged_device_ends_intervention_with_one_warning(caplog):
    go = InputCommand(twist=np.array([0.5, 0, 0, 0, 0, 0]), intervene=True)
    env, _ = env_with([go, DeviceError("SpaceMouse unplugged (read failed on /dev/hidraw3)")])
    caplog.set_level(logging.WARNING)
    infos = [env.step(np.zeros(4, np.float32))[4] for _ in range(4)]
    assert infos[0]["intervened"] and not any(i["intervened"] for i in infos[1:])
    assert "unplugged" in infos[-1]["input_device_lost"]
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


def test_simulated_intervener_takes_over_a_stalled_policy_and_succeeds():
    cfg = load_config("configs/pick_cube.yaml", ["intervention.device=simulated",
                                                  "intervention.simulated.takeover_steps=60",
                                                  "intervention.simulated.max_per_episode=1"])
    env = with_person(make_env(cfg), cfg)
    successes, interventions = 0, 0
    for seed in range(3):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(np.zeros(4, np.float32))  # a policy that never moves
            done = terminated or truncated
        successes += int(info["success"])
        interventions += info["episode_interventions"]
    assert interventions == 3 and successes == 3


def test_simulated_intervener_stays_out_when_not_allowed():
    cfg = load_config("configs/pick_cube.yaml", ["intervention.device=simulated",
                                                  "intervention.simulated.max_per_episode=0"])
    env = with_person(make_env(cfg), cfg)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(np.zeros(4, np.float32))
        done = terminated or truncated
    assert info["episode_interventions"] == 0 and not info["success"]
