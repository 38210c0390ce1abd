"""RobotEnv over the MuJoCo arm: gymnasium conformance, wrappers, safety, experts."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from robot_rl.assemble import make_env  # importing it registers the gymnasium ids
from robot_rl.envs import outer_action
from robot_rl.envs.robot_env import PROPRIO_LAYOUT
from robot_rl.tasks import load_config, sim_tasks


@pytest.mark.parametrize("env_id", sorted(spec.env_id for spec in sim_tasks()))
@pytest.mark.parametrize("obs_mode", ["state", "pixels", "both"])
def test_check_env_passes_for_every_id_and_mode(env_id, obs_mode):
    env = gym.make(env_id, obs_mode=obs_mode)
    check_env(env.unwrapped)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    cams = [k for k in obs if k != "state"]
    assert (cams == []) == (obs_mode == "state")
    for name in cams:
        assert obs[name].dtype == np.uint8 and obs[name].ndim == 3 and obs[name].std() > 1.0
    env.close()


def test_reset_is_deterministic_per_seed_and_varies_across_seeds():
    env = make_env(load_config("configs/pick_cube.yaml"))
    a, _ = env.reset(seed=3)
    b, _ = env.reset(seed=3)
    c, _ = env.reset(seed=4)
    np.testing.assert_array_equal(a["state"], b["state"])
    assert not np.allclose(a["state"][-6:-3], c["state"][-6:-3])  # the cube moved


def test_relative_frame_and_active_dims_round_trip():
    env = make_env(load_config("configs/pick_cube.yaml", ["task.params.start_yaw_range=0.3"]))
    env.reset(seed=0)
    assert env.action_space.shape == (4,)
    full = np.array([0.3, -0.2, 0.5, 0.0, 0.0, 0.0, 1.0])
    outer = outer_action(env, full)
    inner = outer
    chain = []
    layer = env
    while isinstance(layer, gym.Wrapper):
        chain.append(layer)
        layer = layer.env
    for w in chain:
        if hasattr(w, "action_to_outer"):
            inner = w.action(inner)
    np.testing.assert_allclose(inner, full, atol=1e-6)


def test_relative_pose_observation_starts_at_the_origin():
    env = make_env(load_config("configs/pick_cube.yaml"))
    obs, _ = env.reset(seed=0)
    s = obs["state"]
    np.testing.assert_allclose(s[slice(*PROPRIO_LAYOUT["tcp_pos"])], 0.0, atol=1e-6)
    np.testing.assert_allclose(s[slice(*PROPRIO_LAYOUT["tcp_quat"])], [1, 0, 0, 0], atol=1e-6)


def test_crop_and_resize_per_camera():
    cfg = load_config("configs/pick_cube.yaml", [
        "env.obs_mode=pixels", "cameras.front.crop=[16,0,112,96]", "cameras.front.resize=[48,40]",
        "cameras.wrist.resize=[32,32]"])
    env = make_env(cfg)
    obs, _ = env.reset(seed=0)
    assert obs["front"].shape == (40, 48, 3)
    assert obs["wrist"].shape == (32, 32, 3)
    assert env.observation_space["front"].shape == (40, 48, 3)


def test_gripper_penalty_only_when_the_gripper_changes():
    env = make_env(load_config("configs/pick_cube.yaml"))
    env.reset(seed=0)
    penalties = [env.step(np.array([0, 0, 0, g], np.float32))[4]["grasp_penalty"] for g in (0.0, 1.0, 1.0, -1.0)]
    assert penalties == [0.0, -0.1, 0.0, -0.1]


def test_actions_never_leave_the_safety_box():
    cfg = load_config("configs/pick_cube.yaml")
    env = make_env(cfg)
    env.reset(seed=0)
    world = env.unwrapped.task.world
    ws = cfg.robot.workspace
    for action in ([1, 1, 1, 0], [-1, -1, -1, 0], [1, -1, 1, 0]):
        for _ in range(25):
            env.step(np.array(action, np.float32))
        pos = world.data.site_xpos[world.tcp_site]
        assert np.all(pos >= np.array(ws.pos_low) - 0.005) and np.all(pos <= np.array(ws.pos_high) + 0.005), pos


@pytest.mark.parametrize("config", ["configs/pick_cube.yaml", "configs/peg_insert.yaml"])
def test_scripted_expert_succeeds(config):
    env = make_env(load_config(config))
    expert = env.unwrapped.task.make_expert(env)
    successes = 0
    episodes = 10
    for seed in range(100, 100 + episodes):
        obs, _ = env.reset(seed=seed)
        expert.reset()
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(expert.act(obs))
            done = terminated or truncated
        successes += int(info["success"])
        assert reward == float(info["success"])
    assert successes >= 9, f"{successes}/{episodes}"


def test_misaligned_peg_is_blocked_by_the_board():
    """With 1 mm per side, a peg 3 mm off the hole must not go in: contact is real."""
    env = make_env(load_config("configs/peg_insert.yaml", ["task.params.start_pos_range=[0,0,0]"]))
    env.reset(seed=0)
    base = env.unwrapped
    task = base.task
    for k in range(40):
        goal_tip = task.hole_top() + [0.003, 0.0, 0.005 if k < 15 else -0.03]
        goal = goal_tip + (base.target_pose[0] - task.peg_tip())
        move = np.clip((goal - base.target_pose[0]) / base.scale[:3], -1, 1)
        env.step(outer_action(env, np.concatenate([move, np.zeros(4)])))
    assert not task.success()
    assert task.peg_tip()[2] > task.hole_top()[2] - 0.002
    assert base._state.tcp_wrench[2] > 2.0  # the board pushes back
