"""Sim speed: env steps per second and real-time factor, state-only and with cameras.

    python bench/sim_speed.py [--steps 500]

The real-time factor is simulated seconds per wall-clock second (each env step is
1/control_hz of sim time, physics at sim.physics_hz with the impedance law every step).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from robot_rl.assemble import make_env
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config, sim_tasks


def measure(config: str, overrides: list[str], steps: int) -> dict:
    cfg = load_config(resolve_config(config), overrides)
    env = make_env(cfg)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
        if terminated or truncated:
            env.reset()
    wall = time.perf_counter() - start
    env.close()
    rate = steps / wall
    return {"env_steps_per_s": round(rate, 1), "real_time_factor": round(rate / cfg.env.control_hz, 1),
            "physics_hz": cfg.sim.physics_hz, "control_hz": cfg.env.control_hz}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500)
    configs = [spec.config for spec in sim_tasks()]
    parser.add_argument("--task", default=configs[0], choices=configs,
                        help="the scene, by config name (default: the registry's first task)")
    args = parser.parse_args()
    figures = {
        "state": measure(args.task, ["env.obs_mode=state"], args.steps),
        "pixels_2x128": measure(args.task, ["env.obs_mode=pixels", "env.cameras=[front,wrist]",
                                 "cameras.front.width=128", "cameras.front.height=128",
                                 "cameras.wrist.width=128", "cameras.wrist.height=128"], args.steps),
    }
    for name, f in figures.items():
        print(f"{name}: {f['env_steps_per_s']} env steps/s, {f['real_time_factor']}x real time "
              f"(physics {f['physics_hz']:.0f} Hz, control {f['control_hz']:.0f} Hz)")
    print(json.dumps({"bench": "sim_speed", "task": args.task, **figures}))


if __name__ == "__main__":
    main()
