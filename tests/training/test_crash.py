"""Work lost on stop and crash: ``robot-rl train`` loses at most the episode in flight.

* kill -9 of ``robot-rl train`` at seeded random moments (one of them inside a checkpoint
  write), then ``--resume``: every finished episode is held again and the run finishes;
* Ctrl-C writes a checkpoint, exits 130 with one line, and ``--resume`` continues; Ctrl-C
  before the first checkpoint (during demo recording) is resumable too;
* damaged files read back at resume (truncated, garbage, NaN) are a one-line error or
  are skipped with a warning, never a traceback, and nothing else is lost.

The killed processes run the real CLI; a small observer (``OBSERVER``) prints each
ingested env step and can pause inside a checkpoint write, so the test knows what the
killed process held and can kill it at a chosen point. Every crash point of a checkpoint
save and the durable writes of demos and reward files are simulated in process in
test_safety_crash_writes.py.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from robot_rl.cli import main
from robot_rl.data.demos import episode_files
from robot_rl.tasks import load_config
from robot_rl.training.checkpoint import load_checkpoint

pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[2]
EPISODE_STEPS = 50  # env.max_episode_steps of configs/pick_cube.yaml: the most a kill may lose
SETS = ["agent.hidden_dims=[16,16]", "train.batch_size=16", "train.learning_starts=10", "train.eval_every=0",
        "train.scripted_demos=2", "train.torch_threads=1", "train.log_every=1000"]
TINY = ["--config", "configs/pick_cube.yaml", *[a for s in SETS for a in ("--set", s)], "--no-progress"]

OBSERVER = r"""
import os, signal, sys, time
# As in a terminal: a test run started in the background begins with SIGINT ignored, and
# the trainer rightly leaves an ignored SIGINT ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
from robot_rl.data import demos
from robot_rl.training import checkpoint, learner, trainer

ingest, run, write_episode = learner.Learner.ingest, trainer.Trainer.run, demos.DemoWriter.write_episode

def observed_ingest(self, step, source=0, update_stats=True):
    ingest(self, step, source, update_stats)
    print(f"STEP {self.env_steps}", flush=True)

def observed_run(self):
    print(f"RUN {self.learner.env_steps} {len(self.learner.online)}", flush=True)
    return run(self)

def observed_write_episode(self, steps):
    path = write_episode(self, steps)
    print("DEMO", flush=True)
    if os.environ.get("PAUSE_AFTER_DEMO"):  # still recording demos when the signal comes
        time.sleep(120)
    return path

learner.Learner.ingest, trainer.Trainer.run = observed_ingest, observed_run
demos.DemoWriter.write_episode = observed_write_episode
if os.environ.get("PAUSE_IN_CHECKPOINT"):
    def paused_mark_complete(directory):  # every file of checkpoint.tmp written, the marker not yet
        print("IN-CHECKPOINT", flush=True)
        time.sleep(120)
    checkpoint.mark_complete = paused_mark_complete
from robot_rl.cli import main
sys.exit(main(sys.argv[1:]))
"""


class Train:
    """``robot-rl train`` in a subprocess (under the observer), read line by line."""

    def __init__(self, run_dir: Path, *extra: str, pause_in_checkpoint: bool = False,
                 pause_after_demo: bool = False) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if pause_in_checkpoint:
            env["PAUSE_IN_CHECKPOINT"] = "1"
        if pause_after_demo:
            env["PAUSE_AFTER_DEMO"] = "1"
        self.stderr_path = run_dir.parent / f"{run_dir.name}.stderr.{random.random():.9f}"
        with open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-c", OBSERVER, "train", *TINY, "--run-dir", str(run_dir),
                                          *extra], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.steps = 0  # the last env step the process reported ingesting
        self.started_at: tuple[int, int] | None = None  # (env steps, online transitions) when the loop began
        self.out: list[str] = []

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _take(self, line: str) -> None:
        self.out.append(line)
        if line.startswith("STEP "):
            self.steps = int(line.split()[1])
        elif line.startswith("RUN ") and self.started_at is None:
            self.started_at = tuple(int(x) for x in line.split()[1:])

    def wait_for(self, done, timeout: float = 120) -> None:
        """Read lines until ``done(line)``; fail if the process ends first."""
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                pytest.fail(f"train ended (rc {self.proc.wait()}) before the awaited moment: {self.stderr()[-2000:]}")
            self._take(line)
            if done(line):
                return

    def wait_step(self, n: int) -> None:
        self.wait_for(lambda line: line.startswith("STEP ") and int(line.split()[1]) >= n)

    def finish(self, sig: int | None = None, timeout: float = 120) -> int:
        """Send ``sig`` (if any), wait for the exit, read every line it printed; the exit status."""
        if sig is not None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        while (line := self.lines.get(timeout=30)) is not None:
            self._take(line)
        return rc

    def stderr(self) -> str:
        return self.stderr_path.read_text()


def logged_steps(run_dir: Path) -> int:
    """Env steps held by the replay log on disk."""
    total = 0
    for path in episode_files(run_dir / "replay"):
        with np.load(path) as data:
            total += int(data["action"].shape[0])
    return total


def assert_one_line_error(text: str, *needles: str) -> str:
    """The last stderr line is the error; no traceback anywhere."""
    assert "Traceback" not in text, text
    last = text.strip().splitlines()[-1]
    assert last.startswith("robot-rl: "), text
    for needle in needles:
        assert needle in last, last
    return last


# --- kill -9 and Ctrl-C of the real command -------------------------------------------


def test_kill_9_at_random_moments_loses_at_most_the_episode_in_flight(tmp_path):
    rng = random.Random(8)
    run_dir = tmp_path / "run"
    args = ["--set", "train.total_env_steps=700", "--set", "train.checkpoint_every=100"]
    lost = []

    def kill_and_measure(proc: Train) -> None:
        proc.finish(signal.SIGKILL)
        held = logged_steps(run_dir)
        lost.append(proc.steps - held)
        assert 0 <= proc.steps - held <= EPISODE_STEPS, (proc.steps, held)

    def resume(**kw) -> Train:
        before = logged_steps(run_dir)
        proc = Train(run_dir, *args, "--resume", **kw)
        proc.wait_for(lambda line: line.startswith("RUN "))
        assert proc.started_at == (before, before), "the resumed run holds every logged step, in its buffer too"
        return proc

    first = Train(run_dir, *args)  # killed before its first checkpoint
    first.wait_step(rng.randint(20, 95))
    kill_and_measure(first)
    assert not (run_dir / "checkpoint").exists()

    in_checkpoint = resume(pause_in_checkpoint=True)
    in_checkpoint.wait_for(lambda line: line == "IN-CHECKPOINT")
    assert (run_dir / "checkpoint.tmp").is_dir()
    kill_and_measure(in_checkpoint)

    for _ in range(2):
        proc = resume()
        proc.wait_step(proc.started_at[0] + rng.randint(10, 150))
        kill_and_measure(proc)
    assert (run_dir / "checkpoint").is_dir()

    last = resume()
    assert last.finish() == 0, last.stderr()
    summary = json.loads(last.out[-1])
    assert summary["env_steps"] >= 700 and summary["episodes"] == len(episode_files(run_dir / "replay"))
    print(f"\nenv steps lost per kill -9: {lost}")


def test_ctrl_c_saves_a_checkpoint_and_resume_continues(tmp_path, capsys):
    run_dir = tmp_path / "run"
    args = ["--set", "train.total_env_steps=500", "--set", "train.checkpoint_every=0"]
    proc = Train(run_dir, *args)
    proc.wait_step(random.Random(3).randint(120, 220))
    rc = proc.finish(signal.SIGINT)
    assert rc == 130
    line = assert_one_line_error(proc.stderr(), "stopped by SIGINT at", "--resume")
    stopped_at = int(line.split(" at ")[1].split()[0])
    assert stopped_at == proc.steps == logged_steps(run_dir)  # the episode in flight was finished: nothing lost
    state, _ = load_checkpoint(run_dir, buffer_names=())
    assert state["learner"]["env_steps"] == stopped_at

    assert main(["train", *TINY, "--run-dir", str(run_dir), *args]) == 2  # a run is there: the refusal stays
    assert "--resume" in capsys.readouterr().err
    assert main(["train", *TINY, "--run-dir", str(run_dir), *args, "--resume"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["env_steps"] >= 500


def test_ctrl_c_before_the_first_checkpoint_is_resumable(tmp_path, capsys):
    run_dir = tmp_path / "run"
    args = ["--set", "train.total_env_steps=100", "--set", "train.scripted_demos=3"]
    proc = Train(run_dir, *args, pause_after_demo=True)
    proc.wait_for(lambda line: line == "DEMO")  # Ctrl-C while the scripted demos are recorded
    assert proc.finish(signal.SIGINT) == 130
    assert_one_line_error(proc.stderr(), "--resume")
    assert not (run_dir / "checkpoint").exists()

    assert main(["train", *TINY, "--run-dir", str(run_dir), *args, "--resume"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["env_steps"] >= 100
    assert len(episode_files(run_dir / "demos")) == 3


# --- damaged files read back at resume ------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A short finished run: 4 logged episodes, a checkpoint holding them all."""
    run_dir = tmp_path_factory.mktemp("finished") / "run"
    assert main(["train", *TINY, "--run-dir", str(run_dir), "--set", "train.total_env_steps=200",
                 "--set", "train.checkpoint_every=0"]) == 0
    return run_dir


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy


def _resume(run_dir: Path, total: int = 200) -> int:
    return main(["train", *TINY, "--run-dir", str(run_dir), "--set", f"train.total_env_steps={total}",
                 "--set", "train.checkpoint_every=0", "--resume"])


def _listing(run_dir: Path) -> dict[str, int]:
    return {str(p.relative_to(run_dir)): p.stat().st_size for p in run_dir.rglob("*") if p.is_file()}


@pytest.mark.parametrize("damage, needle", [
    ("truncate state.npz", "is damaged"),
    ("garbage online.npz", "cannot read checkpoint"),
    ("garbage replay manifest", "replay/manifest.json: not valid JSON"),
])
def test_a_damaged_run_file_is_a_one_line_error_and_nothing_is_removed(finished_run, tmp_path, capsys, damage, needle):
    run_dir = _copy(finished_run, tmp_path)
    if damage == "truncate state.npz":
        path = run_dir / "checkpoint" / "state.npz"
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage online.npz":
        path = run_dir / "checkpoint" / "online.npz"
        path.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(path.stat().st_size)))
    else:
        (run_dir / "replay" / "manifest.json").write_bytes(b"\xff\xfe{not json")
    before = _listing(run_dir)
    assert _resume(run_dir, 300) == 2
    assert_one_line_error(capsys.readouterr().err, needle)
    assert before.items() <= _listing(run_dir).items()  # every file is still there as it was


def _nan_episode(path: Path) -> None:
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["obs/state"][3, 0] = np.nan
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def test_damaged_replay_episodes_are_skipped_with_a_warning_and_the_rest_is_kept(finished_run, tmp_path, caplog):
    run_dir = _copy(finished_run, tmp_path)
    shutil.move(run_dir / "checkpoint", tmp_path / "aside")  # as the damaged-checkpoint error advises
    files = episode_files(run_dir / "replay")
    total = logged_steps(run_dir)
    sizes = [int(np.load(p)["action"].shape[0]) for p in files]
    files[1].write_bytes(files[1].read_bytes()[:300])  # torn
    _nan_episode(files[2])
    from robot_rl.training.trainer import Trainer

    cfg = load_config(REPO / "configs/pick_cube.yaml",
                      [*SETS, f"train.run_dir={run_dir}", "train.total_env_steps=300", "train.progress=false"])
    with caplog.at_level(logging.WARNING):
        trainer = Trainer(cfg, resume=True, tensorboard=False)
    try:
        assert trainer.learner.env_steps == len(trainer.learner.online) == total - sizes[1] - sizes[2]
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any(files[1].name in w for w in warnings) and any(files[2].name in w and "NaN" in w for w in warnings)
        assert trainer.run().env_steps >= 300  # and the run goes on
    finally:
        trainer.close()
    assert files[1].exists() and files[2].exists()  # nothing is deleted


def test_a_damaged_demo_or_config_of_a_run_without_checkpoint_is_a_one_line_error(finished_run, tmp_path, capsys):
    run_dir = _copy(finished_run, tmp_path)
    shutil.rmtree(run_dir / "checkpoint")
    demo = episode_files(run_dir / "demos")[0]
    demo.write_bytes(demo.read_bytes()[:100])
    assert _resume(run_dir) == 2
    assert_one_line_error(capsys.readouterr().err, demo.name)
    (run_dir / "config.yaml").write_text("train: [unclosed\n")
    assert _resume(run_dir) == 2
    assert_one_line_error(capsys.readouterr().err, "config.yaml")
