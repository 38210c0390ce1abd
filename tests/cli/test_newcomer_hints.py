"""What a newcomer types does what they meant, or says in one line what to type instead.

The config both ways (``robot-rl launch --config X`` and ``robot-rl train X``), refusals and
``--help`` before torch is imported, progress while ``train`` records its scripted demos,
``train.device=cuda`` without a GPU and an unknown key that lives in another section, and the
gymnasium ids registered by ``import robot_rl``.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from robot_rl.cli import COMMANDS, main

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "mujoco", "grpc", "tensorboard", "matplotlib")


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# --- the config both ways -----------------------------------------------------------------


@pytest.mark.parametrize("args", [["launch", "--config", "pick_cube"], ["launch", "pick_cube"],
                                  ["launch", "configs/pick_cube.yaml", "--config", "pick_cube"]])
def test_launch_takes_its_config_either_way(args, capsys, tmp_path):
    assert main([*args, "--dry-run", "--run-dir", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "sim_node:" in out and "actor_node:" in out
    assert f"config: {REPO / 'configs' / 'pick_cube.yaml'}" in out  # the nodes' params name the one config


@pytest.mark.parametrize("args,first,option", [
    (["launch", "pick_cube", "--config", "peg_insert", "--dry-run"], "pick_cube", "peg_insert"),
    (["train", "pick_cube", "--config", "push"], "pick_cube", "push"),
    (["train", "--config", "pick_cube", "stray_word"], "stray_word", "pick_cube"),  # not silently dropped
    (["rollout", "nan", "--config", "pick_cube"], "nan", "pick_cube"),
])
def test_two_configs_that_differ_are_one_line_and_exit_2(args, first, option, capsys, tmp_path):
    assert main(args) == 2
    err = one_line_error(capsys)
    command = args[0]
    assert err == (f"robot-rl: two configs given, {first} (first) and --config {option}; give one: "
                   f"robot-rl {command} {first} or robot-rl {command} --config {option}")


@pytest.mark.parametrize("command", ["train", "launch", "learner", "actor", "rollout"])
def test_no_config_says_how_to_give_one(command, capsys):
    assert main([command]) == 2
    assert one_line_error(capsys) == (f"robot-rl: {command} needs a config (a name or a path): robot-rl {command} "
                                      f"--config pick_cube (or robot-rl {command} pick_cube)")


def test_a_config_given_first_is_the_config(capsys):
    # The loader's refusal names the --set item: the config (pick_cube) was read and the override applied to it.
    assert main(["train", "pick_cube", "--set", "train.total_env_step=5"]) == 2
    assert one_line_error(capsys) == ("robot-rl: --set train.total_env_step=5: unknown key 'train.total_env_step' "
                                      "(did you mean 'train.total_env_steps'?)")
    assert main(["train", "no_such_config"]) == 2
    assert one_line_error(capsys).startswith("robot-rl: config file not found: no_such_config")


@pytest.mark.parametrize("value,message", [
    ("", "robot-rl: "),
    (" ", "robot-rl: config file not found:  "),
    ("configs", "robot-rl: configs is a directory"),
    ("pick\x00cube", "robot-rl: "),
    ("x" * 5000, "robot-rl: config '" + "x" * 60 + "'... is not a usable file name (File name too long); give a "
                 "config name such as pick_cube or a path"),
])
def test_malformed_configs_given_first_are_one_line(value, message, capsys):
    assert main(["train", value]) == 2
    err = one_line_error(capsys)
    assert err.startswith(message) and len(err) < 400


def test_help_shows_both_forms():
    from robot_rl.cli import ConfigForms, _subparser, build_parser

    for command, other in (("launch", "--config CONFIG"), ("train", "[CONFIG]")):
        parser = build_parser()
        sub = _subparser(parser, command)
        __import__(COMMANDS[command][0], fromlist=["add_arguments"]).add_arguments(sub)
        assert ConfigForms.add(sub) is not None
        assert other in sub.format_usage()


def test_eval_takes_no_second_positional(capsys):
    with pytest.raises(SystemExit) as exc:  # eval RUN_DIR [--config X]: a config first would be ambiguous
        main(["eval", "runs/x", "pick_cube"])
    assert exc.value.code == 2
    assert "unrecognized arguments: pick_cube" in capsys.readouterr().err


# --- refusals and --help before torch -------------------------------------------------------

PROBE = """
import contextlib, io, json, sys, time
from robot_rl.cli import main
start = time.perf_counter()
buf = io.StringIO()
try:
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "out": buf.getvalue(), "seconds": time.perf_counter() - start,
                  "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def probe(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_imports_no_torch(command):
    result = probe(command, "--help")
    assert result["code"] == 0 and "usage: robot-rl" in result["out"]
    assert result["heavy"] == [], f"robot-rl {command} --help imported {result['heavy']}"


@pytest.mark.parametrize("args,message", [
    (["eval", "runs/no_such_run"], "robot-rl: run directory runs/no_such_run does not exist"),
    (["eval", "README.md"], "robot-rl: README.md is not a run directory (give the folder that holds checkpoint/)"),
    (["eval", "runs/x", "--episodes", "0"], "robot-rl: --episodes must be at least 1, got 0"),
    (["actor", "--config", "no_such_config"], "robot-rl: config file not found: no_such_config"),
    (["actor", "pick_cube", "--learner", "nohostport"], "robot-rl: --learner 'nohostport' must look like HOST:PORT"),
])
def test_refusals_come_before_torch(args, message):
    result = probe(*args)
    assert result["code"] == 2
    assert result["out"].strip().startswith(message) and len(result["out"].strip().splitlines()) == 1
    assert result["heavy"] == [], f"robot-rl {' '.join(args)} imported {result['heavy']} before refusing"


def test_eval_of_a_missing_run_names_the_runs_beside_it(tmp_path, capsys):
    for name in ("pick_cube", "pick_cube_learner"):
        (tmp_path / name / "checkpoint").mkdir(parents=True)
    (tmp_path / "not_a_run").mkdir()
    assert main(["eval", str(tmp_path / "pick_cub")]) == 2
    assert one_line_error(capsys) == (f"robot-rl: run directory {tmp_path / 'pick_cub'} does not exist (runs there: "
                                      f"{tmp_path / 'pick_cube'}, {tmp_path / 'pick_cube_learner'})")


def test_the_encoder_layouts_are_the_readers():
    from robot_rl.agents.pretrained import LAYOUTS
    from robot_rl.cli.encoder import LAYOUTS as SHOWN

    assert SHOWN == LAYOUTS


# --- train says what it does while it records its demos --------------------------------------


def test_train_reports_progress_while_recording_scripted_demos(tmp_path, caplog, point_env_fn, point_expert_cls,
                                                               one_torch_thread):
    from robot_rl.config import Config
    from robot_rl.config.agent import TrainConfig
    from robot_rl.training.trainer import Trainer

    cfg = Config()
    cfg.agent.hidden_dims = (16, 16)
    cfg.train = TrainConfig(total_env_steps=10, batch_size=8, learning_starts=5, scripted_demos=8, eval_every=0,
                            eval_episodes=0, checkpoint_every=0, progress=False, run_dir=str(tmp_path / "run"),
                            replay_capacity=500, demo_capacity=500)
    with caplog.at_level(logging.INFO, logger="robot_rl.training.trainer"):
        trainer = Trainer(cfg, env_fn=lambda c: point_env_fn(), source_fn=lambda env, c: point_expert_cls(env),
                          tensorboard=False)
        trainer.close()
    lines = [r.getMessage() for r in caplog.records if "scripted demos" in r.getMessage()]
    assert lines[0].startswith("recording 8 scripted demos into ") and "before training starts" in lines[0]
    assert lines[1:5] == [f"recording 8 scripted demos: {n}/8" for n in (2, 4, 6, 8)]


# --- train.device=cuda without a GPU, and a key from another section ---------------------------


def test_cuda_without_a_gpu_says_what_to_type(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run_dir = tmp_path / "run"
    assert main(["train", "pick_cube", "--set", "train.device=cuda", "--run-dir", str(run_dir)]) == 2
    err = one_line_error(capsys)
    assert err.startswith("robot-rl: train.device is 'cuda' but PyTorch sees no CUDA device (torch ")
    assert "run on the CPU with --set train.device=cpu (or train.device=auto, which takes a GPU when there is " \
           "one), or install a CUDA build of torch into the virtualenv" in err
    assert not run_dir.exists()  # nothing left that would block the corrected command


@pytest.mark.parametrize("key,suggestion", [
    ("agent.device", " (did you mean 'train.device' or 'intervention.device' or 'reward.device'?)"),
    ("device", " (did you mean 'train.device' or 'intervention.device' or 'reward.device'?)"),
    ("env.total_env_steps", " (did you mean 'train.total_env_steps'?)"),
    ("agent.hiden_dims", " (did you mean 'hidden_dims'?)"),  # a close name in its own section comes first
    ("agent.no_such_thing", ""),
])
def test_an_unknown_key_from_another_section_gets_a_did_you_mean(key, suggestion, tmp_path, capsys):
    assert main(["rollout", "pick_cube", "--set", f"{key}=1"]) == 2
    shown = suggestion.replace("'hidden_dims'", "'agent.hidden_dims'")  # --set names the whole key
    assert one_line_error(capsys) == f"robot-rl: --set {key}=1: unknown key '{key}'{shown}"
    config = tmp_path / "bad.yaml"
    parts = key.split(".")
    text = "task:\n  name: PickCube\n" + "".join(f"{'  ' * i}{p}:\n" for i, p in enumerate(parts[:-1]))
    config.write_text(text + f"{'  ' * (len(parts) - 1)}{parts[-1]}: 1\n", encoding="utf-8")
    assert main(["rollout", str(config)]) == 2
    assert one_line_error(capsys) == f"robot-rl: {config}: unknown key '{key}'{suggestion}"


def test_config_keys_reach_every_section():
    from robot_rl.config import config_keys

    keys = set(config_keys())
    assert {"train.device", "agent.hidden_dims", "cameras.<name>.fps", "seed", "ros.policy"} <= keys
    assert all(k and ".." not in k for k in keys)


# --- gymnasium ids on import robot_rl ----------------------------------------------------------


def test_import_robot_rl_registers_the_ids_cheaply():
    code = ("import sys, json, robot_rl\n"
            f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
            "import gymnasium\n"
            "ids = sorted(k for k in gymnasium.registry if k.startswith('robot_rl/'))\n"
            "env = gymnasium.make('robot_rl/PickCube-v0')\n"
            "obs, _ = env.reset(seed=0)\n"
            "obs2, reward, *_ = env.step(env.action_space.sample())\n"
            "print(json.dumps({'heavy': heavy, 'ids': ids, 'keys': sorted(obs), 'reward': float(reward),\n"
            "                  'env': type(env.unwrapped).__name__}))\n"
            "env.close()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["heavy"] == [], f"import robot_rl imported {result['heavy']}"
    assert result["ids"] == ["robot_rl/PegInsert-v0", "robot_rl/PickCube-v0", "robot_rl/PlugInsert-v0"]
    assert "robot_rl/ConnectorInsert-v0" not in result["ids"]  # real-only: no scene, no id
    assert result["env"] == "RobotEnv" and result["keys"] == ["state"] and result["reward"] in (0.0, 1.0)


@pytest.mark.parametrize("first", ["robot_rl_drivers.cameras", "robot_rl_drivers.robots", "robot_rl.config",
                                   "robot_rl.tasks", "robot_rl.errors"])
def test_any_module_imported_first_still_registers(first):
    """``import robot_rl`` reads the task registry, which the drivers' registries import: no import order may
    find a registry half made."""
    code = (f"import {first}, gymnasium\nfrom robot_rl.tasks import load_config\n"
            "load_config('configs/pick_cube.yaml')\nprint('robot_rl/PickCube-v0' in gymnasium.registry)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
