"""``robot-rl eval`` on a poisoned checkpoint: one line and exit 2; NaN at run time: a failed episode with its reason.

The checkpoint is a small PickCube policy whose normalizer saw real sim observations,
saved in the one checkpoint format, then poisoned (variance -1, weights x1e38, a bias of
1e30). Before, ``robot-rl eval`` acted ``[nan, nan, nan, nan]`` and ended in a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")

from poisoned_checkpoints import (  # noqa: E402  (tests/support)
    huge_bias,
    pick_cube_run,
    rewrite_policy,
    variance_minus_one,
    weights_times_1e38,
)

from robot_rl.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    return pick_cube_run(tmp_path_factory.mktemp("eval_check") / "run")[1]


@pytest.fixture
def run(good_run, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(good_run, copy)
    return copy


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: "), lines
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize("poison, words", [
    (variance_minus_one, "the policy cannot act: normalizer variance of 'state'[0] is -1"),
    (weights_times_1e38, "the policy computes non-finite values on sampled observations"),
    (huge_bias, "the policy's actions are far outside the action space before the squash on sampled observations"),
])
def test_eval_refuses_a_poisoned_checkpoint_in_one_line(capsys, run, poison, words):
    path = rewrite_policy(run, poison)
    for mode in ([], ["--graph"]):  # --graph refuses before any node starts
        assert main(["eval", str(run), "--episodes", "1", "--no-video", *mode]) == 2
        line = one_error_line(capsys)
        assert line.startswith(f"robot-rl: {path}: ") and words in line, line
    assert not (run / "eval" / "session.yaml").exists()


def test_the_installed_command_exits_2_with_one_line_and_no_traceback(run):
    path = rewrite_policy(run, variance_minus_one)
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "eval", str(run), "--episodes", "1", "--no-video"],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (f"robot-rl: {path}: the policy cannot act: normalizer variance of 'state'[0] "
                                  "is -1"), out.stderr
    assert not out.stdout


def test_the_good_checkpoint_evaluates(capsys, run):
    assert main(["eval", str(run), "--episodes", "1", "--no-video"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["episodes"] == 1 and report["policy_faults"] == []


def test_nan_at_run_time_fails_the_episode_with_its_reason(capsys, run, monkeypatch):
    """The policy passes the load check, then gives NaN on every 5th action: each episode ends as failed
    at its first NaN, the arm held at that step, and eval reports why; no traceback."""
    from robot_rl.training import base_acting  # eval builds the saved policy through base_acting.saved_actor

    real_build = base_acting.build_policy
    calls = {"n": 0}

    def build_then_break(*args, **kwargs):
        saved = real_build(*args, **kwargs)  # the real check runs on the real network first
        act = saved.policy.act

        def every_fifth(obs, *a, **kw):
            calls["n"] += 1
            action = act(obs, *a, **kw)
            return np.full_like(action, np.nan) if calls["n"] % 5 == 0 else action

        saved.policy.act = every_fifth
        return saved

    monkeypatch.setattr(base_acting, "build_policy", build_then_break)
    assert main(["eval", str(run), "--episodes", "2", "--no-video"]) == 0
    assert calls["n"] >= 10, "the broken policy never acted: eval built its policy another way"
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    summary, report = out.out.strip().splitlines()[-2:]
    report = json.loads(report)
    assert report["episodes"] == 2 and report["successes"] == 0 and report["mean_length"] == 5
    assert report["policy_faults"] == [
        {"episode": 0, "step": 4, "reason": "non-finite actions ([nan, nan, nan, nan])"},
        {"episode": 1, "step": 4, "reason": "non-finite actions ([nan, nan, nan, nan])"}]
    assert "2 episode(s) failed on a refused action, the first (episode 0, step 4): non-finite actions" in summary
