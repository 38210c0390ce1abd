"""The agent's building blocks: ensemble, target subset, tanh-Gaussian, temperature, augmentation."""

import math

import numpy as np
import pytest
import torch
from torch import distributions as D

from robot_rl.agents.augment import random_shift
from robot_rl.agents.distributions import TanhNormal
from robot_rl.agents.ensemble import CriticEnsemble, subsample_min
from robot_rl.agents.gripper import CLOSE, OPEN, STAY, gripper_index
from robot_rl.agents.networks import EnsembleLayerNorm
from robot_rl.agents.temperature import Temperature

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread


def test_ensemble_members_are_independent_critics_with_layer_norm():
    torch.manual_seed(0)
    critic = CriticEnsemble(feature_dim=5, action_dim=2, hidden_dims=(16, 16), num_critics=10)
    assert any(isinstance(m, EnsembleLayerNorm) for m in critic.modules())
    q = critic(torch.randn(7, 5), torch.randn(7, 2))
    assert q.shape == (10, 7)
    assert q.std(dim=0).min() > 0  # different initialisations give different values
    # member 3's output depends only on member 3's weights
    x, a = torch.randn(4, 5), torch.randn(4, 2)
    before = critic(x, a).detach()
    with torch.no_grad():
        critic.q.net[0].weight[3].add_(torch.randn(5 + 2, 16))
    after = critic(x, a).detach()
    changed = (before - after).abs().amax(dim=1) > 1e-6
    assert changed.tolist() == [i == 3 for i in range(10)]


def test_no_layer_norm_when_disabled():
    critic = CriticEnsemble(5, 2, (16,), num_critics=2, layer_norm=False)
    assert not any(isinstance(m, EnsembleLayerNorm) for m in critic.modules())


def test_subsample_min_takes_min_over_a_random_pair():
    q = torch.arange(10.0).unsqueeze(1).repeat(1, 3)  # member i has value i
    g = torch.Generator().manual_seed(0)
    seen = set()
    for _ in range(50):
        v = subsample_min(q, 2, g)
        assert torch.all(v == v[0])
        seen.add(float(v[0]))
    assert len(seen) > 3  # the subset changes from call to call
    assert max(seen) <= 8.0  # a min over two members is never the largest member
    assert torch.equal(subsample_min(q, 10), torch.zeros(3))  # full set: plain min
    keys = torch.tensor([0.5, -1.0, 2.0, 0.1, 3.0, 1.0, 1.5, 0.7, 0.9, -0.2])  # drawn by the caller
    assert torch.equal(subsample_min(q, 3, keys=keys), torch.full((3,), 1.0))  # members 1, 9, 3: min is 1
    assert torch.equal(subsample_min(q[[4, 6]], 1, keys=torch.tensor([0.3, -0.3])), torch.full((3,), 6.0))


def test_tanh_normal_log_prob_matches_torch_transformed_distribution():
    torch.manual_seed(0)
    mean, log_std = torch.randn(6, 3), torch.randn(6, 3) * 0.3
    action, log_prob = TanhNormal(mean, log_std).rsample_with_log_prob(torch.Generator().manual_seed(1))
    reference = D.TransformedDistribution(D.Normal(mean, log_std.exp()), [D.TanhTransform(cache_size=1)])
    expected = reference.log_prob(action.clamp(-1 + 1e-6, 1 - 1e-6)).sum(-1)
    assert torch.allclose(log_prob, expected, atol=1e-3)
    assert torch.all(action.abs() < 1)
    assert torch.allclose(TanhNormal(mean, log_std).mode(), torch.tanh(mean))


def test_temperature_moves_toward_target_entropy():
    temp = Temperature(0.1)
    opt = torch.optim.SGD(temp.parameters(), lr=0.1)
    opt.zero_grad()
    temp.loss(torch.tensor([-5.0]), target_entropy=-1.0).backward()  # entropy below target
    opt.step()
    assert temp().item() > 0.1
    opt.zero_grad()
    temp.loss(torch.tensor([5.0]), target_entropy=-1.0).backward()
    before = temp().item()
    opt.step()
    assert temp().item() < before
    assert math.isclose(Temperature(0.5)().item(), 0.5, rel_tol=1e-6)


def test_random_shift_moves_images_by_at_most_pad_pixels():
    img = torch.zeros(8, 3, 16, 16)
    img[:, :, 8, 8] = 1.0  # one bright pixel in the middle
    g = torch.Generator().manual_seed(0)
    out = random_shift(img, pad=2, generator=g)
    assert out.shape == img.shape
    positions = [tuple(torch.nonzero(out[i, 0])[0].tolist()) for i in range(8)]
    assert all(6 <= r <= 10 and 6 <= c <= 10 for r, c in positions)
    assert len(set(positions)) > 1
    assert torch.equal(random_shift(img, pad=0), img)


def test_gripper_index_uses_the_env_thresholds():
    cmds = np.array([1.0, 0.6, 0.5, 0.0, -0.5, -0.6, -1.0])
    assert gripper_index(cmds).tolist() == [CLOSE, CLOSE, STAY, STAY, STAY, OPEN, OPEN]
    assert gripper_index(torch.tensor(cmds)).tolist() == [CLOSE, CLOSE, STAY, STAY, STAY, OPEN, OPEN]


def test_running_normalizer_matches_batch_statistics_and_clips():
    from robot_rl.agents.encoders import RunningNormalizer

    rng = np.random.default_rng(0)
    data = rng.normal([0.5, -2.0, 0.0], [0.01, 3.0, 0.0], size=(500, 3))
    norm = RunningNormalizer(3, clip=10.0, min_std=1e-3)
    x = torch.as_tensor(data[:5], dtype=torch.float32)
    assert torch.equal(norm(x), x)  # no statistics yet: pass through
    for chunk in np.array_split(data, 7):  # uneven batches, as steps and demo episodes arrive
        norm.update(chunk)
    out = norm(torch.as_tensor(data, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(out[:, :2].mean(0), 0.0, atol=1e-4)
    np.testing.assert_allclose(out[:, :2].std(0, ddof=1), 1.0, atol=1e-3)
    assert np.all(out[:, 2] == 0.0)  # a constant entry stays at 0, not nan
    far = norm(torch.tensor([[0.5 + 1.0, 0.0, 1.0]])).numpy()  # 100 std away: clipped
    assert far[0, 0] == 10.0 and far[0, 2] == 10.0


def test_batched_ensemble_equals_separate_critics_with_the_same_weights():
    """The stacked (members, in, out) ensemble is N ordinary LayerNorm MLPs evaluated at once."""
    torch.manual_seed(0)
    members, feature_dim, action_dim = 5, 6, 3
    critic = CriticEnsemble(feature_dim, action_dim, hidden_dims=(16, 8), num_critics=members)
    with torch.no_grad():  # non-trivial LayerNorm affines, so a mix-up between members would show
        for p in critic.parameters():
            p.add_(0.1 * torch.randn_like(p))
    separate = []
    for m in range(members):
        layers, dim = [], feature_dim + action_dim
        for i, width in enumerate((16, 8)):
            lin, norm = torch.nn.Linear(dim, width), torch.nn.LayerNorm(width)
            ens_lin, ens_norm = critic.q.net[3 * i], critic.q.net[3 * i + 1]
            with torch.no_grad():
                lin.weight.copy_(ens_lin.weight[m].T)
                lin.bias.copy_(ens_lin.bias[m, 0])
                norm.weight.copy_(ens_norm.weight[m, 0])
                norm.bias.copy_(ens_norm.bias[m, 0])
            layers += [lin, norm, torch.nn.ReLU()]
            dim = width
        out = torch.nn.Linear(dim, 1)
        with torch.no_grad():
            out.weight.copy_(critic.q.net[-1].weight[m].T)
            out.bias.copy_(critic.q.net[-1].bias[m, 0])
        separate.append(torch.nn.Sequential(*layers, out))
    features = torch.randn(11, feature_dim, requires_grad=True)
    action = torch.randn(11, action_dim)
    batched = critic(features, action)
    expected = torch.stack([net(torch.cat([features, action], -1)).squeeze(-1) for net in separate])
    torch.testing.assert_close(batched, expected, rtol=1e-5, atol=1e-6)
    # gradients too: what the critic loss trains each member with
    (grad_batched,) = torch.autograd.grad(batched.square().sum(), features, retain_graph=True)
    (grad_expected,) = torch.autograd.grad(expected.square().sum(), features)
    torch.testing.assert_close(grad_batched, grad_expected, rtol=1e-5, atol=1e-6)
    grads = torch.autograd.grad(batched[2].sum(), critic.q.net[0].weight)[0]
    assert grads[2].abs().sum() > 0 and grads[[0, 1, 3, 4]].abs().sum() == 0


def test_ensemble_q_values_stay_float32_under_bf16_autocast():
    critic = CriticEnsemble(6, 2, (16,), num_critics=3)
    x, a = torch.randn(4, 6), torch.randn(4, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q = critic(x, a)
        hidden = critic.q.net[0](torch.zeros(3, 4, 8))
    assert q.dtype == torch.float32 and hidden.dtype == torch.bfloat16  # hidden layers do run in bf16
    torch.testing.assert_close(q, critic(x, a), rtol=0.05, atol=2e-3)


def test_random_shift_is_one_batched_crop_per_image_on_the_images_device():
    """Against a per-image reference: crop of the replicate-padded image at the drawn offsets."""
    images = torch.rand(6, 3, 10, 12)
    pad = 3
    out = random_shift(images, pad, torch.Generator().manual_seed(5))
    shifts = torch.randint(0, 2 * pad + 1, (2, 6), generator=torch.Generator().manual_seed(5))
    padded = torch.nn.functional.pad(images, (pad,) * 4, mode="replicate")
    for i in range(6):
        r, c = int(shifts[0, i]), int(shifts[1, i])
        assert torch.equal(out[i], padded[i, :, r:r + 10, c:c + 12]), i


def test_apply_shifts_channels_last_uint8_matches_the_padded_crop():
    """The learner's layout (uint8, channels last, not square): every image cropped at its own offset."""
    from robot_rl.agents.augment import apply_shifts

    images = torch.randint(0, 256, (7, 9, 11, 3), dtype=torch.uint8)
    pad = 4
    shifts = torch.tensor([[0, 8, 4, 1, 7, 3, 5], [8, 0, 4, 6, 2, 0, 8]])
    out = apply_shifts(images, shifts, pad, channels_last=True)
    assert out.dtype == torch.uint8 and out.shape == images.shape
    padded = torch.nn.functional.pad(images.permute(0, 3, 1, 2).float(), (pad,) * 4, mode="replicate")
    for i in range(7):
        r, c = int(shifts[0, i]), int(shifts[1, i])
        expected = padded[i, :, r:r + 9, c:c + 11].permute(1, 2, 0).to(torch.uint8)
        assert torch.equal(out[i], expected), i


def test_running_normalizer_passes_through_until_it_has_two_rows_without_nan():
    from robot_rl.agents.encoders import RunningNormalizer

    norm = RunningNormalizer(2)
    x = torch.tensor([[1.0, -2.0]])
    norm.update(np.array([[3.0, 4.0]]))  # one row: a std would be 0/0
    assert torch.equal(norm(x), x)
    norm.update(np.array([[5.0, 4.0]]))
    torch.testing.assert_close(norm(x), torch.tensor([[(1.0 - 4.0) / 2**0.5, -10.0]]))
