"""``robot-rl train-bc`` on the command line: bad input is one line and exit 2, nothing recorded lost."""

from __future__ import annotations

import json

import pytest
from cli_errors import fails


@pytest.mark.parametrize("chunk", ["0", "65", "-3", "nan", "2.5", "lots"])
def test_a_chunk_out_of_range_is_one_line_naming_the_flag(capsys, tmp_path, chunk):
    line = fails(capsys, "train-bc", "--config", "pick_cube", "--chunk", chunk, "--run-dir", str(tmp_path / "r"))
    assert line == f"robot-rl: --chunk '{chunk}': give a whole number of actions from 1 to 64"
    assert not (tmp_path / "r").exists()


def test_a_chunk_set_out_of_range_names_the_key(capsys, tmp_path):
    line = fails(capsys, "train-bc", "--config", "pick_cube", "--set", "bc.chunk=100")
    assert line == "robot-rl: --set bc.chunk=100: 'bc.chunk' = 100 is out of range [1, 64]"


def test_a_misspelled_bc_key_suggests_the_right_one(capsys):
    line = fails(capsys, "train-bc", "--config", "pick_cube", "--set", "bc.ensemble_decy=0.1")
    assert line == ("robot-rl: --set bc.ensemble_decy=0.1: unknown key 'bc.ensemble_decy' "
                    "(did you mean 'bc.ensemble_decay'?)")


def test_a_missing_demo_folder_is_one_line(capsys, tmp_path):
    line = fails(capsys, "train-bc", "--config", "pick_cube", "--demos", str(tmp_path / "none"),
                 "--run-dir", str(tmp_path / "r"))
    assert line == f"robot-rl: demo directory not found: {tmp_path / 'none'}"
    assert not (tmp_path / "r").exists()


def test_demos_for_other_spaces_are_one_line_and_the_run_dir_is_untouched(capsys, tmp_path):
    (tmp_path / "demos").mkdir()
    (tmp_path / "demos" / "manifest.json").write_text(json.dumps({
        "format": "robot_rl-demos", "version": 1, "task": "PickCube", "source": "scripted",
        "spaces": {"observation": {}, "action": {}}}))
    run = tmp_path / "r"
    run.mkdir()
    (run / "keep.txt").write_text("mine")
    line = fails(capsys, "train-bc", "--config", "pick_cube", "--demos", str(tmp_path / "demos"),
                 "--run-dir", str(run))
    assert line.startswith(f"robot-rl: {tmp_path / 'demos'}: demos do not match this task")
    assert sorted(p.name for p in run.iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in (tmp_path / "demos").iterdir()) == ["manifest.json"]
