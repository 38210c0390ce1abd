"""A resumed learner's state statistics equal those of a learner that never stopped.

The policy standardises its state input with running statistics (count, mean, M2) that
the checkpoint holds. A learner killed after a checkpoint, with episodes logged after it
(some taken into training, some still waiting), resumes with exactly the statistics of an
uninterrupted run over the same steps: the checkpoint says which replay episodes it counts
(``stats_below``), the resume adds the rest, even those older than the online window, which
the log keeps until the next checkpoint. A checkpoint without that record re-counts the
window as before, with one warning; a malformed one is a one-line error. Also the trainer:
a ``robot-rl train`` run killed after a checkpoint resumes with the uninterrupted statistics.

State only, small networks: each test takes seconds.
"""

from __future__ import annotations

import logging
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from robot_rl.config import Config
from robot_rl.config.agent import TrainConfig
from robot_rl.data.demos import episode_files, episode_index
from robot_rl.data.transition import Step
from robot_rl.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from robot_rl.training.remote.learner_process import LearnerProcess

pytestmark = pytest.mark.usefixtures("one_torch_thread")

OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)})
ACT = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
LENGTH = 6  # steps per episode; 7 buffer frames each (truncated episodes keep their final frame)


class SpacesOnly(gym.Env):
    """The learner needs the spaces only (no evaluation here)."""

    observation_space, action_space = OBS, ACT


def make_cfg(run_dir: Path) -> Config:
    cfg = Config()
    cfg.agent.hidden_dims = (16,)
    # an online window of 3 episodes: most of what arrives after the checkpoint is older than it
    cfg.train = TrainConfig(total_env_steps=10_000, utd_ratio=1.0, batch_size=8, learning_starts=10**6,
                            scripted_demos=0, eval_every=0, eval_episodes=0, checkpoint_every=0, progress=False,
                            run_dir=str(run_dir), replay_capacity=21, demo_capacity=50)
    return cfg


def open_learner(cfg: Config, resume: bool = False) -> LearnerProcess:
    return LearnerProcess(cfg, "tok", resume=resume, env_fn=lambda c: SpacesOnly(), evaluate=False,
                          tensorboard=False)


def stop(process: LearnerProcess) -> None:
    """Let go of the process's files without saving anything (as a kill would)."""
    process.metrics.close()
    process.learner.close()


def episode(episode_id: int, rng: np.random.Generator, scale: float) -> list[Step]:
    """One episode whose states sit around ``scale`` (so counting one twice moves the mean)."""
    frames = [{"state": (scale + scale * rng.standard_normal(5)).astype(np.float32)} for _ in range(LENGTH + 1)]
    return [Step(episode_id=episode_id, step=t, obs=frames[t], action=rng.uniform(-1, 1, 3).astype(np.float32),
                 reward=0.0, terminated=False, truncated=t == LENGTH - 1, next_obs=frames[t + 1],
                 intervened=episode_id % 3 == 1 and t < 2, success=False, grasp_penalty=0.0)
            for t in range(LENGTH)]


def send(process: LearnerProcess, episodes: list[list[Step]], seq: int) -> int:
    """Each episode as one actor batch, as the server hands it over (logged durably on arrival)."""
    for steps in episodes:
        seq += 1
        process.assembler.receive("a", "i", seq, steps)
    return seq


def take(process: LearnerProcess) -> None:
    """Train on the episodes waiting (logged, not yet in replay), oldest first, as the learner's loop does."""
    for item in process.assembler.take():
        process._ingest(item)


def statistics(process: LearnerProcess) -> tuple[float, np.ndarray, np.ndarray]:
    norm = process.learner.encoder.normalizer
    return float(norm.count), norm.mean.numpy().copy(), (norm.m2 / (norm.count - 1)).numpy().copy()


def assert_same_statistics(got: tuple, want: tuple) -> None:
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)


@pytest.fixture
def killed_after_checkpoint(tmp_path):
    """A learner that trained on 4 episodes, checkpointed, then logged 6 more (taking 4) and was killed.

    Returns its config, the steps it received in order, and the uninterrupted run's statistics
    (the same process, after taking the 2 episodes still waiting when it was killed)."""
    cfg = make_cfg(tmp_path / "run")
    rng = np.random.default_rng(0)
    sent = [episode(i, rng, scale=1.0 + i) for i in range(10)]
    first = open_learner(cfg)
    seq = send(first, sent[:4], 0)
    take(first)
    first.save()
    seq = send(first, sent[4:8], seq)
    take(first)
    send(first, sent[8:], seq)  # killed here: 6 episodes logged after the checkpoint, 2 of them never taken
    take(first)  # the uninterrupted run goes on with the same data (ingesting writes nothing a resume reads)
    stop(first)
    return cfg, [s for steps in sent for s in steps], statistics(first)


def test_a_resumed_learner_has_the_statistics_of_one_that_never_stopped(killed_after_checkpoint):
    cfg, steps, straight = killed_after_checkpoint
    states = np.stack([s.obs["state"] for s in steps]).astype(np.float64)
    # the uninterrupted run counted every step received once (no demos here)
    assert straight[0] == len(steps) == 60
    np.testing.assert_allclose(straight[1], states.mean(0), rtol=1e-9)
    np.testing.assert_allclose(straight[2], states.var(0, ddof=1), rtol=1e-9)

    resumed = open_learner(cfg, resume=True)
    assert resumed.received_steps == 60 and resumed.learner.env_steps == 60
    # the episodes logged after the checkpoint were all kept, though most are older than the online
    # window; of those before it only the one holding interventions was
    kept = [episode_index(p) for p in episode_files(Path(cfg.train.run_dir) / "replay")]
    assert kept == [1, 4, 5, 6, 7, 8, 9] and resumed.replay.pruned.steps == 3 * LENGTH
    assert_same_statistics(statistics(resumed), straight)
    assert len(resumed.learner.online) == 3 * LENGTH  # the window itself is what it was

    # resumed again right away (a crash before its next checkpoint): still the same figures
    stop(resumed)
    again = open_learner(cfg, resume=True)
    assert_same_statistics(statistics(again), straight)
    # and from a checkpoint written by a resumed learner: nothing is counted anew
    again.save()
    stop(again)
    third = open_learner(cfg, resume=True)
    assert_same_statistics(statistics(third), straight)
    stop(third)


def test_new_episodes_after_a_resume_are_counted_once(killed_after_checkpoint, tmp_path):
    cfg, steps, _ = killed_after_checkpoint
    resumed = open_learner(cfg, resume=True)
    rng = np.random.default_rng(1)
    more = [episode(i, rng, scale=-3.0) for i in range(10, 13)]
    send(resumed, more, 100)
    take(resumed)
    resumed.save()
    want = statistics(resumed)
    states = np.stack([s.obs["state"] for s in steps + [s for e in more for s in e]]).astype(np.float64)
    assert want[0] == 78
    np.testing.assert_allclose(want[1], states.mean(0), rtol=1e-9)
    stop(resumed)
    assert_same_statistics(statistics(open_learner(cfg, resume=True)), want)


def test_a_checkpoint_without_the_record_recounts_the_window_with_one_warning(killed_after_checkpoint, caplog):
    cfg, _, straight = killed_after_checkpoint
    run = Path(cfg.train.run_dir)
    state, _ = load_checkpoint(run, buffer_names=())
    counted_at_save = float(state["agent"]["policy"]["encoder.normalizer.count"])
    del state["stats_below"]  # as an older version wrote it
    save_checkpoint(run, state)
    with caplog.at_level(logging.WARNING):
        resumed = open_learner(cfg, resume=True)
    warnings = [r.getMessage() for r in caplog.records if "stats_below" in r.getMessage()
                or "state statistics" in r.getMessage()]
    assert len(warnings) == 1 and "\n" not in warnings[0] and "checkpoint" in warnings[0]
    # as before the record existed: the online window read back is counted again
    assert counted_at_save == 24
    assert float(resumed.learner.encoder.normalizer.count) == 24 + len(resumed.learner.online) == 42
    assert float(resumed.learner.encoder.normalizer.count) != straight[0]
    stop(resumed)


@pytest.mark.parametrize("value", [-1, 10**30, 11, float("nan"), float("inf"), 2.0, "3", True, None, [1]])
def test_a_malformed_record_is_a_one_line_error_naming_the_checkpoint(killed_after_checkpoint, value):
    cfg, _, _ = killed_after_checkpoint
    run = Path(cfg.train.run_dir)
    state, _ = load_checkpoint(run, buffer_names=())
    state["stats_below"] = value
    save_checkpoint(run, state)
    before = sorted((p.name, p.stat().st_size) for p in run.rglob("*") if p.is_file())
    with pytest.raises(CheckpointError) as err:
        open_learner(cfg, resume=True)
    message = str(err.value)
    assert "\n" not in message and str(run / "checkpoint") in message and f"stats_below={value!r}" in message
    assert sorted((p.name, p.stat().st_size) for p in run.rglob("*") if p.is_file()) == before  # nothing lost


def test_the_record_survives_fast_alternating_saves_and_arrivals(tmp_path):
    """A checkpoint after every episode, one taken late: each resume counts every step once."""
    cfg = make_cfg(tmp_path / "run")
    rng = np.random.default_rng(2)
    process = open_learner(cfg)
    seq = 0
    for i in range(8):
        seq = send(process, [episode(i, rng, scale=10.0 ** (i % 3))], seq)  # wildly different scales
        if i % 2 == 0:  # every other episode waits past a save, to be taken with the next one
            take(process)
        process.save()
    take(process)  # the uninterrupted run; the resume starts from the last save
    stop(process)
    want = statistics(process)
    assert want[0] == 48
    resumed = open_learner(cfg, resume=True)
    assert_same_statistics(statistics(resumed), want)
    stop(resumed)


def test_a_resumed_trainer_has_the_statistics_of_one_that_never_stopped(tmp_path, point_env_fn,
                                                                           point_expert_cls, monkeypatch):
    """``robot-rl train``: its checkpoint holds the buffers and the logged-episode count; a resume
    re-counts only the episodes logged after it."""
    from robot_rl.training.trainer import Trainer

    def make(resume: bool) -> Trainer:
        cfg = Config()
        cfg.agent.hidden_dims = (16,)
        cfg.train = TrainConfig(total_env_steps=90, utd_ratio=0.5, batch_size=8, learning_starts=30, random_steps=30,
                                scripted_demos=2, eval_every=0, eval_episodes=0, checkpoint_every=30,
                                progress=False, run_dir=str(tmp_path / "train"), replay_capacity=200,
                                demo_capacity=200)
        return Trainer(cfg, resume=resume, env_fn=lambda c: point_env_fn(),
                       source_fn=lambda env, c: point_expert_cls(env), tensorboard=False)

    straight = make(resume=False)
    real_save = Trainer.save
    saved_at: list[int] = []

    def first_save_only(self):  # killed after its first checkpoint: later ones never happen
        if not saved_at:
            saved_at.append(self.learner.env_steps)
            return real_save(self)
        return None

    monkeypatch.setattr(Trainer, "save", first_save_only)
    straight.run()
    straight.close()
    monkeypatch.setattr(Trainer, "save", real_save)
    assert 30 <= saved_at[0] < straight.learner.env_steps
    resumed = make(resume=True)
    assert resumed.learner.env_steps == straight.learner.env_steps
    norm_a, norm_b = straight.learner.encoder.normalizer, resumed.learner.encoder.normalizer
    assert float(norm_b.count) == float(norm_a.count) > straight.learner.env_steps  # demos counted once too
    for name in ("mean", "m2"):
        torch.testing.assert_close(getattr(norm_b, name), getattr(norm_a, name), rtol=1e-12, atol=1e-12)
    resumed.close()
