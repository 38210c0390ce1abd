"""Learner speed on this machine: SAC updates per second for state and image observations.

Each figure times ``Learner.update()``, the whole training step: sample a batch (half
demo, half online) from replay, move it to the device, one critic update (plus the actor
and temperature update, every update here: critic_actor_ratio 1). Batch 256 and 2
critics unless told otherwise; on a GPU the clock stops after ``torch.cuda.synchronize``.

* ``state``: PickCube-sized state (26 floats), 4-D action, 2 LayerNorm critics, MLP 256x256;
  ``state_10_critics``: the same with RLPD's 10 critics (random pair for the target);
* ``pixels_small``: two 128x128 cameras (``--image-size``), the small conv encoder trained from scratch, DrQ shifts;
* ``resnet10_cached``: a frozen ResNet-10-style backbone whose features were computed
  when frames entered replay (the default for a frozen backbone);
  ``resnet10_per_batch``: the same backbone run on every sampled image (obs and next obs);
* the execution options, each alone and all together, on ``state`` and ``pixels_small``
  (the figures above run with all of them off): ``*_prefetch`` (``train.prefetch: on``:
  batches gathered into pinned memory and copied on background threads),
  ``*_bf16`` (``train.precision: bf16``), ``*_compile`` (``train.compile: true``; its
  compile time is ``compile_s_*``, not counted in the rate), ``*_all``;
* ``backbone_images_per_s``: the frozen backbone's forward throughput alone;
* replay bytes per transition for two 128x128 cameras (images stored once): for
  episodes that end in success, and for 100- and 50-step episodes that all time out
  (each stores one final frame); and with cached ResNet features instead of images.

Env steps per second of the pixel env with MuJoCo rendering are ``bench/sim_speed.py``'s
(``MUJOCO_GL=egl`` on a GPU machine). Random weights and synthetic data: speed does not
depend on them. ``--device cuda`` without a GPU, or ``bf16`` on a GPU without it, is a
one-line error. Usage::

    python bench/learner_speed.py [--batch 256] [--updates 50] [--image-updates 5] [--device auto]
                                  [--threads 0] [--image-size 128] [--skip-per-batch] [--skip-options]
                                  [--skip-compile] [--skip-state]

Ends with one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import gymnasium as gym
import numpy as np
import torch

from robot_rl.agents.execution import check_precision, execution_device
from robot_rl.config.agent import AgentConfig, EncoderConfig, TrainConfig
from robot_rl.data.transition import Step
from robot_rl.errors import ConfigError
from robot_rl.training.learner import Learner

#: The execution options timed on top of the plain figures: name -> TrainConfig fields.
OPTIONS = {"prefetch": {"prefetch": "on"}, "bf16": {"precision": "bf16"}, "compile": {"compile": True},
           "all": {"prefetch": "on", "precision": "bf16", "compile": True}}
PLAIN = {"prefetch": "off", "precision": "float32", "compile": False}

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


def sync(learner: Learner) -> None:
    if learner.agent.device.type == "cuda":
        torch.cuda.synchronize()


def time_updates(learner: Learner, updates: int, warmup: int = 2, max_seconds: float = 120.0) -> tuple[float, float]:
    """(updates/s after ``warmup`` updates, seconds the warm-up took: compilation, for a compiled learner)."""
    t0 = time.perf_counter()
    for _ in range(warmup):
        learner.update()
    sync(learner)
    warmup_s = time.perf_counter() - t0
    start, done = time.perf_counter(), 0
    while done < updates and (done < 3 or time.perf_counter() - start < max_seconds):
        learner.update()
        done += 1
    learner.window_metrics()  # what logging reads, once per window
    sync(learner)
    return done / (time.perf_counter() - start), warmup_s


def case(name: str, agent_cfg: AgentConfig, cameras: int, args: argparse.Namespace, updates: int,
         figures: dict[str, float | str | int], **execution: object) -> Learner:
    space = obs_space(cameras, args.image_size)
    train_cfg = TrainConfig(batch_size=args.batch, replay_capacity=4 * EPISODE * 10, demo_capacity=4 * EPISODE * 10,
                            device=args.device, **{**PLAIN, **execution})  # type: ignore[arg-type]
    learner = Learner(agent_cfg, train_cfg, space, gym.spaces.Box(-1, 1, (ACTION_DIM,), np.float32), seed=0)
    t0 = time.perf_counter()
    fill(learner, space, transitions=4 * EPISODE, rng=np.random.default_rng(0))
    fill_s = time.perf_counter() - t0
    rate, warmup_s = time_updates(learner, updates)
    learner.close()
    figures[name] = rate
    note = f"; compiling took {warmup_s:.1f} s" if train_cfg.compile else ""
    print(f"{name:>26}: {rate:8.2f} updates/s  (batch {args.batch}; filling 200 transitions took {fill_s:.1f} s"
          f"{note})", flush=True)
    if train_cfg.compile:
        figures[f"compile_s_{name}"] = round(warmup_s, 1)
    return learner


def backbone_images_per_s(device: torch.device, images: int = 64, size: int = 128) -> float:
    from robot_rl.agents.encoders import ResNet10

    net = ResNet10().to(device).eval()
    batch = min(16, images)
    x = torch.rand(batch, 3, size, size, device=device)
    with torch.no_grad():
        net(x)
        start = time.perf_counter()
        for _ in range(images // batch):
            net(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
    return (images // batch) * batch / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--updates", type=int, default=50, help="timed updates per state case")
    parser.add_argument("--image-updates", type=int, default=5, help="timed updates per image case")
    parser.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: PyTorch default)")
    parser.add_argument("--image-size", type=int, default=128, help="camera images' side in pixels (two cameras)")
    parser.add_argument("--skip-state", action="store_true", help="skip the state cases (image figures only)")
    parser.add_argument("--skip-per-batch", action="store_true", help="skip the slow per-batch ResNet case")
    parser.add_argument("--skip-options", action="store_true", help="skip the prefetch/bf16/compile figures")
    parser.add_argument("--skip-compile", action="store_true", help="skip the compiled cases (compiling is slow)")
    args = parser.parse_args()
    try:
        device = execution_device(args.device, key="--device")
        if not args.skip_options:
            check_precision("bf16", device, key="the bf16 figures (--skip-options to leave them out)")
    except ConfigError as err:
        sys.exit(f"error: {err}")
    args.device = device.type
    if args.threads:
        torch.set_num_threads(args.threads)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu x{torch.get_num_threads()} threads"
    print(f"device: {name}, torch {torch.__version__}")
    figures: dict[str, float | str | int] = {"bench": "learner_speed", "device": name, "batch": args.batch}

    if not 8 <= args.image_size <= 512:
        sys.exit(f"error: --image-size {args.image_size}: give a side between 8 and 512 pixels")
    side = f"2x{args.image_size}"
    figures["image_size"] = args.image_size
    small = AgentConfig(encoder=EncoderConfig(kind="small"))
    if not args.skip_state:
        case("state", AgentConfig(), 0, args, args.updates, figures)
        case("state_10_critics", AgentConfig(num_critics=10), 0, args, args.updates, figures)
    learner = case("pixels_small", small, 2, args, args.image_updates, figures)
    replay = learner.online
    figures[f"bytes_per_transition_{side}"] = round(replay.bytes_per_slot())  # episodes that end in success
    figures[f"bytes_per_transition_{side}_timeout_50"] = round(replay.bytes_per_transition(episode_length=50))
    figures[f"bytes_per_transition_{side}_timeout_100"] = round(replay.bytes_per_transition(episode_length=100))
    cached = AgentConfig(encoder=EncoderConfig(kind="resnet10", cache_features=True))
    learner = case("resnet10_cached", cached, 2, args, args.image_updates, figures)
    figures["bytes_per_transition_resnet10_cached"] = round(learner.online.bytes_per_slot())
    if not args.skip_per_batch:
        per_batch = AgentConfig(encoder=EncoderConfig(kind="resnet10", cache_features=False))
        case("resnet10_per_batch", per_batch, 2, args, max(1, args.image_updates // 2), figures)
    if not args.skip_options:
        for option, execution in OPTIONS.items():
            if args.skip_compile and execution.get("compile"):
                continue
            if not args.skip_state:
                case(f"state_{option}", AgentConfig(), 0, args, args.updates, figures, **execution)
            case(f"pixels_small_{option}", small, 2, args, args.image_updates, figures, **execution)
    figures["backbone_images_per_s"] = round(backbone_images_per_s(device, size=args.image_size), 1)
    size = f"{args.image_size}x{args.image_size}"
    print(f"frozen ResNet-10 forward: {figures['backbone_images_per_s']} images/s ({size})")
    print(f"replay, two {size} cameras: {figures[f'bytes_per_transition_{side}']} bytes "
          f"per transition when episodes end in success (no final frame), "
          f"{figures[f'bytes_per_transition_{side}_timeout_100']} when every 100-step episode times out, "
          f"{figures[f'bytes_per_transition_{side}_timeout_50']} for 50-step time-outs; "
          f"{figures['bytes_per_transition_resnet10_cached']} with cached ResNet-10 features instead of images")
    print("env steps/s of the pixel env with MuJoCo rendering: bench/sim_speed.py")
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
