"""``robot-rl record-rewards``: record camera frames labelled success/failure for the reward classifier.

In sim the hard-case scenarios move the arm (:mod:`robot_rl.reward.scenarios`) and labels
come from the task's ground truth. ``--labels keys`` takes them from the session's input
device instead (``intervention.device``; success/failure keys set the label, pause
toggles recording, stop ends it): the same labelling code as on hardware.

On a robot (``robot.backend`` other than ``sim``) frames are recorded by the session
graph's actor node instead (``ros.policy=human``, ``ros.reward_frames_dir``, labels from
the person's keys); this command prints how and exits non-zero.

Progress goes to stderr the way every long command shows it
(:mod:`robot_rl.training.progress`): a bar on a terminal, else a status line at the first
frame, every ``learning.log_every_s`` and at the end, e.g.
``record-rewards PickCube: 2400/8000 frames, success 31%, episodes 40``.
"""

from __future__ import annotations

import argparse
import time
from typing import IO, TYPE_CHECKING

from robot_rl import jsonio
from robot_rl.config import Config
from robot_rl.errors import ConfigError
from robot_rl.nodes.intervention import topic_devices
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config
from robot_rl.training.progress import Progress

if TYPE_CHECKING:
    from robot_rl.reward.collect import RecordStats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--out", required=True, help="frame directory to write (format: robot_rl.reward.dataset)")
    parser.add_argument("--frames", type=int, default=8000, help="frames to record")
    parser.add_argument("--labels", choices=["ground_truth", "keys"], default="ground_truth",
                        help="label source: sim ground truth, or the input device's success/failure keys")
    parser.add_argument("--append", action="store_true", help="add to an existing frame directory")
    parser.add_argument("--seed", type=int, default=0, help="first episode seed (and scenario seed)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set reward.image_size=[96,96]")


def hardware_error(cfg, args: argparse.Namespace) -> str:
    """The one line that sends a robot session to the actor node."""
    device = "" if topic_devices(cfg.intervention) else " --set intervention.device=keyboard"
    return (f"robot.backend is '{cfg.robot.backend}': record-rewards drives the sim only; on a robot, record "
            f"through the session graph: robot-rl launch {args.config} --set ros.policy=human "
            f"--set ros.reward_frames_dir={args.out}{device} (the success/failure keys set the label of the "
            "frames that follow, pause skips frames, stop ends; frames are added to a directory that has some)")


def run(args: argparse.Namespace) -> int:
    from robot_rl.assemble import reward_recording_env
    from robot_rl.reward.collect import record_sim
    from robot_rl.reward.labels import KeyLabels

    if args.frames < 1:
        raise ConfigError(f"--frames must be at least 1, got {args.frames}")
    cfg = load_config(resolve_config(args.config), args.overrides)
    if cfg.robot.backend != "sim":
        raise ConfigError(hardware_error(cfg, args))
    if args.labels == "keys" and cfg.intervention.device == "none":
        raise ConfigError(f"{args.config}: --labels keys needs a device with success/failure keys; "
                          "set intervention.device (keyboard, spacemouse+keyboard, ...)")
    progress = FrameProgress(cfg, args.frames)
    started = time.monotonic()
    env = reward_recording_env(cfg)
    labels = None
    try:
        if args.labels == "keys":
            from robot_rl_drivers.input import make_input_device

            labels = KeyLabels(make_input_device(cfg.intervention, env=env))
        stats = record_sim(cfg, args.out, env, frames=args.frames, labels=labels, seed=args.seed,
                           append=args.append, on_frame=progress)
    finally:
        progress.close()
        if labels is not None:
            labels.close()
        env.close()
    seconds = time.monotonic() - started
    print(f"recorded {stats.summary()} to {args.out} in {seconds:.0f} s")
    for tag, (n, pos) in sorted(stats.per_tag.items()):
        print(f"  {tag:14s} {n:6d} frames, {pos:6d} success")
    print(jsonio.dumps({"out": str(args.out), "frames": stats.frames, "positives": stats.positives,
                      "episodes": stats.episodes, "seconds": round(seconds, 1),
                      "label_source": "keys" if labels is not None else "ground_truth", "per_tag": stats.per_tag}))
    return 0


class FrameProgress:
    """``record-rewards``' progress (:mod:`robot_rl.training.progress`), fed each frame's stats.

    It starts at the first frame, so a refused ``--out`` prints its one error line and no
    progress, and :meth:`close` shows the last figures however the recording ended.
    """

    def __init__(self, cfg: Config, frames: int, stream: IO[str] | None = None) -> None:
        self.name, self.frames, self.stream = f"record-rewards {cfg.task.name}", frames, stream
        self.enabled, self.every_s = cfg.train.progress, cfg.learning.log_every_s
        self.progress: Progress | None = None
        self.stats: RecordStats | None = None

    def __call__(self, stats: RecordStats) -> None:
        if self.progress is None:
            self.progress = Progress(self.name, total=self.frames, unit="frame", enabled=self.enabled,
                                     every_s=self.every_s, stream=self.stream)
        self.stats = stats
        if stats.frames < self.frames and self.progress.due():  # figures only now and then; the last: close
            self.progress.show(stats.frames, self.figures(stats))

    @staticmethod
    def figures(stats: RecordStats) -> dict[str, str | int]:
        """The share of success frames so far and the episodes begun."""
        return {"success": f"{stats.positives / stats.frames:.0%}" if stats.frames else "-",
                "episodes": stats.episodes}

    def close(self) -> None:
        if self.progress is not None and self.stats is not None:
            self.progress.close(self.stats.frames, self.figures(self.stats))
