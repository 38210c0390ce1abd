"""The joins a newcomer hits in the first hour (issue 26, items 1, 3, 4, 10 and 13): each
refusal is one line naming what to type instead, with its exit status, and leaves nothing
behind that blocks the corrected command. CI-sized: PickCube from state at a few dozen env
steps, tiny networks, learners bounded by ``--max-seconds``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from polling import learner_port

from robot_rl.cli import main
from robot_rl.paths import resolve_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

pytest.importorskip("mujoco")

CONFIG = str(resolve_config("pick_cube"))
TOKEN = "first-hour-token"
ENV = {**os.environ, "ROBOT_RL_TOKEN": TOKEN, "OMP_NUM_THREADS": "1"}
TINY = ["--set", "agent.hidden_dims=[16,16]", "--set", "train.batch_size=16", "--set", "train.learning_starts=10",
        "--set", "train.eval_episodes=1", "--set", "train.torch_threads=1", "--set", "train.log_every=20",
        "--no-progress"]


def sets(*items: str) -> list[str]:
    return [a for s in items for a in ("--set", s)]


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("robot-rl:")]


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot_rl.cli", *args], capture_output=True, text=True,
                          env=env or ENV, timeout=timeout)


@pytest.fixture(scope="module")
def state_demos(tmp_path_factory):
    out = tmp_path_factory.mktemp("demos") / "pick"
    assert main(["record-demos", "--config", CONFIG, "--source", "scripted", "--episodes", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def finished_run(state_demos, tmp_path_factory):
    """A finished ``robot-rl train`` run in ``<tmp>/runs/pick_cube`` (train.run_dir, as the README
    leaves it): 40 env steps, one evaluation at 40 with its video."""
    runs = tmp_path_factory.mktemp("home") / "runs"
    command = ["train", "--config", CONFIG, *sets(f"train.run_dir={runs / 'pick_cube'}", f"train.demos={state_demos}",
                                                 "train.total_env_steps=40", "train.eval_every=40",
                                                 "train.eval_video_episodes=1"), *TINY]
    done = cli(*command)
    assert done.returncode == 0, done.stderr[-3000:]
    return runs / "pick_cube", command, done.stdout


# --- item 13: the train summary names the run's steps and its last eval apart ---------------

def test_the_train_summary_names_env_steps_and_the_last_eval_apart(finished_run):
    run, _, out = finished_run
    summary = last_json(out)
    line = next(ln for ln in out.splitlines() if ln.startswith("PickCube: "))
    assert re.fullmatch(rf"PickCube: {summary['env_steps']} env steps \(\d+ s\); last eval at 40 env steps: "
                        rf"{summary['eval_success_rate']:.0%}; TensorBoard: tensorboard --logdir "
                        + re.escape(str(run / "tb")), line), line
    assert summary["last_eval_env_steps"] == 40 and summary["env_steps"] >= 40


# --- item 1: a learner run does not collide with the train run; the refusal names --run-dir ---

def test_a_learner_after_train_gets_its_own_folder_and_the_refusal_names_run_dir_first(finished_run):
    run, command, _ = finished_run
    before = (run / "checkpoint" / "state.npz").read_bytes()
    learner = cli("learner", "--config", CONFIG, "--port", "0", "--no-eval", "--no-tensorboard", "--max-seconds", "5",
                  *sets(f"train.run_dir={run}", "train.scripted_demos=0"), "--no-progress", timeout=180)
    assert learner.returncode == 0, learner.stderr[-3000:]
    assert last_json(learner.stdout)["run_dir"] == f"{run}_learner"
    assert (Path(f"{run}_learner") / "checkpoint" / "state.npz").is_file()
    assert (run / "checkpoint" / "state.npz").read_bytes() == before  # the trained policy is untouched

    again = cli(*command)  # the README's command, a second time
    assert again.returncode == 2
    assert error_lines(again.stderr) == [
        f"robot-rl: {run} already holds a run (checkpoint at {last_json(finished_run[2])['env_steps']} env steps, "
        f"{last_json(finished_run[2])['episodes']} episodes): choose another folder with --run-dir DIR, continue it "
        "with --resume, or delete it with --force (removes its checkpoint, replay log, videos, TensorBoard logs "
        "and evaluations)"], again.stderr[-2000:]
    assert (run / "checkpoint" / "state.npz").read_bytes() == before


# --- item 4: --resume of a finished run says so and reports its real last eval and video ---

def test_resuming_a_finished_run_says_how_to_extend_it_and_reports_its_last_eval(finished_run):
    run, command, first = finished_run
    done = cli(*command, "--resume")
    assert done.returncode == 0, done.stderr[-3000:]
    steps = last_json(first)["env_steps"]
    assert (f"{run} is finished at {steps} env steps (train.total_env_steps=40); to train it further: "
            "--resume --set train.total_env_steps=80") in done.stdout.splitlines(), done.stdout
    records = [json.loads(ln) for ln in (run / "evals.jsonl").read_text().splitlines()]
    summary = last_json(done.stdout)
    assert summary["finished_before"] is True and summary["env_steps"] == steps
    assert summary["eval_success_rate"] == records[-1]["success_rate"] is not None
    assert summary["last_eval_env_steps"] == 40
    assert summary["last_video"] == str(run / "videos" / "eval_40.mp4") and Path(summary["last_video"]).stat().st_size


# --- item 3: a refused start leaves nothing that blocks the corrected command --------------

def test_a_pixels_run_refused_for_state_demos_leaves_nothing_that_blocks_the_corrected_command(state_demos, tmp_path,
                                                                                              capsys):
    run = tmp_path / "pixels"
    base = ["train", "--config", "pick_cube_pixels", "--run-dir", str(run), *TINY,
            *sets("train.total_env_steps=12", "train.eval_every=0", "train.eval_video_episodes=0",
                  "train.scripted_demos=1")]
    assert main([*base, "--set", f"train.demos={state_demos}"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and str(state_demos) in lines[0], lines
    assert not run.exists()  # refused before anything was written

    # what an older refused start left behind (config, TensorBoard, an empty replay log) is no run
    run.mkdir()
    (run / "config.yaml").write_text("seed: 0\n")
    (run / "tb").mkdir()
    (run / "replay").mkdir()
    assert main(base) == 0, capsys.readouterr().err[-2000:]
    summary = last_json(capsys.readouterr().out)
    assert summary["env_steps"] >= 12 and (run / "checkpoint" / "state.npz").is_file()
    assert "obs_mode: pixels" in (run / "config.yaml").read_text()


# --- item 10: strangers refused are reported, not fatal; --max-seconds is kept -------------

def knock_with_a_wrong_token(port: int) -> None:
    from robot_rl.assemble import make_env
    from robot_rl.config.learning import LearningConfig
    from robot_rl.tasks import load_config
    from robot_rl.training.remote.client import ActorClient
    from robot_rl.training.remote.spaces import EnvSpaces

    env = make_env(load_config(CONFIG))
    spaces = EnvSpaces.from_gym(env.observation_space, env.action_space)
    env.close()
    stranger = ActorClient(LearningConfig(), spaces, "wrong-token", target=f"127.0.0.1:{port}",
                           actor_id="stranger").start()
    try:
        deadline = time.monotonic() + 60
        while stranger._fatal is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stranger._fatal is not None
    finally:
        stranger.close()


def test_a_learner_that_refused_a_stranger_exits_0_unless_strict(tmp_path):
    runs = {}
    for name, extra in (("lenient", []), ("strict", ["--strict"])):
        run = tmp_path / name
        cmd = [sys.executable, "-m", "robot_rl.cli", "learner", "--config", CONFIG, "--run-dir", str(run), "--port",
               "0", "--no-eval", "--no-tensorboard", "--no-progress", "--max-seconds", "25",
               *sets("train.scripted_demos=0", "train.torch_threads=1"), *extra]
        out, err = open(tmp_path / f"{name}.out", "w"), open(tmp_path / f"{name}.err", "w")
        runs[name] = (run, subprocess.Popen(cmd, stdout=out, stderr=err, env=ENV), out, err)
    try:
        for name, (run, proc, _, _) in runs.items():
            knock_with_a_wrong_token(learner_port(proc, run, 120, log=tmp_path / f"{name}.err"))
        codes = {name: proc.wait(120) for name, (_, proc, _, _) in runs.items()}
    finally:
        for _, proc, out, err in runs.values():
            if proc.poll() is None:
                proc.kill()
            out.close()
            err.close()
    what = "refused 1 call(s) or batch(es) from peers (1 unauthenticated)"
    lenient_err = (tmp_path / "lenient.err").read_text()
    assert codes["lenient"] == 0, lenient_err[-3000:]
    assert not error_lines(lenient_err), lenient_err[-3000:]
    stats = tmp_path / "lenient" / "learner" / "stats.json"
    assert (f"learner: {what}, counted in {stats}; see the log for peers and reasons; the run itself is healthy "
            "(--strict makes refusals fail it)") in lenient_err.splitlines()
    assert last_json((tmp_path / "lenient.out").read_text())["refused"] == {"unauthenticated": 1}
    strict_err = (tmp_path / "strict.err").read_text()
    assert codes["strict"] == 1, strict_err[-3000:]
    assert error_lines(strict_err) == [f"robot-rl: learner: {what}; see the log for peers and reasons"]


def test_the_learner_ends_within_seconds_of_max_seconds_even_inside_an_evaluation(tmp_path):
    # 2000 evaluation episodes take minutes: the one started at the beginning must be cut short
    started = time.monotonic()
    done = cli("learner", "--config", CONFIG, "--run-dir", str(tmp_path / "run"), "--port", "0", "--no-tensorboard",
               "--no-progress", "--max-seconds", "12",
               *sets("train.scripted_demos=0", "train.eval_episodes=2000", "train.torch_threads=1"), timeout=300)
    wall = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    # generous for a loaded machine: an uncut evaluation would take several minutes
    assert wall < 12 + 30, wall
    assert "cut short by --max-seconds" in done.stderr
    assert last_json(done.stdout)["evals"] == []  # a partial evaluation is not recorded


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_max_seconds_that_is_no_duration_is_one_line(value, capsys, monkeypatch):
    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    assert main(["learner", "--config", CONFIG, "--max-seconds", value]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"robot-rl: --max-seconds {float(value)} must be a positive number of seconds"]


# --- item 13: smaller slips ----------------------------------------------------------------

def test_an_unusable_mujoco_gl_says_unset_it_not_install_egl(tmp_path):
    env = {k: v for k, v in ENV.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYOPENGL_PLATFORM")}
    done = cli("rollout", "--config", "pick_cube_pixels", "--episodes", "1", "--out", str(tmp_path / "strip"),
               env={**env, "MUJOCO_GL": "glfw"}, timeout=180)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert lines[0].endswith("MUJOCO_GL=glfw is set in your environment and cannot render offscreen here: unset it "
                             "(unset MUJOCO_GL; robot_rl then renders with EGL, no display needed) or set "
                             "MUJOCO_GL=egl or MUJOCO_GL=osmesa"), lines
    assert "apt-get" not in lines[0]


def test_render_advice_for_each_backend():
    from robot_rl.sim.world import render_fix

    assert render_fix("egl").startswith("install EGL: apt-get install libegl1 libgl1-mesa-dri")
    assert render_fix("osmesa").startswith("install OSMesa: apt-get install libosmesa6; or unset MUJOCO_GL")
    for odd in ("glfw", "", "egl ", "x" * 300):
        assert f"MUJOCO_GL={odd} is set in your environment" in render_fix(odd, from_user=True)
        assert "unset MUJOCO_GL" in render_fix(odd) and "apt-get" not in render_fix(odd)


def test_a_set_that_replaces_a_section_is_blamed_not_the_run_dir_it_breaks(tmp_path, capsys):
    run = tmp_path / "x"
    assert main(["train", "--config", CONFIG, "--set", "train=5", "--run-dir", str(run)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        "robot-rl: --set 'train=5': train is a section of the config, not a value; set a key inside it, "
        "e.g. --set train.KEY=VALUE"]
    assert not run.exists()
    # the same with a deeper section and a later item that nests into it
    assert main(["train", "--config", CONFIG, "--set", "agent.encoder=[1,2]", "--set", "agent.encoder.kind=small",
                 "--run-dir", str(run)]) == 2
    assert error_lines(capsys.readouterr().err)[0].startswith(
        "robot-rl: --set 'agent.encoder=[1,2]': agent.encoder is a section of the config, not a value")


def test_a_directory_given_as_config_names_the_yaml_files_to_give(tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "b.yaml").write_text("base: pick_cube.yaml\n")
    (folder / "a.yaml").write_text("base: pick_cube.yaml\n")
    assert main(["train", "--config", str(folder)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"robot-rl: {folder} is a directory, not a config file; give one of the YAML files in it: "
        f"{folder / 'a.yaml'}, {folder / 'b.yaml'}"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["learner", "--config", str(empty)]) == 2
    line = error_lines(capsys.readouterr().err)[0]
    assert line.startswith(f"robot-rl: {empty} is a directory with no YAML file in it; give a config file such as "
                           "configs/pick_cube.yaml, or a config name (")
    cwd = os.getcwd()
    try:  # a folder named like a config does not hide the config of that name
        os.chdir(tmp_path)
        Path("pick_cube").mkdir()
        assert resolve_config("pick_cube").name == "pick_cube.yaml"
    finally:
        os.chdir(cwd)


def test_an_actor_with_no_learner_says_so_early_and_does_not_spend_max_steps_on_random_actions():
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = cli("actor", "--config", CONFIG, "--learner", f"127.0.0.1:{port}", "--max-steps", "5",
               "--connect-timeout", "6", "--flush-timeout", "0.5", "--no-progress",
               *sets("learning.reconnect_min_s=0.05", "learning.reconnect_max_s=0.2"), timeout=180)
    assert done.returncode == 1, done.stderr[-3000:]
    summary = last_json(done.stdout)
    assert summary["steps"] > 5  # steps before any learner answered did not count toward --max-steps
    notices = [ln for ln in done.stderr.splitlines() if "no learner answers at" in ln]
    assert len(notices) == 1, done.stderr[-3000:]
    assert (f"no learner answers at 127.0.0.1:{port} yet (connection refused): start one with robot-rl learner "
            "--config <the same config> (same token), or point the actor at it (--learner HOST:PORT); these steps "
            "take random actions and do not count toward --max-steps or --max-episodes") in notices[0]
    assert error_lines(done.stderr) == [
        f"robot-rl: actor: {summary['queued_steps']} steps never reached the learner at 127.0.0.1:{port} "
        "(connection refused); start robot-rl learner --config <the same config> first (same token), or point "
        "--learner HOST:PORT at a running one"]


@pytest.mark.parametrize("value", ["nan", "inf", "-3"])
def test_a_connect_timeout_that_is_no_duration_is_one_line(value, capsys, monkeypatch):
    monkeypatch.setenv("ROBOT_RL_TOKEN", TOKEN)
    assert main(["actor", "--config", CONFIG, "--connect-timeout", value]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"robot-rl: --connect-timeout {float(value)} must be a number of seconds >= 0 (0: wait for the learner "
        "forever)"]
