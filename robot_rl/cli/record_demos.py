"""``robot-rl record-demos``: record demonstration episodes into a demo directory.

    robot-rl record-demos --config configs/pick_cube.yaml --source scripted --episodes 20 --out demos/pick_cube
    robot-rl record-demos --config configs/pick_cube.yaml --source keyboard --episodes 10 --out demos/pick_cube_human

Each episode is on disk as soon as it ends (format: :mod:`robot_rl.data.demos`). An
existing demo directory is refused unless ``--force`` (replace) or ``--append``.

``--source spacemouse|keyboard|gamepad``: a person drives the sim arm, paced at the
control rate (``intervention.device`` becomes the source unless it already includes it,
e.g. ``spacemouse+keyboard``). The arm holds still until the person moves the device;
they end each episode with the success or failure key/button (or the time limit does),
and the stop key (or Ctrl-C) ends the recording with every saved episode kept. A device
that goes away mid-episode ends that episode (kept as a failed one with
``--keep-failed``) and the recording: every saved episode stays, and the device's
one-line error is the exit message. The keys are printed at the start. On a robot
(``robot.backend`` other than ``sim``) demos are recorded by the session graph's actor
node instead (``ros.policy=human``, ``ros.demos_dir``); this command says how.

Progress goes to stderr the way every long command shows it
(:mod:`robot_rl.training.progress`): a bar on a terminal, else a status line when
recording starts, every ``learning.log_every_s`` and at the end, e.g.
``record-demos PickCube scripted: 3/20 episodes, attempts 3, last success, steps 31``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from robot_rl import jsonio
from robot_rl.config import to_dict
from robot_rl.data.recording import HUMAN_SOURCES, KNOWN_SOURCES
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config

#: What the input device builders get besides the config. Empty in use; tests put fake
#: hardware libraries here (``hid_module``, ``listener_factory``), under the real drivers.
DEVICE_CONTEXT: dict[str, Any] = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--source", default="scripted", choices=KNOWN_SOURCES,
                        help="who acts: the scripted expert (sim) or a person with a SpaceMouse, keyboard or gamepad")
    parser.add_argument("--episodes", type=int, default=20, help="episodes to save")
    parser.add_argument("--out", required=True, help="demo directory")
    parser.add_argument("--seed", type=int, default=None, help="first reset seed (default: config seed)")
    parser.add_argument("--noise", type=float, default=None, help="scripted expert action noise (std)")
    parser.add_argument("--keep-failed", action="store_true", help="save failed episodes too")
    parser.add_argument("--force", action="store_true", help="replace demos already in --out")
    parser.add_argument("--append", action="store_true", help="add to demos already in --out")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value")


def hardware_error(cfg: Any, args: argparse.Namespace) -> str:
    """The one line that sends a robot session to the actor node."""
    from robot_rl.tasks import get_task

    spec = get_task(cfg.task.name)
    if spec.real_only and args.source not in HUMAN_SOURCES:
        return str(spec.no_sim("the scripted source (the scripted expert)"))
    if args.source not in HUMAN_SOURCES:
        return (f"the scripted source needs the sim (robot.backend is '{cfg.robot.backend}'); "
                "on a robot, record with --source spacemouse, keyboard or gamepad")
    device = "" if args.source in cfg.intervention.device.split("+") else f" --set intervention.device={args.source}"
    return (f"robot.backend is '{cfg.robot.backend}': record-demos drives the sim only; on a robot, record through "
            f"the session graph: robot-rl launch {args.config} --set ros.policy=human "
            f"--set ros.demos_dir={args.out}{device} (add --set ros.demos_keep_failed=true to keep failed episodes)")


def run(args: argparse.Namespace) -> int:
    from robot_rl.errors import RobotRLError

    if args.episodes < 1:
        raise RobotRLError("--episodes must be at least 1")
    human = args.source in HUMAN_SOURCES
    if human and args.noise is not None:
        raise RobotRLError("--noise is the scripted expert's action noise; it does not apply to --source "
                           f"{args.source}")
    from robot_rl.assemble import make_recording_env
    from robot_rl.data.demos import DemoWriter
    from robot_rl.data.recording import controls_hint, human_config, make_source, record
    from robot_rl.training.progress import Progress

    overrides = list(args.overrides)
    if args.noise is not None:
        overrides.append(f"train.scripted_demo_noise={args.noise}")
    cfg = load_config(resolve_config(args.config), overrides)
    if cfg.robot.backend != "sim":
        raise RobotRLError(hardware_error(cfg, args))
    if human:
        cfg = human_config(cfg, args.source)
    # The device opens here, before the writer touches --out: a missing device leaves demos there as they were.
    env = make_recording_env(cfg, args.source, **DEVICE_CONTEXT)
    source: Any = None
    try:
        source = make_source(args.source, env, cfg)
        writer = DemoWriter(args.out, env.observation_space, env.action_space, task=cfg.task.name,
                            source=cfg.intervention.device if human else args.source, env_config=to_dict(cfg.env),
                            force=args.force, append=args.append)
        if human:
            print(controls_hint(cfg), flush=True)
        progress = Progress(f"record-demos {cfg.task.name} {args.source}", total=args.episodes, unit="episode",
                            enabled=cfg.train.progress, every_s=cfg.learning.log_every_s)
        fields: dict[str, Any] = {"attempts": 0}
        saved_so_far = 0
        progress.show(0, fields)

        def on_episode(saved: int, success: bool, length: int) -> None:
            nonlocal saved_so_far
            saved_so_far = saved
            fields.update(attempts=fields["attempts"] + 1, last="success" if success else "failed", steps=length)
            if saved < args.episodes:  # the last count is the closing line's
                progress.show(saved, fields)

        try:
            summary = record(env, source, writer, args.episodes, seed=cfg.seed if args.seed is None else args.seed,
                             only_success=not args.keep_failed, on_episode=on_episode,
                             max_attempts=sys.maxsize if human else None, interruptible=human)
        finally:
            progress.close(saved_so_far, fields)
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            close()
        env.close()
    ended = " (stopped)" if summary.stopped else " (the input device went away)" if summary.lost else ""
    print(f"saved {summary.saved} episodes ({summary.steps} steps, {summary.successes}/{summary.attempted} "
          f"successful attempts) in {writer.directory}{ended}")
    print(jsonio.dumps({"task": cfg.task.name, "source": args.source, "saved": summary.saved,
                      "attempted": summary.attempted, "successes": summary.successes, "steps": summary.steps,
                      "stopped": summary.stopped, "device_lost": summary.lost, "out": str(writer.directory)}))
    if summary.lost is not None:
        raise RobotRLError(f"{summary.lost}; this recording saved {summary.saved} episodes in {writer.directory} "
                           "(add more with --append)")
    if summary.saved < args.episodes and not (human and summary.stopped):
        raise RobotRLError(f"saved only {summary.saved} of {args.episodes} episodes in {summary.attempted} attempts")
    return 0
