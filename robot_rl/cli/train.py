"""``robot-rl train``: single-process sim training (env, agent and buffers in one process).

    robot-rl train --config configs/pick_cube.yaml [--set key=value ...] [--resume] [--force]

Writes ``<train.run_dir>/``: ``config.yaml``, ``replay/`` (every finished episode),
``tb/`` (TensorBoard: scalars, the config as text, hyperparameters, eval videos),
``evals.jsonl``, ``videos/eval_<env steps>.mp4`` (the first ``train.eval_video_episodes``
episodes of each evaluation), ``success.png`` (eval success against env steps),
``demos/`` (scripted demos it recorded) and ``checkpoint/``; with ``train.wandb.enabled``
also a W&B run (in ``wandb/`` unless ``train.wandb.dir``). Ends with one JSON line.

Stopping: Ctrl-C (or SIGTERM) finishes the episode in flight, saves a checkpoint and
exits with 130 (143) and one line saying how to continue; a second Ctrl-C stops at once.
Either way, and after ``kill -9`` or a power cut too, ``--resume`` continues the run with
every finished episode (see :mod:`robot_rl.training.trainer`).
"""

from __future__ import annotations

import argparse
import signal
import threading
from types import FrameType
from typing import Any

from robot_rl import jsonio
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set train.total_env_steps=5000")
    parser.add_argument("--run-dir", help="where logs and checkpoints go (default: train.run_dir)")
    parser.add_argument("--resume", action="store_true", help="continue the run in the run directory")
    parser.add_argument("--force", action="store_true", help="replace a run already in the run directory")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    overrides = list(args.overrides)
    if args.run_dir:
        overrides.append(f"train.run_dir={args.run_dir}")
    if args.no_progress:
        overrides.append("train.progress=false")
    cfg = load_config(resolve_config(args.config), overrides)
    result = _train_stoppable(cfg, resume=args.resume, force=args.force)
    last = result.evals[-1] if result.evals else {}
    summary = {"task": cfg.task.name, "run_dir": str(result.run_dir), "env_steps": result.env_steps,
               "updates": result.updates, "episodes": result.episodes, "wall_s": round(result.wall_s, 1),
               "eval_success_rate": last.get("success_rate"),
               "success_png": None if result.success_png is None else str(result.success_png),
               "last_video": str(result.run_dir / last["video"]) if last.get("video") else None}
    if last:
        print(f"{cfg.task.name}: eval success {last['success_rate']:.0%} after {result.env_steps} env steps "
              f"({result.wall_s:.0f} s); TensorBoard: tensorboard --logdir {result.run_dir / 'tb'}")
    if result.success_png is not None:
        print(f"success curve: {result.success_png}" + (f"; last eval video: {summary['last_video']}"
                                                         if summary["last_video"] else ""))
    print(jsonio.dumps(summary))
    return 0


def _train_stoppable(cfg: Any, *, resume: bool, force: bool) -> Any:
    """:func:`train`, with SIGTERM handled like Ctrl-C outside the training loop (which handles
    both itself) and a stop at once reported as one line that says how to continue."""
    from robot_rl.training.stopping import TrainingStopped
    from robot_rl.training.trainer import train

    handle_term = (threading.current_thread() is threading.main_thread()
                   and signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN)
    previous = signal.signal(signal.SIGTERM, _interrupt) if handle_term else None
    try:
        return train(cfg, resume=resume, force=force)
    except KeyboardInterrupt:
        raise TrainingStopped(f"stopped at once; every finished episode is in {cfg.train.run_dir}/replay: "
                              "continue the run with the same command and --resume") from None
    finally:
        if handle_term:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
