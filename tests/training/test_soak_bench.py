"""bench/soak.py at a tiny size: a learner and two sim actors for about 20 s, starved on purpose.

The 30-minute soak is run by hand; this checks that the bench runs the processes, samples
them, holds the replay log at its bound, sees the backlog warning fire and ends with one
JSON line of the figures.
"""

import pytest
from bench_runs import run_bench

pytest.importorskip("mujoco")


def test_a_short_starved_soak_reports_rss_slopes_the_bound_and_the_warning(tmp_path):
    figures, _ = run_bench("soak.py", "--minutes", "0.35", "--starve", "--no-eval", "--replay-capacity", "100",
                           "--log-mb", "0.03", "--sample-s", "1", "--warmup-s", "3", "--run-dir",
                           str(tmp_path / "soak"), timeout=600)
    assert figures["bench"] == "soak" and figures["starve"] is True and figures["minutes"] >= 0.3
    assert all(figures["processes_alive_to_the_end"].values()) and figures["learner_exit"] == 0
    for name in ("learner", "actor_1", "actor_2"):
        rss = figures["rss"][name]
        assert rss["samples"] >= 10 and rss["max_mb"] > 50 and isinstance(rss["slope_mb_per_hour"], float)
    log = figures["replay_log"]
    assert log["pruned_episodes"] > 0 and log["prunes"] > 0, log  # the bound was reached and held
    assert log["held_within_bound"] is True and log["max_mb"] <= 0.03 + log["one_episode_mb"]
    utd = figures["utd"]
    assert utd["configured"] == 20.0 and utd["backlog_max"] > 0
    assert figures["warning_fired"] is True and figures["warning_names_remedy"] is True
    assert figures["warnings_counted"] >= 1
