"""The success-curve PNG: median and range over seeds, read from evals.jsonl, written whole."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from robot_rl.errors import RobotRLError
from robot_rl.training.curves import band, plot_success, read_evals, runs_of


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_band_is_the_median_and_range_of_step_functions_over_seeds():
    runs = [[(0, 0.0), (1000, 0.5), (2000, 1.0)],
            [(0, 0.1), (1000, 0.2)],  # stopped early: holds 0.2 to the end
            [(500, 0.3), (2000, 0.9)]]  # starts later: absent before its first point
    grid, median, low, high = band(runs)
    assert grid.tolist() == [0, 500, 1000, 2000]
    assert median.tolist() == pytest.approx([0.05, 0.1, 0.3, 0.9])  # at 0 only two seeds count
    assert low.tolist() == pytest.approx([0.0, 0.0, 0.2, 0.2])
    assert high.tolist() == pytest.approx([0.1, 0.3, 0.5, 1.0])


def test_band_skips_non_finite_points_and_empty_runs():
    grid, median, low, high = band([[(0, float("nan")), (float("inf"), 1.0), (10, 0.5)], []])
    assert grid.tolist() == [10] and median.tolist() == [0.5] and low.tolist() == high.tolist() == [0.5]
    assert all(len(a) == 0 for a in band([[], [(float("nan"), 0.1)]]))


def test_read_evals_skips_torn_null_and_non_finite_lines(tmp_path):
    path = tmp_path / "evals.jsonl"
    path.write_text('{"env_steps": 1000, "success_rate": 0.2}\n'
                    '{"env_steps": 2000, "success_rate": null}\n'
                    '{"env_steps": 3000, "success_rate": NaN}\n'
                    '{"env_steps": 4000}\n'
                    '[1, 2]\n'
                    '{"env_steps": 5000, "success_rate": 0.8}\n'
                    '{"env_steps": 6000, "succ')  # a crash mid-write
    assert read_evals(path) == [(1000, 0.2), (5000, 0.8)]
    assert runs_of([{"env_steps": 1, "success_rate": 0.5}, {"env_steps": 2}]) == [(1.0, 0.5)]


def test_plot_success_writes_a_whole_png_with_one_or_several_seeds(tmp_path):
    one = plot_success(tmp_path / "one.png", {"PickCube": [[(1000, 0.1), (2000, 0.6)]]}, title="t", target=0.9)
    rng = np.random.default_rng(0)
    seeds = [[(x, float(rng.uniform())) for x in range(0, 10_000, 1000)] for _ in range(3)]
    many = plot_success(tmp_path / "sub" / "many.png", {"20 demos": seeds, "0 demos": seeds[:1]})
    for path in (one, many):
        width, height = png_size(path)
        assert (width, height) == (700, 400) and path.stat().st_size > 5000
    assert not list(tmp_path.rglob("*.tmp*")) and not list(tmp_path.rglob("*partial*"))
    assert one.read_bytes() != many.read_bytes()


def test_plot_success_refuses_nothing_to_draw(tmp_path):
    with pytest.raises(RobotRLError, match="no success points"):
        plot_success(tmp_path / "x.png", {"a": [[]], "b": []})
    assert not (tmp_path / "x.png").exists()


def test_an_unnamed_series_still_gets_a_legend_entry(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns when a legend has nothing to show
        path = plot_success(tmp_path / "x.png", {"": [[(0, 0.0), (100, 1.0)]]})
    assert png_size(path) == (700, 400)
