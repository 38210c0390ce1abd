"""Progress of ``robot-rl learner`` and ``robot-rl actor`` on stderr, and honest exit codes:
a learner that could not store what actors sent exits 1 with one ``robot-rl: learner: ...``
line (its actor counterpart is in test_processes.py); one that turned a stranger away
exits 0 and reports it (``--strict`` makes that fatal: tests/cli/test_first_hour.py).

Each test runs a real ``robot-rl learner`` process on 127.0.0.1 (stderr to a file, so not
a terminal: the progress shows as status lines) and SIGTERMs it at the end.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from polling import learner_port  # noqa: E402  (tests/support)

from robot_rl.config.learning import LearningConfig  # noqa: E402
from robot_rl.paths import resolve_config  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402
from robot_rl.training.progress import QUIET_EVERY_S, Progress  # noqa: E402
from robot_rl.training.remote import synthetic as syn  # noqa: E402
from robot_rl.training.remote.client import ActorClient  # noqa: E402
from robot_rl.training.remote.spaces import EnvSpaces  # noqa: E402

TOKEN = "progress-test-token"
CONFIG = str(resolve_config("pick_cube"))
SMALL = ["train.scripted_demos=0", "train.batch_size=32", "train.utd_ratio=0.5", "train.learning_starts=20",
         "train.torch_threads=1", "learning.batch_steps=10", "learning.batch_max_age_s=0.2",
         "learning.log_every_s=0.3", "learning.weights_every_updates=5", "learning.weights_every_s=0.5",
         "learning.reconnect_min_s=0.05", "learning.reconnect_max_s=0.3", "learning.checkpoint_every_s=60"]
ENV = {**os.environ, "ROBOT_RL_TOKEN": TOKEN}


def sets(items):
    return [a for s in items for a in ("--set", s)]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class LearnerRun:
    """A ``robot-rl learner`` subprocess with its stdout and stderr in files."""

    def __init__(self, tmp_path: Path):
        self.run_dir = tmp_path / "run"
        self.out, self.err = tmp_path / "learner.out", tmp_path / "learner.err"
        cmd = [sys.executable, "-m", "robot_rl.cli", "learner", "--config", CONFIG, "--run-dir", str(self.run_dir),
               "--port", "0", "--no-eval", "--no-tensorboard", *sets(SMALL)]
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=ENV)
        self.port = learner_port(self.proc, self.run_dir, 180, log=self.err)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)
        return self.proc.returncode, self.out.read_text(), self.err.read_text()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


def pick_spaces():
    from robot_rl.assemble import make_env

    env = make_env(load_config(CONFIG))
    try:
        return EnvSpaces.from_gym(env.observation_space, env.action_space)
    finally:
        env.close()


def test_learner_and_actor_show_progress_and_a_refused_peer_is_reported_not_fatal(tmp_path):
    learner = LearnerRun(tmp_path)
    try:
        actor = subprocess.run(
            [sys.executable, "-m", "robot_rl.cli", "actor", "--config", CONFIG,
             "--learner", f"127.0.0.1:{learner.port}", "--actor-id", "arm-1", "--max-episodes", "2",
             "--flush-timeout", "30", *sets(SMALL)],
            capture_output=True, text=True, timeout=300, env=ENV)
        assert actor.returncode == 0, actor.stderr[-3000:]
        summary = json.loads(actor.stdout.strip().splitlines()[-1])
        status = [ln for ln in actor.stderr.splitlines() if ln.startswith("actor arm-1: ")]
        assert len(status) >= 2, actor.stderr[-3000:]  # periodic lines, then the last one
        assert status[-1] == (f"actor arm-1: {summary['steps']} env steps, episodes 2, "
                              f"success {summary['successes']} ({summary['successes'] / 2:.0%}), "
                              f"weights v{summary['weight_version']}, unsent 0, learner connected")
        assert re.fullmatch(r"actor arm-1: \d+ env steps, episodes \d, success \d.*, weights v\d+, unsent \d+, "
                            r"learner (connected|away)", status[0])

        # a peer with a wrong token is turned away: counted, logged, and the learner's run is not clean
        stranger = ActorClient(LearningConfig(), pick_spaces(), "wrong-token", target=f"127.0.0.1:{learner.port}",
                               actor_id="stranger").start()
        try:
            wait_for(lambda: stranger._fatal is not None, 60, "the refusal")
        finally:
            stranger.close()
        code, out, err = learner.stop()
    finally:
        learner.kill()
    result = json.loads(out.strip().splitlines()[-1])
    # a stranger knocking is not the run failing: status 0, the refusals counted and named at the end
    assert code == 0, err[-3000:]
    refused = result["refused"]["unauthenticated"]
    assert refused >= 1
    assert not [ln for ln in err.splitlines() if ln.startswith("robot-rl:")], err[-3000:]
    what = f"refused {refused} call(s) or batch(es) from peers ({refused} unauthenticated)"
    assert out.splitlines()[-2].endswith(f"; {what}"), out
    assert (f"learner: {what}, counted in {learner.run_dir / 'learner' / 'stats.json'}; see the log for peers and "
            "reasons; the run itself is healthy (--strict makes refusals fail it)") in err.splitlines(), err[-3000:]
    assert "learner refused a call from 127.0.0.1 (unauthenticated)" in err  # the peer and the reason, logged

    status = [ln for ln in err.splitlines() if ln.startswith("learner: ") and " env steps, updates " in ln]
    assert len(status) >= 2, err[-3000:]
    steps, updates = result["received_steps"], result["updates"]
    assert steps == summary["steps"] and updates > 0
    utd = updates / (steps - 20)  # train.learning_starts=20
    assert re.fullmatch(rf"learner: {steps}/8000 env steps, updates {updates}, UTD {utd:.2f}, "
                        rf"weights v{result['weight_version']}, episodes 2, success \d+%, actors arm-1 {steps}",
                        status[-1]), status[-1]
    assert 0 < utd <= 0.5 + 1e-9  # train.utd_ratio=0.5


def test_a_learner_that_could_not_store_what_actors_sent_exits_1(tmp_path):
    learner = LearnerRun(tmp_path)
    try:
        replay = learner.run_dir / "replay"
        shutil.rmtree(replay)
        replay.write_text("not a directory: every episode write fails, as on a full disk")
        spaces = pick_spaces()
        client = ActorClient(LearningConfig(batch_steps=5, reconnect_min_s=0.05, reconnect_max_s=0.2), spaces, TOKEN,
                             target=f"127.0.0.1:{learner.port}", actor_id="arm-2").start()
        try:
            for step in syn.episode(spaces, 0, 5, np.random.default_rng(0)):
                client.submit(step)
            stats = learner.run_dir / "learner" / "stats.json"
            wait_for(lambda: stats.exists() and json.loads(stats.read_text())["refused"].get("store_failed"), 60,
                     "a failed store")
        finally:
            client.close()
        code, out, err = learner.stop()
    finally:
        learner.kill()
    failed = json.loads(out.strip().splitlines()[-1])["refused"]["store_failed"]
    lines = [ln for ln in err.splitlines() if ln.startswith("robot-rl:")]
    assert code == 1 and lines == [f"robot-rl: learner: could not write {failed} batch(es) of actor steps to "
                                   f"{replay} (the actors were told to resend them); see the log for peers "
                                   "and reasons"], err[-3000:]


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_status_lines_come_every_every_s_and_never_read_past_the_total():
    clock, out = Clock(), io.StringIO()
    progress = Progress("learner", total=100, unit="env step", every_s=10.0, stream=out, clock=clock)
    for n in range(0, 60, 5):
        clock.t += 2.0  # a line every 10 s: at 10, 20 s of these 24
        if progress.due():
            progress.show(n, {"updates": n // 2})
    progress.close(130, {"updates": 65})  # more arrived than planned
    # a line as soon as there is something to show (it started), then every 10 s, and the last
    assert out.getvalue().splitlines() == ["learner: 0/100 env steps, updates 0",
                                           "learner: 25/100 env steps, updates 12",
                                           "learner: 50/100 env steps, updates 25",
                                           "learner: 130/130 env steps, updates 65"]


def test_a_terminal_gets_a_bar_with_the_figures_and_disabled_shows_a_line_now_and_then():
    clock, tty = Clock(), Tty()
    progress = Progress("actor a", total=None, stream=tty, clock=clock)
    assert progress.bar is not None
    clock.t = 1.0
    progress.show(7, {"episodes": 1, "unsent": 3})
    progress.close()
    text = tty.getvalue()
    assert "actor a: " in text and "7step" in text and "episodes 1, unsent 3" in text, text
    # --no-progress: no bar even on a terminal, a plain line when it starts, every QUIET_EVERY_S, at the end
    off = Tty()
    quiet = Progress("x", total=5, enabled=False, every_s=10.0, stream=off, clock=clock)
    assert quiet.bar is None and quiet.every_s == QUIET_EVERY_S == 60.0
    clock.t = 100.0
    assert quiet.due()
    quiet.show(1, {"a": 1})
    clock.t = 159.0
    assert not quiet.due()  # 10 s (every_s) is not enough when quiet
    quiet.show(2, {"a": 2})
    clock.t = 160.0
    quiet.show(3, {"a": 3})
    quiet.close(5)
    assert off.getvalue().splitlines() == ["x: 1/5 steps, a 1", "x: 3/5 steps, a 3", "x: 5/5 steps, a 3"]
    assert "\r" not in off.getvalue()


def test_a_note_says_what_a_wait_is_in_one_line_on_a_terminal_or_off_and_when_quiet():
    clock, off = Clock(), io.StringIO()
    progress = Progress("train-reward", total=40, stream=off, clock=clock)
    progress.note("loading torch and\r\n 3 chunks\tof frames")  # a caller's text cannot break the log's lines
    progress.show(0, {"loss": "-"})
    progress.close(40, {"loss": f"{float('nan'):.4f}"})
    progress.note("scoring the held-out frames")
    assert off.getvalue().splitlines() == ["train-reward: loading torch and 3 chunks of frames",
                                           "train-reward: 0/40 steps, loss -", "train-reward: 40/40 steps, loss nan",
                                           "train-reward: scoring the held-out frames"]
    assert "\r" not in off.getvalue() and progress.lines == 2  # notes are not status lines
    quiet = io.StringIO()
    Progress("x", total=1, enabled=False, stream=quiet, clock=clock).note("waiting")  # quiet still says it
    assert quiet.getvalue() == "x: waiting\n"
    # on a terminal the note goes above the bar, which is drawn again whole after it
    tty = Tty()
    bar = Progress("rollout", total=3, unit="episode", stream=tty, clock=clock)
    bar.show(1, {"success": "100%"}, force=True)
    bar.note("writing the strip")
    before, note, after = tty.getvalue().rpartition("\rrollout: writing the strip\n")
    assert note and before.endswith(" " * 20), tty.getvalue()  # the bar's line is cleared, then the note
    assert after.startswith("\rrollout: ") and "1/3" in after and after.endswith("success 100%]"), after
    bar.close(3)
    assert bar.bar is None
