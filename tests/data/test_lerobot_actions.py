"""A LeRobotDataset's actions in units of its own: refused outside the task's action space, rescaled
linearly only when ``--action-range`` asks, the mapping recorded; bad ranges and NaN actions refused
in one line (robot_rl.data.lerobot_actions)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from cli_errors import fails
from lerobot_venv import lerobot_python, reference

from robot_rl.cli import main
from robot_rl.data.demos import DemoWriter, load_demos
from robot_rl.data.lerobot_export import export_lerobot
from robot_rl.data.spaces import box_spec
from robot_rl.data.transition import Step

pytest.importorskip("pyarrow", reason="the lerobot extra (pyarrow) is not installed")
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)})
TASK_ACTION = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)  # what robot_rl's envs act in


def make_dataset(root: Path, episodes: list[np.ndarray]) -> Path:
    """A state-only v3 folder holding these actions (one (T, 4) array per episode), made for a task
    whose action space is [-1, 1] (its manifest says so, as ``--config`` would)."""
    units = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
    writer = DemoWriter(root / "demos", OBS, units, task="T", source="test", env_config={"control_hz": 10})
    for e, actions in enumerate(episodes):
        n = len(actions)
        writer.write_episode([Step(episode_id=e, step=t, obs={"state": np.full(3, t, np.float32)},
                                   action=np.asarray(actions[t], np.float32), reward=0.0, terminated=t == n - 1,
                                   truncated=False, next_obs={"state": np.full(3, t + 1, np.float32)})
                              for t in range(n)])
    export_lerobot(root / "demos", root / "ds")
    info = json.loads((root / "ds/meta/info.json").read_text())
    info["robot_rl"]["spaces"]["action"] = box_spec(TASK_ACTION)
    (root / "ds/meta/info.json").write_text(json.dumps(info))
    return root / "ds"


def actions_in_units(seed: int = 0) -> list[np.ndarray]:
    """Two episodes in [-2, 2] (x, y, z, and a gripper in [0, 2] stretched to the same range), the
    extremes reached, the first episode alternating between them frame to frame."""
    rng = np.random.default_rng(seed)
    alternating = np.array([[-2, 2, -2, 2], [2, -2, 2, -2]] * 3, np.float32)
    return [alternating, rng.uniform(-2, 2, (5, 4)).astype(np.float32)]


def imported_actions(directory: Path) -> np.ndarray:
    return np.concatenate([np.stack([s.action for s in ep]) for ep in load_demos(directory, OBS, TASK_ACTION)])


def import_args(ds: Path, dest: Path, *extra: str) -> list[str]:
    return ["demos", "import", "--format", "lerobot", str(ds), str(dest), *extra]


@pytest.fixture
def units(tmp_path) -> tuple[Path, np.ndarray]:
    episodes = actions_in_units()
    return make_dataset(tmp_path, episodes), np.concatenate(episodes)


def test_actions_outside_the_task_space_are_refused_and_nothing_is_written(units, tmp_path, capsys):
    ds, _ = units
    line = fails(capsys, *import_args(ds, tmp_path / "back"))
    assert line == (f"robot-rl: {ds / 'data/chunk-000/file-000.parquet'}: feature 'action' dimension 0 spans "
                    "[-2, 2] in this dataset, outside the task's action space [-1, 1]; pass --action-range LOW HIGH "
                    "(the range of its units, one value or one per dimension) or --action-range stats (the "
                    "min/max in meta/stats.json) to rescale it")
    assert not (tmp_path / "back").exists()
    # a folder already holding demos, appended to: left byte for byte as it was
    kept = tmp_path / "kept"
    DemoWriter(kept, OBS, TASK_ACTION, task="T").write_episode(
        [Step(0, 0, {"state": np.zeros(3, np.float32)}, np.zeros(4, np.float32), 0.0, True, False,
              {"state": np.ones(3, np.float32)})])
    before = {p.name: p.read_bytes() for p in kept.iterdir()}
    fails(capsys, *import_args(ds, kept, "--append"))
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == before
    # the corrected retry goes through into the same (absent) destination
    assert main(import_args(ds, tmp_path / "back", "--action-range", "-2", "2")) == 0


def test_one_action_far_outside_in_a_later_episode_names_its_file_and_dimension(tmp_path, capsys):
    inside = np.zeros((3, 4), np.float32)
    huge = inside.copy()
    huge[1, 3] = 1e30
    ds = make_dataset(tmp_path, [inside, huge])
    line = fails(capsys, *import_args(ds, tmp_path / "back"))
    assert line.startswith(f"robot-rl: {ds / 'data/chunk-000/file-001.parquet'}: feature 'action' dimension 3 "
                           "spans [0, 1e+30] in this dataset, outside the task's action space [-1, 1]; pass")
    # a hair outside (float rounding in someone's pipeline) is not a unit mismatch
    ds = make_dataset(tmp_path / "hair", [np.full((2, 4), 1 + 5e-7, np.float32)])
    assert main(import_args(ds, tmp_path / "hair_back")) == 0


def test_action_range_rescales_into_the_task_space_and_records_the_mapping(units, tmp_path, capsys):
    ds, raw = units
    capsys.readouterr()
    assert main(import_args(ds, tmp_path / "back", "--action-range", "-2", "2")) == 0
    assert capsys.readouterr().out.strip().endswith("; actions rescaled from [-2, 2] (--action-range)")
    back = imported_actions(tmp_path / "back")
    assert back.dtype == np.float32 and np.array_equal(back, raw / 2)
    assert np.array_equal(back[:6], np.array([[-1, 1, -1, 1], [1, -1, 1, -1]] * 3, np.float32))
    manifest = json.loads((tmp_path / "back/manifest.json").read_text())
    assert manifest["action_rescale"] == [{"from": "--action-range", "low": [-2.0] * 4, "high": [2.0] * 4,
                                           "to_low": [-1.0] * 4, "to_high": [1.0] * 4,
                                           "map": "linear per dimension", "dataset": "ds", "episodes": [0, 1]}]
    # per dimension, negative lists included: x, y, z in metres and a gripper in 0..2
    metres = [np.array([[-0.05, 0.02, 0.0, 0.0], [0.05, -0.02, 0.01, 2.0], [0.0, 0.0, -0.01, 1.0]], np.float32)]
    ds2 = make_dataset(tmp_path / "metres", metres)
    assert main(import_args(ds2, tmp_path / "back2", "--action-range", "-0.05,-0.02,-0.01,0", "0.05,0.02,0.01,2")) == 0
    low, high = np.array([-0.05, -0.02, -0.01, 0.0]), np.array([0.05, 0.02, 0.01, 2.0])
    want = ((metres[0].astype(np.float64) - (low / 2 + high / 2)) / (high / 2 - low / 2)).astype(np.float32)
    back2 = imported_actions(tmp_path / "back2")
    assert np.array_equal(back2, want)
    assert np.array_equal(back2[:2], np.array([[-1, 1, 0, -1], [1, -1, 1, 1]], np.float32))
    # --append records the second mapping beside the first, for the episodes it added
    assert main(import_args(ds, tmp_path / "back2", "--append", "--action-range", "-4", "4")) == 0
    entries = json.loads((tmp_path / "back2/manifest.json").read_text())["action_rescale"]
    assert [(e["low"][3], e["high"][3], e["episodes"]) for e in entries] == [(0.0, 2.0, [0, 0]), (-4.0, 4.0, [1, 2])]
    assert np.array_equal(imported_actions(tmp_path / "back2")[3:], raw / 4)


def test_action_range_from_the_datasets_stats(units, tmp_path, capsys):
    ds, raw = units
    stats = json.loads((ds / "meta/stats.json").read_text())["action"]
    assert main(import_args(ds, tmp_path / "back", "--action-range", "stats")) == 0
    assert capsys.readouterr().out.strip().endswith("(meta/stats.json)")
    low, high = np.array(stats["min"]), np.array(stats["max"])
    want = ((raw.astype(np.float64) - (low / 2 + high / 2)) / (high / 2 - low / 2)).astype(np.float32)
    back = imported_actions(tmp_path / "back")
    assert np.array_equal(back, want)
    assert np.array_equal(back.min(0), -np.ones(4)) and np.array_equal(back.max(0), np.ones(4))
    assert json.loads((tmp_path / "back/manifest.json").read_text())["action_rescale"][0]["from"] == "meta/stats.json"


@pytest.mark.parametrize("change,message", [
    (lambda s: s.pop("action"), "meta/stats.json: no stats of 'action'; pass --action-range LOW HIGH instead"),
    (lambda s: s["action"].update(min=[-2, -2, -2]), "'action' 'min' is [-2, -2, -2], not 4 finite numbers"),
    (lambda s: s["action"].update(max=[2, 2, None, 2]), "'action' 'max' is [2, 2, None, 2], not 4 finite numbers"),
    (lambda s: s["action"].update(max=[2, 2, float("nan"), 2]), "'action' 'max' is [2, 2, nan, 2], not 4 finite"),
    (lambda s: s["action"].update(max=[2, 2, 1e999, 2]), "'action' 'max' is [2, 2, inf, 2], not 4 finite"),
    (lambda s: s["action"].update(min=[-2, 0.5, -2, -2], max=[2, 0.5, 2, 2]),
     "'action' dimension 1 has min 0.5 and max 0.5, no range to rescale; pass --action-range LOW HIGH instead"),
    (lambda s: s["action"].update(min=[-1, -2, -2, -2]),  # stale stats: the data go beyond them
     "dimension 0 spans [-2, 2] in this dataset, beyond [-1, 2], the range meta/stats.json gives it: rescaled, it "
     "would leave the task's action space [-1, 1]"),
])
def test_bad_stats_are_refused(units, tmp_path, capsys, change, message):
    ds, _ = units
    stats = json.loads((ds / "meta/stats.json").read_text())
    change(stats)
    (ds / "meta/stats.json").write_text(json.dumps(stats))
    assert message in fails(capsys, *import_args(ds, tmp_path / "back", "--action-range", "stats"))
    assert not (tmp_path / "back").exists()


def test_missing_or_broken_stats_are_refused(units, tmp_path, capsys):
    ds, _ = units
    (ds / "meta/stats.json").write_text("{\"action\": ")
    assert f"{ds / 'meta/stats.json'}: not valid JSON" in \
        fails(capsys, *import_args(ds, tmp_path / "back", "--action-range", "stats"))
    (ds / "meta/stats.json").unlink()
    assert fails(capsys, *import_args(ds, tmp_path / "back", "--action-range", "stats")) == \
        (f"robot-rl: {ds / 'meta/stats.json'}: file missing (--action-range stats reads the min/max of 'action' "
         "there); pass --action-range LOW HIGH instead")
    assert not (tmp_path / "back").exists()


@pytest.mark.parametrize("words,message", [
    (["1", "1"], "--action-range: LOW 1 is not below HIGH 1"),
    (["2", "-2"], "--action-range: LOW 2 is not below HIGH -2"),
    (["-1,-1,3,-1", "1"], "--action-range: LOW 3 is not below HIGH 1 (dimension 2)"),
    (["nan", "1"], "--action-range: LOW 'nan' holds 'nan'; the range must be finite numbers"),
    (["-inf", "1"], "--action-range: LOW '-inf' holds '-inf'; the range must be finite numbers"),
    (["-1", "1e999"], "--action-range: HIGH '1e999' holds '1e999'; the range must be finite numbers"),
    (["-1", "one"], "--action-range: HIGH 'one': 'one' is not a number"),
    (["-1,,-1", "1"], "--action-range: LOW '-1,,-1': '' is not a number"),
    (["-1"], "--action-range: give LOW HIGH (numbers, or comma-separated numbers per dimension) or 'stats', "
             "not '-1'"),
    (["-1", "0", "1"], "not '-1 0 1'"),
    (["-1,-1", "1,1,1"], "--action-range: LOW has 2 values and HIGH 3; give one value or the same number"),
    (["-1,-1", "1,1"], "--action-range: LOW has 2 values, the action has 4 dimensions; give one value or one per"),
    (["-1,-1,-1,-1,-1", "1"], "--action-range: LOW has 5 values, the action has 4 dimensions"),
])
def test_bad_ranges_are_one_line_naming_the_option(units, tmp_path, capsys, words, message):
    ds, _ = units
    line = fails(capsys, *import_args(ds, tmp_path / "back", "--action-range", *words))
    assert message in line and line.startswith("robot-rl: --action-range: "), line
    assert not (tmp_path / "back").exists()


def test_a_range_too_narrow_for_the_data_is_refused(units, tmp_path, capsys):
    ds, _ = units
    line = fails(capsys, *import_args(ds, tmp_path / "back", "--action-range", "-1.5", "1.5"))
    assert line == (f"robot-rl: {ds / 'data/chunk-000/file-000.parquet'}: feature 'action' dimension 0 spans "
                    "[-2, 2] in this dataset, beyond [-1.5, 1.5], the range --action-range gives it: rescaled, it "
                    "would leave the task's action space [-1, 1]")
    assert not (tmp_path / "back").exists()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_actions_name_the_episode_and_frame(units, tmp_path, capsys, bad):
    ds, _ = units
    path = ds / "data/chunk-000/file-001.parquet"
    table = pq.read_table(path)
    values = np.array(table.column("action").combine_chunks().flatten(), dtype=np.float32)
    values[3 * 4 + 1] = bad
    table = table.set_column(table.column_names.index("action"), "action",
                             pa.FixedSizeListArray.from_arrays(pa.array(values), 4))
    pq.write_table(table, path)
    want = f"robot-rl: {path}: column 'action' holds {float(bad)} at row 3 (episode 1, frame 3, dimension 1)"
    assert fails(capsys, *import_args(ds, tmp_path / "back", "--action-range", "-2", "2")) == want
    assert fails(capsys, *import_args(ds, tmp_path / "back")) == want
    assert not (tmp_path / "back").exists()


def test_action_range_is_for_lerobot_imports_only(units, tmp_path, capsys):
    ds, _ = units
    assert "--action-range are for --format lerobot" in \
        fails(capsys, "demos", "import", str(ds), str(tmp_path / "x"), "--action-range", "-2", "2")
    assert "--action-range are for import" in \
        fails(capsys, "demos", "export", "--format", "lerobot", str(tmp_path / "demos"), str(tmp_path / "y"),
              "--action-range", "stats")


def test_a_dataset_lerobots_writer_made_in_metres_rescales_from_its_stats(tmp_path):
    """LeRobot's own writer (its virtualenv), actions in metres and a 0..2 gripper: its meta/stats.json
    gives the range, the import maps it onto [-1, 1] and records it; an explicit range does the same."""
    from robot_rl.data.lerobot_actions import ActionRange, parse_action_range
    from robot_rl.data.lerobot_import import import_lerobot
    from robot_rl.data.lerobot_layout import LeRobotFormatError

    python = lerobot_python()
    rng = np.random.default_rng(5)
    lengths = (5, 7)
    n = sum(lengths)
    action = np.concatenate([rng.uniform(-0.05, 0.05, (n, 3)), rng.integers(0, 3, (n, 1))], 1).astype(np.float32)
    action[0, :3], action[1, :3] = -0.05, 0.05  # the extremes the stats then hold
    action[0, 3], action[1, 3] = 0.0, 2.0
    np.savez(tmp_path / "arrays.npz", state=rng.normal(size=(n, 3)).astype(np.float32), action=action,
             reward=np.zeros(n, np.float32), done=np.concatenate([[0] * (k - 1) + [1] for k in lengths]).astype(bool),
             episode=np.repeat(np.arange(2), lengths), fps=np.array(10))
    reference(python, "write", str(tmp_path / "ds"), str(tmp_path / "arrays.npz"), "h264")
    stats = json.loads((tmp_path / "ds/meta/stats.json").read_text())["action"]
    low, high = np.array(stats["min"], np.float64), np.array(stats["max"], np.float64)
    assert np.allclose(low, action.min(0)) and np.allclose(high, action.max(0))  # what LeRobot's writer computed
    report = import_lerobot(tmp_path / "ds", tmp_path / "back", obs_space=OBS, action_space=TASK_ACTION, fps=10,
                            action_range=ActionRange(from_stats=True))
    assert (report.episodes, report.steps) == (2, n) and "meta/stats.json" in report.rescaled
    back = imported_actions(tmp_path / "back")
    want = ((action.astype(np.float64) - (low / 2 + high / 2)) / (high / 2 - low / 2)).astype(np.float32)
    assert np.array_equal(back, want) and back.min() == -1 and back.max() == 1
    assert np.array_equal(back[:2], np.array([[-1, -1, -1, -1], [1, 1, 1, 1]], np.float32))
    entry = json.loads((tmp_path / "back/manifest.json").read_text())["action_rescale"][0]
    assert entry["from"] == "meta/stats.json" and entry["low"] == low.tolist() and entry["episodes"] == [0, 1]
    # the same mapping given by hand, and without one the metres-and-gripper actions are refused
    explicit = parse_action_range(["-0.05,-0.05,-0.05,0", "0.05,0.05,0.05,2"])
    import_lerobot(tmp_path / "ds", tmp_path / "back2", obs_space=OBS, action_space=TASK_ACTION, fps=10,
                   action_range=explicit)
    assert np.allclose(imported_actions(tmp_path / "back2"), want, atol=1e-6)
    with pytest.raises(LeRobotFormatError, match="outside the task's action space"):
        import_lerobot(tmp_path / "ds", tmp_path / "back3", obs_space=OBS, action_space=TASK_ACTION, fps=10)
    assert not (tmp_path / "back3").exists()
