"""Threshold selection and the acceptance bar, on synthetic scores."""

import numpy as np
import pytest

from robot_rl.reward.metrics import bar_failures, binary_metrics, select_threshold


def _scores(rng, n_neg, n_pos, sep=3.0):
    neg = rng.normal(-sep / 2, 1.0, n_neg)
    pos = rng.normal(sep / 2, 1.0, n_pos)
    return np.concatenate([neg, pos]), np.concatenate([np.zeros(n_neg, bool), np.ones(n_pos, bool)])


@pytest.mark.parametrize("target", [0.01, 0.05])
def test_threshold_keeps_fresh_fpr_under_target(target):
    rng = np.random.default_rng(0)
    fresh_fprs, cal_fprs = [], []
    for _ in range(200):
        s, y = _scores(rng, 1000, 400)
        t = select_threshold(s, y, target)
        assert t.guaranteed
        cal_fprs.append(binary_metrics(s, y, t.value)["fpr"])
        fresh, fy = _scores(rng, 20000, 10)
        fresh_fprs.append(binary_metrics(fresh, fy, t.value)["fpr"])
    assert max(cal_fprs) <= target
    # the bound is on the expectation; the mean over many draws must sit under the target
    assert np.mean(fresh_fprs) <= target
    # and no single draw strays far (a naive 'FPR == target on calibration' rule is at the target on average)
    assert np.quantile(fresh_fprs, 0.9) <= 1.6 * target


def test_threshold_is_the_lowest_one_with_the_bound():
    rng = np.random.default_rng(1)
    s, y = _scores(rng, 999, 300, sep=1.0)  # overlapping: the constraint binds, threshold above 0
    t = select_threshold(s, y, 0.01)
    neg = np.sort(s[~y])
    k = int(np.ceil(1000 * 0.99))
    assert t.value == pytest.approx(neg[k - 1])
    assert t.value > 0
    # one notch lower admits more calibration negatives than the target allows over n+1
    lower = neg[k - 2]
    assert np.sum(neg > lower) / 1000 > 0.01 - 1e-12


def test_threshold_moves_into_the_gap_without_losing_positives():
    neg = np.linspace(-9.0, -5.0, 500)
    pos = np.linspace(2.0, 6.0, 100)
    s = np.concatenate([neg, pos])
    y = np.concatenate([np.zeros(500, bool), np.ones(100, bool)])
    t = select_threshold(s, y, 0.01)
    assert -5.0 < t.value <= 0.0  # raised towards 0, under the lowest positive
    m = binary_metrics(s, y, t.value)
    assert m["recall"] == 1.0 and m["fpr"] == 0.0
    # a weak positive below 0 is kept: the threshold stops halfway to it
    s2 = np.concatenate([s, [-2.0]])
    y2 = np.concatenate([y, [True]])
    t2 = select_threshold(s2, y2, 0.01)
    assert t2.value < -2.0
    assert binary_metrics(s2, y2, t2.value)["recall"] == 1.0


def test_too_few_negatives_is_flagged_not_guaranteed():
    s = np.array([-3.0, -2.0, -1.0, 4.0, 5.0])
    y = np.array([False, False, False, True, True])
    t = select_threshold(s, y, 0.01)
    assert not t.guaranteed and t.calibration_negatives == 3
    assert binary_metrics(s, y, t.value)["fpr"] == 0.0
    with pytest.raises(ValueError, match="failure"):
        select_threshold(np.array([1.0]), np.array([True]), 0.01)


def test_binary_metrics_counts_and_undefined_rates():
    s = np.array([0.9, 0.2, -1.0, 3.0, -0.5])
    y = np.array([True, True, False, False, False])
    m = binary_metrics(s, y, 0.5)
    assert (m["tp"], m["fn"], m["fp"], m["tn"]) == (1, 1, 1, 2)
    assert m["accuracy"] == pytest.approx(0.6) and m["precision"] == 0.5
    assert m["recall"] == 0.5 and m["fpr"] == pytest.approx(1 / 3)
    none = binary_metrics(np.array([-1.0, -2.0]), np.array([False, False]), 0.0)
    assert none["precision"] is None and none["recall"] is None and none["fpr"] == 0.0


def test_bar_failures_name_each_missed_figure():
    good = {"accuracy": 0.99, "fpr": 0.005, "recall": 0.95}
    assert bar_failures(good, min_accuracy=0.98, max_fpr=0.01, min_recall=0.9) == []
    bad = {"accuracy": 0.9, "fpr": 0.02, "recall": 0.5}
    msgs = bar_failures(bad, min_accuracy=0.98, max_fpr=0.01, min_recall=0.9)
    assert len(msgs) == 3
    assert "accuracy 0.9000 < reward.min_accuracy 0.98" in msgs[0]
    assert "false-positive rate 0.0200 > reward.max_fpr 0.01" in msgs[1]
    assert bar_failures({"accuracy": 1.0, "fpr": None, "recall": 1.0}, min_accuracy=0.9, max_fpr=0.01, min_recall=0.9)
