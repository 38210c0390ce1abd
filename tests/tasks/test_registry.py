"""The task registry: every registered task has every part and builds an env; only the
composition layer asks the registry, so the core packages never import a task."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from import_graph import plain_imports

import robot_rl.assemble  # noqa: F401 - registers the gymnasium ids
from robot_rl.config.reward import RewardCollectConfig
from robot_rl.errors import ConfigError
from robot_rl.paths import resolve_config
from robot_rl.reset.backward import BackwardExpert, BackwardSpec, BackwardTask
from robot_rl.reset.sim import SimTaskReset
from robot_rl.reward.scenarios import ScenarioDriver
from robot_rl.sim.experts import ScriptedExpert
from robot_rl.sim.task import SimTask
from robot_rl.tasks import FOLDERS, all_tasks, config_from_dict, get_task, load_config, sim_tasks, task_names

REPO = Path(__file__).resolve().parents[2]
SPECS = all_tasks()
SIM_SPECS = sim_tasks()  # the real-only ones have no scene: tests/tasks/test_real_only.py


def test_one_line_per_task_and_lookup_by_name():
    assert [s.folder for s in SPECS] == list(FOLDERS)
    assert task_names() == tuple(s.name for s in SPECS) and len(set(task_names())) == len(SPECS) >= 3
    for spec in SPECS:
        assert get_task(spec.name) is spec and spec.env_id == f"robot_rl/{spec.name}-v0"
    with pytest.raises(ConfigError, match=r"unknown task 'FlipPancake' \(known: .*PickCube"):
        get_task("FlipPancake")


def test_a_config_naming_no_task_gets_the_first_registered_one():
    assert config_from_dict({}).task.name == task_names()[0]


@pytest.mark.parametrize("spec", SIM_SPECS, ids=lambda s: s.name)
def test_every_task_has_every_part(spec):
    parts = spec.parts
    assert set(parts) == {"params", "task", "expert", "reset", "backward", "scenarios"}
    assert dataclasses.is_dataclass(parts["params"]) and parts["params"] is spec.params
    assert issubclass(parts["task"], SimTask) and parts["task"].name == spec.name
    assert issubclass(parts["expert"], ScriptedExpert)
    assert issubclass(parts["reset"], SimTaskReset)
    assert issubclass(parts["backward"], BackwardSpec)
    assert issubclass(parts["backward"].backward_class, BackwardTask)
    assert issubclass(parts["backward"].backward_class.Expert, BackwardExpert)
    assert issubclass(parts["scenarios"], ScenarioDriver) and parts["scenarios"].scenarios
    assert spec.summary and 0.0 <= spec.start_gripper <= 1.0
    # its defaults: every parameter has one, and its config names the task
    assert spec.params()  # builds from defaults alone
    cfg = load_config(resolve_config(spec.config))
    assert cfg.task.name == spec.name and isinstance(cfg.task.params, spec.params)
    assert (REPO / "configs" / f"{spec.folder}.yaml").is_file()
    assert (REPO / "robot_rl" / "tasks" / spec.folder / "__init__.py").is_file()


@pytest.mark.parametrize("spec", SIM_SPECS, ids=lambda s: s.name)
def test_every_task_builds_an_env_and_hands_out_its_parts(spec):
    cfg = load_config(resolve_config(spec.config))
    env = gym.make(spec.env_id)  # the gymnasium id, from the registry
    base = env.unwrapped
    task = base.task
    assert type(task) is spec.task and base.observation_space["state"].shape[0] == 20 + task.state_dim
    obs, _ = env.reset(seed=0)
    expert = spec.make_expert(env, seed=0)
    obs, *_ = env.step(expert.act(obs))
    assert np.all(np.isfinite(obs["state"]))
    parts = spec.parts
    assert isinstance(task.make_reset(cfg), parts["reset"])
    rules = task.make_backward(cfg)
    assert isinstance(rules, parts["backward"])
    backward = rules.backward_class(task, cfg)
    assert backward.task_state().shape == (task.state_dim + backward.goal_dim,)
    driver = task.make_scenarios(env, RewardCollectConfig(), seed=0)
    assert isinstance(driver, parts["scenarios"])
    driver.reset()
    assert driver.tag in driver.tags and env.action_space.contains(np.asarray(driver.act(obs), np.float32))
    env.close()


# --- layering (the import rules are in tests/test_layout.py) -------------------------------


def test_a_task_folder_init_and_params_stay_light():
    """Listing the tasks (help text, gymnasium ids) and loading a config import no sim."""
    light = {"__future__", "__future__.annotations", "dataclasses", "dataclasses.dataclass",
             "robot_rl.config.loader", "robot_rl.config.loader.param", "robot_rl.tasks.spec",
             "robot_rl.tasks.spec.TaskSpec"}
    for spec in SPECS:
        for name in ("__init__.py", "params.py"):
            path = REPO / "robot_rl" / "tasks" / spec.folder / name
            assert plain_imports(path) <= light, path
