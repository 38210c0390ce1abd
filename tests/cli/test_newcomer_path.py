"""Issue 26, "must show": the newcomer's path, walked on a fresh run directory, as the pages
say it, each step with its exit status and output asserted.

1. the README's command (``robot-rl train --config configs/pick_cube.yaml``, read from the
   README itself) at a CI-sized budget, in a fresh folder: a run in ``runs/pick_cube``,
   its checkpoint, its eval video, and progress as plain status lines in a log (no
   carriage-return redraws);
2. ``robot-rl eval runs/pick_cube``: the success rate, the video, named cameras at a
   watchable size;
3. ``robot-rl learner`` + ``robot-rl actor`` as docs/learning-plane.md starts them: the
   learner's run beside the train run (no collision), the actor's steps all delivered,
   ``--no-progress`` still saying what it does;
4. ``robot-rl launch pick_cube`` with no settings: the scripted expert (no learner to
   start), a finished episode, and Ctrl-C ends it within seconds.

CI-sized: tiny networks, two scripted demos, a few dozen env steps per command.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from graph_harness import private_env  # noqa: E402  (tests/support)
from polling import interrupt, learner_port  # noqa: E402  (tests/support)

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TOKEN = "newcomer-path-token"
CI_SIZE = ["agent.hidden_dims=[16,16]", "train.batch_size=16", "train.learning_starts=10", "train.torch_threads=1",
           "train.scripted_demos=2", "train.eval_episodes=1"]


def sets(*items: str) -> list[str]:
    return [a for s in items for a in ("--set", s)]


def readme_command() -> list[str]:
    """The README's first training command, as its first code block writes it."""
    found = re.search(r"\.venv/bin/robot-rl (train --config \S+)", README)
    assert found, "the README's first command is no longer `.venv/bin/robot-rl train --config ...`"
    return found.group(1).split()


def robot_rl(args: list[str], cwd: Path, timeout: float = 600, env: dict | None = None
             ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot_rl.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env or {**os.environ, "OMP_NUM_THREADS": "1", "ROBOT_RL_TOKEN": TOKEN})


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A fresh folder with the checkout's configs/, as a newcomer's clone has them."""
    folder = tmp_path_factory.mktemp("newcomer")
    (folder / "configs").symlink_to(ROOT / "configs")
    return folder


@pytest.fixture(scope="module")
def trained(home) -> subprocess.CompletedProcess:
    done = robot_rl([*readme_command(), *sets(*CI_SIZE, "train.total_env_steps=60", "train.eval_every=60",
                                              "train.eval_video_episodes=1")], home)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_readmes_command_trains_a_run_in_a_fresh_folder(home, trained):
    run = home / "runs" / "pick_cube"
    summary = last_json(trained.stdout)
    assert summary["env_steps"] >= 60 and summary["last_eval_env_steps"] == 60
    assert (run / "checkpoint" / "state.npz").is_file() and (run / "videos" / "eval_60.mp4").stat().st_size > 1000
    assert re.search(r"^PickCube: \d+ env steps \(\d+ s\); last eval at 60 env steps: \d+%", trained.stdout, re.M)
    # off a terminal the progress is plain status lines (item 8): one when it starts, one at the end
    lines = [ln for ln in trained.stderr.splitlines() if ln.startswith("train: ")]
    assert "\r" not in trained.stderr, trained.stderr[-2000:]
    assert lines and lines[0].startswith("train: 1/60 env steps") and re.match(
        rf"train: {summary['env_steps']}/{summary['env_steps']} env steps, ep \d+, success \d+%, eval \d+%, "
        r"alpha [\d.e-]+$", lines[-1]), lines
    assert "Traceback" not in trained.stderr


def test_eval_of_that_run_reports_and_films_it(home, trained):
    done = robot_rl(["eval", "runs/pick_cube", "--episodes", "2"], home)
    assert done.returncode == 0, done.stderr[-3000:]
    report = last_json(done.stdout)
    video = home / "runs" / "pick_cube" / "eval" / "eval.mp4"
    assert report["episodes"] == 2 and (home / report["video"]).resolve() == video.resolve()
    assert re.match(rf"PickCube: success {report['successes']}/2 \(\d+%\) in sim, policy of the train run "
                    r"runs/pick_cube \(\d+ updates\); video ", done.stdout.splitlines()[-2])
    import cv2

    capture = cv2.VideoCapture(str(video))
    try:
        ok, frame = capture.read()
    finally:
        capture.release()
    assert ok and frame.shape == (256, 512, 3)  # two 128 px cameras, named, scaled x2


def test_the_learning_planes_learner_and_actor_beside_the_train_run(home, trained):
    small = sets(*CI_SIZE, "train.total_env_steps=40", "train.eval_every=40", "learning.batch_steps=8",
                 "learning.batch_max_age_s=0.5")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "ROBOT_RL_TOKEN": TOKEN}
    # the learner serves until Ctrl-C, as the page runs it: it must outlive the actor's last acknowledgement
    # (a learner that stopped at its own step budget first left the actor's last steps unacknowledged)
    serving = sets("train.total_env_steps=1000000")
    learner_run = home / "runs" / "pick_cube_learner"  # the learner's own run, beside the train run
    (learner_run / "learner" / "port").unlink(missing_ok=True)
    learner = subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "learner", "--config", "configs/pick_cube.yaml",
                                "--port", "0", "--max-seconds", "400", *small, *serving], cwd=home, env=env,
                               text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        port = learner_port(learner, learner_run)
        actor = robot_rl(["actor", "--config", "configs/pick_cube.yaml", "--actor-id", "sim-1", "--learner",
                          f"127.0.0.1:{port}", "--max-steps", "40", "--no-progress", *small], home, timeout=450)
        learner.send_signal(signal.SIGINT)
        learned, learner_err = learner.communicate(timeout=120)
    finally:
        learner.kill()
    assert actor.returncode == 0, actor.stderr[-3000:]
    assert learner.returncode == 0, learner_err[-3000:]
    sent, got = last_json(actor.stdout), last_json(learned)
    assert sent["acked_steps"] == sent["steps"] >= 40 and got["received_steps"] == sent["steps"]
    # the learner's run is beside the train run, which it left alone (item 1)
    assert (home / "runs" / "pick_cube_learner" / "checkpoint" / "state.npz").is_file()
    assert (home / "runs" / "pick_cube" / "checkpoint" / "state.npz").is_file()
    # --no-progress: no bar, but a line when it starts and one at the end (item 8)
    status = [ln for ln in actor.stderr.splitlines() if ln.startswith("actor sim-1: ")]
    assert len(status) >= 2 and "\r" not in actor.stderr, actor.stderr[-2000:]
    assert any(ln.startswith("learner: ") for ln in learner_err.splitlines()), learner_err[-2000:]


def test_launch_pick_cube_with_no_settings_runs_the_expert_and_ctrl_c_ends_it(home):
    proc = subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "launch", "pick_cube"], cwd=home,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=private_env())
    lines: list[str] = []
    episode = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            if re.search(r"\[actor_node\] .*episode 0: (success|no success) in \d+ steps", line):
                episode.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert episode.wait(240), "".join(lines)[-4000:]
        ended = interrupt(proc)
    finally:
        proc.kill()
    reader.join(timeout=5)
    out = "".join(lines)
    print(f"\nrobot-rl launch pick_cube: SIGINT to exit {ended:.1f} s")
    assert proc.returncode == 0, out[-4000:]
    assert re.search(r"\[actor_node\] .*policy expert", out)  # the default: nothing else to start
    assert "no learner answers" not in out and "unreachable" not in out
    assert "stopping every node (SIGINT)" in out and "still running: sending SIGTERM" not in out
    assert ended < 15.0, out[-3000:]  # within seconds (a loaded CI machine included)
    assert re.search(r"exit codes: (sim_node|actor_node) exit code 0, (sim_node|actor_node) exit code 0", out)
