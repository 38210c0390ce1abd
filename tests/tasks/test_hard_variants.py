"""The harder variants (configs/<task>_hard.yaml): task parameters only, harder than the task, bad values refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_errors import fails
from expert_runs import expert_successes

from robot_rl.config import to_dict
from robot_rl.tasks import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
VARIANTS = ("pick_cube", "peg_insert", "plug_insert")


def load(name: str):
    return load_config(CONFIGS / f"{name}.yaml")


@pytest.mark.parametrize("task", VARIANTS)
def test_a_variant_changes_task_parameters_only(task):
    base, hard = to_dict(load(task)), to_dict(load(f"{task}_hard"))
    assert base["task"]["name"] == hard["task"]["name"]  # no new task
    assert base["task"]["params"] != hard["task"]["params"]
    for data in (base, hard):
        data["task"].pop("params")
        data["train"].pop("run_dir")  # its own runs folder
    assert base == hard


def test_pick_cube_hard_places_a_smaller_cube_wider_among_decoys_and_starts_the_arm_turned():
    base, hard = load("pick_cube").task.params, load("pick_cube_hard").task.params
    assert all(h > b for h, b in zip(hard.cube_xy_range, base.cube_xy_range))
    assert hard.cube_yaw_range > base.cube_yaw_range and hard.lift_height > base.lift_height
    assert hard.cube_half_size < base.cube_half_size and hard.decoys > base.decoys == 0
    assert all(h >= b for h, b in zip(hard.start_pos_range, base.start_pos_range))
    workspace = load("pick_cube_hard").robot.workspace
    rot_limit = min(-workspace.rot_low[2], workspace.rot_high[2])
    assert base.start_yaw_range < hard.start_yaw_range <= rot_limit  # a turn the workspace allows
    # every placement stays reachable
    low = np.asarray(hard.cube_xy_center) - hard.cube_xy_range - hard.cube_half_size
    high = np.asarray(hard.cube_xy_center) + hard.cube_xy_range + hard.cube_half_size
    # the cube's far edge may touch the box's wall (its centre, where the TCP goes, is inside)
    assert np.all(low >= np.asarray(workspace.pos_low[:2]) - 1e-9)
    assert np.all(high <= np.asarray(workspace.pos_high[:2]) + 1e-9)


@pytest.mark.parametrize("task", ["peg_insert", "plug_insert"])
def test_the_insertions_have_less_clearance_and_start_further_off(task):
    base, hard = load(task).task.params, load(f"{task}_hard").task.params
    assert hard.clearance < base.clearance
    assert all(h > b for h, b in zip(hard.start_pos_range[:2], base.start_pos_range[:2]))


@pytest.mark.parametrize("task, key", [("peg_insert", "hole_xy_range"), ("plug_insert", "socket_xy_range")])
def test_the_insertions_board_moves_every_episode_on_the_variant_only(task, key):
    """Where the hole is, only the images say from the robot's view: the variant's difficulty from pixels."""
    base, hard = load(task).task.params, load(f"{task}_hard").task.params
    assert tuple(getattr(base, key)) == (0.0, 0.0) and min(getattr(hard, key)) > 0
    workspace = load(f"{task}_hard").robot.workspace  # the TCP reaches the hole wherever the board goes
    home = np.asarray(hard.hole_xy if task == "peg_insert" else hard.socket_xy)
    low, high = np.asarray(workspace.pos_low[:2]), np.asarray(workspace.pos_high[:2])
    assert np.all(home - getattr(hard, key) > low + 0.01)
    assert np.all(home + getattr(hard, key) < high - 0.01)


def test_plug_insert_hard_starts_turned_further_but_within_the_turn_the_workspace_allows():
    cfg = load("plug_insert_hard")
    assert cfg.task.params.start_yaw_range > load("plug_insert").task.params.start_yaw_range
    assert cfg.task.params.start_yaw_range < min(-cfg.robot.workspace.rot_low[2], cfg.robot.workspace.rot_high[2])


@pytest.mark.parametrize("task, key, value, fragment", [
    ("pick_cube_hard", "cube_yaw_range", ".nan", "must be a finite number, got nan"),
    ("pick_cube_hard", "cube_xy_range", "[0.3, 0.1]", "'task.params.cube_xy_range[0]' = 0.3 is out of range"),
    ("pick_cube_hard", "cube_xy_range", "[.inf, 0.1]", "must be a finite number"),
    ("peg_insert_hard", "clearance", "0", "'task.params.clearance' = 0.0 is out of range"),
    ("peg_insert_hard", "start_pos_range", "1e308", "task.params.start_pos_range"),
    ("plug_insert_hard", "start_yaw_range", "-0.1", "'task.params.start_yaw_range' = -0.1 is out of range"),
    ("plug_insert_hard", "clearance", "tight", "task.params.clearance"),
    ("peg_insert_hard", "hole_xy_range", "[.nan, 0.03]", "must be a finite number"),
    ("plug_insert_hard", "socket_xy_range", "[0.03, -1]", "'task.params.socket_xy_range[1]' = -1.0 is out of range"),
])
def test_a_bad_variant_value_is_one_line_naming_the_key_and_exit_2(capsys, tmp_path, task, key, value, fragment):
    run_dir = tmp_path / "run"
    line = fails(capsys, "train", "--config", task, "--set", f"task.params.{key}={value}",
                 "--set", f"train.run_dir={run_dir}")
    assert fragment in line and f"task.params.{key}" in line
    assert not run_dir.exists()


def test_a_bad_value_in_a_file_based_on_a_variant_names_the_file(capsys, tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(f"base: {CONFIGS / 'pick_cube_hard.yaml'}\ntask:\n  params:\n    cube_yaw_range: .nan\n")
    line = fails(capsys, "train", "--config", str(mine))
    assert str(mine) in line and "'task.params.cube_yaw_range' must be a finite number" in line


@pytest.mark.parametrize("task", VARIANTS)
def test_the_scripted_expert_still_does_the_harder_variant(task):
    """Demos must be recordable: the expert succeeds on most episodes of the variant."""
    pytest.importorskip("mujoco")
    successes = expert_successes(load(f"{task}_hard"), episodes=8, seed=5)
    assert successes >= 6, successes
