"""Success rate of the scripted experts over seeded episodes (default 100 per task).

    python bench/scripted_experts.py [--episodes 100] [--tasks <config name> ...] [--arm panda|ur5e]

Every registered task by default (``robot_rl.tasks``), each with its own config, on the
config's sim arm or the one ``--arm`` names (``sim.arm``; the task definitions are the same).

Prints one line per task, then one JSON line with all figures.
"""

from __future__ import annotations

import argparse
import json
import time

from robot_rl.assemble import make_env
from robot_rl.paths import resolve_config
from robot_rl.sim.model import ARMS
from robot_rl.tasks import get_task, load_config, sim_tasks


def success_rate(config: str, episodes: int, seed: int, arm: str | None = None) -> dict:
    cfg = load_config(resolve_config(config), [f"sim.arm={arm}"] if arm else [])
    env = make_env(cfg)
    expert = get_task(cfg.task.name).make_expert(env)
    successes, steps, faults = 0, 0, 0
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
        faults += int("robot_fault" in info)
    env.close()
    return {"arm": cfg.sim.arm, "success_rate": successes / episodes, "episodes": episodes,
            "mean_steps": steps / episodes, "robot_faults": faults, "seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1000)
    configs = [spec.config for spec in sim_tasks()]
    parser.add_argument("--tasks", nargs="+", default=configs, choices=configs, help="tasks by config name")
    parser.add_argument("--arm", choices=list(ARMS), default=None, help="the sim arm (sim.arm; default: the config's)")
    args = parser.parse_args()
    figures = {}
    for spec in sim_tasks():
        if spec.config not in args.tasks:
            continue
        task = spec.name
        figures[task] = success_rate(spec.config, args.episodes, args.seed, args.arm)
        f = figures[task]
        print(f"{task} ({f['arm']}): {f['success_rate']:.1%} success over {f['episodes']} episodes, "
              f"{f['mean_steps']:.1f} steps per episode, {f['robot_faults']} robot faults ({f['seconds']} s)")
    print(json.dumps({"bench": "scripted_experts", **figures}))


if __name__ == "__main__":
    main()
