"""``robot-rl train-reward``: train the reward classifier, report it, and save it only if it meets the bar.

Writes ``PATH`` (the model, see :mod:`robot_rl.reward.model`) and ``PATH`` with suffix
``.report.json`` next to it. A classifier whose held-out report misses the bar
(``reward.min_accuracy``, ``max_fpr``, ``min_recall``) is refused: nothing is saved but
its report, as ``<stem>.rejected.json``, and the command exits non-zero, unless
``--force``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from robot_rl import jsonio
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config


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
    from robot_rl.reward.dataset import check_layout, load_frames, read_meta
    from robot_rl.reward.train import report_path, save_rejected_report, save_result, train_classifier

    cfg = load_config(resolve_config(args.config), args.overrides)
    rcfg = cfg.reward
    out = Path(args.out)
    if out.suffix in (".json", "") or out.is_dir():
        raise ConfigError(f"--out {out}: give a model file name such as reward.pt")
    check_layout(read_meta(args.data), rcfg.cameras, rcfg.image_size, args.data)
    frames = load_frames(args.data)
    print(f"{len(frames)} frames ({int(frames.label.sum())} success) from {args.data}")
    bar = tqdm(total=rcfg.train_steps, desc="train reward", unit="step")

    def on_step(step: int, loss: float) -> None:
        bar.update(1)
        if step % 50 == 0:
            bar.set_postfix(loss=f"{loss:.4f}")

    try:
        result = train_classifier(frames, rcfg, seed=args.seed, data_dir=str(args.data), on_step=on_step)
    finally:
        bar.close()
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
