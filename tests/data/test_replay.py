"""Replay: frames stored once, next observations rebuilt across episode ends and wrap-around."""

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.data.replay import ReplayBuffer, gather_mixed, plan_mixed, sample_mixed
from robot_rl.data.transition import Step

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

OBS_SPACE = gym.spaces.Dict({
    "state": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32),
    "front": gym.spaces.Box(0, 255, (4, 4, 3), np.uint8),
})


def frame(value: float) -> dict:
    """An observation that encodes ``value`` in every key, so it can be traced through the buffer."""
    return {"state": np.array([value, -value], np.float32), "front": np.full((4, 4, 3), int(value) % 256, np.uint8)}


def episode(episode_id: int, length: int, start: float, terminated: bool = True) -> list[Step]:
    """Steps whose obs value is ``start + t`` and whose action encodes the same value."""
    steps = []
    for t in range(length):
        last = t == length - 1
        steps.append(Step(episode_id=episode_id, step=t, obs=frame(start + t), action=np.array([start + t], np.float32),
                          reward=float(last and terminated), terminated=last and terminated,
                          truncated=last and not terminated, next_obs=frame(start + t + 1),
                          success=last and terminated))
    return steps


def check_consistent(batch: dict) -> None:
    """Every sampled transition's obs is its action's value and next_obs is the value + 1.

    A terminated transition's next_obs is never used (no bootstrap), so replay does not
    store it and hands back the obs itself.
    """
    a = batch["action"][:, 0]
    expected_next = a + 1 - batch["terminated"]
    np.testing.assert_array_equal(batch["obs"]["state"][:, 0], a)
    np.testing.assert_array_equal(batch["next_obs"]["state"][:, 0], expected_next)
    np.testing.assert_array_equal(batch["next_obs"]["front"][:, 0, 0, 0], expected_next.astype(int) % 256)


def test_each_frame_is_stored_once_and_next_obs_is_rebuilt():
    buf = ReplayBuffer(OBS_SPACE, 1, capacity=100)
    buf.add_episode(episode(0, 5, start=0))
    buf.add_episode(episode(1, 3, start=100, terminated=False))
    assert len(buf) == 8
    # one extra frame for the truncated episode's final next_obs; none after a termination
    assert buf.frames_written == 8 + 1
    batch = buf.sample(500, np.random.default_rng(0))
    check_consistent(batch)
    assert set(batch["action"][:, 0]) == {0, 1, 2, 3, 4, 100, 101, 102}
    ends = batch["action"][:, 0] == 4
    assert np.all(batch["terminated"][ends] == 1) and np.all(batch["terminated"][~ends] == 0)
    trunc = batch["action"][:, 0] == 102
    assert np.all(batch["truncated"][trunc] == 1) and np.all(batch["terminated"][trunc] == 0)


def test_a_step_waiting_for_its_successor_is_not_sampled():
    buf = ReplayBuffer(OBS_SPACE, 1, capacity=50)
    steps = episode(0, 4, start=10)
    buf.add(steps[0])
    assert len(buf) == 0  # its next frame is not there yet
    buf.add(steps[1])
    assert len(buf) == 1
    assert buf.sample(20, np.random.default_rng(0))["action"][:, 0].tolist() == [10.0] * 20
    # the episode is cut off (actor restarted): the dangling step never becomes sampleable
    buf.add_episode(episode(7, 2, start=50))
    check_consistent(buf.sample(200, np.random.default_rng(1)))
    assert set(buf.sample(200, np.random.default_rng(1))["action"][:, 0]) == {10.0, 50.0, 51.0}


def test_interleaved_episodes_from_several_actors_keep_their_own_successors():
    buf = ReplayBuffer(OBS_SPACE, 1, capacity=100)
    a = episode(0, 6, start=0, terminated=False)
    b = episode(0, 4, start=50)  # same episode id, another actor
    order = [(a[0], 1), (b[0], 2), (a[1], 1), (a[2], 1), (b[1], 2), (b[2], 2), (a[3], 1), (b[3], 2), (a[4], 1),
             (a[5], 1)]
    for step, source in order:
        buf.add(step, source=source)
    assert len(buf) == 10
    check_consistent(buf.sample(500, np.random.default_rng(0)))


def test_wrap_around_overwrites_the_oldest_transitions_only():
    buf = ReplayBuffer(OBS_SPACE, 1, capacity=16)
    for i in range(10):  # odd episodes time out (5 frames), even ones terminate (4 frames)
        buf.add_episode(episode(i, 4, start=10 * i, terminated=i % 2 == 0))
    batch = buf.sample(2000, np.random.default_rng(0))
    check_consistent(batch)
    values = set(batch["action"][:, 0].astype(int))
    # the last 16 frames: episodes 9, 8, 7 whole (14 frames) and the last 2 frames of episode 6
    assert values == {62, 63} | {v for i in (7, 8, 9) for v in range(10 * i, 10 * i + 4)}
    assert len(buf) == 14


def test_mixed_sampling_takes_the_demo_fraction_from_demos():
    online, demo = ReplayBuffer(OBS_SPACE, 1, 100), ReplayBuffer(OBS_SPACE, 1, 100)
    online.add_episode(episode(0, 10, start=0))
    demo.add_episode(episode(0, 10, start=200))
    batch = sample_mixed(online, demo, 256, 0.5, np.random.default_rng(0))
    from_demo = batch["action"][:, 0] >= 200
    assert from_demo.sum() == 128
    check_consistent(batch)
    empty = ReplayBuffer(OBS_SPACE, 1, 100)
    assert np.all(sample_mixed(online, empty, 64, 0.5, np.random.default_rng(0))["action"][:, 0] < 200)
    assert np.all(sample_mixed(empty, demo, 64, 0.5, np.random.default_rng(0))["action"][:, 0] >= 200)


def test_two_128px_cameras_cost_at_most_100_kb_per_transition():
    space = gym.spaces.Dict({
        "state": gym.spaces.Box(-np.inf, np.inf, (19,), np.float32),
        "front": gym.spaces.Box(0, 255, (128, 128, 3), np.uint8),
        "wrist": gym.spaces.Box(0, 255, (128, 128, 3), np.uint8),
    })
    buf = ReplayBuffer(space, 4, capacity=300)
    images = 2 * 128 * 128 * 3
    assert images <= buf.bytes_per_slot() < images + 200
    assert buf.bytes_per_transition(episode_length=100) <= 100_000  # even when every episode times out
    # measured from content: a 50-step episode that times out and one that succeeds
    for e, (terminated, truncated) in enumerate([(False, True), (True, False)]):
        for t in range(50):
            obs = {k: np.zeros(s.shape, s.dtype) for k, s in space.spaces.items()}
            buf.add(Step(e, t, obs, np.zeros(4, np.float32), 0.0, terminated and t == 49, truncated and t == 49, obs))
    assert buf.bytes_per_transition() == pytest.approx(buf.bytes_per_slot() * 101 / 100)
    assert buf.bytes_per_transition() <= 100_000
    assert buf.frames["front"].dtype == np.uint8


def test_state_dict_round_trip_is_exact(tmp_path):
    buf = ReplayBuffer(OBS_SPACE, 1, capacity=16)
    for i in range(5):
        buf.add_episode(episode(i, 4, start=10 * i))
    buf.add(episode(9, 3, start=500)[0])  # leave a step pending
    buf.save(tmp_path / "b.npz")
    copy = ReplayBuffer(OBS_SPACE, 1, capacity=16)
    copy.load(tmp_path / "b.npz")
    a, b = buf.sample(64, np.random.default_rng(3)), copy.sample(64, np.random.default_rng(3))
    for key in ("action", "reward", "terminated"):
        np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_array_equal(a["next_obs"]["front"], b["next_obs"]["front"])
    copy.add(episode(9, 3, start=500)[1])  # the pending step continues after the reload
    assert 500.0 in copy.sample(400, np.random.default_rng(0))["action"][:, 0]
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(OBS_SPACE, 1, capacity=32).load(tmp_path / "b.npz")


def test_n_step_transitions_sum_rewards_and_stop_at_episode_ends():
    buf = ReplayBuffer(OBS_SPACE, 1, capacity=100)
    buf.add_episode(episode(0, 5, start=0))  # terminates: reward 1 on its last step (value 4)
    buf.add_episode(episode(1, 4, start=100, terminated=False))  # times out after value 103
    slots = np.flatnonzero(buf.valid)
    values = buf.action[slots, 0]
    batch = buf.gather(slots, n_step=3, discount=0.5)
    by_value = {v: i for i, v in enumerate(values)}
    row = by_value[0.0]  # 0 -> 1 -> 2, next obs is 3, no reward yet
    assert batch["next_obs"]["state"][row, 0] == 3 and batch["reward"][row] == 0
    assert batch["steps"][row] == 3 and batch["terminated"][row] == 0
    row = by_value[3.0]  # 3 -> 4 terminates: stops after two steps
    assert batch["reward"][row] == 0.5 and batch["terminated"][row] == 1 and batch["steps"][row] == 2
    row = by_value[102.0]  # 102 -> 103 times out: bootstrap from the final frame (value 104)
    assert batch["next_obs"]["state"][row, 0] == 104 and batch["steps"][row] == 2
    assert batch["terminated"][row] == 0 and batch["truncated"][row] == 1
    one = buf.gather(slots)  # n_step 1 is the plain transition
    np.testing.assert_array_equal(one["next_obs"]["state"][:, 0], values + 1 - one["terminated"])
    np.testing.assert_array_equal(one["steps"], np.ones(len(slots), np.float32))


@pytest.mark.parametrize("n_step", [1, 3])
def test_planning_then_gathering_into_given_arrays_is_sampling(n_step):
    """What the prefetch threads do: draw the slots first, copy later into arrays the caller allocates."""
    online, demo = ReplayBuffer(OBS_SPACE, 1, 100), ReplayBuffer(OBS_SPACE, 1, 100)
    online.add_episode(episode(0, 10, start=0))
    online.add_episode(episode(1, 6, start=50, terminated=False))
    demo.add_episode(episode(0, 10, start=200))
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    allocated = []

    def alloc(shape, dtype):
        allocated.append((shape, np.dtype(dtype)))
        return np.full(shape, 77, dtype)  # garbage that must be overwritten everywhere

    for fraction in (0.5, 0.0, 1.0):
        expected = sample_mixed(online, demo, 64, fraction, rng_a, n_step=n_step, discount=0.9)
        plan = plan_mixed(online, demo, 64, fraction, rng_b)
        assert [len(slots) for _, slots in plan] == ([32, 32] if fraction == 0.5 else [64])
        got = gather_mixed(plan, n_step=n_step, discount=0.9, alloc=alloc)
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, dict):
                for k in value:
                    assert got[key][k].dtype == value[k].dtype
                    np.testing.assert_array_equal(got[key][k], value[k])
            else:
                np.testing.assert_array_equal(got[key], value)
        if n_step == 1:
            check_consistent(got)
    assert rng_a.bit_generator.state == rng_b.bit_generator.state  # planning draws exactly what sampling draws
    # only the frames (obs and next obs, per camera and state) come from alloc: 4 arrays per batch
    assert sorted(allocated[:4], key=str) == sorted([((64, 2), np.dtype(np.float32)),
                                                   ((64, 4, 4, 3), np.dtype(np.uint8))] * 2, key=str)
    assert len(allocated) == 12


def test_planning_from_empty_buffers_is_an_error():
    empty = ReplayBuffer(OBS_SPACE, 1, 100)
    with pytest.raises(ValueError, match="cannot sample from an empty replay buffer"):
        plan_mixed(empty, empty, 8, 0.5, np.random.default_rng(0))
