"""``robot-rl eval``: a learner-trained and a train-trained policy, in sim and through the node graph.

A real ``robot-rl learner`` process trains with one actor (an ActorProcess thread on
127.0.0.1, as in tests/training/remote/test_processes.py) for the smallest budget that
ends in a checkpoint; ``robot-rl train`` makes the other kind of run. Then:

* ``robot-rl eval`` runs either in the gymnasium env and writes an MP4 that OpenCV opens,
  with one frame per reset and step and the held, outcome-marked last frame of each
  episode, every camera side by side;
* ``robot-rl eval --graph`` runs the learner's policy in the actor node
  (``ros.policy: checkpoint``) beside the sim node, over DDS in a private domain;
* a missing run, an empty one, a checkpoint whose spaces differ from the config and a
  bad episode count are one line on stderr and exit status 2.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from graph_harness import private_env  # noqa: E402  (tests/support)
from polling import learner_port  # noqa: E402  (tests/support)

from robot_rl.cli import main  # noqa: E402
from robot_rl.paths import resolve_config  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402
from robot_rl.training.evaluation import hold_frames  # noqa: E402
from robot_rl.training.frames import MIN_VIDEO_HEIGHT  # noqa: E402

TOKEN = "eval-test-token"
CONFIG = str(resolve_config("pick_cube"))
STEPS = 30  # two episodes of 15 steps: the smallest learner run that trains and saves
SMALL = ["agent.hidden_dims=[16,16]", "env.max_episode_steps=15", "train.torch_threads=1", "train.batch_size=16",
         "train.learning_starts=10", "train.utd_ratio=1", "train.eval_every=0", "train.eval_episodes=0",
         "train.scripted_demos=0", f"train.total_env_steps={STEPS}"]


def sets(items: list[str]) -> list[str]:
    return [a for item in items for a in ("--set", item)]


@pytest.fixture(scope="module")
def learner_run(tmp_path_factory) -> Path:
    """A ``robot-rl learner`` run trained on one sim actor's steps, ended with its checkpoint."""
    from robot_rl.training.remote.actor_process import ActorProcess

    run_dir = tmp_path_factory.mktemp("learner") / "run"
    overrides = [*SMALL, "learning.batch_steps=8", "learning.batch_max_age_s=0.5"]
    log = open(run_dir.parent / "learner.log", "w")
    learner = subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "learner", "--config", CONFIG, "--run-dir",
                                str(run_dir), "--port", "0", "--no-eval", "--no-tensorboard", *sets(overrides)],
                               stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ROBOT_RL_TOKEN": TOKEN})
    actor = None
    try:
        port = learner_port(learner, run_dir)  # its output is in learner.log, asserted on below
        actor = ActorProcess(load_config(CONFIG, overrides), TOKEN, target=f"127.0.0.1:{port}", actor_id="robot-e")
        # The actor counts its steps only once the learner has answered (as `robot-rl actor` does): on a
        # loaded host the learner takes a minute or more to start, and an actor that counted from its own
        # start would finish its 30 steps, give up flushing them and leave the learner waiting for steps
        # that never come. Bounded by work: the learner stops once it has trained on its 30 steps.
        thread = threading.Thread(target=actor.run, kwargs={"max_steps": STEPS, "flush_timeout": 60,
                                                            "count_only_connected": True}, daemon=True)
        thread.start()
        learner.wait(timeout=480)  # a hang guard only (start-up, 30 steps, ~20 tiny updates)
        thread.join(timeout=60)
    finally:
        if actor is not None:
            actor.stop()
        if learner.poll() is None:
            learner.kill()
            learner.wait(30)
        log.close()
    output = (run_dir.parent / "learner.log").read_text()
    assert learner.returncode == 0, output[-3000:]
    assert json.loads(output.strip().splitlines()[-1])["updates"] > 0
    assert (run_dir / "checkpoint" / "state.npz").is_file()
    return run_dir


@pytest.fixture(scope="module")
def train_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("train") / "run"
    assert main(["train", "--config", CONFIG, "--run-dir", str(run_dir), "--no-progress", *sets(SMALL)]) == 0
    return run_dir


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_a_learner_trained_policy_runs_in_sim_and_its_video_opens(learner_run, tmp_path, capsys):
    import cv2

    assert main(["eval", str(learner_run), "--episodes", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    report = json.loads(out[-1])
    assert len(out) == 2 and out[0].startswith("PickCube: success ") and "learner run" in out[0]
    assert report["kind"] == "learner" and report["mode"] == "sim" and report["episodes"] == 2
    assert 0.0 <= report["success_rate"] <= 1.0 and report["updates"] > 0
    video = Path(report["video"])
    assert video == tmp_path / "eval.mp4" and not list(tmp_path.glob("*.partial.mp4"))
    cameras = load_config(CONFIG).cameras
    front, wrist = cameras["front"], cameras["wrist"]
    scale = -(-MIN_VIDEO_HEIGHT // front.height)  # scaled up by whole pixels to a watchable size (x2 for 128 px)
    width, height = scale * (front.width + wrist.width), scale * front.height  # every camera side by side
    capture = cv2.VideoCapture(str(video))
    try:
        assert capture.isOpened()
        size = (int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        frames = 0
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            assert frame.shape == (height, width, 3)
            frames += 1
    finally:
        capture.release()
    assert size == (width, height)
    hold = hold_frames(10.0)  # each episode's marked last frame, held
    assert frames == report["video_frames"] == 2 * (1 + hold) + round(report["mean_length"] * 2)  # resets, steps


def test_the_actor_node_runs_a_learner_trained_policy(learner_run, tmp_path):
    done = subprocess.run([sys.executable, "-m", "robot_rl.cli", "-v", "eval", str(learner_run), "--graph",
                           "--episodes", "1", "--out", str(tmp_path), "--set", "ros.state_timeout_s=2.0"],
                          capture_output=True, text=True, env=private_env(), timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    report = last_json(done.stdout)
    assert report["mode"] == "graph" and report["kind"] == "learner" and report["episodes"] == 1
    assert report["mean_length"] > 0
    assert "[actor_node]" in done.stderr and "policy checkpoint" in done.stderr  # the node acted, not this process
    assert "(learner run, " in done.stderr
    # why each failed episode failed, in the report and on the summary line (issue 26, item 12)
    failures = report["failures"]
    assert len(failures) == report["episodes"] - report["successes"]
    line = done.stdout.strip().splitlines()[-2]
    for failure in failures:  # 15-step episodes of a policy trained on 30 steps: the time limit, as a rule
        assert re.fullmatch(r"timeout: no success in \d+ steps|robot fault: .+|\d+ refused action\(s\): the arm "
                            r"held|the task ended without success", failure["why"]), failure
        assert failures[0]["why"] in line and "; failed: " in line, line
    # the sim node filmed it: the same file as the direct eval, camera names and all, at a watchable size
    assert report["video"] == str(tmp_path / "eval.mp4") and not list(tmp_path.glob("*.partial.mp4"))
    import cv2

    capture = cv2.VideoCapture(report["video"])
    frames = 0
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frames += 1
            assert frame.shape[0] >= 256 and frame.shape[1] >= 512, frame.shape
    finally:
        capture.release()
    hold = hold_frames(10.0)
    assert frames >= 1 + report["mean_length"] // 2 + 1 + hold, frames  # its reset, its steps (on sim time), held
    assert "video of 1 episodes: " in done.stderr


def test_a_train_run_runs_under_eval_too(train_run, capsys):
    assert main(["eval", str(train_run), "--episodes", "1", "--no-video"]) == 0
    report = last_json(capsys.readouterr().out)
    assert report["kind"] == "train" and report["episodes"] == 1 and report["video"] is None


@pytest.mark.parametrize("case, words", [
    ("missing", "does not exist"),
    ("empty", "no checkpoint in"),
    ("other spaces", "was made for other spaces: action has shape (4,), the task's is (3,)"),
    ("no episodes", "--episodes must be at least 1"),
])
def test_bad_input_is_one_line_and_exit_status_2(learner_run, tmp_path, capsys, case, words):
    args = {"missing": [str(tmp_path / "nope")], "empty": [str(tmp_path)],
            "other spaces": [str(learner_run), "--set", "env.active_dims=[x,y,z]"],
            "no episodes": [str(learner_run), "--episodes", "0"]}[case]
    assert main(["eval", *args, "--no-video"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: ") and words in lines[0], err
