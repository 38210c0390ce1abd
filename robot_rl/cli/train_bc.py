"""``robot-rl train-bc``: behaviour cloning from demos, a base policy in the one checkpoint format.

    robot-rl train-bc --config configs/pick_cube.yaml [--demos DIR] [--chunk N] [--set key=value ...]
                      [--run-dir DIR] [--force]

Writes ``<run_dir>/``: ``config.yaml``, ``checkpoint/`` (``kind: bc``), ``demos/`` (when it
recorded scripted demos) and ``eval.json`` (its eval success in sim, ``train.eval_episodes``
seeded episodes). Ends with one JSON line. See :mod:`robot_rl.training.bc`.
"""

from __future__ import annotations

import argparse

from robot_rl import jsonio
from robot_rl.cli.train import config_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--demos", help="demo folder (record-demos) or a run's replay/ log, whose intervened "
                                        "steps are the demos (default: train.demos; in sim, scripted demos)")
    parser.add_argument("--chunk", metavar="N", help="actions predicted per observation, 1..64 (default: bc.chunk)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set bc.steps=5000")
    parser.add_argument("--run-dir", help="where the checkpoint goes (default: bc.run_dir, else <train.run_dir>_bc)")
    parser.add_argument("--force", action="store_true", help="replace a run already in the run directory")
    parser.add_argument("--no-progress", action="store_true",
                        help="no bar; a status line only when it starts, once a minute and at the end")


def _chunk(text: str) -> int:
    """``--chunk``: an integer in ``[1, MAX_CHUNK]``, else one line naming the flag."""
    from robot_rl.config.bc import MAX_CHUNK
    from robot_rl.config.loader import show
    from robot_rl.errors import ConfigError

    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or not 1 <= value <= MAX_CHUNK:
        raise ConfigError(f"--chunk {show(text)}: give a whole number of actions from 1 to {MAX_CHUNK}")
    return value


def run(args: argparse.Namespace) -> int:
    from robot_rl.training.bc import train_bc

    chunk = () if args.chunk is None else (f"bc.chunk={_chunk(args.chunk)}",)
    cfg = config_from_args(args, "bc.run_dir", *chunk)
    result = train_bc(cfg, demos=args.demos, force=args.force)
    evaluated = result.eval
    summary = {"task": cfg.task.name, "kind": "bc", "run_dir": str(result.run_dir),
               "checkpoint": str(result.run_dir / "checkpoint"), "demos": result.demos,
               "demo_episodes": result.demo_episodes, "failed_left_out": result.failed_left_out,
               "demo_steps": result.demo_steps, "chunk": cfg.bc.chunk,
               "steps": result.steps, "loss": round(result.loss, 6), "wall_s": round(result.wall_s, 1),
               "eval_success_rate": None if evaluated is None else evaluated.success_rate,
               "eval_episodes": 0 if evaluated is None else evaluated.episodes,
               "policy_faults": len(result.faults)}
    if evaluated is not None:
        print(f"{cfg.task.name}: BC eval success {evaluated.success_rate:.0%} over {evaluated.episodes} episodes "
              f"({result.demo_steps} demo steps, {result.steps} steps, {result.wall_s:.0f} s)")
    print(jsonio.dumps(summary))
    return 0
