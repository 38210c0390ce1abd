"""The replay log's bound: held over many episodes, never at the cost of what the buffers,
a resume or the demo buffer need, and a resume reads only what is kept.

Episodes go in as the learner process takes them (log, then buffers, then a prune), with
small state observations so hundreds of episodes cost a second.
"""

from __future__ import annotations

import dataclasses
import json
import time

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.config import Config
from robot_rl.config.agent import AgentConfig, ReplayLogConfig, TrainConfig
from robot_rl.data.demos import episode_files, episode_index
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config
from robot_rl.training.learner import Learner
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.replay_log import PRUNED_FILE, EpisodeLog, prune_to_config

SPACES = syn.make_spaces(state_dim=6, action_dim=3)
OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (6,), np.float32)})
ACT = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
AGENT = AgentConfig(hidden_dims=(8,))


def train_cfg(**replay_log) -> TrainConfig:
    return TrainConfig(replay_capacity=300, demo_capacity=120, batch_size=8, learning_starts=0,
                       replay_log=ReplayLogConfig(**replay_log))


def make_episode(e: int, length: int, rng, *, intervene_every: int = 0, success: bool = False):
    steps = list(syn.episode(SPACES, e, length, rng, intervene_every=intervene_every, success=success))
    return steps, {"actor_id": f"a{e % 2}", "incarnation": "i", "episode_id": e, "last_seq": e + 1}


def bytes_on_disk(directory) -> int:
    return sum(p.stat().st_size for p in episode_files(directory))


def transitions(buffer) -> list[tuple]:
    """The buffer's sampleable transitions as comparable values (slot layout aside)."""
    slots = buffer.valid_indices()
    batch = buffer.gather(slots)
    rows = zip(batch["obs"]["state"], batch["next_obs"]["state"], batch["action"], batch["reward"],
               batch["intervened"], batch["truncated"])
    return sorted((o.tobytes(), n.tobytes(), a.tobytes(), float(r), bool(i), float(t)) for o, n, a, r, i, t in rows)


class Live:
    """A learner process's data path in miniature: log durably, ingest, prune."""

    def __init__(self, directory, tc: TrainConfig) -> None:
        self.tc = tc
        self.log = EpisodeLog(directory, OBS, ACT)
        self.learner = Learner(AGENT, tc, OBS, ACT)
        self.sizes: list[int] = []
        self.steps = 0

    def add(self, steps, meta) -> None:
        self.log.append(steps, meta)
        for step in steps:
            self.learner.ingest(step)
        self.steps += len(steps)
        prune_to_config(self.log, self.tc)
        self.sizes.append(bytes_on_disk(self.log.directory))


def resume(directory, tc: TrainConfig) -> tuple[Learner, EpisodeLog, int]:
    """What the learner process does at --resume: read the window back; returns the steps read."""
    log = EpisodeLog(directory, OBS, ACT)
    learner = Learner(AGENT, tc, OBS, ACT)
    read = 0
    for logged, whole in log.read_window(tc.replay_capacity, tc.demo_capacity):
        for step in logged.steps:
            learner.ingest(step) if whole else learner.ingest_demo_part(step)
        read += len(logged.steps)
    return learner, log, read


def test_the_log_stays_at_its_bound_over_many_episodes(tmp_path):
    rng = np.random.default_rng(0)
    live = Live(tmp_path / "replay", train_cfg(max_mb=0.15))  # 150 kB: about 2.5x what the buffer holds
    for e in range(400):
        live.add(*make_episode(e, int(rng.integers(5, 30)), rng))
    one_episode = max(p.stat().st_size for p in episode_files(tmp_path / "replay"))
    assert max(live.sizes) <= 150_000 + one_episode, max(live.sizes)
    assert live.sizes[-1] >= 150_000 - 2 * one_episode  # it keeps up to the bound, not less
    assert sum(live.sizes[-1:]) < 0.2 * 400 * 17 * 300  # far below the unbounded log
    # the count of what went and what stays adds up to every step logged
    record = json.loads((tmp_path / "replay" / PRUNED_FILE).read_text())
    assert record["steps"] + live.log.kept_steps == live.steps
    assert record["bytes"] + live.log.size_bytes == record["bytes"] + bytes_on_disk(tmp_path / "replay")


def test_default_bound_keeps_exactly_what_the_online_buffer_holds(tmp_path):
    rng = np.random.default_rng(1)
    live = Live(tmp_path / "replay", train_cfg())
    for e in range(200):
        live.add(*make_episode(e, 20, rng))  # 21 frames each (truncated: a final frame)
    kept = len(episode_files(tmp_path / "replay"))
    assert kept == -(-300 // 21)  # the fewest newest episodes that fill 300 frames
    live.log.prune(300)
    assert len(episode_files(tmp_path / "replay")) == kept  # stable: pruning again takes nothing


def test_age_bound_keeps_recent_episodes_beyond_the_buffer(tmp_path):
    rng = np.random.default_rng(2)
    live = Live(tmp_path / "replay", train_cfg(max_age_steps=1000))
    for e in range(200):
        live.add(*make_episode(e, 10, rng))
    kept = sorted(episode_index(p) for p in episode_files(tmp_path / "replay"))
    # 28 episodes fill 300 frames (11 each); older ones stay while fewer than 1000 steps came after them
    assert kept == list(range(100, 200)), kept[:3]


def test_nothing_the_buffers_hold_is_pruned_and_resume_rebuilds_them_equal(tmp_path):
    rng = np.random.default_rng(3)
    tc = train_cfg()
    live = Live(tmp_path / "replay", tc)
    for e in range(150):
        length = int(rng.integers(3, 25))
        live.add(*make_episode(e, length, rng, intervene_every=4 if e % 10 == 3 else 0, success=e % 3 == 0))
    learner, log, read = resume(tmp_path / "replay", tc)
    assert transitions(learner.online) == transitions(live.learner.online)
    assert transitions(learner.demo) == transitions(live.learner.demo)
    assert len(learner.online) > 250 and len(learner.demo) > 20
    # it read the online window (at most one episode past 300 frames) plus older intervention episodes
    assert read < 300 + 25 + sum(s for e in log._entries.values() if e.intervened > 0 for s in [e.steps])


def test_intervention_episodes_are_never_pruned(tmp_path):
    rng = np.random.default_rng(4)
    live = Live(tmp_path / "replay", train_cfg(max_mb=0.001))  # a bound far below what is kept anyway
    human = []
    for e in range(120):
        steps, meta = make_episode(e, 15, rng, intervene_every=2 if e % 7 == 0 else 0)
        if e % 7 == 0:
            human.append(e)
        live.add(steps, meta)
    on_disk = {episode_index(p) for p in episode_files(tmp_path / "replay")}
    assert set(human) <= on_disk
    record = json.loads((tmp_path / "replay" / PRUNED_FILE).read_text())
    assert record["episodes"] == 120 - len(on_disk) and record["episodes"] > 80


def test_the_trainer_keeps_every_episode_after_its_checkpoint(tmp_path):
    rng = np.random.default_rng(5)
    log = EpisodeLog(tmp_path / "replay", OBS, ACT)
    for e in range(60):
        log.append(*make_episode(e, 20, rng))
    prune_to_config(log, train_cfg(), below=40)  # the last checkpoint holds episodes 0..39
    kept = sorted(episode_index(p) for p in episode_files(tmp_path / "replay"))
    assert kept == list(range(40, 60))
    # a resume's tail from the checkpoint is all there
    assert [e.index for e in log.read_all(40)] == list(range(40, 60))


def test_resume_reads_only_what_is_kept_and_its_time_follows_the_kept_size(tmp_path):
    """A log of 4000 episodes, pruned: a resume reads the window, not the history."""
    rng = np.random.default_rng(6)
    tc = dataclasses.replace(train_cfg(), replay_capacity=400)
    grown = EpisodeLog(tmp_path / "grown", OBS, ACT)
    bounded = EpisodeLog(tmp_path / "bounded", OBS, ACT)
    for e in range(1500):
        steps, meta = make_episode(e, 20, rng)
        grown.append(steps, meta)
        bounded.append(steps, meta)
    prune_to_config(bounded, tc)

    def timed(directory) -> tuple[float, int]:
        start = time.perf_counter()
        _, _, read = resume(directory, tc)
        return time.perf_counter() - start, read

    t_grown, read_grown = timed(tmp_path / "grown")
    t_bounded, read_bounded = timed(tmp_path / "bounded")
    # both read back only the window (the grown log's history is scanned, not read) ...
    assert read_grown == read_bounded == 20 * -(-400 // 21)
    # ... and the bounded one opens and reads in a fraction of the unbounded one's time
    assert t_bounded < 0.5 * t_grown, (t_bounded, t_grown)


def test_a_resumed_log_counts_what_was_pruned(tmp_path):
    rng = np.random.default_rng(7)
    live = Live(tmp_path / "replay", train_cfg())
    for e in range(80):
        live.add(*make_episode(e, 12, rng))
    again = EpisodeLog(tmp_path / "replay", OBS, ACT)
    assert again.pruned.steps + again.kept_steps == 80 * 12
    assert again.next_index == 80
    # 24 episodes of 13 frames fill 300: 0..55 went, and their actors' last acked seqs are remembered
    assert again.pruned.episodes == 56
    assert again.pruned.producers == {("a0", "i"): 55, ("a1", "i"): 56}
    again.append(*make_episode(80, 12, rng))
    assert (tmp_path / "replay" / "episode_000080.npz").is_file()


def test_a_damaged_prune_record_is_one_line(tmp_path):
    rng = np.random.default_rng(8)
    live = Live(tmp_path / "replay", train_cfg())
    for e in range(40):
        live.add(*make_episode(e, 12, rng))
    (tmp_path / "replay" / PRUNED_FILE).write_text('{"below": 3, "episodes": "x"')
    with pytest.raises(Exception) as err:
        EpisodeLog(tmp_path / "replay", OBS, ACT)
    assert "pruned.json" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("item, value", [
    ("max_mb", "nan"), ("max_mb", "inf"), ("max_mb", "-1"), ("max_mb", "0"), ("max_mb", "1e300"),
    ("max_mb", "'12'x"), ("max_age_steps", "0"), ("max_age_steps", "-5"), ("max_age_steps", "1.5"),
    ("max_age_steps", "1e30"), ("max_age_steps", "[1, 2]"), ("keep_all", "maybe"),
])
def test_bad_bounds_are_one_line_naming_the_key(item, value):
    with pytest.raises(ConfigError) as err:
        load_config("configs/pick_cube.yaml", [f"train.replay_log.{item}={value}"])
    text = str(err.value)
    assert f"train.replay_log.{item}" in text and "\n" not in text, text


def test_good_bounds_load():
    cfg = load_config("configs/pick_cube.yaml",
                      ["train.replay_log.max_mb=512", "train.replay_log.max_age_steps=100000"])
    assert cfg.train.replay_log == ReplayLogConfig(max_mb=512.0, max_age_steps=100_000)
    assert Config().train.replay_log == ReplayLogConfig()


def test_a_prune_that_fails_after_an_append_keeps_the_episode_stored(tmp_path, monkeypatch):
    """The episode is on disk and acknowledged; a prune that hits disk trouble is counted, not raised."""
    from robot_rl.training import replay_log

    rng = np.random.default_rng(9)
    log = EpisodeLog(tmp_path / "replay", OBS, ACT)
    log.auto_bound = train_cfg()
    for e in range(30):
        log.append(*make_episode(e, 20, rng))
    assert log.prunes > 0 and log.prune_failures == 0

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(replay_log, "durable_write", full_disk)
    path = log.append(*make_episode(30, 20, rng))
    assert path.is_file() and log.prune_failures == 1 and log.next_index == 31
