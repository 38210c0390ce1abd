"""A task that lives only on a real cell (ConnectorInsert): spaces from its config, no sim anywhere.

Checked here, fast: the spaces follow from the config alone; the learner and the actor
node's session build no sim for it (sim construction is made to raise, and MuJoCo made
unimportable); sim-only commands say so in one line and exit 2; a config that lacks what
its spaces, resets or reward need is one line naming the file and key. The whole loop
(the arm over topics, a reward classifier trained from frames recorded through the
actor, resets to recorded poses, a learner over gRPC): tests/nodes/test_real_only_loop.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

from robot_rl.cli import main
from robot_rl.errors import ConfigError
from robot_rl.tasks import get_task, load_config, sim_tasks, task_names
from robot_rl.tasks.real import read_reset_poses, reset_poses, write_reset_poses

REPO = Path(__file__).resolve().parents[2]
CONNECTOR = REPO / "configs" / "connector_insert.yaml"
TOKEN = "real-only-test-token-0123456789abcdef"


def _raw() -> dict:
    return yaml.safe_load(CONNECTOR.read_text())


def _write(tmp_path: Path, data: dict, name: str = "cell.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def no_sim(monkeypatch):
    """Any sim construction raises, and MuJoCo cannot be imported: what runs here builds no sim."""
    import robot_rl.assemble
    import robot_rl.sim

    def refuse(*args, **kwargs):
        raise AssertionError("a sim was built for a task that has no scene")

    monkeypatch.setattr(robot_rl.sim, "build_world", refuse)
    monkeypatch.setattr(robot_rl.assemble, "sim_parts", refuse)
    monkeypatch.setitem(sys.modules, "mujoco", None)


def test_it_is_registered_but_not_a_sim_task():
    spec = get_task("ConnectorInsert")
    assert spec.real_only and "ConnectorInsert" in task_names() and spec not in sim_tasks()
    assert spec.env_id not in gym.registry  # no gymnasium id: there is nothing to make
    with pytest.raises(ConfigError, match=r"task 'ConnectorInsert' lives only on a real cell .*robot-rl launch "):
        spec.make_expert(None)
    assert not (REPO / "robot_rl" / "tasks" / "connector_insert" / "task.py").exists()


def test_its_spaces_come_from_the_config_alone(no_sim):
    from robot_rl.assemble import config_spaces_env

    env = config_spaces_env(load_config(CONNECTOR))
    obs, act = env.observation_space, env.action_space
    assert sorted(obs.spaces) == ["front", "state", "wrist"]
    assert obs["front"].shape == obs["wrist"].shape == (32, 32, 3) and obs["front"].dtype == np.uint8
    assert obs["state"].shape == (13,)  # tcp_pos 3 + tcp_quat 4 + tcp_wrench 6
    assert act.shape == (3,) and np.all(act.low == -1) and np.all(act.high == 1)
    # every space-defining key moves the spaces
    other = config_spaces_env(load_config(CONNECTOR, ["cameras.wrist.resize=[24,16]", "env.active_dims=[x,y,z,rz]",
                                                      "task.params.proprio=[tcp_pos,gripper]",
                                                      "env.policy_keys=[state,wrist]"]))
    assert sorted(other.observation_space.spaces) == ["state", "wrist"]
    assert other.observation_space["wrist"].shape == (16, 24, 3) and other.observation_space["state"].shape == (4,)
    assert other.action_space.shape == (4,)
    with pytest.raises(RuntimeError, match="for its spaces only"):
        env.reset()


def test_the_proprio_keys_pick_their_entries():
    from robot_rl.envs.robot_env import PROPRIO_DIM
    from robot_rl.envs.wrappers import ProprioKeys

    class Flat(gym.Env):
        observation_space = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (PROPRIO_DIM + 2,), np.float32)})
        action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

        def reset(self, **kwargs):
            return {"state": np.arange(PROPRIO_DIM + 2, dtype=np.float32)}, {}

    env = ProprioKeys(Flat(), ["gripper", "tcp_pos"])
    obs, _ = env.reset()
    assert obs["state"].tolist() == [19.0, 0.0, 1.0, 2.0, 20.0, 21.0]  # gripper, tcp_pos, then task state
    assert env.observation_space["state"].shape == (6,)


def test_the_learner_and_the_actor_build_no_sim(tmp_path, no_sim):
    from robot_rl.assemble import config_spaces_env
    from robot_rl.nodes.actor import ActorSession, Senders, make_topic_parts
    from robot_rl.nodes.description import build_graph
    from robot_rl.nodes.task import RobotResetTask
    from robot_rl.reset.pose_list import PoseListReset
    from robot_rl.training.remote.learner_process import LearnerProcess
    from robot_rl.training.remote.spaces import EnvSpaces

    cfg = load_config(CONNECTOR, [f"train.run_dir={tmp_path / 'run'}", "learning.port=0"])
    learner = LearnerProcess(cfg, TOKEN, tensorboard=False)
    try:
        assert learner.eval_env is None
        expected = config_spaces_env(cfg)
        assert learner.obs_space == expected.observation_space and learner.action_space == expected.action_space
    finally:
        learner.server.stop() if hasattr(learner.server, "stop") else None

    graph = build_graph(cfg, CONNECTOR)
    assert graph.names == ["intervention_node", "actor_node"]  # no sim node, no controller node: the arm's driver
    topics = graph.node("actor_node").parameters["topics"]
    parts = make_topic_parts(cfg, topics, Senders(lambda p, q: None, lambda g: None), actor_id="x")
    assert isinstance(parts.task, RobotResetTask) and isinstance(parts.task.routine, PoseListReset)
    assert [p.pos.tolist() for p in parts.task.routine.poses] == [p[:3].tolist() for p in reset_poses(cfg)]
    session = ActorSession(load_config(CONNECTOR, ["ros.policy=random", "reward.classifier_path=null",
                                                   "ros.reward_frames_dir=" + str(tmp_path / "frames"),
                                                   "intervention.device=keyboard"]), parts)
    assert EnvSpaces.from_gym(session.env.observation_space, session.env.action_space).action.shape == (3,)
    assert session.env.observation_space["state"].shape == (13,)


@pytest.mark.parametrize("command", [
    ["train", "--config", str(CONNECTOR)],
    ["rollout", "--config", str(CONNECTOR)],
    ["record-demos", "--config", str(CONNECTOR), "--source", "scripted", "--episodes", "1"],
    ["actor", "--config", str(CONNECTOR)],
    ["learner", "--config", str(CONNECTOR), "--set", "train.scripted_demos=2", "--port", "0"],
    ["train", "--config", str(CONNECTOR), "--set", "robot.backend=sim", "--set", "cameras.front.backend=sim",
     "--set", "cameras.wrist.backend=sim"],
], ids=["train", "rollout", "record-demos", "actor", "learner-scripted-demos", "train-in-sim"])
def test_sim_only_commands_say_so_in_one_line(tmp_path, capsys, monkeypatch, no_sim, command):
    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    monkeypatch.chdir(tmp_path)
    code = main([*command, *(["--out", str(tmp_path / "d")] if command[0] == "record-demos" else [])])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "\n" not in err and err.startswith("robot-rl: ")
    assert "ConnectorInsert" in err and "robot-rl launch" in err, err


def _without(data: dict, *keys: str) -> dict:
    node = data
    for key in keys[:-1]:
        node = node[key]
    del node[keys[-1]]
    return data


def _set(data: dict, value, *keys: str) -> dict:
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    return data


BAD = {
    "camera height": (lambda d: _without(d, "cameras", "wrist", "height"), "cameras.wrist.height"),
    "camera width": (lambda d: _without(d, "cameras", "front", "width"), "cameras.front.width"),
    "active dims": (lambda d: _without(d, "env", "active_dims"), "env.active_dims"),
    "proprio": (lambda d: _without(d, "task", "params", "proprio"), "task.params.proprio"),
    "unknown proprio": (lambda d: _set(d, ["tcp_pos", "joint_torque"], "task", "params", "proprio"),
                        "task.params.proprio"),
    "twice proprio": (lambda d: _set(d, ["tcp_pos", "tcp_pos"], "task", "params", "proprio"), "task.params.proprio"),
    "state mode": (lambda d: _set(d, "both", "env", "obs_mode"), "env.obs_mode"),
    "classifier": (lambda d: _set(d, None, "reward", "classifier_path"), "reward.classifier_path"),
    "pose outside box": (lambda d: _set(d, [[0.9, 0.0, 0.18, 3.14, 0.0, 0.0]], "task", "params", "reset_poses"),
                         "task.params.reset_poses"),
    "pose nan": (lambda d: _set(d, [[float("nan"), 0.0, 0.18, 3.14, 0.0, 0.0]], "task", "params", "reset_poses"),
                 "task.params.reset_poses"),
    "pose huge": (lambda d: _set(d, [[1e300, 0.0, 0.18, 3.14, 0.0, 0.0]], "task", "params", "reset_poses"),
                  "task.params.reset_poses"),
    "pose short": (lambda d: _set(d, [[0.5, 0.0, 0.18]], "task", "params", "reset_poses"), "task.params.reset_poses"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_config_missing_what_its_spaces_need_is_one_line_naming_file_and_key(tmp_path, capsys, case):
    edit, key = BAD[case]
    path = _write(tmp_path, edit(_raw()))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message and key in message, message
    code = main(["learner", "--config", str(path), "--port", "0", "--run-dir", str(tmp_path / "run")])
    out = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in out and key in out, out
    assert not (tmp_path / "run").exists()


def test_a_classifier_is_not_needed_to_record_its_frames(tmp_path):
    cfg = load_config(_write(tmp_path, _set(_raw(), None, "reward", "classifier_path")),
                      ["ros.policy=human", f"ros.reward_frames_dir={tmp_path / 'frames'}"])
    assert cfg.reward.classifier_path is None


def test_recorded_reset_poses_round_trip_and_bad_files_are_one_line(tmp_path):
    poses = [[0.5, -0.02, 0.2, 3.14, 0.0, 0.1], [0.55, 0.02, 0.15, 3.14, 0.05, -0.1]]
    path = write_reset_poses(tmp_path / "poses.json", poses)
    assert [p.tolist() for p in read_reset_poses(path)] == poses
    cfg = load_config(CONNECTOR, ["task.params.reset_poses=[]", f"task.params.reset_poses_file={path}"])
    assert [p.tolist() for p in reset_poses(cfg)] == poses
    both = load_config(CONNECTOR, [f"task.params.reset_poses_file={path}"])
    assert len(reset_poses(both)) == 3 + 2  # the config's, then the file's

    bad = {"missing": None, "folder": "dir", "not json": "[0.5,", "nan": "[[NaN, 0, 0.2, 3.1, 0, 0]]",
           "inf": "[[Infinity, 0, 0.2, 3.1, 0, 0]]", "huge": "[[1e300, 0, 0.2, 3.1, 0, 0]]",
           "short": "[[0.5, 0, 0.2]]", "empty": "[]", "not a list": '{"x": 1}', "bool": "[[true, 0, 0.2, 3.1, 0, 0]]",
           "outside the box": "[[0.9, 0, 0.2, 3.1, 0, 0]]",
           "too big": "[" + ",".join(["[0.5,0,0.2,3.1,0,0]"] * 40_000) + "]"}
    for name, text in bad.items():
        file = tmp_path / f"bad_{name.replace(' ', '_')}.json"
        if text == "dir":
            file.mkdir()
        elif text is not None:
            file.write_text(text)
        with pytest.raises(ConfigError) as err:
            load_config(CONNECTOR, [f"task.params.reset_poses_file={file}"])
        message = str(err.value)
        assert "\n" not in message and "task.params.reset_poses_file" in message, (name, message)
        assert str(file) in message, (name, message)


def test_a_learning_actor_refuses_the_scripted_expert(tmp_path):
    from robot_rl.nodes.actor import check_start

    with pytest.raises(ConfigError, match="ConnectorInsert' lives only on a real cell .*ros.policy 'expert'"):
        check_start(load_config(CONNECTOR, ["ros.policy=expert"]))
    json.dumps(load_config(CONNECTOR).task.params.reset_poses)  # plain data
