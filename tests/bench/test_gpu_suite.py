"""``bench/gpu_suite.sh`` at CI size: one command, every part run or skipped with its reason, one JSON.

The suite is for a GPU machine (8 minutes on one H100); ``--tiny`` runs the same code
paths on this CPU with 2x32x32 images, a few updates and a tiny sample-efficiency budget,
and leaves out torch.compile. No figure here is a GPU figure: the test checks the shape
of what the GPU run will record and that every number is a real measurement.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gpu_suite.sh"
UNITS = {"updates/s", "images/s", "env steps/s", "env steps to 95% eval success"}


def load_suite(monkeypatch):
    """bench/gpu_suite.py as a module (bench/ is scripts, not a package); its dataclasses need it registered."""
    spec = importlib.util.spec_from_file_location("bench_gpu_suite", ROOT / "bench" / "gpu_suite.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_gpu_suite", module)
    spec.loader.exec_module(module)
    return module


def run(*args: str, timeout: float = 420) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "OMP_NUM_THREADS": "1", "MUJOCO_GL": "egl"}
    env.pop("OUT", None)
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)


def check_figure(name: str, record: dict) -> None:
    """A figure is a positive finite measurement with its unit, or an explicit skip with a reason."""
    assert "failed" not in record, f"{name}: {record['failed']}"
    if "skipped" in record:
        assert isinstance(record["skipped"], str) and record["skipped"].strip(), name
        assert "value" not in record, name
        return
    assert record["unit"] in UNITS, name
    value = record["value"]
    if record["unit"].startswith("env steps to"):  # not reaching the target in a short budget is a result
        assert value is None or (isinstance(value, int) and value > 0), name
        assert record["reached"] is (value is not None), name
        return
    assert isinstance(value, (int, float)) and not isinstance(value, bool), name
    assert math.isfinite(value) and value > 0, f"{name}: {value}"


@pytest.mark.slow
def test_tiny_suite_runs_on_the_cpu_and_prints_its_json_line(tmp_path):
    out = tmp_path / "gpu.json"
    start = time.monotonic()
    proc = run("--tiny", "--device", "cpu", "--threads", "1", "--out", str(out), "--runs-dir", str(tmp_path / "runs"))
    wall = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    record = json.loads(last)
    assert json.loads(out.read_text()) == record  # the file holds exactly the line printed
    print(f"tiny gpu suite: {wall:.1f} s wall, suite clock {record['wall_s']} s")

    assert record["bench"] == "gpu_suite" and record["tiny"] is True
    assert record["device"] == "cpu" and record["device_type"] == "cpu"
    assert record["versions"]["torch"] and record["versions"]["mujoco"]
    assert record["mujoco_gl"] == "egl" and record["weights"] == "random init"
    assert record["failed"] == []
    figures = record["figures"]
    learner = [f"{enc}{opt}" for enc in ("state", "pixels_small", "resnet10_cached", "resnet10_per_batch")
               for opt in ("", "_prefetch", "_bf16")]
    compiled = [f"{enc}_{opt}" for enc in ("state", "pixels_small", "resnet10_cached", "resnet10_per_batch")
                for opt in ("compile", "all")]
    expected = {*learner, *compiled, "backbone_images_per_s", "render_state", "render_pixels_2x32",
                "sample_efficiency_peg_insert_pixels_2x32"}
    assert set(figures) == expected
    for name, figure in figures.items():
        check_figure(name, figure)

    # at tiny size every learner case, the backbone and rendering are measured, not skipped
    for name in [*learner, "backbone_images_per_s", "render_state", "render_pixels_2x32"]:
        assert "value" in figures[name], (name, figures[name])
    for name in learner:
        f = figures[name]
        assert (f["batch"], f["compile"]) == (16, False)
        assert f["image_size"] == (None if name.startswith("state") else 32)
        assert f["prefetch"] == ("on" if name.endswith("_prefetch") else "off")
        assert f["precision"] == ("bf16" if name.endswith("_bf16") else "float32")
        assert f["replay_bytes_per_transition"] > 0
    # cached ResNet features take less replay than the two images they stand for
    assert (figures["resnet10_cached"]["replay_bytes_per_transition"]
            < figures["resnet10_per_batch"]["replay_bytes_per_transition"])
    assert figures["resnet10_cached"]["weights"] == "random init"
    assert figures["render_pixels_2x32"]["cameras"] == 2 and figures["render_state"]["cameras"] == 0
    assert figures["render_pixels_2x32"]["mujoco_gl"] == "egl"
    for name in compiled:  # compilation is out at tiny size, and says so
        assert "--tiny" in figures[name]["skipped"]

    se = figures["sample_efficiency_peg_insert_pixels_2x32"]
    assert se["complete"] is True and se["image_size"] == 32 and se["task"] == "peg_insert_pixels"
    assert se["curve"] and all(0.0 <= rate <= 1.0 for _, rate in se["curve"])
    assert 0.0 <= se["best_success"] <= 1.0 and se["last_eval_env_steps"] > 0
    assert set(record["parts"]) == {"learner", "render", "sample_efficiency"}
    assert all(not p["timed_out"] for p in record["parts"].values())


def test_a_part_past_its_deadline_is_skipped_and_the_json_still_comes(tmp_path):
    """At full size on this CPU a 12 s deadline cannot fit the learner: its cases are skips, exit 0."""
    out = tmp_path / "gpu.json"
    proc = run("--device", "cpu", "--parts", "learner", "compile", "--deadline", "12", "--out", str(out),
               timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record["tiny"] is False and record["deadline_s"] == 12
    assert record["failed"] == []
    for name, figure in record["figures"].items():
        check_figure(name, figure)
    skipped = [n for n, f in record["figures"].items() if "skipped" in f]
    assert "pixels_small_compile" in skipped and "resnet10_per_batch" in skipped
    assert "render_state" not in record["figures"]  # a part not asked for is not in the file


def test_a_child_that_runs_over_is_killed_with_what_it_printed_kept(monkeypatch):
    suite = load_suite(monkeypatch)
    child = suite.Child([sys.executable, "-c", "import time; print('started', flush=True); time.sleep(120)"])
    start = time.monotonic()
    lines, timed_out = child.run(3.0)
    assert timed_out and lines == ["started"]
    assert time.monotonic() - start < 60
    assert child.proc.poll() is not None  # killed and reaped, not left behind


@pytest.mark.parametrize("args, message", [
    (["--weights", "/nonexistent/resnet10.safetensors"], "--weights"),
    (["--device", "tpu"], "invalid choice"),
    (["--deadline", "nan"], "--deadline"),
    (["--deadline", "-5"], "--deadline"),
    (["--deadline", "inf"], "--deadline"),
    (["--threads", "-1"], "--threads"),
    (["--parts", "everything"], "invalid choice"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, message):
    out = tmp_path / "gpu.json"
    proc = run(*args, "--out", str(out), timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = [line for line in proc.stderr.strip().splitlines() if "error" in line]
    assert len(error) == 1 and message in error[0], proc.stderr
    assert not out.exists()


def test_a_weights_file_of_the_wrong_kind_is_refused(tmp_path):
    bad = tmp_path / "resnet10.safetensors"
    bad.write_bytes(b"\x00" * 64)  # not a weights file
    proc = run("--weights", str(bad), "--out", str(tmp_path / "gpu.json"), timeout=120)
    assert proc.returncode == 2
    assert "--weights" in proc.stderr and str(bad) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_out_path_that_cannot_be_written_is_refused_before_measuring(tmp_path):
    (tmp_path / "a_folder").mkdir()
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    for out, message in ((tmp_path / "a_folder", "is a folder"), (blocker / "gpu.json", "--out")):
        start = time.monotonic()
        proc = run("--tiny", "--device", "cpu", "--out", str(out), timeout=120)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "[learner]" not in proc.stdout and time.monotonic() - start < 100


def test_cuda_asked_for_without_one_is_refused(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    proc = run("--device", "cuda", "--tiny", "--out", str(tmp_path / "gpu.json"), timeout=120)
    assert proc.returncode == 2
    assert "--device is 'cuda' but PyTorch sees no CUDA device" in proc.stderr
