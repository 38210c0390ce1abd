"""Success rate of the scripted experts over seeded episodes (default 100 per task).

    python bench/scripted_experts.py [--episodes 100] [--tasks <config name> ...]

Every registered task by default (``robot_rl.tasks``), each with its own config.

Prints one line per task, then one JSON line with all figures.
"""

from __future__ import annotations

import argparse
import json
import time

from robot_rl.assemble import make_env
from robot_rl.paths import resolve_config
from robot_rl.tasks import all_tasks, get_task, load_config


def success_rate(config: str, episodes: int, seed: int) -> dict:
    cfg = load_config(resolve_config(config))
    env = make_env(cfg)
    expert = get_task(cfg.task.name).make_expert(env)
    successes, steps = 0, 0
    start = time.perf_counter()
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        expert.reset()
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(expert.act(obs))
            done = terminated or truncated
            steps += 1
        successes += int(info["success"])
    env.close()
    return {"success_rate": successes / episodes, "episodes": episodes,
            "mean_steps": steps / episodes, "seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1000)
    configs = [spec.config for spec in all_tasks()]
    parser.add_argument("--tasks", nargs="+", default=configs, choices=configs, help="tasks by config name")
    args = parser.parse_args()
    figures = {}
    for spec in all_tasks():
        if spec.config not in args.tasks:
            continue
        task = spec.name
        figures[task] = success_rate(spec.config, args.episodes, args.seed)
        f = figures[task]
        print(f"{task}: {f['success_rate']:.1%} success over {f['episodes']} episodes, "
              f"{f['mean_steps']:.1f} steps per episode ({f['seconds']} s)")
    print(json.dumps({"bench": "scripted_experts", **figures}))


if __name__ == "__main__":
    main()
