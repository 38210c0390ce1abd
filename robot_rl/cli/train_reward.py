"""``robot-rl train-reward``: train the reward classifier, report it, and save it only if it meets the bar.

Writes ``PATH`` (the model, see :mod:`robot_rl.reward.model`) and ``PATH`` with suffix
``.report.json`` next to it. A classifier whose held-out report misses the bar
(``reward.min_accuracy``, ``max_fpr``, ``min_recall``) is refused: nothing is saved but
its report, as ``<stem>.rejected.json``, and the command exits non-zero, unless
``--force``.

Progress goes to stderr the way every long command shows it
(:mod:`robot_rl.training.progress`): a bar on a terminal, else a status line when training
starts, every ``learning.log_every_s`` and after the last step, e.g. ``train-reward:
400/2000 steps, loss 0.3121``, with a line before each wait the count cannot show (loading
the frames and torch, scoring after the last step). The config and the frames' layout are
checked before torch is imported, so a refusal is quick.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from robot_rl import jsonio
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config
from robot_rl.training.progress import Progress


class ClassifierRejected(RobotRLError):
    """The trained classifier's held-out report misses the configured bar."""

    exit_code = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--data", required=True, help="frame directory written by 'robot-rl record-rewards'")
    parser.add_argument("--out", required=True, help="classifier file to write, e.g. runs/reward/pick_cube.pt")
    parser.add_argument("--force", action="store_true", help="save the classifier even if it misses the bar")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set reward.train_steps=500")


def run(args: argparse.Namespace) -> int:
    from robot_rl.reward.dataset import check_layout, chunk_paths, load_frames, read_meta

    cfg = load_config(resolve_config(args.config), args.overrides)
    rcfg = cfg.reward
    out = Path(args.out)
    if out.suffix in (".json", "") or out.is_dir():
        raise ConfigError(f"--out {out}: give a model file name such as reward.pt")
    check_layout(read_meta(args.data), rcfg.cameras, rcfg.image_size, args.data)
    progress = Progress("train-reward", total=rcfg.train_steps, unit="step", enabled=cfg.train.progress,
                        every_s=cfg.learning.log_every_s)
    chunks = len(chunk_paths(args.data))
    progress.note(f"loading torch and {chunks} chunk{'' if chunks == 1 else 's'} of frames from {args.data}")
    from robot_rl.reward.train import report_path, save_rejected_report, save_result, train_classifier

    frames = load_frames(args.data)
    progress.note(f"{len(frames)} frames ({int(frames.label.sum())} success) from {args.data}")
    progress.show(0, {"loss": "-"})
    finished = False

    def on_step(step: int, loss: float) -> None:
        nonlocal finished
        if step >= rcfg.train_steps:  # the last: its line now, then say what the wait after it is
            progress.close(step, {"loss": f"{loss:.4f}"})
            finished = True
            progress.note("choosing the threshold on the calibration frames, scoring the held-out frames")
        elif progress.due():
            progress.show(step, {"loss": f"{loss:.4f}"})

    try:
        result = train_classifier(frames, rcfg, seed=args.seed, data_dir=str(args.data), on_step=on_step)
    finally:
        if not finished:
            progress.close()
    report = result.report
    held = report["held_out"]
    print(_summary(report))
    if not result.accepted and not args.force:
        path = save_rejected_report(out, result)
        raise ClassifierRejected(f"classifier refused, not saved: {'; '.join(result.failures)} "
                                 f"(report: {path}; --force saves it anyway)")
    save_result(out, result, rcfg, task=cfg.task.name, forced=args.force)
    if not result.accepted:
        print(f"WARNING: saved below the bar because of --force: {'; '.join(result.failures)}")
    print(f"classifier: {out}\nreport: {report_path(out)}")
    print(jsonio.dumps({"out": str(out), "accepted": result.accepted, "forced": report["forced"],
                      **{k: held[k] for k in ("accuracy", "precision", "recall", "fpr")},
                      "threshold": report["threshold"]["logit"], "seconds": report["training"]["seconds"]}))
    return 0


def _summary(report: dict) -> str:
    h = report["held_out"]

    def f(x):
        return "n/a" if x is None else f"{x:.4f}"

    t = report["threshold"]
    text = (f"held-out ({h['n']} frames, {h['positives']} success): accuracy {f(h['accuracy'])}, "
            f"precision {f(h['precision'])}, recall {f(h['recall'])}, false-positive rate {f(h['fpr'])} "
            f"at threshold {t['logit']:.3f} (logit; target FPR {t['target_fpr']:g})")
    if not t["guaranteed"]:
        text += (f"\nnote: {t['calibration_negatives']} calibration failure frames are too few to bound the "
                 f"false-positive rate at {t['target_fpr']:g}; record more frames")
    return text
