"""Sample efficiency: env steps until deterministic eval success reaches 95%, over 3 seeds.

For each task and demo count, trains from scratch with ``robot-rl train``'s trainer and
each task config's own defaults (``configs/<task>.yaml``; with ``--pixels``,
``configs/<task>_pixels.yaml`` where it exists: images and proprioception only), evaluating every
``--eval-every`` env steps on ``--eval-episodes`` seeded initial states, and stops a
seed as soon as an evaluation reaches ``--target``. A seed that never gets there within
``--budget`` env steps counts as "not reached" (and as more than the budget in the median).

    python bench/sample_efficiency.py                       # every registered task; 20 and 0 demos
    python bench/sample_efficiency.py --tasks pick_cube --demos 20   # tasks by config name
    python bench/sample_efficiency.py --pixels --tasks pick_cube peg_insert  # from the robot's view
    python bench/sample_efficiency.py --pixels --tasks pick_cube --classifier runs/bench_hil/reward.pt \
        --classifier-set 'reward.image_size=[32,32]'                        # ... with the learned reward
    python bench/sample_efficiency.py --pixels --tasks peg_insert --settings-of configs/franka_peg_insert.yaml
        # ... with a real cell's agent and image settings: its whole agent section, its UTD, batch and
        # demo fraction, and its cameras' sizes (resize), on the sim twin of the task

Ends with one JSON line: per task and demo count, the steps of each seed, the median
and the spread (min, max), and the wall time. Draws ``<out>/<task>_<state|pixels>_success.png``
per task: eval success against env steps, per demo count the median and range over seeds.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from robot_rl.config import Config
from robot_rl.errors import RobotRLError
from robot_rl.paths import pixels_config, resolve_config
from robot_rl.tasks import load_config, sim_tasks
from robot_rl.training.curves import plot_success, runs_of
from robot_rl.training.trainer import train

#: The train settings that are part of a cell's learning recipe (the rest are the bench's: budget, evals, demos).
RECIPE_TRAIN_KEYS = ("utd_ratio", "batch_size", "demo_fraction")


def flat_overrides(prefix: str, value: object) -> list[str]:
    """``KEY=VALUE`` overrides that set ``prefix`` to ``value``, one per leaf (values as JSON, which YAML reads)."""
    if isinstance(value, dict):
        return [o for key, item in value.items() for o in flat_overrides(f"{prefix}.{key}", item)]
    return [f"{prefix}={json.dumps(list(value) if isinstance(value, tuple) else value)}"]


def recipe_overrides(cell: Config) -> list[str]:
    """The learning recipe of ``cell`` (a real cell's config) as overrides for its sim twin: the
    whole agent section, the train keys of :data:`RECIPE_TRAIN_KEYS`, and each of its policy
    cameras' size as the policy sees it (after its crop and resize)."""
    overrides = flat_overrides("agent", asdict(cell.agent))
    overrides += [f"train.{key}={json.dumps(getattr(cell.train, key))}" for key in RECIPE_TRAIN_KEYS]
    for name in cell.env.cameras:
        cam = cell.cameras[name]
        height, width, _ = cam.obs_shape()
        overrides += [f"cameras.{name}.width={width}", f"cameras.{name}.height={height}"]
    return overrides


def run_one(task: str, demos: int, seed: int, args: argparse.Namespace) -> dict:
    overrides = [
        f"seed={seed}", f"train.total_env_steps={args.budget}", f"train.eval_every={args.eval_every}",
        f"train.eval_episodes={args.eval_episodes}", f"train.stop_at_success={args.target}",
        f"train.scripted_demos={demos}", "train.demos=null", "train.checkpoint_every=0",
        f"train.run_dir={Path(args.out) / f'{task}_{demos}demos_seed{seed}'}", f"train.device={args.device}",
        f"train.progress={'true' if args.progress else 'false'}",
    ]
    config = task
    if args.pixels:  # the task's robot's-view config (<task>_pixels.yaml) where there is one
        config = pixels_config(task) or task
        overrides += ["env.obs_mode=pixels"]
        if args.encoder:
            overrides += [f"agent.encoder.kind={args.encoder}"]
        overrides += args.recipe
    if args.classifier:  # the learned-reward variant: success (and the episode's end) is the classifier's
        overrides += [f"reward.classifier_path={args.classifier}", *args.classifier_set]
    cfg = load_config(resolve_config(config), overrides + list(args.overrides))
    start = time.perf_counter()
    result = train(cfg, force=True)
    reached = result.first_step_reaching(args.target)
    best = max((e["success_rate"] for e in result.evals), default=0.0)
    record = {"task": cfg.task.name, "demos": demos, "seed": seed, "steps": reached, "best_success": best,
              "env_steps_run": result.env_steps, "wall_s": round(time.perf_counter() - start, 1),
              "curve": runs_of(result.evals)}
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
    configs = [spec.config for spec in sim_tasks()]
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
    parser.add_argument("--classifier", metavar="PATH",
                        help="reward from this classifier (bench/hil_sim.py or robot-rl train-reward writes one); "
                             "evaluation is still scored by ground truth")
    parser.add_argument("--classifier-set", action="append", default=[], metavar="KEY=VALUE",
                        help="reward.* settings the classifier was trained with (e.g. reward.image_size=[32,32])")
    parser.add_argument("--settings-of", metavar="CONFIG",
                        help="with --pixels: train with this (real cell's) config's agent section, UTD, batch, "
                             "demo fraction and camera sizes")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--out", default="runs/bench_sample_efficiency")
    parser.add_argument("--progress", action="store_true", help="show each run's progress bar")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="extra config override for every run")
    args = parser.parse_args()
    args.recipe = []
    if args.settings_of:
        if not args.pixels:
            parser.error("--settings-of needs --pixels: a real cell's recipe is for the robot's view")
        try:
            args.recipe = recipe_overrides(load_config(resolve_config(args.settings_of)))
        except RobotRLError as err:
            parser.exit(2, f"error: {err}\n")
        print(f"settings of {args.settings_of}: {' '.join(args.recipe)}", flush=True)

    results = {}
    view = ("pixels" if args.pixels else "state") + ("_learned_reward" if args.classifier else "")
    for task in args.tasks:
        curves, names = {}, []
        for demos in args.demos:
            records = [run_one(task, demos, seed, args) for seed in args.seeds]
            summary = summarize(records, args.budget)
            name = f"{records[0]['task']}_{view}_{demos}demos"
            results[name] = summary
            names.append(name)
            curves[f"{demos} demos"] = [r["curve"] for r in records]
            print(f"{name}: median {summary['median']} env steps to {args.target:.0%} "
                  f"(min {summary['min']}, max {summary['max']}, reached {summary['reached']})", flush=True)
        png: Path | None = Path(args.out) / f"{task}_{view}_success.png"
        try:
            plot_success(png, curves, title=f"{task}: eval success ({args.eval_episodes} episodes)",
                         target=args.target)
            print(f"success curve: {png}", flush=True)
        except RobotRLError as err:  # no evaluation ran (--eval-every above --budget)
            print(f"no success curve: {err}", flush=True)
            png = None
        for name in names:
            results[name]["png"] = None if png is None else str(png)
    print(json.dumps({"target": args.target, "eval_episodes": args.eval_episodes, "settings_of": args.settings_of,
                      "results": results}))


if __name__ == "__main__":
    main()
