"""Learner speed on this machine: SAC updates per second for state and image observations.

Each figure times ``Learner.update()``, the whole training step: sample a batch (half
demo, half online) from replay, move it to the device, one critic update (plus the actor
and temperature update, every update here: critic_actor_ratio 1).

* ``state``: PickCube-sized state (26 floats), 4-D action, 2 LayerNorm critics, MLP 256x256;
  ``state_10_critics``: the same with RLPD's 10 critics (random pair for the target);
* ``pixels_small``: two 128x128 cameras, the small conv encoder trained from scratch, DrQ shifts;
* ``resnet10_cached``: a frozen ResNet-10-style backbone whose features were computed
  when frames entered replay (the default for a frozen backbone);
  ``resnet10_per_batch``: the same backbone run on every sampled image (obs and next obs);
* ``backbone_images_per_s``: the frozen backbone's forward throughput alone;
* replay bytes per transition for two 128x128 cameras (images stored once): for
  episodes that end in success, and for 100- and 50-step episodes that all time out
  (each stores one final frame); and with cached ResNet features instead of images.

Random weights and synthetic data: speed does not depend on them. Usage::

    python bench/learner_speed.py [--batch 256] [--updates 30] [--device auto] [--threads 1]

Ends with one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch

from robot_rl.config.agent import AgentConfig, EncoderConfig, TrainConfig
from robot_rl.data.transition import Step
from robot_rl.training.learner import Learner

STATE_DIM, ACTION_DIM, EPISODE = 26, 4, 50


def obs_space(cameras: int, size: int = 128) -> gym.spaces.Dict:
    spaces = {"state": gym.spaces.Box(-np.inf, np.inf, (STATE_DIM if not cameras else 19,), np.float32)}
    for name in ("front", "wrist")[:cameras]:
        spaces[name] = gym.spaces.Box(0, 255, (size, size, 3), np.uint8)
    return gym.spaces.Dict(spaces)


def fill(learner: Learner, space: gym.spaces.Dict, transitions: int, rng: np.random.Generator) -> None:
    """Synthetic episodes into both buffers (interventions also land in the demo buffer)."""
    for t in range(transitions):
        obs = {k: (rng.integers(0, 256, s.shape, dtype=np.uint8) if s.dtype == np.uint8
                   else rng.standard_normal(s.shape).astype(np.float32)) for k, s in space.spaces.items()}
        step = t % EPISODE
        learner.ingest(Step(episode_id=t // EPISODE, step=step, obs=obs,
                            action=rng.uniform(-1, 1, ACTION_DIM).astype(np.float32), reward=float(step == EPISODE - 1),
                            terminated=step == EPISODE - 1, truncated=False, next_obs=obs,
                            intervened=(t // EPISODE) % 2 == 0))


def time_updates(learner: Learner, updates: int, warmup: int = 2, max_seconds: float = 120.0) -> float:
    for _ in range(warmup):
        learner.update()
    if learner.agent.device.type == "cuda":
        torch.cuda.synchronize()
    start, done = time.perf_counter(), 0
    while done < updates and (done < 3 or time.perf_counter() - start < max_seconds):
        learner.update()
        done += 1
    if learner.agent.device.type == "cuda":
        torch.cuda.synchronize()
    return done / (time.perf_counter() - start)


def case(name: str, agent_cfg: AgentConfig, cameras: int, args: argparse.Namespace,
         updates: int) -> tuple[float, Learner]:
    space = obs_space(cameras)
    train_cfg = TrainConfig(batch_size=args.batch, replay_capacity=4 * EPISODE * 10, demo_capacity=4 * EPISODE * 10,
                            device=args.device)
    learner = Learner(agent_cfg, train_cfg, space, gym.spaces.Box(-1, 1, (ACTION_DIM,), np.float32), seed=0)
    t0 = time.perf_counter()
    fill(learner, space, transitions=4 * EPISODE, rng=np.random.default_rng(0))
    fill_s = time.perf_counter() - t0
    rate = time_updates(learner, updates)
    print(f"{name:>22}: {rate:8.2f} updates/s  (batch {args.batch}; filling 200 transitions took {fill_s:.1f} s)",
          flush=True)
    return rate, learner


def backbone_images_per_s(device: torch.device, images: int = 64) -> float:
    from robot_rl.agents.encoders import ResNet10

    net = ResNet10().to(device).eval()
    x = torch.rand(16, 3, 128, 128, device=device)
    with torch.no_grad():
        net(x)
        start = time.perf_counter()
        for _ in range(images // 16):
            net(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
    return images / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--updates", type=int, default=50, help="timed updates per state case")
    parser.add_argument("--image-updates", type=int, default=5, help="timed updates per image case")
    parser.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: PyTorch default)")
    parser.add_argument("--skip-per-batch", action="store_true", help="skip the slow per-batch ResNet case")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else f"cpu x{torch.get_num_threads()} threads"
    print(f"device: {name}, torch {torch.__version__}")
    figures: dict[str, float | str | int] = {"device": name, "batch": args.batch}

    figures["state"], _ = case("state", AgentConfig(), 0, args, args.updates)
    figures["state_10_critics"], _ = case("state, 10 critics", AgentConfig(num_critics=10), 0, args, args.updates)
    small = AgentConfig(encoder=EncoderConfig(kind="small"))
    figures["pixels_small"], learner = case("2x128px small encoder", small, 2, args, args.image_updates)
    replay = learner.online
    figures["bytes_per_transition_2x128"] = round(replay.bytes_per_slot())  # episodes that end in success
    figures["bytes_per_transition_2x128_timeout_50"] = round(replay.bytes_per_transition(episode_length=50))
    figures["bytes_per_transition_2x128_timeout_100"] = round(replay.bytes_per_transition(episode_length=100))
    cached = AgentConfig(encoder=EncoderConfig(kind="resnet10", cache_features=True))
    figures["resnet10_cached"], learner = case("2x128px ResNet-10 cached", cached, 2, args, args.image_updates)
    figures["bytes_per_transition_resnet10_cached"] = round(learner.online.bytes_per_slot())
    if not args.skip_per_batch:
        per_batch = AgentConfig(encoder=EncoderConfig(kind="resnet10", cache_features=False))
        figures["resnet10_per_batch"], _ = case("2x128px ResNet-10 per batch", per_batch, 2, args,
                                                max(1, args.image_updates // 2))
    figures["backbone_images_per_s"] = round(backbone_images_per_s(device), 1)
    print(f"frozen ResNet-10 forward: {figures['backbone_images_per_s']} images/s (128x128)")
    print(f"replay, two 128x128 cameras: {figures['bytes_per_transition_2x128']} bytes per transition when episodes "
          f"end in success (no final frame), {figures['bytes_per_transition_2x128_timeout_100']} when every 100-step "
          f"episode times out, {figures['bytes_per_transition_2x128_timeout_50']} for 50-step time-outs; "
          f"{figures['bytes_per_transition_resnet10_cached']} with cached ResNet-10 features instead of images")
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
