"""Crash points of durable writes, simulated in process: checkpoints, demos, reward files.

* every crash point of a checkpoint save (one crash, then two in a row) leaves a whole
  checkpoint, a reader always sees a whole one, and resume takes the newest whole one;
* demo episodes, the demo manifest, reward frames and the reward model go through the
  durable helper (fsync of file and folder), and a crash mid-write leaves what was
  written before readable;
* a checkpoint file damaged in place (same size) is a one-line error.

A crash is :class:`Crash` raised before a chosen file-system operation (``os.replace``,
``os.mkdir``, ``os.unlink``, ``shutil.rmtree``, ``os.fsync``), so every point between two
operations is tried. The real ``kill -9`` of ``robot-rl train`` is in test_safety_crash.py.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.data import durable
from robot_rl.data.demos import DemoWriter, load_demos, read_manifest
from robot_rl.data.transition import Step
from robot_rl.training.checkpoint import (
    CheckpointError,
    load_checkpoint,
    read_tree,
    recover_checkpoint,
    save_checkpoint,
)

# --- every crash point of a checkpoint save, in process --------------------------------


class Crash(BaseException):
    """Stands for kill -9: raised before a file-system operation, never caught by the code."""


class CrashAt:
    """Counts the file-system operations of a save; raises :class:`Crash` before operation ``at``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.at, self.count = -1, 0
        monkeypatch.setattr(os, "fsync", self._wrap(lambda fd: None))  # no need to wait for the disk here
        for module, name in ((os, "replace"), (os, "mkdir"), (shutil, "rmtree"), (os, "unlink")):
            monkeypatch.setattr(module, name, self._wrap(getattr(module, name)))

    def _wrap(self, fn):
        def op(*args, **kwargs):
            if self.at >= 0:
                if self.count == self.at:
                    raise Crash
                self.count += 1
            return fn(*args, **kwargs)
        return op

    def save(self, run_dir: Path, n: int, at: int = -1) -> bool:
        """Save checkpoint ``n``, crashing before operation ``at``; True when it ran to the end."""
        self.at, self.count = at, 0
        try:
            save_checkpoint(run_dir, {"n": n}, {"online": {"x": np.full(100 + n, n)}})
            return True
        except Crash:
            return False
        finally:
            self.at = -1


def held(run_dir: Path) -> int | None:
    """The checkpoint a reader sees (whole, or it raises); None when there is none."""
    try:
        state, buffers = load_checkpoint(run_dir, buffer_names=("online",))
    except CheckpointError as err:
        assert "no checkpoint" in str(err), err
        return None
    n = state["n"]
    assert np.array_equal(buffers["online"]["x"], np.full(100 + n, n)), "a checkpoint mixing two saves"
    return n


def test_every_crash_point_of_a_checkpoint_save_leaves_the_newest_whole_checkpoint(tmp_path, monkeypatch):
    crash = CrashAt(monkeypatch)
    assert crash.save(tmp_path / "count", 1) and crash.save(tmp_path / "count", 2, at=10_000)
    ops = crash.count
    assert ops >= 10
    for at in range(ops):
        run_dir = tmp_path / f"once{at}"
        assert crash.save(run_dir, 1)
        assert not crash.save(run_dir, 2, at=at)
        seen = held(run_dir)  # a reader, changing nothing
        assert seen in (1, 2)
        marker_written = (run_dir / "checkpoint.tmp" / durable.MARKER).exists() or seen == 2
        assert recover_checkpoint(run_dir) == run_dir / "checkpoint"  # what the trainer does at --resume
        assert held(run_dir) == (2 if marker_written else 1)
        assert sorted(p.name for p in run_dir.iterdir()) == ["checkpoint"]
        assert crash.save(run_dir, 3) and held(run_dir) == 3
    for at in range(ops):  # the very first save: no checkpoint or a whole one
        run_dir = tmp_path / f"first{at}"
        crash.save(run_dir, 1, at=at)
        assert held(run_dir) in (None, 1)


def test_two_crashes_in_a_row_around_checkpoint_saves_never_lose_the_checkpoint(tmp_path, monkeypatch):
    crash = CrashAt(monkeypatch)
    crash.save(tmp_path / "count", 1)
    crash.save(tmp_path / "count", 2, at=10_000)
    ops = crash.count
    for first in range(ops):
        for second in range(ops):
            run_dir = tmp_path / f"r{first}_{second}"
            crash.save(run_dir, 1)
            crash.save(run_dir, 2, at=first)  # the process dies ...
            crash.save(run_dir, 3, at=second)  # ... the next one dies while saving too
            assert held(run_dir) in (1, 2, 3)
            recover_checkpoint(run_dir)
            assert held(run_dir) in (1, 2, 3)
            assert crash.save(run_dir, 4) and held(run_dir) == 4
            shutil.rmtree(run_dir)


# --- durable writes of demos, reward frames, the reward model ---------------------------


def _episode(n: int, obs_dim: int = 3) -> list[Step]:
    obs = [{"state": np.full(obs_dim, t, np.float32)} for t in range(n + 1)]
    return [Step(episode_id=0, step=t, obs=obs[t], action=np.zeros(2, np.float32), reward=0.0,
                 terminated=t == n - 1, truncated=False, next_obs=obs[t + 1]) for t in range(n)]


SPACES = (gym.spaces.Dict({"state": gym.spaces.Box(-9, 9, (3,), np.float32)}), gym.spaces.Box(-1, 1, (2,), np.float32))


def test_demo_episodes_and_manifest_are_durable_and_a_crash_mid_write_keeps_the_others(tmp_path, monkeypatch):
    synced_dirs: list[Path] = []
    fsync_dir = durable.fsync_dir
    monkeypatch.setattr(durable, "fsync_dir", lambda d: (synced_dirs.append(Path(d)), fsync_dir(d)))
    writer = DemoWriter(tmp_path / "demos", *SPACES, task="T")
    assert synced_dirs == [tmp_path, tmp_path / "demos"]  # the new folder, the manifest
    writer.write_episode(_episode(4))
    writer.write_episode(_episode(5))
    assert synced_dirs == [tmp_path] + [tmp_path / "demos"] * 3  # and each episode

    def torn_savez(f, **arrays):  # a kill while the third episode's bytes go out
        f.write(b"PK\x03\x04 half an episode")
        raise Crash
    monkeypatch.setattr(np, "savez_compressed", torn_savez)
    with pytest.raises(Crash):
        writer.write_episode(_episode(6))
    monkeypatch.undo()
    (tmp_path / "demos" / "episode_000002.npz.tmp").write_bytes(b"PK\x03\x04 torn")  # as kill -9 leaves it
    assert [len(e) for e in load_demos(tmp_path / "demos", *SPACES)] == [4, 5]
    assert read_manifest(tmp_path / "demos")["task"] == "T"
    again = DemoWriter(tmp_path / "demos", *SPACES, append=True)
    assert not list((tmp_path / "demos").glob("*.tmp"))
    assert again.write_episode(_episode(3)).name == "episode_000002.npz"


def test_reward_frames_and_model_are_written_durably(tmp_path, monkeypatch):
    from robot_rl.config.reward import RewardEncoderConfig
    from robot_rl.reward.dataset import FrameWriter, load_frames
    from robot_rl.reward.model import RewardClassifier, read_header, save_classifier

    synced: list[Path] = []
    fsync_dir = durable.fsync_dir
    monkeypatch.setattr(durable, "fsync_dir", lambda d: (synced.append(Path(d)), fsync_dir(d)))
    frames = tmp_path / "frames"
    writer = FrameWriter(frames, cameras=["front"], image_size=(32, 32), task="T", label_source="keys",
                         tags=["recorded"], chunk_frames=4)
    for i in range(6):
        writer.add({"front": np.zeros((32, 32, 3), np.uint8)}, i % 2 == 0)
    writer.close()
    assert synced.count(frames) >= 3 and len(load_frames(frames)) == 6  # meta.json and two chunks
    model = RewardClassifier(["front"], (32, 32), RewardEncoderConfig(), 8, threshold=0.0)
    save_classifier(tmp_path / "reward.pt", model)
    assert synced[-1] == tmp_path and read_header(tmp_path / "reward.pt")[0]["threshold"] == 0.0


def test_a_checkpoint_zip_with_a_bad_member_is_a_one_line_error(tmp_path):
    run_dir = tmp_path / "run"
    save_checkpoint(run_dir, {"n": 1}, {"online": {"x": np.arange(1000)}})
    path = run_dir / "checkpoint" / "online.npz"
    raw = bytearray(path.read_bytes())
    raw[200:260] = b"\x00" * 60  # same size, so only reading it can tell
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="cannot read checkpoint") as err:
        load_checkpoint(run_dir, buffer_names=("online",))
    assert "\n" not in str(err.value)
    assert read_tree(run_dir / "checkpoint" / "state.npz")["n"] == 1
    assert zipfile.is_zipfile(path)
