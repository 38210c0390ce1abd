"""Sample efficiency: env steps until deterministic eval success reaches 95%, over 3 seeds.

For each task and demo count, trains from scratch with ``robot-rl train``'s trainer and
each task config's own defaults (``configs/<task>.yaml``), evaluating every
``--eval-every`` env steps on ``--eval-episodes`` seeded initial states, and stops a
seed as soon as an evaluation reaches ``--target``. A seed that never gets there within
``--budget`` env steps counts as "not reached" (and as more than the budget in the median).

    python bench/sample_efficiency.py                       # every registered task; 20 and 0 demos
    python bench/sample_efficiency.py --tasks pick_cube --demos 20   # tasks by config name
    python bench/sample_efficiency.py --pixels --device auto  # the vision variant (meant for a GPU)

Ends with one JSON line: per task and demo count, the steps of each seed, the median
and the spread (min, max), and the wall time.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from robot_rl.paths import resolve_config
from robot_rl.tasks import all_tasks, load_config
from robot_rl.training.trainer import train


def run_one(task: str, demos: int, seed: int, args: argparse.Namespace) -> dict:
    overrides = [
        f"seed={seed}", f"train.total_env_steps={args.budget}", f"train.eval_every={args.eval_every}",
        f"train.eval_episodes={args.eval_episodes}", f"train.stop_at_success={args.target}",
        f"train.scripted_demos={demos}", "train.demos=null", "train.checkpoint_every=0",
        f"train.run_dir={Path(args.out) / f'{task}_{demos}demos_seed{seed}'}", f"train.device={args.device}",
        f"train.progress={'true' if args.progress else 'false'}",
    ]
    if args.pixels:
        overrides += ["env.obs_mode=pixels"]
        if args.encoder:
            overrides += [f"agent.encoder.kind={args.encoder}"]
    cfg = load_config(resolve_config(task), overrides + list(args.overrides))
    start = time.perf_counter()
    result = train(cfg, force=True)
    reached = result.first_step_reaching(args.target)
    best = max((e["success_rate"] for e in result.evals), default=0.0)
    record = {"task": cfg.task.name, "demos": demos, "seed": seed, "steps": reached, "best_success": best,
              "env_steps_run": result.env_steps, "wall_s": round(time.perf_counter() - start, 1)}
    outcome = (f"reached {args.target:.0%} at {reached} env steps" if reached is not None
               else f"did not reach {args.target:.0%} in {result.env_steps} env steps")
    print(f"{cfg.task.name:>10} demos={demos:<3} seed={seed}: {outcome} (best eval {best:.0%}, "
          f"{record['wall_s']:.0f} s)", flush=True)
    return record


def summarize(records: list[dict], budget: int) -> dict:
    steps = [r["steps"] for r in records]
    reached = [s for s in steps if s is not None]
    # a seed that did not get there counts as "more than the budget" in the median
    padded = sorted(s if s is not None else float("inf") for s in steps)
    median = float(np.median(padded)) if padded else None
    return {"steps": steps, "median": None if median is None or np.isinf(median) else median,
            "min": min(reached) if reached else None, "max": max(reached) if len(reached) == len(steps) else None,
            "reached": f"{len(reached)}/{len(steps)}", "budget": budget,
            "wall_s": round(sum(r["wall_s"] for r in records), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    configs = [spec.config for spec in all_tasks()]
    parser.add_argument("--tasks", "--task", nargs="+", default=configs, choices=configs,
                        help="tasks by config name (default: every registered task)")
    parser.add_argument("--demos", nargs="+", type=int, default=[20, 0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=30_000, help="env steps per seed at most")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--eval-every", type=int, default=1000)
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--pixels", action="store_true", help="learn from camera images (obs_mode pixels)")
    parser.add_argument("--encoder", choices=["small", "resnet10"], help="image encoder (default: the config's)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--out", default="runs/bench_sample_efficiency")
    parser.add_argument("--progress", action="store_true", help="show each run's progress bar")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="extra config override for every run")
    args = parser.parse_args()

    results = {}
    for task in args.tasks:
        for demos in args.demos:
            records = [run_one(task, demos, seed, args) for seed in args.seeds]
            summary = summarize(records, args.budget)
            name = f"{records[0]['task']}_{'pixels' if args.pixels else 'state'}_{demos}demos"
            results[name] = summary
            print(f"{name}: median {summary['median']} env steps to {args.target:.0%} "
                  f"(min {summary['min']}, max {summary['max']}, reached {summary['reached']})", flush=True)
    print(json.dumps({"target": args.target, "eval_episodes": args.eval_episodes, "results": results}))


if __name__ == "__main__":
    main()
