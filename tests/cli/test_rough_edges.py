"""Command-line rough edges: one-line ``robot-rl: ...`` errors (exit 2), config names,
``--version``, defaults in ``--help`` and ``launch --dry-run`` checking what nodes refuse."""

from __future__ import annotations

import re

import pytest
from cli_errors import fails

from robot_rl.cli import COMMANDS, main


def test_malformed_set_value_names_set_and_key(capsys):
    line = fails(capsys, "rollout", "--config", "pick_cube", "--set", "env.active_dims=[x,y")
    assert line == "robot-rl: --set env.active_dims: is not valid YAML (did not find expected ',' or ']')"


@pytest.mark.parametrize("override,message", [
    ("foo.bar=1", "--set foo.bar=1: unknown key 'foo.bar'"),
    ("env.max_steps=7", "--set env.max_steps=7: unknown key 'env.max_steps' (did you mean 'env.max_episode_steps'?)"),
    ("cameras.front.backnd=x",
     "--set cameras.front.backnd=x: unknown key 'cameras.front.backnd' (did you mean 'cameras.front.backend'?)"),
    ("task.params.zzz=1", "--set task.params.zzz=1: unknown key 'task.params.zzz'"),
])
def test_unknown_set_key_is_blamed_on_set(capsys, override, message):
    assert fails(capsys, "rollout", "--config", "pick_cube", "--set", override) == f"robot-rl: {message}"


@pytest.mark.parametrize("argv", [
    ["rollout", "--config"], ["record-rewards", "--out", "x", "--config"],
    ["train-reward", "--data", "x", "--out", "x.pt", "--config"], ["cameras", "check", "--config"],
    ["franka", "check", "--config"],
])
def test_every_config_command_suggests_a_close_config_name(capsys, argv):
    line = fails(capsys, *argv, "pick_cub")
    assert line.startswith("robot-rl: config file not found: pick_cub (did you mean 'pick_cube'")


def test_config_names_are_accepted(capsys):
    # A name resolves: the error is the command's own, after the config loaded.
    line = fails(capsys, "train-reward", "--config", "pick_cube", "--data", "d", "--out", "out.json")
    assert line == "robot-rl: --out out.json: give a model file name such as reward.pt"


def test_unknown_name_with_no_close_match_lists_the_configs(capsys):
    line = fails(capsys, "rollout", "--config", "zzzqqq")
    assert re.fullmatch(r"robot-rl: config file not found: zzzqqq \(known configs: .*pick_cube.*; looked in .*\)",
                        line)


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert re.fullmatch(r"robot-rl \S+\n", capsys.readouterr().out)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_shows_defaults_and_no_markup(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "``" not in text and not re.search(r":(class|func|mod|data|meth):", text)
    if command in ("rollout", "launch", "eval", "train-reward", "record-rewards"):
        assert "(default: " in text or "default: " in text


def test_rollout_help_shows_each_default(capsys):
    with pytest.raises(SystemExit):
        main(["rollout", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--episodes EPISODES default: 20" in text
    assert "first episode seed (default: 0)" in text
    assert "(default: runs/rollout)" in text


def test_top_level_help_has_no_markup(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "The robot-rl command." in text and "``" not in text


def test_launch_dry_run_refuses_a_missing_checkpoint(capsys, tmp_path):
    missing = tmp_path / "no_run"
    line = fails(capsys, "launch", "pick_cube", "--dry-run", "--run-dir", str(tmp_path / "launch"),
                 "--set", "ros.policy=checkpoint", "--set", f"ros.checkpoint={missing}")
    assert line == f"robot-rl: ros.policy is 'checkpoint' but ros.checkpoint: run directory {missing} does not exist"


def test_launch_dry_run_refuses_a_run_without_checkpoint(capsys, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    line = fails(capsys, "launch", "pick_cube", "--dry-run", "--run-dir", str(tmp_path / "launch"),
                 "--set", "ros.policy=checkpoint", "--set", f"ros.checkpoint={run}")
    assert line.startswith(f"robot-rl: ros.policy is 'checkpoint' but ros.checkpoint: no checkpoint in {run}:")


def test_launch_dry_run_refuses_no_checkpoint_named(capsys, tmp_path):
    line = fails(capsys, "launch", "pick_cube", "--dry-run", "--run-dir", str(tmp_path / "launch"),
                 "--set", "ros.policy=checkpoint")
    assert line == "robot-rl: ros.policy is 'checkpoint' but ros.checkpoint names no run directory"


def test_launch_dry_run_refuses_a_missing_classifier(capsys, tmp_path):
    missing = tmp_path / "reward.pt"
    line = fails(capsys, "launch", "pick_cube", "--dry-run", "--run-dir", str(tmp_path / "launch"),
                 "--set", "ros.policy=expert", "--set", f"reward.classifier_path={missing}")
    assert line == (f"robot-rl: reward.classifier_path {missing} does not exist "
                    "(train one with robot-rl train-reward)")


def test_launch_dry_run_refuses_a_demos_dir_that_is_a_file(capsys, tmp_path):
    demos = tmp_path / "demos"
    demos.write_text("x")
    line = fails(capsys, "launch", "pick_cube", "--dry-run", "--run-dir", str(tmp_path / "launch"),
                 "--set", "ros.policy=expert", "--set", f"ros.demos_dir={demos}")
    assert line == f"robot-rl: ros.demos_dir {demos} is a file, not a demo directory"


def test_launch_dry_run_passes_a_good_session(capsys, tmp_path):
    assert main(["launch", "pick_cube", "--dry-run", "--run-dir", str(tmp_path / "launch"),
                 "--set", "ros.policy=expert"]) == 0
