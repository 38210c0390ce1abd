"""Success rate of the scripted experts over seeded episodes (default 100 per task).

    python bench/scripted_experts.py [--episodes 100]

Prints one line per task, then one JSON line with all figures.
"""

from __future__ import annotations

import argparse
import json
import time

from robot_rl.config import load_config
from robot_rl.envs import make_env
from robot_rl.paths import resolve_config
from robot_rl.sim.experts import make_expert


def success_rate(config: str, episodes: int, seed: int) -> dict:
    env = make_env(load_config(resolve_config(config)))
    expert = make_expert(env)
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
    args = parser.parse_args()
    figures = {}
    for task, config in (("PickCube", "pick_cube"), ("PegInsert", "peg_insert")):
        figures[task] = success_rate(config, args.episodes, args.seed)
        f = figures[task]
        print(f"{task}: {f['success_rate']:.1%} success over {f['episodes']} episodes, "
              f"{f['mean_steps']:.1f} steps per episode ({f['seconds']} s)")
    print(json.dumps({"bench": "scripted_experts", **figures}))


if __name__ == "__main__":
    main()
