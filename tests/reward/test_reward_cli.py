"""``robot-rl train-reward`` / ``record-rewards``: the bar, --force, and refusals are one clear line."""

import json

import numpy as np
import pytest

from robot_rl.cli import main
from robot_rl.paths import resolve_config
from robot_rl.reward.dataset import FrameWriter
from robot_rl.reward.model import ClassifierFileError, load_classifier, read_header
from robot_rl.tasks import load_config

CONFIG = str(resolve_config("pick_cube"))
SMALL = ["reward.image_size=[32,32]", "reward.train_steps=40", "reward.batch_size=16", "reward.eval_every=20",
         "reward.learning_rate=0.001", "reward.encoder.channels=[8,16]", "reward.encoder.strides=[2,2]",
         "reward.encoder.latent_dim=16", "reward.hidden_dim=16", "reward.target_fpr=0.05", "reward.torch_threads=1"]


def _sets(items):
    return [a for item in items for a in ("--set", item)]


def _frames(folder, random_labels, size=(32, 32)):
    """Success = a bright square in the front image; with random_labels nothing can be learned."""
    rng = np.random.default_rng(0)
    w = FrameWriter(folder, cameras=["front", "wrist"], image_size=size, task="Synthetic",
                    label_source="ground_truth", tags=["synthetic"], chunk_frames=100)
    for _ in range(12):
        for t in range(20):
            label = t >= 10
            imgs = {c: rng.integers(0, 60, (size[1], size[0], 3), dtype=np.uint8) for c in ("front", "wrist")}
            if label:
                imgs["front"][8:16, 8:16] = 250
            w.add(imgs, bool(rng.random() < 0.5) if random_labels else label)
        w.end_episode()
    w.close()
    return folder


def test_a_classifier_missing_the_bar_is_refused_unless_forced(tmp_path, capsys):
    data = _frames(tmp_path / "noise", random_labels=True)
    out = tmp_path / "clf.pt"
    code = main(["train-reward", "--config", CONFIG, "--data", str(data), "--out", str(out), *_sets(SMALL)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3
    assert err[-1].startswith("robot-rl: classifier refused, not saved: held-out accuracy")
    assert "--force" in err[-1]
    assert not out.exists() and not out.with_suffix(".report.json").exists()
    rejected = json.loads(out.with_suffix(".rejected.json").read_text())
    assert rejected["accepted"] is False and rejected["failures"]

    code = main(["train-reward", "--config", CONFIG, "--data", str(data), "--out", str(out), "--force",
                 *_sets(SMALL)])
    assert code == 0 and out.exists()
    header, _ = read_header(out)
    assert header["forced"] is True and header["accepted"] is False
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["forced"] is True
    cfg = load_config(CONFIG, SMALL)
    with pytest.raises(ClassifierFileError, match="misses the bar"):
        load_classifier(out, cfg.reward)
    load_classifier(out, load_config(CONFIG, SMALL + ["reward.allow_below_bar=true"]).reward)


def test_a_good_classifier_is_saved_with_its_report(tmp_path, capsys):
    data = _frames(tmp_path / "square", random_labels=False)
    out = tmp_path / "models" / "clf.pt"
    bar = ["reward.min_accuracy=0.9", "reward.max_fpr=0.1", "reward.min_recall=0.8", "reward.train_steps=80"]
    code = main(["train-reward", "--config", CONFIG, "--data", str(data), "--out", str(out), *_sets(SMALL + bar)])
    stdout = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    line = json.loads(stdout[-1])
    assert line["accepted"] is True and line["accuracy"] >= 0.9 and line["fpr"] <= 0.1
    report = json.loads(out.with_suffix(".report.json").read_text())
    for key in ("accuracy", "precision", "recall", "fpr"):
        assert report["held_out"][key] == line[key]
    assert report["threshold"]["target_fpr"] == 0.05
    header, _ = read_header(out)
    assert header["cameras"] == ["front", "wrist"] and header["image_size"] == [32, 32]
    assert header["threshold"] == pytest.approx(report["threshold"]["logit"])
    clf = load_classifier(out, load_config(CONFIG, SMALL + bar).reward)
    assert clf.threshold == header["threshold"]


def test_frames_that_do_not_match_the_config_are_refused(tmp_path, capsys):
    data = _frames(tmp_path / "d", random_labels=False, size=(24, 24))
    code = main(["train-reward", "--config", CONFIG, "--data", str(data), "--out", str(tmp_path / "c.pt"),
                 *_sets(SMALL)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert err == [f"robot-rl: {data}: frames are 24x24, but reward.image_size is 32x32"]
    code = main(["train-reward", "--config", CONFIG, "--data", str(tmp_path / "none"), "--out", "c.pt"])
    assert code != 0 and "not a reward frame directory" in capsys.readouterr().err


def test_record_rewards_writes_a_frame_directory(tmp_path, capsys):
    out = tmp_path / "frames"
    code = main(["record-rewards", "--config", CONFIG, "--out", str(out), "--frames", "60",
                 "--set", "reward.image_size=[32,32]"])
    assert code == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["frames"] == 60 and line["label_source"] == "ground_truth"
    meta = json.loads((out / "meta.json").read_text())
    assert meta["cameras"] == ["front", "wrist"] and meta["image_size"] == [32, 32] and meta["task"] == "PickCube"
    # a second session must say --append
    code = main(["record-rewards", "--config", CONFIG, "--out", str(out), "--frames", "5",
                 "--set", "reward.image_size=[32,32]"])
    assert code != 0 and "--append" in capsys.readouterr().err
