"""The rerun live view: a short PickCube session with pixels saved to an ``.rrd`` and read
back with rerun's own reader; NaN/inf/malformed input never crashes it nor changes what
the env returns; off by default; a missing rerun-sdk is one line naming the extra."""

from __future__ import annotations

import math
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mujoco")
rr = pytest.importorskip("rerun")

from robot_rl.assemble import make_actor_env  # noqa: E402
from robot_rl.envs.intervention import HumanIntervention  # noqa: E402
from robot_rl.envs.live_view import LiveView  # noqa: E402
from robot_rl.envs.wrappers import wrapped_in  # noqa: E402
from robot_rl.errors import ConfigError  # noqa: E402
from robot_rl.interfaces import InputCommand, InputDevice  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402

PIXELS = ["env.obs_mode=pixels", "env.max_episode_steps=4", "intervention.device=none"]


class EveryOther(InputDevice):
    """A person who takes over (moving up) on every other read."""

    def __init__(self) -> None:
        self.reads = 0

    def read(self) -> InputCommand:
        self.reads += 1
        return InputCommand(twist=np.array([0, 0, 1.0, 0, 0, 0]), intervene=self.reads % 2 == 0)


def read_rrd(path):
    """Rows per entity (timeline data only) and the record batches, via rerun.chunk.RrdReader."""
    from rerun.chunk import RrdReader

    reader = RrdReader(path)
    assert len(reader.recordings()) == 1
    rows: dict[str, int] = {}
    batches: dict[str, list] = {}
    for chunk in reader.stream():
        if chunk.is_static:
            continue
        assert "env_step" in chunk.timeline_names and "episode" in chunk.timeline_names
        rows[chunk.entity_path] = rows.get(chunk.entity_path, 0) + chunk.num_rows
        batches.setdefault(chunk.entity_path, []).append(chunk.to_record_batch())
    return rows, batches


def column(batches, name):
    """(env_step, value) pairs of one column over an entity's batches, in env_step order."""
    pairs = []
    for batch in batches:
        steps = batch.column("env_step").to_pylist()
        values = batch.column(name).to_pylist()
        pairs += [(s, v) for s, v in zip(steps, values) if v is not None]
    return sorted(pairs, key=lambda p: p[0])


def test_a_short_pixel_session_is_saved_and_read_back_with_every_entity(tmp_path):
    path = tmp_path / "view" / "session.rrd"
    cfg = load_config("configs/pick_cube.yaml", [*PIXELS, "viz.rerun=file", f"viz.rrd_path={path}"])
    env = make_actor_env(cfg, over_topic=EveryOther())
    assert isinstance(env, LiveView) and wrapped_in(env, HumanIntervention)
    rng = np.random.default_rng(0)
    expected = {"reward": [], "intervention": [], "success": [], "action": [], "tcp": [], "target": []}
    resets = steps = 0
    for episode in range(2):
        env.reset(seed=episode)
        resets += 1
        done = False
        while not done:
            action = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
            obs, reward, terminated, truncated, info = env.step(action)
            steps += 1
            done = terminated or truncated
            base = env.unwrapped
            expected["reward"].append(reward)
            expected["intervention"].append(float(info["intervened"]))
            expected["success"].append(float(info["success"]))
            expected["action"].append(info.get("intervene_action", action))
            expected["tcp"].append(base.robot_state.tcp_pos.copy())
            expected["target"].append(base.target_pose[0])
    env.close()
    assert steps == 8 and any(expected["intervention"]) and not all(expected["intervention"])

    rows, batches = read_rrd(path)
    states = steps + resets  # images, TCP and target: at each reset and after each step
    assert rows["/camera/front"] == rows["/camera/wrist"] == states
    assert rows["/world/tcp"] == rows["/world/target"] == states
    for entity in ("/action", "/reward", "/intervention", "/success"):
        assert rows[entity] == steps, entity
    assert rows["/events"] == 2  # one line per episode end

    # What was logged is what the env returned, step by step.
    for entity in ("reward", "intervention", "success"):
        logged = [v[0] for _, v in column(batches[f"/{entity}"], "Scalars:scalars")]
        assert logged == pytest.approx(expected[entity]), entity
    actions = [v for _, v in column(batches["/action"], "Scalars:scalars")]
    np.testing.assert_allclose(actions, expected["action"], atol=1e-6)
    for entity, poses in (("/world/tcp", expected["tcp"]), ("/world/target", expected["target"])):
        logged = column(batches[entity], "Transform3D:translation")
        for k, pos in enumerate(poses, start=1):  # step k's pose is among the rows at env_step k
            at_k = [np.array(v).reshape(-1) for s, v in logged if s == k]
            assert any(np.allclose(p, pos, atol=1e-5) for p in at_k), (entity, k, at_k, pos)
    image = np.array(batches["/camera/front"][0].column("Image:buffer").to_pylist()[0]).reshape(-1)
    assert len(image) == 128 * 128 * 3  # raw RGB frames at the configured camera size


class NaNEnv(gym.Env):
    """Accepts any action and returns whatever rewards and infos it is given."""

    observation_space = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32),
                                         "cam": gym.spaces.Box(0, 255, (4, 4, 3), np.uint8)})
    action_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)

    def __init__(self, rewards, infos):
        self.rewards, self.infos = list(rewards), list(infos)
        self.obs = {"state": np.array([np.nan, np.inf], np.float32), "cam": np.zeros((4, 4, 3), np.uint8)}

    def reset(self, *, seed=None, options=None):
        return self.obs, {}

    def step(self, action):
        return self.obs, self.rewards.pop(0), False, False, self.infos.pop(0)


def test_nan_inf_and_malformed_values_neither_crash_the_view_nor_change_what_the_env_returns(tmp_path):
    rewards = [float("nan"), float("inf"), -float("inf"), 1e308, np.float32(2.5), "bad", None]
    infos = [{}, {"success": True}, {"intervened": True, "intervene_action": np.array([np.inf, 0, 1])},
             {"intervene_action": "garbage"}, {"success": float("nan")}, [], {"intervened": None}]
    actions = [np.full(3, np.nan), np.array([np.inf, -np.inf, 0.0]), np.zeros(3), np.array([1e300, 0, 0]),
               "not an action", None, np.zeros((7, 7))]
    inner = NaNEnv(rewards, infos)
    path = tmp_path / "attack.rrd"
    rec = rr.RecordingStream("robot_rl-test")
    rec.save(path)
    env = LiveView(inner, rec)
    obs, _ = env.reset()
    assert obs is inner.obs
    for i, action in enumerate(actions):
        out = env.step(action)
        assert out[0] is inner.obs and out[4] is infos[i]
        same = out[1] is rewards[i] or (isinstance(rewards[i], float) and math.isnan(rewards[i]) and math.isnan(out[1]))
        assert same, (i, out[1])
    assert not env.failed  # every value was logged (as NaN) or skipped, none raised
    env.close()
    rows, batches = read_rrd(path)
    assert rows["/reward"] == rows["/success"] == rows["/intervention"] == len(actions)
    logged = [v[0] for _, v in column(batches["/reward"], "Scalars:scalars")]
    assert logged[3] == 1e308 and logged[4] == 2.5
    assert all(v is None or math.isnan(v) for i, v in enumerate(logged) if i not in (3, 4))
    # "garbage", a string, None and a 7x7 matrix are no 3-D actions: skipped; the rest logged, NaN for inf
    actions_logged = [v for _, v in column(batches["/action"], "Scalars:scalars")]
    assert len(actions_logged) == 3
    assert math.isnan(actions_logged[2][0]) and actions_logged[2][1:] == [0.0, 1.0]  # the person's, inf as NaN
    assert all(math.isnan(v) for v in actions_logged[0]) and math.isnan(actions_logged[1][1])
    assert "/world/tcp" not in rows  # a plain env has no robot state: nothing, rather than an error


def test_a_real_env_refuses_a_nan_action_exactly_as_without_the_view(tmp_path):
    cfg = load_config("configs/pick_cube.yaml", [*PIXELS, "viz.rerun=file", f"viz.rrd_path={tmp_path / 'v.rrd'}"])
    env = make_actor_env(cfg, human=False)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite action"):
        env.step(np.full(env.action_space.shape, np.nan, np.float32))
    env.close()


def test_a_failing_viewer_is_switched_off_and_the_session_goes_on(caplog):
    class Broken:
        def log(self, *a, **k):
            raise RuntimeError("viewer gone")

        set_time = flush = disconnect = log

    inner = NaNEnv([0.0] * 3, [{}] * 3)
    env = LiveView(inner, Broken())
    env.reset()
    assert env.failed and "viewer gone" in caplog.text
    for _ in range(3):
        assert env.step(np.zeros(3))[1] == 0.0
    env.close()  # a failing close is a warning, not an error
    assert caplog.text.count("live view") == 2


def test_off_by_default_and_eval_envs_never_get_it():
    cfg = load_config("configs/pick_cube.yaml", ["intervention.device=none"])
    assert cfg.viz.rerun == "off"
    env = make_actor_env(cfg)
    assert not wrapped_in(env, LiveView)
    env.close()


def test_missing_rerun_sdk_is_one_line_naming_the_extra(monkeypatch, tmp_path, capsys):
    from robot_rl.cli import main

    monkeypatch.setitem(sys.modules, "rerun", None)  # import rerun raises ImportError
    cfg = load_config("configs/pick_cube.yaml", ["viz.rerun=file", f"viz.rrd_path={tmp_path / 'x.rrd'}"])
    with pytest.raises(ConfigError, match=r"rerun-sdk is not installed: scripts/setup.sh viz, from the checkout$"):
        make_actor_env(cfg, human=False)
    # through the command line: one line, exit 2, before any training
    assert main(["train", "--config", "pick_cube", "--run-dir", str(tmp_path / "run"), "--no-progress",
                 "--set", "viz.rerun=file", "--set", "train.scripted_demos=0"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err == ["robot-rl: viz.rerun is on but rerun-sdk is not installed: scripts/setup.sh viz, from the checkout"]
    assert not (tmp_path / "run" / "live_view.rrd").exists()


def test_image_every_and_jpeg_keep_the_file_small(tmp_path):
    path = tmp_path / "small.rrd"
    cfg = load_config("configs/pick_cube.yaml", [*PIXELS, "viz.rerun=file", f"viz.rrd_path={path}",
                                                 "viz.image_every=2", "viz.jpeg_quality=50"])
    env = make_actor_env(cfg, human=False)
    env.reset(seed=0)
    for _ in range(4):
        env.step(np.zeros(env.action_space.shape, np.float32))
    env.close()
    rows, batches = read_rrd(path)
    assert rows["/camera/front"] == 3  # the reset frame, steps 2 and 4
    assert rows["/world/tcp"] == 5 and rows["/reward"] == 4
    assert "EncodedImage:blob" in batches["/camera/front"][0].schema.names


def test_connect_mode_keeps_stepping_while_no_viewer_listens():
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = load_config("configs/pick_cube.yaml", ["intervention.device=none", "viz.rerun=connect",
                                                 f"viz.url=rerun+http://127.0.0.1:{port}/proxy"])
    env = make_actor_env(cfg, human=False)
    assert isinstance(env, LiveView)
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.zeros(env.action_space.shape, np.float32))
    assert not env.failed  # rerun buffers (and later drops) what no viewer takes; the env never waits on it
    env.close()


def test_a_run_resumes_with_the_view_switched_on_or_off():
    from robot_rl.config import to_dict
    from robot_rl.training.checkpoint import config_difference

    off = to_dict(load_config("configs/pick_cube.yaml"))
    on = to_dict(load_config("configs/pick_cube.yaml", ["viz.rerun=file", "viz.image_every=5"]))
    assert config_difference(off, on) is None  # watching changes nothing the run learns
    assert config_difference(off, to_dict(load_config("configs/pick_cube.yaml", ["seed=3"]))) is not None
