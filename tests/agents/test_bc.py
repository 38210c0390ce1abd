"""The BC network and its data: chunk targets and masks by hand, the masked loss, shapes and range."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch

from robot_rl.agents.bc import BCNetwork, bc_data, chunk_loss
from robot_rl.config.agent import AgentConfig
from robot_rl.data.transition import Step

OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)})
ACT = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)


def episode(n: int, intervened: list[bool] | None = None) -> list[Step]:
    """Step t observes [t, 0] and executes [t/10, -t/10]."""
    flags = intervened or [False] * n
    return [Step(episode_id=0, step=t, obs={"state": np.array([t, 0], np.float32)},
                 action=np.array([t / 10, -t / 10], np.float32), reward=0.0, terminated=t == n - 1, truncated=False,
                 next_obs={"state": np.array([t + 1, 0], np.float32)}, intervened=flags[t]) for t in range(n)]


def test_chunk_targets_are_the_next_actions_and_the_end_is_masked():
    data = bc_data([(episode(4), True)], chunk=3)
    assert len(data) == 4 and data.episodes == 1
    assert data.obs["state"][:, 0].tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(data.actions[1], [[0.1, -0.1], [0.2, -0.2], [0.3, -0.3]])
    assert data.mask.tolist() == [[True, True, True], [True, True, True], [True, True, False], [True, False, False]]
    np.testing.assert_array_equal(data.actions[3, 1:], 0.0)  # past the end: masked, never invented


def test_in_a_replay_log_only_the_intervened_steps_are_demos():
    flags = [False, True, True, False, True, False]
    data = bc_data([(episode(6, flags), False), (episode(3), False)], chunk=2)
    assert data.obs["state"][:, 0].tolist() == [1, 2, 4]  # the person's steps only
    assert data.episodes == 1  # the episode nobody drove gives nothing
    # step 2's next action (step 3) was the policy's, not the person's: masked
    assert data.mask.tolist() == [[True, True], [True, False], [True, False]]
    np.testing.assert_allclose(data.actions[0], [[0.1, -0.1], [0.2, -0.2]])


def succeeded(steps: list[Step], at: int) -> list[Step]:
    """The same episode with ``success`` set from step ``at`` on."""
    return [dataclasses.replace(s, success=s.step >= at) for s in steps]


def test_successful_only_leaves_out_the_episodes_that_never_succeed_and_counts_them():
    episodes = [(succeeded(episode(4), at=3), True), (episode(5), True),
                (succeeded(episode(6, [False, True, True, False, False, False]), at=5), False),
                (episode(3, [True] * 3), False)]
    data = bc_data(episodes, chunk=1, successful_only=True)
    assert (data.episodes, data.failed_left_out) == (2, 2)
    assert data.obs["state"][:, 0].tolist() == [0, 1, 2, 3, 1, 2]  # the whole demo, then the person's steps
    every = bc_data(episodes, chunk=1)
    assert (every.episodes, every.failed_left_out, len(every)) == (4, 0, 4 + 5 + 2 + 3)


def test_no_demo_step_gives_no_rows():
    data = bc_data([(episode(3), False)], chunk=4)
    assert len(data) == 0 and data.episodes == 0


def test_chunk_loss_ignores_masked_entries_exactly():
    predicted = torch.tensor([[[0.5, 0.5], [9.0, 9.0]]])
    target = torch.tensor([[[0.0, 1.0], [0.0, 0.0]]])
    mask = torch.tensor([[True, False]])
    assert float(chunk_loss(predicted, target, mask)) == pytest.approx(0.25)
    assert float(chunk_loss(predicted, target, torch.zeros_like(mask))) == 0.0  # nothing to learn: no NaN


@pytest.mark.parametrize("chunk", [1, 5])
def test_network_predicts_chunks_inside_the_box_even_for_huge_inputs(chunk):
    torch.manual_seed(0)
    net = BCNetwork(AgentConfig(hidden_dims=(16,)), OBS, ACT, chunk=chunk)
    for value in (0.0, 1e6, -1e30):
        out = net.predict({"state": np.full(2, value, np.float32)})
        assert out.shape == (chunk, 2) and out.dtype == np.float32
        assert np.isfinite(out).all() and np.all(np.abs(out) <= 1.0)


def test_network_refuses_a_chunk_below_one():
    with pytest.raises(ValueError):
        BCNetwork(AgentConfig(hidden_dims=(16,)), OBS, ACT, chunk=0)


def test_a_few_hundred_steps_fit_a_chunked_linear_expert():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states = rng.uniform(-1, 1, (512, 2)).astype(np.float32)
    # the "expert" at step t plays 0.5 * state, then the same shifted by 0.1 per step ahead
    targets = np.stack([0.5 * states + 0.1 * k for k in range(3)], axis=1).astype(np.float32)
    net = BCNetwork(AgentConfig(hidden_dims=(64, 64)), OBS, ACT, chunk=3)
    net.encoder.update_normalizer({"state": states})
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    obs = {"state": torch.as_tensor(states)}
    mask = torch.ones(512, 3, dtype=torch.bool)
    first = None
    for _ in range(300):
        loss = chunk_loss(net(obs), torch.as_tensor(targets), mask)
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss) < 0.01 * first
    np.testing.assert_allclose(net.predict({"state": np.array([0.4, -0.2], np.float32)}),
                               [[0.2, -0.1], [0.3, 0.0], [0.4, 0.1]], atol=0.05)
