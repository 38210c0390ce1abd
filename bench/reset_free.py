"""Forward-backward practice in sim: no human, no teleport, both success rates over time.

    python bench/reset_free.py [--task <config name>|all] [--sim-minutes 30]
                               [--demos N] [--windows 3] [--set key=value ...]

For each task: build one MuJoCo world, set it up once (the only teleport), record
``--demos`` successful scripted episodes per direction reset-free (the scripted experts
take turns exactly as the policies will), then let two SAC/RLPD learners practise,
forward and backward in turn, for ``--sim-minutes`` of sim time. Between episodes the
scene is handed over as it is; a scripted robot reset or task recovery runs only when
the scene is no valid start, and each is counted.

Prints per task the success rate of each direction in ``--windows`` equal slices of
practice time (rising is the point), the reset counts and the controller statistics
of all resets, then one JSON line with all figures. Draws
``<out>/reset_free_<task>.png``: each direction's practice success (the mean over its
last ``--curve-window`` episodes) against that direction's env steps.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import deque
from pathlib import Path

import torch

from robot_rl.errors import RobotRLError
from robot_rl.paths import resolve_config
from robot_rl.reset.backward import make_backward_expert
from robot_rl.tasks import TaskSpec, load_config, sim_tasks
from robot_rl.training.curves import plot_success
from robot_rl.training.learner import Learner
from robot_rl.training.reset_free import BACKWARD, FORWARD, ForwardBackward, collect_demos, practice

# Settings for this bench (each can be overridden with --set): state observations, a
# learner per direction with the RLPD defaults, one update per env step, one thread.
BENCH_SETTINGS = ["train.utd_ratio=1", "train.learning_starts=200", "train.batch_size=256", "train.torch_threads=1"]
# Per task, on top: the task's own ``reset_free_overrides`` and ``reset_free_demos``
# (robot_rl/tasks/<task>/__init__.py), e.g. a narrower range where a task learns too
# slowly for a 30-minute run on a CPU.


def run_task(spec: TaskSpec, args: argparse.Namespace) -> dict:
    cfg = load_config(resolve_config(spec.config), BENCH_SETTINGS + list(spec.reset_free_overrides) + list(args.set))
    n_demos = args.demos if args.demos is not None else spec.reset_free_demos
    torch.manual_seed(args.seed)
    if cfg.train.torch_threads:
        torch.set_num_threads(cfg.train.torch_threads)  # more threads than free cores is far slower
    start_wall = time.perf_counter()
    fb = ForwardBackward(cfg, seed=args.seed)
    demos = collect_demos(fb, fb.task.make_expert(fb.forward_env, noise=0.2, seed=args.seed + 1),
                          make_backward_expert(fb.backward_env, noise=0.2, seed=args.seed + 2), n_demos)
    demo_sim_s = fb.world.now()
    demo_report = {d: {"episodes": fb.report.direction(d).episodes, "successes": fb.report.direction(d).successes}
                   for d in (FORWARD, BACKWARD)}
    fb.report = type(fb.report)()  # practice figures only from here on
    learners = {}
    for i, (direction, env) in enumerate(((FORWARD, fb.forward_env), (BACKWARD, fb.backward_env))):
        learners[direction] = Learner(cfg.agent, cfg.train, env.observation_space, env.action_space,
                                      seed=args.seed + 10 * i)
        learners[direction].add_demos(demos[direction])

    last_print = [time.perf_counter()]
    recent = {d: deque(maxlen=args.curve_window) for d in (FORWARD, BACKWARD)}
    curves: dict[str, list[tuple[int, float]]] = {FORWARD: [], BACKWARD: []}

    def on_episode(direction: str, step, fb_: ForwardBackward) -> None:
        recent[direction].append(float(step.success))
        curves[direction].append((learners[direction].env_steps, sum(recent[direction]) / len(recent[direction])))
        if time.perf_counter() - last_print[0] > 30:
            last_print[0] = time.perf_counter()
            r = fb_.report
            print(f"  {fb_.world.now() - demo_sim_s:7.0f} s sim: forward {r.forward.successes}/{r.forward.episodes}, "
                  f"backward {r.backward.successes}/{r.backward.episodes}, recoveries {r.recoveries}", flush=True)

    result = practice(fb, learners, args.sim_minutes * 60.0, on_episode=on_episode)
    r = result.report
    start, end = demo_sim_s, demo_sim_s + result.sim_s
    figures = {
        "sim_minutes": round(result.sim_s / 60.0, 1),
        "wall_s": round(time.perf_counter() - start_wall, 1),
        "demos": {d: len(demos[d]) for d in demos}, "demo_episodes": demo_report,
        "forward": {"episodes": r.forward.episodes, "success_rate": round(r.forward.success_rate, 3),
                    "window_success": r.forward.window_rates(start, end, args.windows)},
        "backward": {"episodes": r.backward.episodes, "success_rate": round(r.backward.success_rate, 3),
                     "window_success": r.backward.window_rates(start, end, args.windows)},
        "env_steps": result.env_steps, "updates": result.updates,
        "handovers": r.handovers, "robot_resets": r.robot_resets, "recoveries": r.recoveries,
        "pick_ups": r.pick_ups, "escalations": r.escalations,
        "teleports": fb.teleports,
        "reset_sim_s": round(r.reset_sim_s, 1),
        "reset_violations": r.reset_totals.violations,
        "reset_error_clipped_cycles": r.reset_totals.error_clipped_cycles,
    }
    fb.close()
    try:
        png = plot_success(Path(args.out) / f"reset_free_{spec.config}.png", {d: [curves[d]] for d in curves},
                           title=f"{spec.config}: reset-free practice", xlabel="env steps of that direction",
                           ylabel=f"practice success (last {args.curve_window} episodes)")
        figures["png"] = str(png)
    except RobotRLError as err:  # no episode finished: nothing to draw
        print(f"  no success curve: {err}", flush=True)
        figures["png"] = None
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    specs = {spec.config: spec for spec in sim_tasks()}
    parser.add_argument("--task", choices=[*specs, "all"], default="all", help="a task by config name, or all")
    parser.add_argument("--sim-minutes", type=float, default=30.0)
    parser.add_argument("--demos", type=int, default=None,
                        help="scripted demos per direction (default: the task's reset_free_demos)")
    parser.add_argument("--windows", type=int, default=3, help="slices of practice time for the success rates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--out", default="runs/bench_reset_free", help="folder for the success curves")
    parser.add_argument("--curve-window", type=int, default=20, help="episodes averaged per point of the curve")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    tasks = list(specs) if args.task == "all" else [args.task]
    figures = {}
    for config in tasks:
        spec = specs[config]
        print(f"{config}: {args.demos or spec.reset_free_demos} demos per direction, then {args.sim_minutes:g} min "
              f"of sim time; settings {list(spec.reset_free_overrides) + list(args.set)}", flush=True)
        f = figures[config] = run_task(spec, args)
        for d in (FORWARD, BACKWARD):
            print(f"  {d}: {f[d]['episodes']} episodes, success {f[d]['success_rate']:.0%}, "
                  f"by time slice {f[d]['window_success']}")
        print(f"  between episodes: {f['handovers']} hand-overs, {f['robot_resets']} robot resets, "
              f"{f['pick_ups']} scripted pick-ups, {f['recoveries']} scripted recoveries, {f['teleports']} teleports; "
              f"{f['reset_violations']} controller violations, {f['reset_error_clipped_cycles']} error-clipped "
              f"cycles; {f['sim_minutes']} min sim in {f['wall_s']} s wall", flush=True)
    print(json.dumps({"bench": "reset_free", **figures}))


if __name__ == "__main__":
    main()
