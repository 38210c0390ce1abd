"""``robot-rl actor``: run an env with the policy and stream every step to a learner.

    ROBOT_RL_TOKEN=... robot-rl actor --config configs/pick_cube.yaml --learner 127.0.0.1:50051

Runs the sim env of the config (the ROS actor node runs the same loop on hardware),
swaps in new weights from the learner between steps, and keeps acting while the
learner is away (steps wait in a bounded queue and go out on reconnect). A refused
token or a config whose spaces differ from the learner's ends it with one error line.
Shows its progress on stderr (a bar on a terminal, else a status line every
``learning.log_every_s``): env steps, episodes, successes, weight version, unsent steps.
Ends with one JSON line; when steps are left unsent at the end (the learner was never
reached, or did not acknowledge them within ``--flush-timeout``) it also says so in one
``robot-rl: actor: ...`` line on stderr and exits with status 1.

With no learner answering, the actor says so once after a few seconds (and what to
start); its steps until the learner first answers do not count toward ``--max-steps`` or
``--max-episodes``, and after ``--connect-timeout`` seconds (300) without one it stops at
the episode's end with that one line and status 1.
"""

from __future__ import annotations

import argparse
import math
import sys

from robot_rl import jsonio
from robot_rl.cli.train import config_from_args
from robot_rl.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config, e.g. configs/pick_cube.yaml")
    parser.add_argument("--learner", metavar="HOST:PORT", help="the learner (default: learning.host:learning.port)")
    parser.add_argument("--actor-id", help="name shown in the learner's stats (default: <hostname>-<pid>)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set learning.batch_steps=32")
    parser.add_argument("--seed", type=int, help="env and exploration seed (default: derived from the actor id)")
    parser.add_argument("--max-steps", type=int, help="stop at the first episode end after this many steps")
    parser.add_argument("--max-episodes", type=int, help="stop after this many episodes")
    parser.add_argument("--connect-timeout", type=float, default=300.0, metavar="SECONDS",
                        help="stop when no learner has answered this long after the start (0: wait forever)")
    parser.add_argument("--flush-timeout", type=float, default=30.0,
                        help="seconds to wait at the end for queued steps to reach the learner")
    parser.add_argument("--no-progress", action="store_true",
                        help="no bar; a status line only when it starts, once a minute and at the end"
                             " (episodes, success, weights, unsent steps)")


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args, None)
    if not math.isfinite(args.connect_timeout) or args.connect_timeout < 0:
        raise ConfigError(f"--connect-timeout {args.connect_timeout} must be a number of seconds >= 0 "
                          "(0: wait for the learner forever)")
    if args.learner is not None and (":" not in args.learner or not args.learner.rsplit(":", 1)[1].isdigit()):
        raise ConfigError(f"--learner {args.learner!r} must look like HOST:PORT")
    token = cfg.learning.resolve_token()
    import torch  # the heavy imports once the arguments and the config are checked

    from robot_rl.training.remote.actor_process import ActorProcess
    from robot_rl.training.remote.learner_process import install_stop_signals

    torch.set_num_threads(cfg.train.torch_threads or 1)  # one small forward pass per step; leave cores to others
    actor = ActorProcess(cfg, token, target=args.learner, actor_id=args.actor_id, seed=args.seed)
    install_stop_signals(actor.stop)
    summary = actor.run(max_steps=args.max_steps, max_episodes=args.max_episodes,
                        flush_timeout=args.flush_timeout, count_only_connected=True,
                        connect_timeout_s=args.connect_timeout or None)
    print(f"actor {summary['actor_id']}: {summary['steps']} steps, {summary['episodes']} episodes "
          f"({summary['successes']} successes), last weights v{summary['weight_version']}, "
          f"{summary['queued_steps']} unsent, {summary['dropped_steps']} dropped")
    print(jsonio.dumps(summary))
    problem = actor.unsent_problem(summary)
    if problem is not None:  # the steps are lost: say so, and do not end as a success
        print(f"robot-rl: actor: {problem}", file=sys.stderr)
        return 1
    return 0
