"""``robot-rl learner``: the learner process of the learning plane.

    ROBOT_RL_TOKEN=... robot-rl learner --config configs/pick_cube.yaml [--resume | --force]

Listens on ``learning.host:learning.port`` (127.0.0.1:50051 unless configured) for
``robot-rl actor`` processes, trains on what they send and streams weights back. Writes
``<run_dir>/`` (``--run-dir``, else ``learning.run_dir``, else ``<train.run_dir>_learner``,
so it never collides with the ``robot-rl train`` run of the same config): ``replay/``
(every finished episode, fsync'd), ``demos/``, ``checkpoint/`` (the trainer's format:
``robot-rl eval`` runs it), ``learner/``, ``tb/``, ``evals.jsonl``. After a crash,
``--resume`` goes on with all of it.

Shows its progress on stderr (a bar on a terminal, else a status line every
``learning.log_every_s``): env steps received (per actor), updates, the update-to-data
ratio, the weight version. Ends with one JSON line. A run that could not write steps
actors sent (disk full, ...) says so in one ``robot-rl: learner: ...`` line on stderr and
exits with status 1: the run itself failed. Peers or batches it turned away for good
(wrong token, other spaces, malformed or non-finite batches: every one is logged with
the peer's address) are counted in the JSON line (``refused``) and named in the last
lines, and leave the status 0 unless ``--strict`` (``learning.refusals_fatal``) makes
them fatal. ``--max-seconds`` counts from the command's start and the learner ends
within a few seconds of it (see :meth:`LearnerProcess.run`).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time

from robot_rl import jsonio
from robot_rl.cli.train import config_from_args
from robot_rl.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config, e.g. configs/pick_cube.yaml")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set learning.port=50052")
    parser.add_argument("--run-dir", help="where replay, checkpoints and logs go "
                        "(default: learning.run_dir, else <train.run_dir>_learner)")
    parser.add_argument("--resume", action="store_true", help="continue the run in the run directory")
    parser.add_argument("--force", action="store_true", help="replace a run already in the run directory")
    parser.add_argument("--host", help="address to listen on (default: learning.host)")
    parser.add_argument("--port", type=int, help="port to listen on (default: learning.port; 0: any free port)")
    parser.add_argument("--max-updates", type=int, help="stop after this many updates")
    parser.add_argument("--max-seconds", type=float,
                        help="stop this long after the command started (within a few seconds)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when peers or batches were refused for good (learning.refusals_fatal)")
    parser.add_argument("--no-eval", action="store_true", help="no periodic evaluation in sim")
    parser.add_argument("--no-tensorboard", action="store_true", help="no TensorBoard logs")
    parser.add_argument("--no-progress", action="store_true",
                        help="no bar; a status line only when it starts, once a minute and at the end"
                             " (env steps per actor, updates, UTD, weights)")


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()  # --max-seconds counts from here: demo recording is part of the run
    from robot_rl.training.remote.learner_process import (
        LearnerProcess,
        ending_problem,
        install_stop_signals,
        learner_run_dir,
        refusals_line,
    )

    if args.max_seconds is not None and not (math.isfinite(args.max_seconds) and args.max_seconds > 0):
        raise ConfigError(f"--max-seconds {args.max_seconds} must be a positive number of seconds")
    cfg = config_from_args(args, "learning.run_dir", *(["learning.refusals_fatal=true"] if args.strict else []))
    # The learner's run lives apart from robot-rl train's: LearnerProcess writes to train.run_dir.
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, run_dir=str(learner_run_dir(cfg))))
    token = cfg.learning.resolve_token()
    process = LearnerProcess(cfg, token, resume=args.resume, force=args.force,
                             evaluate=False if args.no_eval else None, tensorboard=not args.no_tensorboard)
    install_stop_signals(process.stop)
    try:
        summary = process.run(max_updates=args.max_updates, max_seconds=args.max_seconds,
                              host=args.host, port=args.port, started=started)
    finally:
        process.close()
    last = summary["evals"][-1] if summary["evals"] else {}
    refusals = refusals_line(summary)
    print(f"learner: {summary['received_steps']} env steps from {len(summary['actors'])} actor(s), "
          f"{summary['updates']} updates, weights v{summary['weight_version']}"
          + (f", eval success {last['success_rate']:.0%}" if last else "") + (f"; {refusals}" if refusals else ""))
    print(jsonio.dumps({"run_dir": str(process.run_dir), **{k: v for k, v in summary.items() if k != "actors"},
                      "actors": {k: {"steps": v["steps"], "episodes": v["episodes"]}
                                 for k, v in summary["actors"].items()}}))
    problem = ending_problem(summary, process.run_dir, refusals_fatal=cfg.learning.refusals_fatal)
    if problem is not None:  # data not stored (or, with --strict, a peer turned away): not a clean run
        print(f"robot-rl: learner: {problem}", file=sys.stderr)
        return 1
    if refusals:  # strangers knocked: reported, but this run is healthy
        print(f"learner: {refusals}, counted in {process.state_dir / 'stats.json'}; see the log for peers and "
              "reasons; the run itself is healthy (--strict makes refusals fail it)", file=sys.stderr)
    return 0
