"""A learner that cannot keep its update-to-data ratio says so, once per window, naming the remedy;
a healthy one says nothing.

The monitor alone runs on a fake clock; then a real learner process (its server, assembler,
replay log and loop) is fed by a thread standing for actors, with every update made slow
on purpose (starved) or left as it is (healthy).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.learner_process import LearnerProcess
from robot_rl.training.utd_monitor import UtdMonitor

SPACES = syn.make_spaces(state_dim=6, action_dim=3)
OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (6,), np.float32)})
ACT = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_window_behind_warns_once_with_the_remedy_and_a_window_on_pace_does_not():
    clock = Clock()
    mon = UtdMonitor(2.0, window_s=10.0, fraction=0.8, clock=clock)
    steps = updates = 0
    lines = []
    for second in range(60):  # 100 steps/s arrive; 30 updates/s are done: effective 0.3 of 2
        clock.t = float(second)
        steps, updates = steps + 100, updates + 30
        lines.append(mon.observe(steps, updates, 2 * steps - updates))
    said = [ln for ln in lines if ln]
    assert len(said) == 5 == mon.warnings  # windows ending at 10, 20, ..., 50 s: one line each
    assert all("learning.sync_steps" in ln and "effective UTD 0.30" in ln and "train.utd_ratio 2" in ln
               for ln in said), said[0]
    assert "growing +612000/hour" in said[-1]  # 170 updates/s more due than done
    assert mon.status()["behind"] and mon.status()["effective"] == pytest.approx(0.3)
    assert "UTD 0.30 < 0.8 x 2" in mon.field()
    later = {}
    for second in range(60, 120):  # it catches up: 100 steps/s, 400 updates/s
        clock.t = float(second)
        steps, updates = steps + 100, updates + 400
        later[second] = mon.observe(steps, updates, max(0, 2 * steps - updates))
    assert later[60] is not None  # the window 50..60 s was mostly the old pace
    assert not any(later[t] for t in later if t > 60)  # every window after it is on pace
    assert not mon.behind and mon.field() is None and mon.warnings == 6


@pytest.mark.parametrize("steps, updates, backlog", [
    (0, 0, 0), (-50, 0, 0),  # before learning_starts: no window yet
    (100, 0, 0),  # behind in numbers but no backlog left (the learner just started): not behind
])
def test_no_warning_without_data_or_without_backlog(steps, updates, backlog):
    clock = Clock()
    mon = UtdMonitor(2.0, window_s=1.0, clock=clock)
    mon.observe(0 if steps > 0 else steps, 0, 0)
    clock.t = 5.0
    assert mon.observe(steps, updates, backlog) is None and mon.warnings == 0


def test_a_pace_alternating_inside_each_window_is_judged_on_the_window_mean():
    clock = Clock()
    mon = UtdMonitor(1.0, window_s=1.0, clock=clock)
    steps = updates = 0
    for tick in range(1, 81):  # every 0.25 s: 25 steps, then 5 or 50 updates by turns (mean 1.1 per step)
        clock.t = tick * 0.25
        steps += 25
        updates += 5 if tick % 2 else 50
        assert mon.observe(steps, updates, max(0, steps - updates)) is None
    assert mon.warnings == 0 and mon.status()["effective"] == pytest.approx(1.1)


def test_huge_counters_and_a_negative_backlog_give_finite_figures():
    clock = Clock()
    mon = UtdMonitor(2.0, window_s=1.0, clock=clock)
    mon.observe(10**15, 10**15, -5)
    clock.t = 2.0
    line = mon.observe(2 * 10**15, 10**15 + 10**12, 10**18)
    assert line is not None and "effective UTD 0.00" in line
    status = mon.status()
    assert status["backlog"] == 10**18 and math.isfinite(status["backlog_growth_per_hour"])
    assert UtdMonitor(2.0).status()["effective"] is None  # no window yet: no figure, not NaN


@pytest.mark.parametrize("item, value", [("utd_window_s", "nan"), ("utd_window_s", "inf"), ("utd_window_s", "0"),
                                         ("utd_window_s", "1e9"), ("utd_warn_fraction", "-0.5"),
                                         ("utd_warn_fraction", "1.5"), ("utd_warn_fraction", "nan"),
                                         ("utd_warn_fraction", "'x'")])
def test_bad_monitor_settings_are_one_line_naming_the_key(item, value):
    with pytest.raises(ConfigError) as err:
        load_config("configs/pick_cube.yaml", [f"learning.{item}={value}"])
    assert f"learning.{item}" in str(err.value) and "\n" not in str(err.value)


# --- a real learner process, starved and healthy ------------------------------------------


class SpacesOnly(gym.Env):
    """The learner needs the spaces only (no eval here)."""

    observation_space, action_space = OBS, ACT


def learner_process(tmp_path, utd: float) -> LearnerProcess:
    cfg = load_config("configs/pick_cube.yaml", [
        f"train.run_dir={tmp_path / 'run'}", "train.scripted_demos=0", f"train.utd_ratio={utd}",
        "train.learning_starts=20", "train.batch_size=16", "train.total_env_steps=1000000", "train.eval_every=0",
        "train.eval_episodes=0", "train.progress=false", "train.torch_threads=1", "agent.hidden_dims=[16]",
        "learning.port=0", "learning.utd_window_s=1.5", "learning.log_every_s=0.5", "learning.checkpoint_every_s=600"])
    return LearnerProcess(cfg, "tok", env_fn=lambda c: SpacesOnly(), evaluate=False, tensorboard=False)


def feed(process: LearnerProcess, stop: threading.Event, steps_per_s: float) -> None:
    """Two actors' worth of 10-step episodes at ``steps_per_s`` steps/s in all."""
    rng = np.random.default_rng(0)
    seq = {"a": 0, "b": 0}
    episode = 0
    while not stop.is_set():
        for actor in seq:
            seq[actor] += 1
            process.assembler.receive(actor, "i", seq[actor], list(syn.episode(SPACES, episode, 10, rng)))
        episode += 1
        stop.wait(20 / steps_per_s)


def run_fed(process: LearnerProcess, seconds: float, steps_per_s: float) -> dict:
    stop = threading.Event()
    feeder = threading.Thread(target=feed, args=(process, stop, steps_per_s), daemon=True)
    feeder.start()
    try:
        summary = process.run(max_seconds=seconds)
    finally:
        stop.set()
        feeder.join(10)
        process.close()
    return summary


def test_a_starved_learner_warns_once_per_window_naming_learning_sync_steps(tmp_path, caplog):
    process = learner_process(tmp_path, utd=2.0)
    real_update = process.learner.update

    def slow_update(*args, **kwargs):  # a learner that cannot keep up: at most ~30 updates/s
        time.sleep(0.03)
        return real_update(*args, **kwargs)

    process.learner.update = slow_update
    caplog.set_level(logging.WARNING, logger="robot_rl.training.remote.learner_process")
    started = time.monotonic()
    summary = run_fed(process, seconds=6.0, steps_per_s=100.0)  # 200 updates/s due, ~30 done
    elapsed = time.monotonic() - started
    warnings = [r.getMessage() for r in caplog.records if "behind its update-to-data ratio" in r.getMessage()]
    utd = summary["utd"]
    assert 1 <= len(warnings) == utd["warnings"] <= math.floor(elapsed / 1.5) + 1, warnings
    assert all("learning.sync_steps" in w for w in warnings)
    assert utd["behind"] and utd["effective"] < 0.8 * 2.0 and utd["backlog"] > 100
    assert summary["updates_due"] > 100
    shown = process.progress_fields()  # the progress line's figures, as the run's last line showed them
    assert "learning.sync_steps" in shown["behind"] and shown["behind"].startswith("UTD "), shown
    stats = json.loads((tmp_path / "run" / "learner" / "stats.json").read_text())
    assert stats["utd"]["behind"] is True and stats["utd"]["warnings"] >= 1


def test_a_healthy_learner_does_not_warn(tmp_path, caplog):
    process = learner_process(tmp_path, utd=0.2)  # 10 updates/s due at 50 steps/s: far below what it can do
    caplog.set_level(logging.WARNING, logger="robot_rl.training.remote.learner_process")
    summary = run_fed(process, seconds=5.0, steps_per_s=50.0)
    assert not [r for r in caplog.records if "behind" in r.getMessage()]
    assert summary["utd"]["warnings"] == 0 and not summary["utd"]["behind"]
    assert summary["received_steps"] > 100 and summary["updates"] > 0
    assert "behind" not in process.progress_fields()
