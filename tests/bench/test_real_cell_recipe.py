"""The example real-cell configs carry a learning recipe that was measured, and the bench measures exactly it.

``bench/sample_efficiency.py --settings-of CONFIG`` trains the sim twin of a task with a real
cell's agent section, UTD, batch, demo fraction and camera sizes. The figure in
docs/real-cell.md ("The learning recipe") was measured that way from
``configs/franka_peg_insert.yaml``; these tests hold that the overrides reproduce the cell's
recipe on the twin, that the other example cells share it (so the one figure speaks for
them), and that the bench refuses what it cannot measure in one line.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ROOT / "configs" / "franka_peg_insert.yaml"
CELLS = ["franka_peg_insert.yaml", "ur5e_peg_insert.yaml", "ur5e_ros2_control.yaml"]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_sample_efficiency", ROOT / "bench" / "sample_efficiency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recipe(cfg) -> tuple:
    sizes = {name: cfg.cameras[name].obs_shape() for name in cfg.env.cameras}
    train = tuple(getattr(cfg.train, key) for key in ("utd_ratio", "batch_size", "demo_fraction"))
    return cfg.agent, train, sizes


@pytest.mark.parametrize("cell", CELLS)
def test_the_twin_trains_with_the_cells_recipe(bench, cell):
    real = load_config(ROOT / "configs" / cell)
    twin = load_config(resolve_config("peg_insert_pixels"), bench.recipe_overrides(real))
    assert recipe(twin) == recipe(real)
    assert twin.robot.backend == "sim" and twin.env.obs_mode == "pixels"


@pytest.mark.parametrize("cell", CELLS[1:])
def test_every_example_cell_uses_the_measured_recipe(cell):
    """One figure for all: a cell that changes its recipe needs its own measurement."""
    assert recipe(load_config(ROOT / "configs" / cell)) == recipe(load_config(MEASURED))


def test_the_measured_recipe_downloads_nothing_and_needs_no_weights_file():
    encoder = load_config(MEASURED).agent.encoder
    assert (encoder.kind, encoder.resnet_variant, encoder.pretrained_path, encoder.cache_features) == (
        "resnet10", "hil_serl", None, True)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "sample_efficiency.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})


@pytest.mark.parametrize("args, words", [
    (["--settings-of", str(MEASURED)], "needs --pixels"),
    (["--pixels", "--settings-of", "configs/no_such_cell.yaml"], "no_such_cell"),
])
def test_what_the_bench_cannot_measure_is_one_line(args, words, tmp_path):
    done = run(*args, "--tasks", "peg_insert", "--seeds", "0", "--budget", "10", "--out", str(tmp_path))
    assert done.returncode == 2, done.stdout[-500:]
    lines = done.stderr.strip().splitlines()
    assert words in lines[-1] and "Traceback" not in done.stderr, done.stderr[-800:]
    assert not any(tmp_path.iterdir()), "a refused bench left runs behind"
