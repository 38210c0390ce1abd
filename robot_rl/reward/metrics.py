"""Binary-classifier figures and the false-positive-rate-bounded threshold.

Scores are logits; a frame is called *success* when ``score > threshold`` (strictly), so
that a threshold equal to a calibration negative's score rejects that negative.

Threshold choice (:func:`select_threshold`): with ``n`` calibration negatives sorted
ascending ``s_1 <= ... <= s_n`` and target rate ``a``, take ``t = s_k`` with
``k = ceil((n + 1)(1 - a))``. For a new negative drawn from the same distribution,
``P(score > s_k) <= (n + 1 - k) / (n + 1) <= a`` (the split-conformal bound), so the
expected false-positive rate on fresh frames stays under the target, not just on the
calibration frames. It is the lowest threshold with that guarantee, hence the best
recall. When the classifier leaves a gap below logit 0, the threshold is then raised
towards 0 (to the middle of the gap at most) without losing a calibration positive, so
that it does not sit on the edge of the negatives it has seen. With fewer than
``1/a - 1`` negatives no threshold has the guarantee; the highest negative is used and
the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Threshold:
    value: float
    guaranteed: bool  # the conformal bound holds for the target
    calibration_negatives: int


def select_threshold(scores: np.ndarray, labels: np.ndarray, target_fpr: float) -> Threshold:
    """The decision threshold on calibration ``scores`` that keeps the FPR under ``target_fpr``."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    labels = np.asarray(labels, dtype=bool).reshape(-1)
    neg = np.sort(scores[~labels])
    n = len(neg)
    if n == 0:
        raise ValueError("threshold selection needs calibration frames labelled failure; there are none")
    k = math.ceil((n + 1) * (1.0 - target_fpr))
    guaranteed = k <= n
    t = float(neg[min(k, n) - 1])
    if t < 0.0:
        pos_above = scores[labels & (scores > t)]
        ceiling = 0.0 if not len(pos_above) else min(0.0, 0.5 * (t + float(pos_above.min())))
        t = max(t, ceiling)
    return Threshold(t, guaranteed, n)


def binary_metrics(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float | int | None]:
    """Counts and rates at ``threshold``; a rate whose denominator is 0 is ``None``."""
    pred = np.asarray(scores).reshape(-1) > threshold
    labels = np.asarray(labels, dtype=bool).reshape(-1)
    tp = int(np.sum(pred & labels))
    fp = int(np.sum(pred & ~labels))
    tn = int(np.sum(~pred & ~labels))
    fn = int(np.sum(~pred & labels))

    def rate(num: int, den: int) -> float | None:
        return num / den if den else None

    return {
        "n": int(len(labels)), "positives": tp + fn, "negatives": fp + tn,
        "accuracy": rate(tp + tn, len(labels)), "precision": rate(tp, tp + fp),
        "recall": rate(tp, tp + fn), "fpr": rate(fp, fp + tn),
        "tp": tp, "fp": fp, "tn": tn, "fn": fn,
    }


def bar_failures(metrics: dict, *, min_accuracy: float, max_fpr: float, min_recall: float) -> list[str]:
    """Why held-out ``metrics`` miss the bar (empty when they meet it)."""
    out = []
    acc, fpr, rec = metrics.get("accuracy"), metrics.get("fpr"), metrics.get("recall")
    if acc is None or acc < min_accuracy:
        out.append(f"held-out accuracy {_fmt(acc)} < reward.min_accuracy {min_accuracy:g}")
    if fpr is None:
        out.append("no held-out failure frames, so the false-positive rate is unknown")
    elif fpr > max_fpr:
        out.append(f"held-out false-positive rate {_fmt(fpr)} > reward.max_fpr {max_fpr:g}")
    if rec is None:
        out.append("no held-out success frames, so recall is unknown")
    elif rec < min_recall:
        out.append(f"held-out recall {_fmt(rec)} < reward.min_recall {min_recall:g}")
    return out


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"
