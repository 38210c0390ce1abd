"""Train a reward classifier on recorded frames, pick its threshold, and write its report.

The frames' episodes are split three ways (neighbouring frames of one episode are
near-copies, so a frame-level split would leak): *train* fits the network, *calibration*
chooses which checkpoint to keep (lowest loss) and the decision threshold (false-positive
rate under ``reward.target_fpr``, see :mod:`robot_rl.reward.metrics`), and *held-out*
(``test``) is touched once, for the report. The report is judged against the bar
(``reward.min_accuracy``, ``max_fpr``, ``min_recall``); :func:`train_classifier` returns
the verdict, and the caller decides whether to save.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch.nn import functional as F

from robot_rl import jsonio
from robot_rl.agents import resolve_device
from robot_rl.config.loader import to_dict
from robot_rl.config.reward import RewardConfig
from robot_rl.data.durable import durable_write_text
from robot_rl.reward.dataset import DatasetError, FrameSet
from robot_rl.reward.metrics import bar_failures, binary_metrics, select_threshold
from robot_rl.reward.model import RewardClassifier, save_classifier

log = logging.getLogger(__name__)


@dataclass
class Split:
    train: np.ndarray
    calibration: np.ndarray
    test: np.ndarray

    def episodes(self, episode: np.ndarray) -> dict[str, int]:
        return {k: int(len(np.unique(episode[v]))) for k, v in self.items()}

    def items(self):
        return (("train", self.train), ("calibration", self.calibration), ("test", self.test))


def split_by_episode(episode: np.ndarray, label: np.ndarray, *, calibration_fraction: float,
                     test_fraction: float, seed: int) -> Split:
    """Frame indices of whole episodes for train / calibration / test, each with both labels."""
    ids = np.unique(episode)
    if len(ids) < 3:
        raise DatasetError(f"the frames hold {len(ids)} episode(s); at least 3 are needed to split "
                           "train / calibration / held-out by episode")
    rng = np.random.default_rng(seed)
    ids = ids[rng.permutation(len(ids))]
    n_test = max(1, int(round(test_fraction * len(ids))))
    n_cal = max(1, int(round(calibration_fraction * len(ids))))
    parts = {"test": ids[:n_test], "calibration": ids[n_test:n_test + n_cal], "train": ids[n_test + n_cal:]}
    index = {k: np.flatnonzero(np.isin(episode, v)) for k, v in parts.items()}
    for name, idx in index.items():
        pos = int(label[idx].sum())
        if pos == 0 or pos == len(idx):
            kind = "success" if pos == 0 else "failure"
            raise DatasetError(f"the {name} split ({len(parts[name])} episodes) has no {kind} frames; "
                               "record more frames or episodes of both kinds")
    return Split(index["train"], index["calibration"], index["test"])


@dataclass
class ClassifierResult:
    """A trained classifier, its validation report, and why it misses the bar (empty: accepted)."""

    model: RewardClassifier
    report: dict[str, Any]
    failures: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.failures


def trainable_parameters(model: RewardClassifier) -> dict[str, torch.nn.Parameter]:
    """The parameters training updates (a frozen backbone's are not among them)."""
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def _inputs(model: RewardClassifier, frames: FrameSet) -> dict[str, np.ndarray]:
    """What the network reads per frame: images, or frozen-backbone maps computed once."""
    if not model.encoder.caches_features:
        return {c: frames.images[c] for c in model.cameras}
    out: dict[str, list[np.ndarray]] = {c: [] for c in model.cameras}
    n = len(frames)
    with torch.no_grad():
        for i in range(0, n, 256):
            maps = model.encoder.storage_transform({c: frames.images[c][i:i + 256] for c in model.cameras})
            for c in model.cameras:
                out[c].append(maps[c])
    return {c: np.concatenate(v) for c, v in out.items()}


def _loss(model: RewardClassifier, inputs: dict[str, np.ndarray], labels: np.ndarray, index: np.ndarray) -> float:
    logits = model.logits({c: v[index] for c, v in inputs.items()})
    target = torch.as_tensor(labels[index], dtype=torch.float32)
    return float(F.binary_cross_entropy_with_logits(torch.as_tensor(logits), target))


def train_classifier(frames: FrameSet, cfg: RewardConfig, *, seed: int = 0, data_dir: str = "",
                     on_step: Callable[[int, float], None] | None = None) -> ClassifierResult:
    """Fit, calibrate and evaluate a classifier on ``frames`` with the settings in ``cfg``."""
    threads = torch.get_num_threads()
    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    try:
        return _train(frames, cfg, seed=seed, data_dir=data_dir, on_step=on_step)
    finally:
        torch.set_num_threads(threads)


def _train(frames: FrameSet, cfg: RewardConfig, *, seed: int, data_dir: str,
           on_step: Callable[[int, float], None] | None) -> ClassifierResult:
    torch.manual_seed(seed)
    split = split_by_episode(frames.episode, frames.label, calibration_fraction=cfg.calibration_fraction,
                             test_fraction=cfg.test_fraction, seed=cfg.split_seed)
    device = resolve_device(cfg.device)
    model = RewardClassifier.from_config(cfg).to(device)
    started = time.monotonic()
    inputs = _inputs(model, frames)
    labels = frames.label.astype(np.float32)
    params = list(trainable_parameters(model).values())
    optim = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    best = (math.inf, 0, copy.deepcopy(model.state_dict()))
    train_loss = math.nan
    model.train()
    for step in range(1, cfg.train_steps + 1):
        idx = split.train[rng.integers(0, len(split.train), cfg.batch_size)]
        batch = {c: torch.as_tensor(v[idx], device=device) for c, v in inputs.items()}
        logits = model(batch, augment=True, generator=gen)
        loss = F.binary_cross_entropy_with_logits(logits, torch.as_tensor(labels[idx], device=device))
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()
        train_loss = loss.item()
        if step % cfg.eval_every == 0 or step == cfg.train_steps:
            cal_loss = _loss(model, inputs, labels, split.calibration)
            if cal_loss < best[0]:
                best = (cal_loss, step, copy.deepcopy(model.state_dict()))
            log.debug("step %d train loss %.4f calibration loss %.4f", step, train_loss, cal_loss)
        if on_step is not None:
            on_step(step, train_loss)
    seconds = time.monotonic() - started
    model.load_state_dict(best[2])
    model.eval()

    cal_scores = model.logits({c: v[split.calibration] for c, v in inputs.items()})
    test_scores = model.logits({c: v[split.test] for c, v in inputs.items()})
    cal_labels, test_labels = frames.label[split.calibration], frames.label[split.test]
    threshold = select_threshold(cal_scores, cal_labels, cfg.target_fpr)
    model.threshold = threshold.value
    held_out = binary_metrics(test_scores, test_labels, threshold.value)
    failures = bar_failures(held_out, min_accuracy=cfg.min_accuracy, max_fpr=cfg.max_fpr, min_recall=cfg.min_recall)
    if not threshold.guaranteed:
        log.warning("only %d calibration failure frames: too few to guarantee a false-positive rate under %g "
                    "(need %d); record more", threshold.calibration_negatives, cfg.target_fpr,
                    math.ceil(1.0 / cfg.target_fpr - 1.0) if cfg.target_fpr > 0 else -1)

    tags = list(frames.meta.get("tags", []))
    by_tag = {}
    test_tags = frames.tag[split.test]
    wrong = (test_scores > threshold.value) != test_labels
    for code in np.unique(test_tags):
        sel = test_tags == code
        name = tags[code] if code < len(tags) else str(code)
        by_tag[name] = {"n": int(sel.sum()), "positives": int(test_labels[sel].sum()),
                        "errors": int(wrong[sel].sum()), "accuracy": float(1.0 - wrong[sel].mean())}
    n_params = sum(p.numel() for p in model.parameters())
    report = {
        "accepted": not failures,
        "failures": failures,
        "bar": {"min_accuracy": cfg.min_accuracy, "max_fpr": cfg.max_fpr, "min_recall": cfg.min_recall},
        "threshold": {"logit": threshold.value, "probability": float(1.0 / (1.0 + math.exp(-threshold.value))),
                      "target_fpr": cfg.target_fpr, "guaranteed": threshold.guaranteed,
                      "calibration_negatives": threshold.calibration_negatives},
        "held_out": held_out,
        "calibration": binary_metrics(cal_scores, cal_labels, threshold.value),
        "held_out_by_tag": by_tag,
        "data": {"dir": data_dir, "task": frames.meta.get("task"), "label_source": frames.meta.get("label_source"),
                 "frames": len(frames), "positives": int(frames.label.sum()),
                 "episodes": split.episodes(frames.episode),
                 "frames_per_split": {k: int(len(v)) for k, v in split.items()}},
        "training": {"steps": cfg.train_steps, "best_step": best[1], "calibration_loss": best[0],
                     "last_train_loss": train_loss, "seconds": round(seconds, 1), "seed": seed},
        "model": {"cameras": model.cameras, "image_size": list(model.image_size),
                  "encoder": to_dict(cfg.encoder), "hidden_dim": cfg.hidden_dim, "parameters": n_params,
                  "trainable_parameters": sum(p.numel() for p in trainable_parameters(model).values())},
    }
    return ClassifierResult(model, report, failures)


def report_path(model_path: str | Path) -> Path:
    """Where the report of a classifier file lives: ``reward.pt`` -> ``reward.report.json``."""
    return Path(model_path).with_suffix(".report.json")


def rejected_report_path(model_path: str | Path) -> Path:
    """Where the report of a refused classifier goes (nothing is written at ``model_path``)."""
    return Path(model_path).with_suffix(".rejected.json")


def save_result(path: str | Path, result: ClassifierResult, cfg: RewardConfig, *, task: str,
                forced: bool = False) -> None:
    """Save the model and its report next to it; the header carries the held-out figures."""
    result.report["forced"] = bool(forced and not result.accepted)
    save_classifier(path, result.model, task=task, held_out=result.report["held_out"], accepted=result.accepted,
                    forced=result.report["forced"], target_fpr=cfg.target_fpr, data=result.report["data"]["dir"])
    durable_write_text(report_path(path), jsonio.dumps(result.report, indent=1))


def save_rejected_report(path: str | Path, result: ClassifierResult) -> Path:
    out = rejected_report_path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    result.report["forced"] = False
    durable_write_text(out, jsonio.dumps(result.report, indent=1))
    return out
