"""50 consecutive scripted auto-resets per task, each after an episode that disturbed the scene.

    python bench/auto_reset.py [--resets 50] [--task <config name>|all]

Every registered task by default. Every episode is played by the task's scripted expert
(which does the task) or, every other episode, by random actions (which push things
about); then the env resets with ``reset.mode: scripted``: the robot itself brings the
objects back through the controller. After each reset it checks that the object is inside the
task's randomization range and the TCP inside the safety box, and it sums what the
resets did to the controller: violations (box-clipped or rejected targets, watchdog
holds) and pose-error-clipped cycles, both expected to be 0 (see
robot_rl/reset/stats.py for the definitions). Prints one line per task, then one JSON
line with all figures.
"""

from __future__ import annotations

import argparse
import json
import logging

from robot_rl.assemble import make_env
from robot_rl.paths import resolve_config
from robot_rl.reset.soak import reset_soak
from robot_rl.tasks import load_config, sim_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resets", type=int, default=50)
    configs = [spec.config for spec in sim_tasks()]
    parser.add_argument("--task", choices=[*configs, "all"], default="all", help="a task by config name, or all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    tasks = configs if args.task == "all" else [args.task]
    figures = {}
    for config in tasks:
        cfg = load_config(resolve_config(config), ["reset.mode=scripted", *args.set])
        f = figures[config] = reset_soak(cfg, make_env(cfg), args.resets, seed=args.seed).as_dict()
        print(f"{f['task']}: {f['resets']} resets, object in range {f['in_range']}/{f['resets']}, robot in box "
              f"{f['in_box']}/{f['resets']}, {f['violations']} violations, {f['error_clipped_cycles']} error-clipped "
              f"cycles, {f['teleports']} teleports, {f['joint_resets']} joint resets, grasp attempts "
              f"{f['attempts']}, max tracking error {f['max_tracking_error_mm']} mm, "
              f"{f['mean_reset_sim_s']} s sim per reset ({f['sim_s']} s sim in {f['wall_s']} s wall)", flush=True)
        for failure in f["failures"]:
            print(f"  FAILED {failure}")
    print(json.dumps({"bench": "auto_reset", **figures}))


if __name__ == "__main__":
    main()
