"""The learner's side of the data path: batches -> episodes -> durable files -> back after a crash."""

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.data.demos import load_demos
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.assembler import EpisodeAssembler
from robot_rl.training.remote.codec import decode_batch, encode_batch
from robot_rl.training.replay_log import EpisodeLog

SPACES = syn.make_spaces(state_dim=4, cameras=("front",), image_size=8, action_dim=3)
OBS_SPACE = gym.spaces.Dict({k: gym.spaces.Box(s.low, s.high, s.shape, s.dtype) for k, s in SPACES.observation.items()})
ACT_SPACE = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)


def wire(steps, seq, actor="a", inc="i"):
    """What the learner gets for these steps: the decoded batch (next_obs only on last steps)."""
    return decode_batch(encode_batch(steps, SPACES, actor_id=actor, incarnation=inc, seq=seq), SPACES).steps


def episodes(first, count, length, seed=0, **kw):
    rng = np.random.default_rng(seed)
    return [list(syn.episode(SPACES, e, length, rng, **kw)) for e in range(first, first + count)]


def test_batches_become_episodes_with_next_obs_rebuilt(tmp_path):
    log = EpisodeLog(tmp_path / "replay", OBS_SPACE, ACT_SPACE, task="T")
    asm = EpisodeAssembler(log)
    eps = episodes(0, 2, 7, intervene_every=3)
    flat = [s for ep in eps for s in ep]
    seq = 0
    for i in range(0, len(flat), 3):  # batches of 3 that cross the episode boundary
        chunk = flat[i:i + 3]
        cut = next((j + 1 for j, s in enumerate(chunk) if s.last), len(chunk))
        for part in (chunk[:cut], chunk[cut:]):
            if part:
                seq += 1
                asm.receive("a", "i", seq, wire(part, seq))
    done = asm.take()
    assert [len(e.steps) for e in done] == [7, 7] and asm.received_steps == 14
    for got, want in zip(done, eps):
        for g, w in zip(got.steps, want):
            for key in SPACES.observation:
                np.testing.assert_array_equal(g.next_obs[key], w.next_obs[key])
    # on disk: a valid demo directory holding the same episodes, with their origin
    back = list(log.read_all())
    assert [b.meta["episode_id"] for b in back] == [0, 1] and back[0].meta["actor_id"] == "a"
    demos = load_demos(tmp_path / "replay", OBS_SPACE, ACT_SPACE)
    assert sum(s.intervened for ep in demos for s in ep) == 2 * 3
    np.testing.assert_array_equal(demos[1][-1].next_obs["front"], eps[1][-1].next_obs["front"])


def test_interleaved_actors_resends_and_gaps_are_accounted(tmp_path):
    asm = EpisodeAssembler(EpisodeLog(tmp_path / "r", OBS_SPACE, ACT_SPACE))
    a = episodes(0, 1, 6, seed=1)[0]
    b = episodes(0, 1, 6, seed=2)[0]
    asm.receive("a", "i", 1, wire(a[:3], 1))
    asm.receive("b", "j", 1, wire(b[:4], 1, actor="b", inc="j"))  # same episode id, other actor
    asm.receive("a", "i", 2, wire(a[3:], 2))
    asm.receive("a", "i", 2, wire(a[3:], 2))  # a resend of a logged episode's batch
    asm.receive("b", "j", 2, wire(b[5:], 2, actor="b", inc="j"))  # b's step 4 never came: gap
    assert [len(e.steps) for e in asm.take()] == [6, 1]  # b goes on from after the gap
    assert asm.duplicate_steps == 3 and asm.lost_steps == 4 and asm.open_steps() == 0
    c = episodes(7, 1, 6, seed=3)[0]
    asm.receive("b", "j", 3, wire(c[2:], 3, actor="b", inc="j"))  # an episode whose start was lost
    fragment = asm.take()[0]
    assert [s.step for s in fragment.steps] == [2, 3, 4, 5]
    assert asm.acked() == {("a", "i"): 2, ("b", "j"): 3}


def test_restore_after_a_crash_recognises_held_episodes(tmp_path):
    log = EpisodeLog(tmp_path / "r", OBS_SPACE, ACT_SPACE)
    asm = EpisodeAssembler(log)
    eps = episodes(0, 3, 5)
    for seq, ep in enumerate(eps, start=1):
        asm.receive("a", "i", seq, wire(ep, seq))
    asm.receive("a", "i", 4, wire(episodes(3, 1, 5)[0][:2], 4))  # in flight when the learner died
    (tmp_path / "r" / "episode_000003.tmp.npz").write_bytes(b"half a file")
    # a new learner process
    log2 = EpisodeLog(tmp_path / "r", OBS_SPACE, ACT_SPACE)
    asm2 = EpisodeAssembler(log2)
    logged = list(log2.read_all())
    for item in logged:
        asm2.restore(item.meta, len(item.steps))
    assert len(logged) == 3 and asm2.received_steps == 15 and asm2.acked() == {("a", "i"): 3}
    assert not (tmp_path / "r" / "episode_000003.tmp.npz").exists()
    asm2.receive("a", "i", 3, wire(eps[2], 3))  # resent: already held
    assert asm2.duplicate_steps == 5 and asm2.take() == []
    asm2.receive("a", "i", 4, wire(episodes(3, 1, 5)[0], 4))
    assert log2.next_index == 4 and [e.index for e in asm2.take()] == [3]


def test_log_refuses_other_spaces(tmp_path):
    EpisodeLog(tmp_path / "r", OBS_SPACE, ACT_SPACE)
    other = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    with pytest.raises(Exception, match="action"):
        EpisodeLog(tmp_path / "r", OBS_SPACE, other)
