"""A crash in the middle of pruning the replay log loses nothing the prune keeps, and counts right.

In process, a crash (:class:`Crash`, standing for kill -9) is raised before each file-system
operation of a prune in turn (the record's write and rename, every unlink, the folder's
fsync), so every point between two operations is tried; then the real thing: a process
that prunes slowly is killed with SIGKILL while it deletes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.data.demos import episode_files, episode_index
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.replay_log import EpisodeLog

SPACES = syn.make_spaces(state_dim=5, action_dim=2)
OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)})
ACT = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
EPISODES, LENGTH, KEEP_FRAMES = 30, 9, 100  # 10 frames each: the newest 10 are the online window
HUMAN = {4, 11, 17}  # episodes with intervened steps: never pruned


class Crash(BaseException):
    """Stands for kill -9: raised before a file-system operation, never caught by the code."""


def fill(directory) -> dict[int, bytes]:
    """Write the episodes; returns each file's bytes."""
    log = EpisodeLog(directory, OBS, ACT)
    rng = np.random.default_rng(0)
    for e in range(EPISODES):
        steps = list(syn.episode(SPACES, e, LENGTH, rng, intervene_every=3 if e in HUMAN else 0))
        log.append(steps, {"actor_id": "a", "incarnation": "i", "episode_id": e, "last_seq": e + 1})
    return {episode_index(p): p.read_bytes() for p in episode_files(directory)}


def check_after_crash(directory, written: dict[int, bytes]) -> None:
    """Reopened after the crash: every kept episode whole and unchanged, the counts add up,
    and a prune to the same bound ends where an uninterrupted one would."""
    log = EpisodeLog(directory, OBS, ACT)
    kept_must = set(range(EPISODES - 10, EPISODES)) | HUMAN
    on_disk = {episode_index(p): p.read_bytes() for p in episode_files(directory)}
    for index in kept_must:
        assert on_disk[index] == written[index], index
    assert log.pruned.steps + log.kept_steps == EPISODES * LENGTH
    assert log.pruned.episodes + log.kept_episodes == EPISODES
    log.prune(KEEP_FRAMES)
    assert {episode_index(p) for p in episode_files(directory)} == kept_must
    assert log.pruned.steps == (EPISODES - len(kept_must)) * LENGTH
    assert [e.index for e in log.read_all()] == sorted(kept_must)  # all readable


def test_a_crash_before_any_operation_of_a_prune_loses_nothing_kept(tmp_path, monkeypatch):
    reference = tmp_path / "reference"
    written = fill(reference)
    state = {"at": -1, "count": 0}

    def wrap(fn):
        def op(*args, **kwargs):
            if state["at"] >= 0:
                if state["count"] == state["at"]:
                    raise Crash
                state["count"] += 1
            return fn(*args, **kwargs)
        return op

    monkeypatch.setattr(os, "fsync", wrap(lambda fd: None))
    for name in ("replace", "unlink", "open"):
        monkeypatch.setattr(os, name, wrap(getattr(os, name)))
    points = 0
    for at in range(200):
        directory = tmp_path / f"run{at}"
        os.makedirs(directory)
        for index, data in written.items():
            (directory / f"episode_{index:06d}.npz").write_bytes(data)
        (directory / "manifest.json").write_bytes((reference / "manifest.json").read_bytes())
        log = EpisodeLog(directory, OBS, ACT)
        state.update(at=at, count=0)
        try:
            log.prune(KEEP_FRAMES)
            finished = True
        except Crash:
            finished = False
        finally:
            state["at"] = -1
        check_after_crash(directory, written)
        if finished:
            break
        points += 1
    assert points > EPISODES - 10 - len(HUMAN)  # every unlink was a crash point, and the run then finished


def test_kill_9_while_a_prune_deletes_loses_nothing_kept(tmp_path):
    written = fill(tmp_path / "replay")
    marker = tmp_path / "deleting"
    child = textwrap.dedent(f"""
        import os, sys, time
        import gymnasium as gym, numpy as np
        from robot_rl.training import replay_log
        real = replay_log._unlink
        def slow(path):
            open({str(marker)!r}, "a").close()
            time.sleep(0.2)
            real(path)
        replay_log._unlink = slow
        OBS = gym.spaces.Dict({{"state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)}})
        ACT = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        replay_log.EpisodeLog({str(tmp_path / "replay")!r}, OBS, ACT).prune({KEEP_FRAMES})
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None, "the pruning process ended before deleting"
            assert time.monotonic() < deadline, "the pruning process never started deleting"
            time.sleep(0.01)
        time.sleep(0.5)  # two or three files gone, a dozen to go
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    left = {episode_index(p) for p in episode_files(tmp_path / "replay")}
    assert len(left) > EPISODES - (EPISODES - 10 - len(HUMAN)), "the kill came after the prune ended"
    assert len(left) < EPISODES, "the kill came before the prune deleted anything"
    check_after_crash(tmp_path / "replay", written)


@pytest.mark.parametrize("garbage", [b"", b"not json", b'{"below": 5}', b'{"below": "x", "episodes": 1, '
                                                                          b'"steps": 1, "bytes": 1}'])
def test_a_damaged_prune_record_refuses_to_open_and_deletes_nothing(tmp_path, garbage):
    fill(tmp_path / "replay")
    (tmp_path / "replay" / "pruned.json").write_bytes(garbage)
    with pytest.raises(Exception) as err:
        EpisodeLog(tmp_path / "replay", OBS, ACT)
    assert "pruned.json" in str(err.value) and "\n" not in str(err.value)
    assert len(episode_files(tmp_path / "replay")) == EPISODES
