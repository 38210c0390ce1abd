"""Demo files: written as episodes end, read back into the demo buffer, mismatches named."""

import json

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.data.demos import DemoFormatError, DemoWriter, episode_files, load_demos, read_manifest
from robot_rl.data.recording import make_source, record
from robot_rl.data.replay import ReplayBuffer
from robot_rl.data.rollout import ActorLoop
from robot_rl.errors import RobotRLError

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread


def test_record_write_and_load_round_trip(tmp_path, point_env_fn, point_expert_cls):
    env = point_env_fn(image_size=8)
    writer = DemoWriter(tmp_path / "d", env.observation_space, env.action_space, task="PointReach", source="scripted")
    summary = record(env, point_expert_cls(env), writer, episodes=4, seed=3)
    assert summary.saved == 4 and summary.successes >= 4
    files = episode_files(tmp_path / "d")
    assert [f.name for f in files] == [f"episode_{i:06d}.npz" for i in range(4)]
    manifest = read_manifest(tmp_path / "d")
    assert manifest["spaces"]["observation"]["front"] == {"shape": [8, 8, 3], "dtype": "uint8"}
    assert manifest["task"] == "PointReach"

    # the same seed replayed by hand gives the same first episode
    loop = ActorLoop(point_env_fn(image_size=8), point_expert_cls(env), seed=3)
    expected = loop.run_episode()
    episodes = load_demos(tmp_path / "d", env.observation_space, env.action_space)
    got = episodes[0]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.obs["front"], b.obs["front"])
        np.testing.assert_array_equal(a.next_obs["state"], b.next_obs["state"])
        np.testing.assert_array_equal(a.action, b.action)
        assert (a.reward, a.terminated, a.truncated, a.success) == (b.reward, b.terminated, b.truncated, b.success)
    with np.load(files[0]) as data:  # each frame once: T observations + the final one
        assert data["obs/front"].shape[0] == data["action"].shape[0] + 1

    buf = ReplayBuffer(env.observation_space, 3, 1000)
    for ep in episodes:
        buf.add_episode(ep)
    assert len(buf) == sum(len(ep) for ep in episodes)
    assert buf.fields["reward"].sum() == 4  # every demo ends in success


def test_existing_demos_are_not_overwritten_without_force(tmp_path, point_env_fn, point_expert_cls):
    env = point_env_fn()
    spaces = (env.observation_space, env.action_space)
    record(env, point_expert_cls(env), DemoWriter(tmp_path, *spaces), episodes=2)
    before = episode_files(tmp_path)[0].read_bytes()
    with pytest.raises(DemoFormatError, match="--force"):
        DemoWriter(tmp_path, *spaces)
    assert episode_files(tmp_path)[0].read_bytes() == before
    appender = DemoWriter(tmp_path, *spaces, append=True)
    record(env, point_expert_cls(env), appender, episodes=1)
    assert len(episode_files(tmp_path)) == 3
    DemoWriter(tmp_path, *spaces, force=True)
    assert episode_files(tmp_path) == []


def test_demos_for_other_spaces_are_refused_naming_the_key(tmp_path, point_env_fn, point_expert_cls):
    env = point_env_fn(image_size=8)
    record(env, point_expert_cls(env), DemoWriter(tmp_path, env.observation_space, env.action_space), episodes=1)
    other_image = gym.spaces.Dict({"state": env.observation_space["state"],
                                   "front": gym.spaces.Box(0, 255, (16, 16, 3), np.uint8)})
    with pytest.raises(DemoFormatError,
                       match=r"observation 'front' has shape \(8, 8, 3\), the task's is \(16, 16, 3\)"):
        load_demos(tmp_path, other_image, env.action_space)
    no_camera = gym.spaces.Dict({"state": env.observation_space["state"]})
    with pytest.raises(DemoFormatError, match="observation key 'front' is not in the task's observation"):
        load_demos(tmp_path, no_camera, env.action_space)
    with pytest.raises(DemoFormatError, match=r"action has shape \(3,\), the task's is \(4,\)"):
        load_demos(tmp_path, env.observation_space, gym.spaces.Box(-1, 1, (4,), np.float32))
    with pytest.raises(DemoFormatError, match="cannot append"):
        DemoWriter(tmp_path, other_image, env.action_space, append=True)


def test_a_crash_mid_episode_leaves_only_whole_episodes(tmp_path, point_env_fn, point_expert_cls):
    env = point_env_fn()
    writer = DemoWriter(tmp_path, env.observation_space, env.action_space)
    loop = ActorLoop(env, point_expert_cls(env), seed=0)
    steps = loop.run_episode()
    for s in steps:
        writer.add(s)
    assert len(episode_files(tmp_path)) == 1  # on disk as soon as it ended
    writer.add(loop.step())  # the next episode is in flight when the "crash" happens
    (tmp_path / "episode_000001.tmp.npz").write_bytes(b"half a file")
    episodes = load_demos(tmp_path, env.observation_space, env.action_space)
    assert len(episodes) == 1 and len(episodes[0]) == len(steps)


def test_broken_demo_dirs_give_one_line_errors(tmp_path, point_env_fn):
    env = point_env_fn()
    spaces = (env.observation_space, env.action_space)
    with pytest.raises(DemoFormatError, match="demo directory not found"):
        load_demos(tmp_path / "nope", *spaces)
    (tmp_path / "x").mkdir()
    with pytest.raises(DemoFormatError, match="no manifest.json"):
        load_demos(tmp_path / "x", *spaces)
    (tmp_path / "x" / "manifest.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(DemoFormatError, match="not a robot_rl demo manifest"):
        load_demos(tmp_path / "x", *spaces)
    DemoWriter(tmp_path / "y", *spaces)
    with pytest.raises(DemoFormatError, match="holds no demo episodes"):
        load_demos(tmp_path / "y", *spaces)
    (tmp_path / "y" / "episode_000000.npz").write_bytes(b"garbage")
    with pytest.raises(DemoFormatError, match="cannot read demo episode"):
        load_demos(tmp_path / "y", *spaces)


def test_unknown_sources_are_named(point_env_fn):
    from robot_rl.config import Config

    with pytest.raises(RobotRLError, match="unknown demo source 'joystick'"):
        make_source("joystick", point_env_fn(), Config())


def _strict(text):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_manifest_with_infinite_bounds_is_standard_json_and_round_trips(tmp_path, point_env_fn):
    env = point_env_fn(image_size=8)
    obs = gym.spaces.Dict({**env.observation_space.spaces,
                           "unbounded": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)})
    DemoWriter(tmp_path / "d", obs, env.action_space, task="PointReach", source="scripted",
               env_config={"limit": float("inf"), "gain": float("nan")})
    manifest = _strict((tmp_path / "d" / "manifest.json").read_text())  # raises on NaN/Infinity
    assert manifest["env"] == {"limit": None, "gain": None}
    assert manifest["spaces"]["observation"]["unbounded"]["low"] == [None, None]
    # the same spaces append to it: null reads back as -inf/+inf
    DemoWriter(tmp_path / "d", obs, env.action_space, task="PointReach", source="scripted", append=True)


def test_manifest_written_by_older_versions_with_infinity_is_still_read(tmp_path, point_env_fn):
    env = point_env_fn(image_size=8)
    obs = gym.spaces.Dict({**env.observation_space.spaces,
                           "unbounded": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)})
    DemoWriter(tmp_path / "d", obs, env.action_space, task="PointReach", source="scripted")
    path = tmp_path / "d" / "manifest.json"
    old = json.loads(path.read_text())
    old["spaces"]["observation"]["unbounded"]["low"] = [float("-inf")] * 2
    old["spaces"]["observation"]["unbounded"]["high"] = [float("inf")] * 2
    path.write_text(json.dumps(old))  # Python's default: -Infinity / Infinity
    assert "Infinity" in path.read_text()
    assert read_manifest(tmp_path / "d")["spaces"]["observation"]["unbounded"]["high"] == [float("inf")] * 2
    DemoWriter(tmp_path / "d", obs, env.action_space, task="PointReach", source="scripted", append=True)
