"""``env.gym_id``: a registered gymnasium env (registered by this test) as the env robot_rl learns in."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.cli import main
from robot_rl.envs.gym_env import GymEnv, default_map, make_gym_env
from robot_rl.errors import ConfigError

REACH = "RobotRLTest/Reach2D-v0"


class Reach2D(gym.Env):
    """Move a point to a goal in the plane. Dict observation (and a camera on request), actions in
    +-0.2 (not robot_rl's +-1), dense reward; success (``is_success``, gym-robotics' name) ends it."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, pixels: bool = False, render_mode: str | None = None) -> None:
        self.pixels, self.render_mode = pixels, render_mode
        spaces: dict[str, gym.Space] = {"agent_pos": gym.spaces.Box(-1, 1, (2,), np.float64),
                                        "goal": gym.spaces.Box(-1, 1, (2,), np.float64)}
        if pixels:
            spaces["pixels"] = gym.spaces.Dict({"top": gym.spaces.Box(0, 255, (16, 16, 3), np.uint8)})
        self.observation_space = gym.spaces.Dict(spaces)
        self.action_space = gym.spaces.Box(-0.2, 0.2, (2,), np.float32)
        self.last_action = np.zeros(2)

    def _obs(self):
        obs = {"agent_pos": self.pos.copy(), "goal": self.goal.copy()}
        if self.pixels:
            obs["pixels"] = {"top": self.render()}
        return obs

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1, 1, 2)
        self.goal = self.np_random.uniform(-1, 1, 2)
        return self._obs(), {}

    def step(self, action):
        self.last_action = np.asarray(action, np.float64)
        self.pos = np.clip(self.pos + self.last_action, -1, 1)
        dist = float(np.linalg.norm(self.pos - self.goal))
        success = dist < 0.1
        return self._obs(), -dist, success, False, {"is_success": success}

    def render(self):
        image = np.zeros((16, 16, 3), np.uint8)
        for point, channel in ((self.pos, 0), (self.goal, 1)):
            x, y = ((point + 1) * 7.5).round().astype(int)
            image[y, x, channel] = 255
        return image


@pytest.fixture(autouse=True, scope="module")
def registered():
    gym.register(REACH, entry_point=Reach2D)
    yield
    gym.registry.pop(REACH, None)


def test_observations_actions_and_success_are_mapped():
    env = make_gym_env(REACH, kwargs={"pixels": True}, obs_map=None, max_episode_steps=7)
    assert default_map(env.env.observation_space) == {"state": ["agent_pos", "goal"], "top": ["pixels/top"]}
    assert set(env.observation_space.spaces) == {"state", "top"}
    assert env.observation_space["state"].shape == (4,) and env.observation_space["top"].dtype == np.uint8
    assert env.action_space == gym.spaces.Box(-1, 1, (2,), np.float32)
    obs, _ = env.reset(seed=3)
    inner = env.unwrapped
    assert np.array_equal(obs["state"], np.concatenate([inner.pos, inner.goal]).astype(np.float32))
    assert obs["state"].dtype == np.float32 and env.observation_space.contains(obs)
    # [-1, 1] -> the env's +-0.2; out of range, NaN-free huge values are clipped first
    for action, want in (([1, -1], [0.2, -0.2]), ([0, 0.5], [0, 0.1]), ([1e30, -1e30], [0.2, -0.2])):
        env.step(np.array(action, np.float32))
        assert np.allclose(inner.last_action, want, atol=1e-6)
    for bad in ([np.nan, 0], [0, np.inf], [-np.inf, 0], [0.1], [0.1, 0.2, 0.3]):
        with pytest.raises(ValueError, match="is not 2 finite numbers"):
            env.step(np.array(bad, np.float32))
    for i in range(6):  # fast-alternating extremes: scaled and clipped, never past the env's bounds
        env.step(np.array([1, -1] if i % 2 else [-1, 1], np.float32))
        assert np.allclose(np.abs(inner.last_action), 0.2, atol=1e-6)
    env.reset(seed=4)
    for _ in range(10):  # the episode length is env.max_episode_steps
        _, _, terminated, truncated, info = env.step(np.zeros(2, np.float32))
        if terminated or truncated:
            break
    assert truncated and info["success"] is False
    env.close()


@pytest.mark.parametrize("info,success", [({"success": True}, True), ({"is_success": 1}, True),
                                          ({"succeed": True}, True), ({"succeed": True, "success": False}, False),
                                          ({}, False)])
def test_success_is_read_under_each_envs_name(info, success):
    class Reports(Reach2D):
        def step(self, action):
            obs, reward, terminated, truncated, _ = super().step(action)
            return obs, reward, terminated, truncated, dict(info)

    env = GymEnv(Reports(), {"state": ["agent_pos"]})
    env.reset(seed=0)
    assert env.step(np.zeros(2, np.float32))[4]["success"] is success


def test_a_chosen_mapping_and_its_errors():
    env = make_gym_env(REACH, kwargs={"pixels": True}, obs_map={"state": ["goal"], "cam": ["pixels/top"]},
                       max_episode_steps=5)
    obs, _ = env.reset(seed=0)
    assert np.array_equal(obs["state"], env.unwrapped.goal.astype(np.float32)) and obs["cam"].shape == (16, 16, 3)
    with pytest.raises(ConfigError, match=r"env.gym_obs.state: 'speed' is not in the env's observation \(it has "):
        make_gym_env(REACH, kwargs={}, obs_map={"state": ["speed"]}, max_episode_steps=5)
    with pytest.raises(ConfigError, match=r"env.gym_obs.x: a camera image \('pixels/top'\) takes a key of its own"):
        make_gym_env(REACH, kwargs={"pixels": True}, obs_map={"x": ["pixels/top", "goal"]}, max_episode_steps=5)
    with pytest.raises(ConfigError, match="env.gym_obs.state: names no part"):
        make_gym_env(REACH, kwargs={}, obs_map={"state": []}, max_episode_steps=5)
    with pytest.raises(ConfigError, match=r"'RobotRLTest/Reach2d-v0' is not a registered gymnasium env \(did you "
                                          r"mean RobotRLTest/Reach2D-v0"):
        make_gym_env("RobotRLTest/Reach2d-v0", kwargs={}, obs_map=None, max_episode_steps=5)
    with pytest.raises(ConfigError, match=r"did not build with env.gym_kwargs \{'colour': 1\} \(TypeError"):
        make_gym_env(REACH, kwargs={"colour": 1}, obs_map=None, max_episode_steps=5)
    with pytest.raises(ConfigError, match=r"action space Discrete\(2\) cannot be mapped"):
        GymEnv(gym.make("CartPole-v1"), {"state": [""]})


def test_every_env_the_config_builds_is_the_gym_env():
    """The trainer's and actors' envs (make_actor_env) and the learner's spaces (config_spaces_env)."""
    from robot_rl.assemble import config_spaces_env, make_actor_env
    from robot_rl.paths import resolve_config
    from robot_rl.tasks import load_config

    cfg = load_config(resolve_config("pick_cube"), [f"env.gym_id={REACH}", "env.gym_obs={state: [agent_pos, goal]}",
                                                    "env.max_episode_steps=9"])
    spaces = config_spaces_env(cfg)
    assert list(spaces.observation_space.spaces) == ["state"] and spaces.observation_space["state"].shape == (4,)
    for role in ("train", "eval"):
        env = make_actor_env(cfg, role)
        assert env.observation_space == spaces.observation_space and env.action_space == spaces.action_space
        obs, _ = env.reset(seed=1)
        _, reward, *_ = env.step(np.zeros(2, np.float32))
        assert env.observation_space.contains(obs) and reward < 0
        env.close()


def test_the_cli_names_the_key_in_one_line(tmp_path, capsys):
    code = main(["train", "--config", "pick_cube", "--run-dir", str(tmp_path / "r"), "--set", "env.gym_id=NoSuch-v0",
                 "--set", "train.scripted_demos=0", "--set", "train.demo_fraction=0", "--no-progress"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1 and "env.gym_id: 'NoSuch-v0' is not a registered gymnasium env" in err[0], err
    code = main(["train", "--config", "pick_cube", "--run-dir", str(tmp_path / "r2"), "--set", f"env.gym_id={REACH}",
                 "--set", "train.scripted_demos=2", "--no-progress"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1 and "has no scripted expert" in err[0], err


GYM = ["--set", f"env.gym_id={REACH}", "--set", "env.gym_obs={state: [agent_pos, goal]}",
       "--set", "env.max_episode_steps=30"]


def _expert_demos_as_lerobot(tmp_path, episodes: int = 10):
    """Demos of a scripted reach (step toward the goal), written as a LeRobotDataset v3 that carries no
    robot_rl manifest: a dataset from elsewhere, for the task given by --config."""
    from robot_rl.data.demos import DemoWriter
    from robot_rl.data.lerobot_export import export_lerobot
    from robot_rl.data.transition import Step

    env = make_gym_env(REACH, kwargs={}, obs_map={"state": ["agent_pos", "goal"]}, max_episode_steps=30)
    writer = DemoWriter(tmp_path / "made", env.observation_space, env.action_space, task="Reach2D",
                        env_config={"control_hz": 10})
    for e in range(episodes):
        obs, _ = env.reset(seed=100 + e)
        steps: list[Step] = []
        while not steps or not steps[-1].last:
            delta = obs["state"][2:] - obs["state"][:2]
            action = np.clip(delta / 0.2, -1, 1).astype(np.float32)  # robot_rl's [-1, 1] is the env's +-0.2
            nxt, reward, terminated, truncated, info = env.step(action)
            steps.append(Step(e, len(steps), obs, action, reward, terminated, truncated, nxt,
                              success=info["success"]))
            obs = nxt
        writer.write_episode(steps)
    export_lerobot(tmp_path / "made", tmp_path / "ds")
    info = json.loads((tmp_path / "ds/meta/info.json").read_text())
    del info["robot_rl"]
    (tmp_path / "ds/meta/info.json").write_text(json.dumps(info))
    return tmp_path / "ds"


def test_robot_rl_train_learns_a_registered_env_from_lerobot_demos_and_eval_runs_it(tmp_path, capsys,
                                                                                    one_torch_thread):
    """The stated bar: eval success >= 0.8 (20 episodes, random start and goal) within 3,000 env steps, with
    half of each batch from 10 demos that came in as a LeRobotDataset v3."""
    dataset = _expert_demos_as_lerobot(tmp_path)
    assert main(["demos", "import", "--format", "lerobot", str(dataset), str(tmp_path / "demos"),
                 "--config", "pick_cube", *GYM]) == 0
    run = tmp_path / "run"
    argv = ["train", "--config", "pick_cube", "--run-dir", str(run), *GYM,
            "--set", "train.scripted_demos=0", "--set", f"train.demos={tmp_path / 'demos'}",
            "--set", "train.total_env_steps=3000", "--set", "train.eval_every=1000", "--set", "train.eval_episodes=20",
            "--set", "train.learning_starts=300", "--set", "agent.hidden_dims=[64,64]", "--set", "train.batch_size=64",
            "--set", "train.torch_threads=1", "--set", "train.eval_video_episodes=1", "--set", "seed=0",
            "--no-progress"]
    assert main(argv) == 0
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    best = max(e["success_rate"] for e in evals)
    curve = [(e.get("env_steps"), e["success_rate"]) for e in evals]
    assert best >= 0.8, evals
    assert (run / "checkpoint").is_dir() and list((run / "videos").glob("eval_*.mp4"))
    capsys.readouterr()
    assert main(["eval", str(run), "--episodes", "5"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["episodes"] == 5
    print("eval success by env steps:", curve)  # shown with -s
