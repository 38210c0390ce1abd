"""``robot-rl eval`` of a BC checkpoint and of a residual run's checkpoint, in sim (with videos) and through the graph.

A ``robot-rl train-bc`` run on PickCube (2 scripted demos, a few steps: a poor policy, but a
real one) is the base of a tiny residual ``robot-rl train`` run. Then:

* ``robot-rl eval`` runs the BC policy itself and the residual run (its base loaded from
  what its checkpoint records, the residual on top), each writing an MP4 that OpenCV opens;
  the residual run's report counts no refused base action;
* ``robot-rl eval --graph`` runs the residual run in the actor node (``ros.policy:
  checkpoint``, the base running in the node) beside the sim node, over DDS;
* a residual run whose base is gone, was damaged, or was replaced by another policy is one
  line naming the file, exit status 2, before anything runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from graph_harness import private_env  # noqa: E402  (tests/support)

from robot_rl.cli import main  # noqa: E402
from robot_rl.paths import resolve_config  # noqa: E402

CONFIG = str(resolve_config("pick_cube"))
SMALL = ["agent.hidden_dims=[16,16]", "train.torch_threads=1", "train.eval_episodes=1", "seed=0"]
RESIDUAL = ["env.max_episode_steps=15", "train.batch_size=16", "train.learning_starts=10", "train.utd_ratio=1",
            "train.eval_every=0", "train.eval_episodes=0", "train.scripted_demos=0", "train.total_env_steps=30",
            "agent.base.mode=residual", "agent.residual.scale=0.2"]


def sets(items: list[str]) -> list[str]:
    return [a for item in items for a in ("--set", item)]


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """(a train-bc run, a residual train run on top of it), each ended with its checkpoint."""
    root = tmp_path_factory.mktemp("eval_base")
    bc = root / "base"
    assert main(["train-bc", "--config", CONFIG, "--run-dir", str(bc), "--no-progress",
                 *sets([*SMALL, "train.scripted_demos=2", "bc.steps=30", "bc.batch_size=32"])]) == 0
    residual = root / "residual"
    assert main(["train", "--config", CONFIG, "--run-dir", str(residual), "--no-progress",
                 *sets([*SMALL, *RESIDUAL, f"agent.base.source={bc}"])]) == 0
    return bc, residual


@pytest.mark.parametrize("which", ["bc", "residual"])
def test_a_bc_and_a_residual_checkpoint_run_in_sim_and_their_videos_open(runs, tmp_path, capsys, which):
    import cv2

    run_dir = runs[0] if which == "bc" else runs[1]
    assert main(["eval", str(run_dir), "--episodes", "2", "--out", str(tmp_path),
                 "--set", "env.max_episode_steps=15"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    report = json.loads(out[-1])
    assert report["episodes"] == 2 and report["mode"] == "sim" and not report["policy_faults"]
    assert report["kind"] == ("bc" if which == "bc" else "train")
    if which == "residual":
        assert report["base_refused"] == 0 and report["residual_refused"] == 0
    video = cv2.VideoCapture(report["video"])
    try:
        assert video.isOpened() and int(video.get(cv2.CAP_PROP_FRAME_COUNT)) == report["video_frames"] > 2 * 15
    finally:
        video.release()


@pytest.mark.slow
def test_a_residual_checkpoint_runs_through_the_node_graph(runs, tmp_path, capsys, monkeypatch):
    for key, value in private_env().items():
        monkeypatch.setenv(key, value)
    code = main(["eval", str(runs[1]), "--graph", "--episodes", "2", "--out", str(tmp_path),
                 "--set", "env.max_episode_steps=12", "--stop-timeout", "30"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    report = last_json(captured.out)
    assert report["mode"] == "graph" and report["episodes"] == 2, report
    assert report["base_refused"] == 0 and report["refused_actions"] == 0


def test_a_residual_run_whose_base_is_gone_damaged_or_replaced_is_one_line(runs, tmp_path, capsys):
    bc, residual = runs
    moved = tmp_path / "residual"
    shutil.copytree(residual, moved)
    base = tmp_path / "base"
    cases = []
    # gone: the residual run names a base that is not there
    cases.append(([f"agent.base.source={tmp_path / 'nowhere'}"], str(tmp_path / "nowhere")))
    # damaged: a base whose state file is cut short
    shutil.copytree(bc, base)
    state = base / "checkpoint" / "state.npz"
    state.write_bytes(state.read_bytes()[:200])
    cases.append(([f"agent.base.source={base}"], str(base)))
    # replaced: an entry point that acts otherwise than the base the residual learned on
    cases.append((["agent.base.source=base_policies:drift"], "another base policy"))
    for overrides, words in cases:
        args = ["eval", str(moved), "--episodes", "1", "--no-video", "--set", "agent.base.mode=residual",
                *sets(overrides)]
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, err
