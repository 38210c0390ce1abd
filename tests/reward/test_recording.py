"""Recording labelled frames: key labels (the hardware path), and sim ground truth with hard cases."""

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.assemble import reward_recording_env
from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputCommand, InputDevice
from robot_rl.paths import resolve_config
from robot_rl.reward.collect import record_frames, record_sim
from robot_rl.reward.dataset import FrameWriter, load_frames
from robot_rl.reward.labels import GroundTruthLabels, KeyLabels
from robot_rl.tasks import load_config

PICK_CUBE = resolve_config("pick_cube")


class ScriptedKeys(InputDevice):
    """An input device replaying one InputCommand per read (then neutral)."""

    def __init__(self, presses):
        self.presses = list(presses)
        self.closed = False

    def read(self):
        if not self.presses:
            return InputCommand()
        p = self.presses.pop(0)
        if p == "unplug":
            raise DeviceError("keyboard gone")
        return InputCommand(**({f"{p}_pressed": True} if p else {}))

    def close(self):
        self.closed = True


class CountingEnv(gym.Env):
    """Observation image value = global frame counter, so frames can be traced on disk."""

    observation_space = gym.spaces.Dict({"front": gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)})
    action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def __init__(self, episode_len=4):
        self.n, self.t, self.episode_len = 0, 0, episode_len

    def _obs(self):
        self.n += 1
        return {"front": np.full((8, 8, 3), self.n, np.uint8)}

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        return self._obs(), 0.0, False, self.t >= self.episode_len, {}


class IdleDriver:
    tag, done = "recorded", False

    def reset(self):
        pass

    def act(self, obs):
        return np.zeros(1, np.float32)


def _writer(folder, chunk=3):
    return FrameWriter(folder, cameras=["front"], image_size=(8, 8), task="T", label_source="keys",
                       tags=[], chunk_frames=chunk)


def test_key_labels_toggle_pause_and_stop(tmp_path):
    # one read per frame; episodes are 5 frames (reset + 4 steps)
    presses = [None, "success", None, "failure", None,  # episode 0
               "success", None, "pause", None, "pause",  # episode 1: frames 3,4 paused (not written)
               None, "stop"]  # episode 2 starts in failure; stop ends
    keys = ScriptedKeys(presses)
    stats = record_frames(CountingEnv(), IdleDriver(), KeyLabels(keys), _writer(tmp_path / "d"), frames=100)
    assert stats.stopped and stats.frames == 9 and stats.episodes == 3
    fs = load_frames(tmp_path / "d")
    values = fs.images["front"][:, 0, 0, 0].tolist()
    assert values == [1, 2, 3, 4, 5, 6, 7, 10, 11]  # frames 8 and 9 were paused
    assert fs.label.tolist() == [False, True, True, False, False, True, True, True, False]
    assert fs.episode.tolist() == [0] * 5 + [1] * 3 + [2]
    assert fs.meta["label_source"] == "keys"


def test_an_unplugged_key_device_loses_no_written_frames(tmp_path):
    keys = ScriptedKeys([None, "success", None, None, "unplug"])
    with pytest.raises(DeviceError):
        record_frames(CountingEnv(), IdleDriver(), KeyLabels(keys), _writer(tmp_path / "d"), frames=100)
    fs = load_frames(tmp_path / "d")  # the partial chunk was flushed on the way out
    assert fs.label.tolist() == [False, True, True, True]


class TracingLabels(GroundTruthLabels):
    """Ground truth, plus the cube's height and the gripper opening for each labelled frame."""

    def __init__(self):
        self.trace = []

    def read(self, env):
        label = super().read(env)
        task = env.unwrapped.task
        self.trace.append((label.success, task.cube_pos()[2] - task.params.cube_half_size,
                           float(env.unwrapped.robot_state.gripper)))
        return label


def test_sim_recording_labels_by_ground_truth_and_covers_near_success(tmp_path):
    cfg = load_config(PICK_CUBE, ["reward.image_size=[32,32]", "reward.collect.hold_steps=3"])
    labels = TracingLabels()
    stats = record_sim(cfg, tmp_path / "d", reward_recording_env(cfg), frames=400, labels=labels, seed=0)
    fs = load_frames(tmp_path / "d")
    assert len(fs) == stats.frames == 400
    assert fs.images["front"].shape == (400, 32, 32, 3) and fs.images["wrist"].shape == (400, 32, 32, 3)
    lift = cfg.task.params.lift_height
    label, height, _ = map(np.asarray, zip(*labels.trace))
    assert np.array_equal(fs.label, label.astype(bool))
    assert np.array_equal(label.astype(bool), height > lift)  # the label is the task's own success test
    assert label.any() and not label.all()
    tags = {fs.meta["tags"][t] for t in fs.tag}
    assert {"success_hold", "lift_below", "lift_above"} & tags
    # near-success negatives: the cube off the table but below the bar
    assert np.sum((height > 0.005) & (height < lift)) >= 10
