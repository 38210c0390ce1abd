"""``robot-rl record-demos --source gamepad`` in sim, through the real driver on a fake pad.

The real ``Gamepad`` reads a fake ``/dev/input/js0`` (tests/support/fake_gamepad.py,
handed in through ``record_demos.DEVICE_CONTEXT``) and the command runs through the CLI
``main`` as a person would start it. Then the pad is pulled out mid-episode: the episode
ends there, the recording ends with the pad's one-line error, and every episode already
on disk stays (and the cut one too, with ``--keep-failed``).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
from fake_gamepad import AXIS, FULL, FakeJoystickNodes  # tests/support

from robot_rl.assemble import make_env
from robot_rl.cli import main, record_demos
from robot_rl.data.demos import episode_files, load_demos, read_manifest
from robot_rl.tasks import load_config
from robot_rl_drivers.input.gamepad import Gamepad

PICK = "configs/pick_cube.yaml"
UNPLUG_AT_READ = 5


def demo_spaces(overrides):
    env = make_env(load_config(PICK, overrides))
    spaces = env.observation_space, env.action_space
    env.close()
    return spaces


def record(out, overrides, *extra):
    return main(["record-demos", "--config", PICK, "--source", "gamepad", "--episodes", "1", "--keep-failed",
                 "--out", str(out), *extra, *[a for o in overrides for a in ("--set", o)]])


def test_a_stick_held_moves_the_arm_and_an_unplug_ends_the_recording_keeping_every_episode(tmp_path, monkeypatch,
                                                                                         capsys):
    nodes = FakeJoystickNodes(tmp_path / "input")
    pad = nodes.add()
    pad.state[("axis", AXIS["lx"])] = int(0.8 * FULL)  # left stick held right from the start
    monkeypatch.setitem(record_demos.DEVICE_CONTEXT, "joystick_nodes", nodes)
    out = tmp_path / "demos"
    overrides = ["env.max_episode_steps=6", "env.relative_pose=false"]
    try:
        # 1. a whole episode, ended by the time limit
        code = record(out, overrides)
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert "gamepad: move a stick to take over" in captured.out and "success gamepad button 0 (A)" in captured.out
        assert "stop gamepad button 6 (Back)" in captured.out
        assert read_manifest(out)["source"] == "gamepad"
        [ep] = load_demos(out, *demo_spaces(overrides))
        assert len(ep) == 6 and ep[-1].truncated and not ep[-1].success
        intervened = np.array([s.intervened for s in ep])
        actions = np.stack([s.action for s in ep])
        assert intervened.all()  # the pad's state at open (joydev's init events) is read before the first step
        # operator right is robot +y with the default axis_map; (0.8 - 0.15) / 0.85 after the deadband
        np.testing.assert_allclose(actions[intervened, 1], (0.8 - 0.15) / 0.85, atol=1e-3)
        assert np.abs(actions[intervened][:, [0, 2]]).max() < 1e-6
        moved = ep[-1].next_obs["state"][:3] - ep[0].obs["state"][:3]
        assert moved[1] > 0.03 and abs(moved[0]) < 0.01 and abs(moved[2]) < 0.01, moved

        # 2. appending: the pad is pulled out at the episode's 5th step (the reader notices a moment later)
        reads = itertools.count(1)
        real_read = Gamepad.read

        def read_then_unplug(device):
            if next(reads) == UNPLUG_AT_READ:
                pad.unplug()
            return real_read(device)

        monkeypatch.setattr(Gamepad, "read", read_then_unplug)
        long = ["env.max_episode_steps=40", "env.relative_pose=false"]
        code = record(out, long, "--append", "--episodes", "3")
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert code != 0
        assert err[-1].startswith(f"robot-rl: gamepad 'Microsoft X-Box 360 pad' at {pad.path} went away") \
            and "this recording saved 1 episodes" in err[-1] and "--append" in err[-1]
        assert json.loads(captured.out.strip().splitlines()[-1])["attempted"] == 1  # no second attempt after it
        assert [p.name for p in episode_files(out)] == ["episode_000000.npz", "episode_000001.npz"]
        first, cut = load_demos(out, *demo_spaces(long))
        assert len(first) == 6  # the earlier episode is as it was
        # ended where the pad went away
        assert UNPLUG_AT_READ <= len(cut) < 40 and cut[-1].truncated and not cut[-1].success
        assert all(s.intervened for s in cut[:-1]) and not cut[-1].intervened
    finally:
        nodes.close()
