"""Start from a policy: BC alone, RLPD from scratch, warm start and residual RL, over seeds.

For each task config (``--tasks``: a task or a harder variant such as ``pick_cube_hard``),
demo count and seed, the bench

1. records the demos once, as imperfect as a person's (:mod:`robot_rl.data.imperfect_demos`:
   the scripted expert with ``--demo-noise`` action noise, ``--demo-failed`` of the
   episodes failed and ``--demo-hesitant`` hesitant), into ``<out>/<run>/demos``; every
   arm learns from that same folder (``train.demos``);
2. ``bc``: behaviour cloning on them with ``robot-rl train-bc``'s code, and its eval
   success (the same ``--eval-episodes`` seeded episodes every evaluation uses);
3. ``rlpd``, ``warm_start``, ``residual``: ``robot-rl train``'s trainer from scratch
   (``agent.base.mode: none``) and on top of that BC checkpoint, evaluating every
   ``--eval-every`` env steps and stopping a run once an evaluation reaches ``--target``
   (a run that never does within ``--budget`` env steps is "not reached", and counts as
   more than the budget in the median);

and reports per arm the env steps to the target per seed and their median, and for every
RL arm the dip: its lowest eval success in the first ``--dip-window`` env steps minus BC's
(negative: below BC), and the late dip: the same after the first ``--late-after`` env steps to
the run's end (the goal's "never more than 10 points below BC after the first 1,000"). Each
comes with the chance that noise alone makes a dip that deep (``dip_chance``,
``late_dip_chance``: the evaluations as binomial draws at BC's rate; see :func:`dip_chance`).
Draws ``<out>/<task>_<state|pixels>_<N>demos.png`` per task and demo count: eval success
against env steps, per arm the median over seeds with the band from the lowest to the highest
seed, BC alone as its level. After every run the records so far go to ``<out>/partial.json``;
the last line printed is one JSON object.

Each finished piece (a seed's demos, its BC, each RL arm) leaves its record beside it
(``<out>/<run>/<piece>.json``). ``--resume`` reads those back instead of running them again
and continues an RL arm that a stop (Ctrl-C, SIGTERM) cut short from its run's checkpoint,
its curve read from the run's own ``evals.jsonl``; the options that shape a run must be the
ones the folder was started with (``<out>/settings.json``; the config files are not compared).

    python bench/base_policy.py                                   # the three harder variants, 3 seeds, 20 and 5 demos
    python bench/base_policy.py --tasks pick_cube_hard --demos 20 --budget 10000
    python bench/base_policy.py --pixels --tasks pick_cube_hard peg_insert_hard --demos 20
    python bench/base_policy.py --arms bc residual --set agent.residual.scale=0.3

With ``--pixels`` a run uses the task's robot's-view config (``<task>_pixels.yaml``:
images and proprioception only) with the variant's task parameters.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, NoReturn, Sequence

import numpy as np

from robot_rl import jsonio
from robot_rl.data.durable import durable_write_text
from robot_rl.data.imperfect_demos import DemoFlaws
from robot_rl.errors import RobotRLError, one_line
from robot_rl.paths import pixels_config, resolve_config
from robot_rl.tasks import get_task, load_config

ARMS = ("bc", "rlpd", "warm_start", "residual")
RL_ARMS = ("rlpd", "warm_start", "residual")
#: agent.base.mode of each RL arm.
MODES = {"rlpd": "none", "warm_start": "warm_start", "residual": "residual"}
#: The harder variants: every configs/<task>_hard.yaml (task params only, see docs/learning.md).
DEFAULT_TASKS = tuple(sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "configs").glob("*_hard.yaml")))
#: Demos are recorded with seed + this (as robot-rl train's scripted demos are), apart from the runs' seeds.
DEMO_SEED_OFFSET = 1_000_000
#: The options a folder was started with, checked by --resume.
SETTINGS_FILE = "settings.json"


def fail(message: str) -> NoReturn:
    """A usage or config error: one line on stderr, exit 2."""
    print(f"base_policy.py: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(2)


# --- options --------------------------------------------------------------------------


class OneLineParser(argparse.ArgumentParser):
    """argparse's own errors (an unknown option, a value of the wrong type) as one line too."""

    def error(self, message: str) -> NoReturn:
        fail(message)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", "--task", nargs="+", default=list(DEFAULT_TASKS),
                        help="task configs by name or path (default: the three harder variants)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--demos", nargs="+", type=int, default=[20, 5], help="demo episodes per run")
    parser.add_argument("--budget", type=int, default=10_000, help="env steps per RL run at most")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS,
                        help="what to run (warm_start and residual train BC first either way)")
    parser.add_argument("--pixels", action="store_true", help="learn from camera images (<task>_pixels.yaml)")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--eval-every", type=int, default=1000)
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--dip-window", type=int, default=2000, help="env steps the dip is taken over")
    parser.add_argument("--late-after", type=int, default=1000,
                        help="the late dip: the lowest eval success after this many env steps, to the run's end")
    parser.add_argument("--demo-noise", type=float, default=0.3,
                        help="std of the noise on each motion component of the expert's [-1, 1] action")
    parser.add_argument("--demo-failed", type=float, default=0.15, help="fraction of the demos that fail")
    parser.add_argument("--demo-hesitant", type=float, default=0.25, help="fraction of the demos that pause")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--out", default="runs/bench_base_policy")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="config override for every run (BC and RL)")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the pieces --out already holds and continue the RL runs a stop cut short")
    args = parser.parse_args(argv)
    check_args(args)
    return args


def check_args(args: argparse.Namespace) -> None:
    """Every option checked before anything runs: one line and exit 2 for the first bad one."""
    for name, values, low in (("--seeds", args.seeds, 0), ("--demos", args.demos, 1)):
        bad = [v for v in values if v < low]
        if bad:
            fail(f"{name} {bad[0]}: must be at least {low}")
        if len(set(values)) != len(values):
            fail(f"{name} {values}: each value once")
    for name, value, low in (("--budget", args.budget, 1), ("--eval-every", args.eval_every, 1),
                             ("--eval-episodes", args.eval_episodes, 1), ("--dip-window", args.dip_window, 0),
                             ("--late-after", args.late_after, 0)):
        if value < low:
            fail(f"{name} {value}: must be at least {low}")
    if not (math.isfinite(args.target) and 0.0 < args.target <= 1.0):
        fail(f"--target {args.target}: must lie in (0, 1]")
    try:
        args.flaws = DemoFlaws(noise=args.demo_noise, failed=args.demo_failed, hesitant=args.demo_hesitant,
                               names={"noise": "--demo-noise", "failed": "--demo-failed",
                                      "hesitant": "--demo-hesitant"})
    except RobotRLError as err:
        fail(str(err))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: exists and is not a folder")
    if args.resume:
        check_resume(out / SETTINGS_FILE, settings(args))
    for task in args.tasks:  # every config, with the overrides, loads and is a sim task with an expert
        try:
            cfg = load_config(*config_for(task, args, []))
        except (RobotRLError, OSError) as err:
            fail(f"--tasks {task}: {err}")
        if cfg.robot.backend != "sim" or get_task(cfg.task.name).real_only:
            fail(f"--tasks {task}: the bench needs a sim task with a scripted expert (robot.backend: sim)")


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The options that shape a run's records: a resumed folder must have been started with them."""
    return {"view": "pixels" if args.pixels else "state", "budget": args.budget, "target": args.target,
            "eval_every": args.eval_every, "eval_episodes": args.eval_episodes, "device": args.device,
            "demo_flaws": args.flaws.as_dict(), "overrides": list(args.overrides)}


def check_resume(path: Path, wanted: dict[str, Any]) -> None:
    """``--resume`` into a folder this bench started with the same :func:`settings`."""
    if not path.is_file():
        fail(f"--resume: {path} not found: nothing to resume in {path.parent} (start it without --resume)")
    try:
        started = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        fail(f"--resume: {path}: unreadable ({one_line(err)})")
    if not isinstance(started, dict):
        fail(f"--resume: {path}: not the bench's settings")
    changed = [key for key in wanted if started.get(key) != wanted[key]]
    if changed:
        key = changed[0]
        fail(f"--resume: {path}: {key} was {json.dumps(started.get(key))}, this run asks {json.dumps(wanted[key])}; "
             "resume with the options the folder was started with, or use another --out")


def reuse(path: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    """A finished piece's record, with ``--resume`` where one was written (else None: run it)."""
    if not (args.resume and path.is_file()):
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # cut while written: run the piece again
    return record if isinstance(record, dict) else None


def keep(path: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Write a finished piece's record beside it (what ``--resume`` reads back); return it."""
    durable_write_text(path, jsonio.dumps(record, indent=1))
    return record


def config_for(task: str, args: argparse.Namespace, extra: list[str]) -> tuple[Path, list[str]]:
    """The config file of ``task`` and the overrides of one run (pixels: the task's robot's-view
    config with the variant's task parameters)."""
    path = resolve_config(task)
    overrides = [f"train.device={args.device}", "train.progress=false", "train.eval_video_episodes=0",
                 "train.checkpoint_every=0", f"train.eval_every={args.eval_every}",
                 f"train.eval_episodes={args.eval_episodes}"]
    if args.pixels:
        variant = load_config(path)
        spec = get_task(variant.task.name)
        pixels = pixels_config(spec.config)
        if pixels is None:
            raise RobotRLError(f"task {spec.name} has no robot's-view config ({spec.config}_pixels.yaml)")
        params = dataclasses.asdict(variant.task.params)
        overrides = [f"task.params.{k}={json.dumps(list(v) if isinstance(v, tuple) else v)}"
                     for k, v in params.items()] + overrides + ["env.obs_mode=pixels"]
        path = resolve_config(pixels)
    return path, overrides + list(args.overrides) + extra


# --- one seed ---------------------------------------------------------------------------


def record_demos(task: str, demos: int, seed: int, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Record ``demos`` imperfect demos into ``folder``; their kinds and outcomes."""
    from robot_rl.assemble import make_actor_env
    from robot_rl.config import to_dict
    from robot_rl.data.demos import DemoWriter
    from robot_rl.data.imperfect_demos import record_imperfect

    cfg = load_config(*config_for(task, args, [f"seed={seed}"]))
    env = make_actor_env(cfg, "demos")  # type: ignore[arg-type]
    try:
        writer = DemoWriter(folder, env.observation_space, env.action_space, task=cfg.task.name,
                            source=f"scripted, imperfect: {args.flaws.describe()}", env_config=to_dict(cfg.env),
                            force=True)
        expert = env.unwrapped.task.make_expert(env, noise=0.0, seed=seed)
        summary = record_imperfect(env, expert, writer, demos, args.flaws, seed=seed + DEMO_SEED_OFFSET)
    finally:
        env.close()
    return {"episodes": len(summary.kinds), "failed": summary.successes.count(False),
            "hesitant": summary.kinds.count("hesitant"), "attempted": summary.attempted, "steps": summary.steps}


def run_bc(task: str, seed: int, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    from robot_rl.training.bc import train_bc

    cfg = load_config(*config_for(task, args, [f"seed={seed}", f"train.demos={root / 'demos'}",
                                                f"bc.run_dir={root / 'bc'}"]))
    start = time.perf_counter()
    result = train_bc(cfg, force=True)
    assert result.eval is not None
    return {"success": result.eval.success_rate, "failed_left_out": result.failed_left_out,
            "loss": result.loss, "wall_s": round(time.perf_counter() - start, 1),
            "refused_episodes": len(result.faults)}


def run_rl(task: str, arm: str, seed: int, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One RL arm, or with ``--resume`` the rest of one a stop cut short (its curve is then the
    whole run's, from its ``evals.jsonl``; ``wall_s`` counts this part only)."""
    from robot_rl.training.curves import read_evals
    from robot_rl.training.metrics import EVALS_FILE
    from robot_rl.training.trainer import train

    run_dir = root / arm
    extra = [f"seed={seed}", f"train.demos={root / 'demos'}", "train.scripted_demos=0",
             f"train.total_env_steps={args.budget}", f"train.stop_at_success={args.target}",
             f"train.run_dir={run_dir}", f"agent.base.mode={MODES[arm]}"]
    if arm != "rlpd":
        extra += [f"agent.base.source={root / 'bc'}"]
    if arm == "warm_start":
        extra += ["train.random_steps=0"]
    cfg = load_config(*config_for(task, args, extra))
    resume = args.resume and (run_dir / "config.yaml").is_file()
    start = time.perf_counter()
    result = train(cfg, resume=resume, force=not resume)
    curve = read_evals(run_dir / EVALS_FILE)
    return {"steps": next((step for step, rate in curve if rate >= args.target), None),
            "env_steps_run": result.env_steps, "best_success": max((y for _, y in curve), default=0.0),
            "curve": curve, "wall_s": round(time.perf_counter() - start, 1), "resumed": resume}


def dip(curve: Sequence[tuple[float, float]], bc_success: float | None, window: int,
        after: float = -math.inf) -> float | None:
    """Lowest eval success after ``after`` and at or before ``window`` env steps minus BC's
    (None without both)."""
    early = [y for x, y in curve if after < x <= window]
    if bc_success is None or not early:
        return None
    return round(min(early) - bc_success, 4)


def dip_chance(dip_value: float | None, bc_success: float | None, evals: int, episodes: int) -> float | None:
    """The chance that a policy exactly as good as BC shows a dip at least as deep as ``dip_value``.

    The dip compares evaluations of a few episodes each, so noise alone makes one: BC's own
    evaluation and the ``evals`` evaluations in the window are taken as independent binomial
    draws of ``episodes`` episodes at BC's measured success rate. At 20 episodes and a 70%
    rate a policy that never changed dips 15 points or more in about 3 runs of 10, so a dip
    with a large chance says little either way. None without a dip.
    """
    if dip_value is None or bc_success is None or evals < 1:
        return None
    n, p = episodes, bc_success
    pmf = [math.comb(n, k) * p**k * (1.0 - p) ** (n - k) for k in range(n + 1)]
    cdf = np.cumsum(pmf)
    chance = 0.0
    for bc_count, weight in enumerate(pmf):  # BC's count, then the lowest of the window's counts
        deepest = math.floor(bc_count + dip_value * n + 1e-9)
        if deepest >= 0:
            chance += weight * (1.0 - (1.0 - float(cdf[min(deepest, n)])) ** evals)
    return round(min(chance, 1.0), 4)


def dip_and_chance(curve: Sequence[tuple[float, float]], bc_success: float | None, window: float,
                   episodes: int, after: float = -math.inf) -> tuple[float | None, float | None]:
    """:func:`dip` over the evaluations after ``after`` and at or before ``window``, and its
    :func:`dip_chance` over the same evaluations (one filter, so the two cannot disagree)."""
    evals = sum(after < x <= window for x, _ in curve)
    value = dip(curve, bc_success, window, after=after)
    return value, dip_chance(value, bc_success, evals, episodes)


# --- summaries ----------------------------------------------------------------------------


def median_steps(steps: Sequence[int | None]) -> float | None:
    """The median env steps to the target; a seed that did not reach it counts as more than the budget."""
    padded = sorted(math.inf if s is None else s for s in steps)
    if not padded:
        return None
    value = float(np.median(padded))
    return None if math.isinf(value) else value


def summarize(runs: Sequence[dict[str, Any]], arms: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    """One task and demo count: per arm its figures over the seeds."""
    out: dict[str, Any] = {"seeds": [r["seed"] for r in runs],
                           "demos": {str(r["seed"]): r["demos"] for r in runs}}
    bc = [r["bc"]["success"] for r in runs if "bc" in r]
    if bc:
        out["bc"] = {"success": bc, "median": float(np.median(bc))}
    for arm in arms:
        if arm == "bc":
            continue
        steps = [r[arm]["steps"] for r in runs if arm in r]
        dips = [r[arm]["dip"] for r in runs if arm in r and r[arm]["dip"] is not None]
        out[arm] = {"steps": steps, "median": median_steps(steps),
                    "reached": f"{sum(s is not None for s in steps)}/{len(steps)}",
                    "best_success": [r[arm]["best_success"] for r in runs if arm in r],
                    "dip": [r[arm]["dip"] for r in runs if arm in r], "worst_dip": min(dips) if dips else None,
                    "dip_chance": [r[arm]["dip_chance"] for r in runs if arm in r],
                    "late_dip": [r[arm]["late_dip"] for r in runs if arm in r],
                    "late_dip_chance": [r[arm]["late_dip_chance"] for r in runs if arm in r],
                    "wall_s": round(sum(r[arm]["wall_s"] for r in runs if arm in r), 1)}
    return out


def draw(png: Path, runs: Sequence[dict[str, Any]], arms: Sequence[str], title: str,
         args: argparse.Namespace) -> str | None:
    from robot_rl.training.curves import plot_success

    series: dict[str, list] = {}
    bc = [r["bc"]["success"] for r in runs if "bc" in r]
    longest = max([x for r in runs for arm in RL_ARMS if arm in r for x, _ in r[arm]["curve"]] + [args.eval_every])
    if bc:  # BC alone does not learn on: its level, drawn across the runs
        series["BC alone"] = [[(0.0, b), (float(longest), b)] for b in bc]
    for arm in arms:
        if arm != "bc":
            series[arm] = [r[arm]["curve"] for r in runs if arm in r]
    try:
        plot_success(png, series, title=title, target=args.target)
    except RobotRLError as err:  # nothing evaluated (an RL arm stopped before its first evaluation)
        print(f"no success curve: {err}", flush=True)
        return None
    return str(png)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    out = Path(args.out)
    view = "pixels" if args.pixels else "state"
    arms = [a for a in ARMS if a in args.arms]
    needs_bc = any(a in arms for a in ("bc", "warm_start", "residual"))
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    durable_write_text(out / SETTINGS_FILE, jsonio.dumps(settings(args), indent=1))
    records: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    for task in args.tasks:
        for demos in args.demos:
            runs = []
            for seed in args.seeds:  # seed by seed: a run cut short still has whole seeds
                root = out / f"{Path(task).stem}_{view}_{demos}demos_seed{seed}"
                run: dict[str, Any] = {"task": Path(task).stem, "view": view, "seed": seed}
                run["demos"] = (reuse(root / "demos.json", args)
                                or keep(root / "demos.json", record_demos(task, demos, seed, root / "demos", args)))
                if needs_bc:
                    run["bc"] = reuse(root / "bc.json", args) or keep(root / "bc.json", run_bc(task, seed, root, args))
                    print(f"{task} {view} demos={demos} seed={seed}: BC eval success {run['bc']['success']:.0%} "
                          f"({run['bc']['wall_s']:.0f} s)", flush=True)
                for arm in (a for a in arms if a != "bc"):
                    run[arm] = (reuse(root / f"{arm}.json", args)
                                or keep(root / f"{arm}.json", run_rl(task, arm, seed, root, args)))
                    bc_success, curve = run.get("bc", {}).get("success"), run[arm]["curve"]
                    run[arm]["dip"], run[arm]["dip_chance"] = dip_and_chance(
                        curve, bc_success, args.dip_window, args.eval_episodes)
                    run[arm]["late_dip"], run[arm]["late_dip_chance"] = dip_and_chance(
                        curve, bc_success, math.inf, args.eval_episodes, after=args.late_after)
                    reached = run[arm]["steps"]
                    print(f"{task} {view} demos={demos} seed={seed} {arm}: "
                          + (f"reached {args.target:.0%} at {reached} env steps" if reached is not None
                             else f"did not reach {args.target:.0%} in {run[arm]['env_steps_run']} env steps")
                          + f" (best {run[arm]['best_success']:.0%}, dip {run[arm]['dip']}"
                          + ("" if run[arm]["dip_chance"] is None
                             else f", chance {run[arm]['dip_chance']:.2f} at BC's level")
                          + f", {run[arm]['wall_s']:.0f} s)", flush=True)
                runs.append(run)
                records.append(run)
                durable_write_text(out / "partial.json", jsonio.dumps({"runs": records}, indent=1))
            name = f"{Path(task).stem}_{view}_{demos}demos"
            results[name] = summarize(runs, arms, args)
            results[name]["png"] = draw(out / f"{name}.png", runs, arms,
                                        f"{Path(task).stem} ({view}, {demos} demos): eval success, "
                                        f"{args.eval_episodes} episodes", args)
    print(json.dumps({"target": args.target, "budget": args.budget, "eval_every": args.eval_every,
                      "eval_episodes": args.eval_episodes, "dip_window": args.dip_window,
                      "late_after": args.late_after, "view": view,
                      "demo_flaws": args.flaws.as_dict(), "overrides": list(args.overrides),
                      "wall_s": round(time.perf_counter() - started, 1), "results": results}))


if __name__ == "__main__":
    main()
