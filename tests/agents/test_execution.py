"""How the update runs: compiled and bf16 updates against the eager float32 one, and the device checks.

Each comparison runs the same update (same initial weights, same batches, same RNG
seeds) both ways and compares the metrics and the parameters afterwards.

* ``torch.compile`` with the ``aot_eager`` backend: dynamo's graph capture and
  AOTAutograd's joint forward/backward graphs, without inductor's code generation. It
  is what CI can afford in every run (seconds; inductor's C++ code generation took 15-75 s
  for a small update on this 2-core CPU, depending on its on-disk cache and the load, so
  that one is the ``slow`` test). Same kernels, same random draws: the results match to
  float32 rounding (stated tolerance 1e-6 relative; inductor, which fuses, 1e-4).
* ``bf16`` autocast: matmuls and convolutions in bfloat16 (8-bit mantissa, relative
  rounding 2^-8 = 0.4%). Stated tolerance: metrics within 2% (or 2e-3 absolute near 0)
  per update; the parameter changes of three updates within 10% of their size (L1),
  measured about 1-3% here.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from robot_rl.agents.execution import autocast, check_precision, execution_device
from robot_rl.agents.sac import SACAgent
from robot_rl.config.agent import AgentConfig, EncoderConfig, TrainConfig
from robot_rl.data.rollout import ActorLoop
from robot_rl.errors import ConfigError
from robot_rl.training.learner import Learner, batch_to_torch

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

ROOT = Path(__file__).resolve().parents[2]
NO_CUDA = not torch.cuda.is_available()


def image_cfg() -> AgentConfig:
    return AgentConfig(hidden_dims=(32, 32), gripper_critic=True,
                       encoder=EncoderConfig(channels=(8, 8), strides=(2, 2), latent_dim=16))


def batches(env, cfg, n=3, batch_size=32, device="cpu"):
    learner = Learner(cfg, TrainConfig(batch_size=batch_size), env.observation_space, env.action_space, seed=0)
    loop = ActorLoop(env, _Random(env), seed=0)
    for _ in range(120):
        learner.ingest(loop.step())
    return learner, [batch_to_torch(learner.sample(), device) for _ in range(n)]


class _Random:
    def __init__(self, env):
        self.rng, self.dim = np.random.default_rng(0), env.action_space.shape[0]

    def act(self, obs):
        return self.rng.uniform(-1, 1, self.dim).astype(np.float32)


def run_updates(env, cfg, learner, batch_list, device="cpu", **execution):
    """A fresh agent (seed 0, the learner's state statistics) after one update per batch."""
    agent = SACAgent(cfg, env.observation_space, env.action_space, device=device, seed=0, **execution)
    agent.policy.encoder.normalizer.load_state_dict(learner.agent.policy.encoder.normalizer.state_dict())
    before = {k: v.detach().clone() for k, v in params(agent).items()}
    metrics = [{k: float(v) for k, v in agent.update(b).items()} for b in batch_list]
    return agent, metrics, before


def params(agent):
    out = {f"critic.{k}": v for k, v in agent.critic.named_parameters()}
    out.update({f"policy.{k}": v for k, v in agent.policy.named_parameters() if v.requires_grad})
    return out


def assert_metrics_close(reference, other, rel, abs_):
    assert len(reference) == len(other)
    for ref, got in zip(reference, other):
        assert ref.keys() == got.keys()
        for key in ref:
            assert np.isfinite(got[key]), key
            assert abs(got[key] - ref[key]) <= abs_ + rel * abs(ref[key]), (key, ref[key], got[key])


def update_difference(reference, other, before):
    """L1 distance of the two agents' parameter changes, relative to the reference change."""
    pr, po = params(reference), params(other)
    diff = sum((po[k].detach().cpu() - pr[k].detach().cpu()).abs().sum().item() for k in pr)
    size = sum((pr[k].detach().cpu() - before[k].cpu()).abs().sum().item() for k in pr)
    assert size > 0  # the updates moved the parameters at all
    return diff / size


def test_compiled_update_matches_eager_float32(point_env_fn):
    env = point_env_fn(image_size=16)
    cfg = image_cfg()
    learner, batch_list = batches(env, cfg)
    eager, m_eager, before = run_updates(env, cfg, learner, batch_list)
    compiled, m_compiled, _ = run_updates(env, cfg, learner, batch_list, compile="aot_eager")
    assert compiled.compiled and not eager.compiled
    assert_metrics_close(m_eager, m_compiled, rel=1e-6, abs_=1e-7)
    pe, pc = params(eager), params(compiled)
    for k in pe:
        torch.testing.assert_close(pc[k], pe[k], rtol=1e-6, atol=1e-7, msg=k)
    assert update_difference(eager, compiled, before) < 1e-4
    # the same random draws: the agents' generators are in the same state afterwards
    assert torch.equal(eager.generator.get_state(), compiled.generator.get_state())


@pytest.mark.parametrize("encoder", [dict(kind="small", channels=(8, 8), strides=(2, 2)),
                                     dict(kind="resnet10", cache_features=False),
                                     dict(kind="resnet10", cache_features=True)])
@pytest.mark.parametrize("precision", ["float32", "bf16"])
def test_the_loss_functions_compile_to_one_graph_each(point_env_fn, encoder, precision):
    """No graph break (a Python branch on a tensor, a host read, a draw from an explicit
    generator) inside the compiled region: ``fullgraph=True`` refuses any."""
    env = point_env_fn(image_size=16)
    cfg = AgentConfig(hidden_dims=(16, 16), num_critics=5, gripper_critic=True,
                      encoder=EncoderConfig(latent_dim=8, **encoder))
    learner, (batch,) = batches(env, cfg, n=1, batch_size=8)
    agent = learner.agent
    agent.precision, agent._autocast = precision, autocast(agent.device, precision)
    noise = agent._draw_noise(batch)
    assert noise.subset_keys is not None and noise.actor_eps is not None
    assert bool(noise.obs_shifts) == (encoder["kind"] == "small" or not encoder["cache_features"])
    critic = torch.compile(agent._critic_losses_eager, backend="eager", fullgraph=True)
    loss, _, _, features, _ = critic(batch, noise.obs_shifts, noise.next_shifts, noise.next_eps, noise.subset_keys)
    assert torch.isfinite(loss)
    agent.critic.requires_grad_(False)
    actor = torch.compile(agent._actor_losses_eager, backend="eager", fullgraph=True)
    assert torch.isfinite(actor(features.detach(), noise.actor_eps)[0])


@pytest.mark.slow
def test_inductor_compiled_update_matches_eager_float32(point_env_fn):
    """The default backend (inductor: generated C++ on a CPU); a state-only net keeps compiling short."""
    env = point_env_fn()
    cfg = AgentConfig(hidden_dims=(32, 32), num_critics=4)
    learner, batch_list = batches(env, cfg, n=2)
    eager, m_eager, before = run_updates(env, cfg, learner, batch_list)
    compiled, m_compiled, _ = run_updates(env, cfg, learner, batch_list, compile=True)
    # inductor fuses and reorders float32 arithmetic: rounding-level differences only
    assert_metrics_close(m_eager, m_compiled, rel=1e-4, abs_=1e-6)
    assert update_difference(eager, compiled, before) < 1e-3


def test_bf16_update_matches_float32_within_tolerance(point_env_fn):
    env = point_env_fn(image_size=16)
    cfg = image_cfg()
    learner, batch_list = batches(env, cfg)
    full, m_full, before = run_updates(env, cfg, learner, batch_list)
    half, m_half, _ = run_updates(env, cfg, learner, batch_list, precision="bf16")
    assert_metrics_close(m_full, m_half, rel=2e-2, abs_=2e-3)
    assert update_difference(full, half, before) < 0.1
    assert m_full != m_half  # bf16 did run: the values are close, not identical
    # what the update keeps in float32: parameters, Q outputs, log-probs
    assert all(p.dtype == torch.float32 for p in params(half).values())
    with half._autocast():
        features = half.policy.encoder(batch_list[0]["obs"])
        assert half.critic(features, batch_list[0]["action"][:, :2]).dtype == torch.float32
    _, log_prob = half._distribution(features).rsample_with_log_prob()
    assert log_prob.dtype == torch.float32


def test_a_nan_in_the_batch_shows_in_the_metrics_in_every_mode(point_env_fn):
    """Bad data is not hidden by bf16 or compile: a NaN reward makes the losses NaN."""
    env = point_env_fn()
    cfg = AgentConfig(hidden_dims=(16, 16))
    learner, (batch,) = batches(env, cfg, n=1)
    batch["reward"][3] = float("nan")
    for execution in ({}, {"precision": "bf16"}, {"compile": "aot_eager"}):
        agent = SACAgent(cfg, env.observation_space, env.action_space, seed=0, **execution)
        assert np.isnan(float(agent.update(batch)["critic_loss"])), execution


def test_an_unknown_precision_is_a_config_error(point_env_fn):
    env = point_env_fn()
    with pytest.raises(ConfigError, match="train.precision is 'fp16'; expected one of float32, bf16"):
        SACAgent(AgentConfig(), env.observation_space, env.action_space, precision="fp16")


def test_bf16_on_a_gpu_without_it_is_one_line(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Tesla V100")
    with pytest.raises(ConfigError) as err:
        check_precision("bf16", torch.device("cuda"))
    assert str(err.value) == ("train.precision is 'bf16' but Tesla V100 has no native bfloat16 (it needs compute "
                              "capability 8.0 or newer); use float32")
    check_precision("bf16", torch.device("cpu"))  # PyTorch's CPU autocast has it everywhere
    check_precision("float32", torch.device("cuda"))


@pytest.mark.skipif(not NO_CUDA, reason="this machine has CUDA")
def test_cuda_without_a_gpu_is_one_line_for_the_learner_and_the_bench(point_env_fn):
    with pytest.raises(ConfigError) as err:
        execution_device("cuda")
    assert str(err.value).startswith("train.device is 'cuda' but PyTorch sees no CUDA device (torch ")
    assert "run on the CPU with --set train.device=cpu" in str(err.value)  # what to type instead
    assert "install a CUDA build of torch" in str(err.value) and "\n" not in str(err.value)
    env = point_env_fn()
    with pytest.raises(ConfigError, match="train.device is 'cuda'"):  # what robot-rl learner builds
        Learner(AgentConfig(), TrainConfig(device="cuda"), env.observation_space, env.action_space)
    assert execution_device("auto") == torch.device("cpu")
    bench = subprocess.run([sys.executable, str(ROOT / "bench" / "learner_speed.py"), "--device", "cuda"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert bench.returncode != 0
    assert bench.stderr.strip().startswith("error: --device is 'cuda' but PyTorch sees no CUDA device (")
    assert "run on the CPU with --device cpu" in bench.stderr and len(bench.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(NO_CUDA, reason="needs a CUDA GPU")
def test_on_a_gpu_compiled_and_bf16_updates_match_eager_float32(point_env_fn):
    env = point_env_fn(image_size=16)
    cfg = image_cfg()
    learner, batch_list = batches(env, cfg, device="cuda")
    full, m_full, before = run_updates(env, cfg, learner, batch_list, device="cuda")
    compiled, m_compiled, _ = run_updates(env, cfg, learner, batch_list, device="cuda", compile=True)
    assert_metrics_close(m_full, m_compiled, rel=1e-3, abs_=1e-5)  # TF32 and fusion differ in rounding
    half, m_half, _ = run_updates(env, cfg, learner, batch_list, device="cuda", precision="bf16")
    assert_metrics_close(m_full, m_half, rel=2e-2, abs_=2e-3)
    assert update_difference(full, half, before) < 0.1


def test_a_checkpoint_keeps_this_devices_optimizer_kernels(point_env_fn):
    """A checkpoint brings the kernel choice it was written with (an older run saved unfused Adam, and
    another device may have none); resumed here, this device's choice (fused on CPU and GPU) runs."""
    env = point_env_fn()
    agent = SACAgent(AgentConfig(hidden_dims=(8,)), env.observation_space, env.action_space)
    assert agent._fused is True  # the CPU's fused Adam
    for written in (None, False):
        saved = SACAgent(AgentConfig(hidden_dims=(8,)), env.observation_space, env.action_space).state_dict()
        for name in ("critic_opt", "actor_opt", "temperature_opt"):
            saved[name]["param_groups"][0]["fused"] = written
        agent.load_state_dict(saved)
        assert all(g["fused"] is True for o in (agent.critic_opt, agent.actor_opt, agent.temperature_opt)
                   for g in o.param_groups)
