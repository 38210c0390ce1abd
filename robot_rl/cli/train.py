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
every finished episode (see :mod:`robot_rl.training.trainer`). ``--resume`` of a run that
already reached ``train.total_env_steps`` says so, with the command that extends it, and
reports the run's last evaluation and video (from ``evals.jsonl`` and ``videos/``); exit 0.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from robot_rl import jsonio
from robot_rl.config import Config
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set train.total_env_steps=5000")
    parser.add_argument("--run-dir", help="where logs and checkpoints go (default: train.run_dir)")
    parser.add_argument("--resume", action="store_true", help="continue the run in the run directory")
    parser.add_argument("--force", action="store_true", help="replace a run already in the run directory")
    parser.add_argument("--no-progress", action="store_true",
                        help="no bar; a status line only when it starts, once a minute and at the end"
                             " (env steps, episodes, success, eval)")


def config_from_args(args: argparse.Namespace, run_dir_key: str | None, *extra: str) -> Config:
    """The config a training command runs with: ``--config`` with its ``--set`` overrides, then ``extra``
    (what the command's own flags set), ``--run-dir`` as ``run_dir_key`` and ``--no-progress``.

    ``robot-rl train``, ``train-bc``, ``learner`` and ``actor`` read their common flags this way,
    so a flag means the same in each and wins over a ``--set`` of the same key. ``run_dir_key``
    None: the command has no ``--run-dir``.
    """
    overrides = [*args.overrides, *extra]
    if run_dir_key is not None and args.run_dir:
        overrides.append(f"{run_dir_key}={args.run_dir}")
    if args.no_progress:
        overrides.append("train.progress=false")
    return load_config(resolve_config(args.config), overrides)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args, "train.run_dir")
    result = _train_stoppable(cfg, resume=args.resume, force=args.force)
    last = (result.evals[-1] if result.evals else None) or _last_eval(result.run_dir) or {}
    video = _last_video(result.run_dir, last)
    summary = {"task": cfg.task.name, "run_dir": str(result.run_dir), "env_steps": result.env_steps,
               "updates": result.updates, "episodes": result.episodes, "wall_s": round(result.wall_s, 1),
               "eval_success_rate": last.get("success_rate"), "last_eval_env_steps": last.get("env_steps"),
               "success_png": None if result.success_png is None else str(result.success_png),
               "last_video": None if video is None else str(video), "finished_before": result.finished_before}
    if result.finished_before:
        total = cfg.train.total_env_steps
        print(f"{result.run_dir} is finished at {result.env_steps} env steps (train.total_env_steps={total}); "
              f"to train it further: --resume --set train.total_env_steps={max(2 * total, result.env_steps + 1)}")
    if last:
        print(f"{cfg.task.name}: {result.env_steps} env steps ({result.wall_s:.0f} s); last eval at "
              f"{last['env_steps']} env steps: {last['success_rate']:.0%}; TensorBoard: tensorboard --logdir "
              f"{result.run_dir / 'tb'}")
    if result.success_png is not None:
        print(f"success curve: {result.success_png}" + (f"; last eval video: {summary['last_video']}"
                                                         if summary["last_video"] else ""))
    print(jsonio.dumps(summary))
    return 0


def _last_eval(run_dir: Path) -> dict[str, Any] | None:
    """The run's last whole evaluation record in ``evals.jsonl`` (a torn last line is skipped)."""
    from robot_rl.training.metrics import EVALS_FILE

    path = Path(run_dir) / EVALS_FILE
    if not path.is_file():
        return None
    for line in reversed(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("success_rate"), (int, float)) and \
                isinstance(record.get("env_steps"), int):
            return record
    return None


def _last_video(run_dir: Path, last: dict[str, Any]) -> Path | None:
    """The last eval's video if it is on disk, else the newest ``videos/eval_<env steps>.mp4``."""
    named = Path(run_dir) / last["video"] if isinstance(last.get("video"), str) else None
    if named is not None and named.is_file():
        return named
    videos = [(int(m.group(1)), p) for p in (Path(run_dir) / "videos").glob("eval_*.mp4")
              if (m := re.fullmatch(r"eval_(\d+)\.mp4", p.name))]
    return max(videos)[1] if videos else None


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
