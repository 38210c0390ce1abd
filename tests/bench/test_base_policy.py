"""``bench/base_policy.py`` at CI size: every arm runs, the JSON line has its keys, the PNG is drawn.

At this size (2 demos, a 200-step budget, tiny networks) nothing learns: the test checks
the shape of what a full run records and that each figure is a real measurement of the
runs it made, not how good the figures are.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bench_runs import ROOT, run_bench
from polling import wait_for

TINY = ("--seeds", "0", "--demos", "2", "--budget", "200", "--eval-every", "100", "--eval-episodes", "2",
        "--set", "bc.steps=20", "--set", "train.learning_starts=50", "--set", "train.batch_size=16",
        "--set", "agent.hidden_dims=[32,32]", "--set", "agent.warm_start.critic_steps=20")


def load_bench(monkeypatch):
    """bench/base_policy.py as a module (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_base_policy", ROOT / "bench" / "base_policy.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_base_policy", module)
    spec.loader.exec_module(module)
    return module


def test_a_tiny_run_of_every_arm_ends_with_its_json_line_and_png(tmp_path):
    pytest.importorskip("mujoco")
    out = tmp_path / "bench"
    record, lines = run_bench("base_policy.py", "--tasks", "pick_cube_hard", *TINY, "--demo-failed", "0.5",
                              "--late-after", "100", "--out", str(out), timeout=900)
    assert {"target", "budget", "eval_every", "eval_episodes", "dip_window", "late_after", "view", "demo_flaws",
            "overrides", "wall_s", "results"} <= set(record)
    assert record["budget"] == 200 and record["view"] == "state" and record["demo_flaws"]["failed"] == 0.5
    result = record["results"]["pick_cube_hard_state_2demos"]
    assert result["seeds"] == [0]
    assert result["demos"]["0"] == {**result["demos"]["0"], "episodes": 2, "failed": 1}  # 50% of 2, as stated
    assert 0.0 <= result["bc"]["success"][0] <= 1.0
    for arm in ("rlpd", "warm_start", "residual"):
        figures = result[arm]
        assert {"steps", "median", "reached", "best_success", "dip", "worst_dip", "dip_chance",
                "wall_s"} <= set(figures)
        assert figures["reached"] in ("0/1", "1/1") and len(figures["steps"]) == 1
        assert figures["steps"][0] is None or 0 < figures["steps"][0] <= 200
        dip = figures["dip"][0]  # lowest eval success in the first 2,000 steps minus BC's
        assert -1.0 <= dip <= 1.0 and 0.0 <= figures["dip_chance"][0] <= 1.0
        assert any(f"seed=0 {arm}:" in line for line in lines)
    png = Path(result["png"])
    assert png == out / "pick_cube_hard_state_2demos.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    partial = json.loads((out / "partial.json").read_text())
    runs = partial["runs"]
    assert len(runs) == 1 and {"bc", "rlpd", "warm_start", "residual", "demos"} <= set(runs[0])
    curve = runs[0]["rlpd"]["curve"]
    assert [x for x, _ in curve][-1] == 200 and all(0.0 <= y <= 1.0 for _, y in curve)
    # the dip in the JSON is the one the curves and BC's figure give
    for arm in ("warm_start", "residual"):
        c = runs[0][arm]["curve"]
        assert result[arm]["dip"][0] == pytest.approx(min(y for _, y in c) - runs[0]["bc"]["success"])
        late = [y for x, y in c if x > 100]  # --late-after 100: the evaluation at 200, where the run got that far
        assert result[arm]["late_dip"][0] == (pytest.approx(min(late) - runs[0]["bc"]["success"]) if late else None)
        assert (result[arm]["late_dip_chance"][0] is None) == (not late)
    assert (out / "pick_cube_hard_state_2demos_seed0" / "bc" / "eval.json").is_file()


def test_the_dip_and_the_median_count_what_they_state(monkeypatch):
    bench = load_bench(monkeypatch)
    curve = [(1000.0, 0.5), (2000.0, 0.2), (3000.0, 0.0)]
    assert bench.dip(curve, 0.6, 2000) == pytest.approx(-0.4)  # the 3000-step point is past the window
    assert bench.dip(curve, 0.1, 2000) == pytest.approx(0.1)
    assert bench.dip([], 0.6, 2000) is None and bench.dip(curve, None, 2000) is None
    # the late dip: every evaluation after the first 1,000 env steps, to the run's end
    assert bench.dip(curve, 0.6, math.inf, after=1000) == pytest.approx(-0.6)
    assert bench.dip(curve[:1], 0.6, math.inf, after=1000) is None
    assert bench.median_steps([1000, None, 3000]) == 3000  # a seed not reached counts as above the budget
    assert bench.median_steps([1000, None, None]) is None
    assert bench.median_steps([2000, 1000, 4000]) == 2000


def test_the_dip_chance_is_what_noise_alone_gives_a_policy_as_good_as_bc(monkeypatch):
    bench = load_bench(monkeypatch)
    # the same figure drawn: BC's eval and two window evals, 20 episodes each, all at 70%
    rng = np.random.default_rng(0)
    bc, e1, e2 = (rng.binomial(20, 0.7, 200_000) for _ in range(3))
    for dip in (0.0, -0.1, -0.15, -0.3):
        drawn = float(np.mean(np.minimum(e1, e2) - bc <= round(dip * 20)))
        assert bench.dip_chance(dip, 0.7, 2, 20) == pytest.approx(drawn, abs=0.005)
    assert 0.25 < bench.dip_chance(-0.15, 0.7, 2, 20) < 0.35  # about 3 runs in 10, as the docs say
    assert bench.dip_chance(-0.15, 0.7, 1, 20) < bench.dip_chance(-0.15, 0.7, 2, 20)  # more evals, more chance
    assert bench.dip_chance(-0.15, 0.7, 2, 100) < 0.05  # more episodes, less
    assert bench.dip_chance(-0.05, 1.0, 2, 20) == 0.0 and bench.dip_chance(0.0, 1.0, 2, 20) == 1.0
    assert bench.dip_chance(None, 0.7, 2, 20) is None and bench.dip_chance(-0.1, None, 2, 20) is None
    assert bench.dip_chance(-0.1, 0.7, 0, 20) is None


def run_script(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(ROOT / "bench" / "base_policy.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, fragment", [
    (["--demo-noise", "nan"], "--demo-noise = nan must lie in [0, 1]"),
    (["--demo-failed", "1.5"], "--demo-failed = 1.5"),
    (["--demo-failed", "0.6", "--demo-hesitant", "0.6"], "--demo-failed + --demo-hesitant"),
    (["--demo-hesitant=-inf"], "--demo-hesitant = -inf"),
    (["--demo-noise", "-1"], "--demo-noise = -1.0 must lie in [0, 1]"),
    (["--seeds", "zero"], "--seeds: invalid int value: 'zero'"),  # argparse's own errors: one line too
    (["--arms", "bc", "magic"], "invalid choice: 'magic'"),
    (["--budget", "1e99"], "--budget: invalid int value"),
    (["--budget", "0"], "--budget 0: must be at least 1"),
    (["--demos", "0"], "--demos 0: must be at least 1"),
    (["--late-after", "-1"], "--late-after -1: must be at least 0"),
    (["--dip-window", "-5"], "--dip-window -5: must be at least 0"),
    (["--seeds", "1", "1"], "--seeds [1, 1]: each value once"),
    (["--target", "nan"], "--target nan"),
    (["--eval-episodes", "-3"], "--eval-episodes -3"),
    (["--tasks", "no_such_task"], "--tasks no_such_task"),
    (["--tasks", "pick_cube_hard", "--set", "task.params.cube_xy_range=[5, 5]"], "task.params.cube_xy_range"),
    (["--tasks", "plug_insert_hard", "--set", "task.params.clearance=.nan"], "task.params.clearance"),
    (["--set", "train.utd_ratio"], "_hard: --set: override 'train.utd_ratio'"),
])
def test_bad_options_are_one_line_and_exit_2_before_anything_runs(tmp_path, args, fragment):
    out = tmp_path / "bench"
    proc = run_script(*args, "--out", str(out))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], lines
    assert not out.exists() and proc.stdout == ""


def test_an_out_path_that_is_a_file_is_refused(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    proc = run_script("--out", str(blocker))
    assert proc.returncode == 2 and "--out" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert blocker.read_text() == "kept"


def test_resume_continues_an_arm_a_stop_cut_short_and_reuses_what_was_finished(tmp_path):
    """SIGTERM in the middle of an RL arm (as a run stopped to free the machine), then ``--resume``:
    the demos are not recorded again, the arm goes on from its checkpoint to the budget, and its
    curve holds the evaluations from before the stop unchanged."""
    pytest.importorskip("mujoco")
    out = tmp_path / "bench"
    options = ["--tasks", "pick_cube_hard", *TINY, "--budget", "400", "--arms", "rlpd", "--out", str(out)]
    root = out / "pick_cube_hard_state_2demos_seed0"
    evals = root / "rlpd" / "evals.jsonl"
    first = subprocess.Popen([sys.executable, str(ROOT / "bench" / "base_policy.py"), *options], cwd=ROOT,
                             env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        # the evaluations at 0 and 100 env steps are written: stop it there, as a stop for CI does
        wait_for(lambda: (evals.is_file() and len(evals.read_text().splitlines()) >= 2) or first.poll() is not None,
                 600)
        first.terminate()
        output = first.communicate(timeout=300)[0]
    finally:
        first.kill()
    assert first.returncode != 0 and "TrainingStopped" in output, output[-2000:]
    assert not (root / "rlpd.json").exists()  # the arm did not finish
    before = [json.loads(line) for line in evals.read_text().splitlines()]
    demos = (root / "demos.json").read_text()
    recorded = sorted(p.stat().st_mtime_ns for p in (root / "demos").rglob("*") if p.is_file())

    record, lines = run_bench("base_policy.py", *options, "--resume", timeout=900)
    assert (root / "demos.json").read_text() == demos  # read back, not recorded again
    assert sorted(p.stat().st_mtime_ns for p in (root / "demos").rglob("*") if p.is_file()) == recorded
    arm = json.loads((root / "rlpd.json").read_text())
    assert arm["resumed"] is True and arm["env_steps_run"] >= 400
    steps = [x for x, _ in arm["curve"]]
    assert steps == sorted(set(steps)) and steps[-1] == 400  # once each, to the budget
    kept = {(r["env_steps"], r["success_rate"]) for r in before if r.get("success_rate") is not None}
    assert kept and kept <= {tuple(point) for point in arm["curve"]}  # the evaluations before the stop
    result = record["results"]["pick_cube_hard_state_2demos"]["rlpd"]
    assert result["best_success"] == [max(y for _, y in arm["curve"])]
    # a second --resume runs nothing: every piece is read back
    again, _ = run_bench("base_policy.py", *options, "--resume", timeout=300)
    assert again["results"] == record["results"]


@pytest.mark.parametrize("change, fragment", [
    (["--budget", "500"], "budget was 400, this run asks 500"),
    (["--set", "train.utd_ratio=2"], "overrides was"),
    (["--pixels"], 'view was "state", this run asks "pixels"'),
])
def test_resume_with_other_options_is_one_line_and_exit_2(tmp_path, change, fragment):
    out = tmp_path / "bench"
    out.mkdir()
    flaws = {"noise": 0.3, "failed": 0.15, "hesitant": 0.25, "pauses": 2, "pause_steps": 4, "miss": 0.03}
    settings = {"view": "state", "budget": 400, "target": 0.95, "eval_every": 1000, "eval_episodes": 20,
                "device": "cpu", "demo_flaws": flaws, "overrides": []}
    proc = run_script("--tasks", "pick_cube_hard", "--budget", "400", "--out", str(out), "--resume", *change)
    assert proc.returncode == 2 and "nothing to resume" in proc.stderr  # no settings file: nothing started here
    (out / "settings.json").write_text(json.dumps(settings))
    proc = run_script("--tasks", "pick_cube_hard", "--budget", "400", "--out", str(out), "--resume", *change)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and fragment in lines[0] and "settings.json" in lines[0], lines
    (out / "settings.json").write_text("{torn")
    proc = run_script("--tasks", "pick_cube_hard", "--out", str(out), "--resume")
    assert proc.returncode == 2 and "unreadable" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == ["settings.json"]  # nothing run, nothing else written


def test_pixels_runs_the_tasks_robots_view_config_with_the_variants_parameters(monkeypatch, tmp_path):
    from robot_rl.tasks import load_config

    bench = load_bench(monkeypatch)
    args = bench.parse_args(["--pixels", "--tasks", "pick_cube_hard", "--out", str(tmp_path / "b")])
    cfg = load_config(*bench.config_for("pick_cube_hard", args, ["seed=3"]))
    hard = load_config(ROOT / "configs" / "pick_cube_hard.yaml")
    view = load_config(ROOT / "configs" / "pick_cube_pixels.yaml")
    assert cfg.task.params == hard.task.params != view.task.params
    assert cfg.env.obs_mode == "pixels" and cfg.cameras["front"].width == view.cameras["front"].width == 32
    assert cfg.agent.encoder == view.agent.encoder and cfg.seed == 3
    assert cfg.train.eval_episodes == 20 and cfg.train.eval_video_episodes == 0
    with pytest.raises(SystemExit) as exit_:  # a variant whose task has no robot's-view config: one line, exit 2
        bench.parse_args(["--pixels", "--tasks", "connector_insert", "--out", str(tmp_path / "b")])
    assert exit_.value.code == 2
