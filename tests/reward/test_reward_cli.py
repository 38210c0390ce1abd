"""``robot-rl train-reward`` / ``record-rewards``: the bar, --force, and refusals are one clear line."""

import json
import re
import subprocess
import sys

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
    captured = capsys.readouterr()
    stdout = captured.out.strip().splitlines()
    assert code == 0
    # progress on stderr, not a terminal here: what each wait is, a line as training starts, one after the last step
    status = [line for line in captured.err.splitlines() if line.startswith("train-reward: ")]
    assert status[:3] == ["train-reward: loading torch and 3 chunks of frames from " + str(data),
                          f"train-reward: 240 frames (120 success) from {data}", "train-reward: 0/80 steps, loss -"]
    assert re.fullmatch(r"train-reward: 80/80 steps, loss \d\.\d{4}", status[-2]), status
    assert status[-1] == "train-reward: choosing the threshold on the calibration frames, scoring the held-out frames"
    assert all(re.fullmatch(r"train-reward: \d+/80 steps, loss \d\.\d{4}", line) for line in status[3:-2]), status
    assert "\r" not in captured.err
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
    captured = capsys.readouterr()
    line = json.loads(captured.out.strip().splitlines()[-1])
    assert line["frames"] == 60 and line["label_source"] == "ground_truth"
    status = [s for s in captured.err.splitlines() if s.startswith("record-rewards PickCube: ")]
    assert status[0].startswith("record-rewards PickCube: 1/60 frames, success "), captured.err  # at the first frame
    assert status[-1] == (f"record-rewards PickCube: 60/60 frames, success {line['positives'] / 60:.0%}, "
                          f"episodes {line['episodes']}")  # the closing line holds the recording's figures
    assert "\r" not in captured.err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["cameras"] == ["front", "wrist"] and meta["image_size"] == [32, 32] and meta["task"] == "PickCube"
    # a second session must say --append
    code = main(["record-rewards", "--config", CONFIG, "--out", str(out), "--frames", "5",
                 "--set", "reward.image_size=[32,32]"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "--append" in err[0], err  # the refusal alone: no progress line before it


def test_record_rewards_logs_plain_status_lines_to_a_file(tmp_path):
    """Off a terminal (stderr is a file) progress is status lines every learning.log_every_s, never redraws."""
    log = tmp_path / "record.log"
    with log.open("w") as err:
        done = subprocess.run([sys.executable, "-m", "robot_rl.cli", "record-rewards", "--config", CONFIG, "--out",
                               str(tmp_path / "frames"), "--frames", "80", "--set", "reward.image_size=[32,32]",
                               "--set", "learning.log_every_s=0.1"],
                              stdout=subprocess.PIPE, stderr=err, text=True, timeout=300)
    text = log.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text
    result = json.loads(done.stdout.strip().splitlines()[-1])
    status = [line for line in text.splitlines() if line.startswith("record-rewards PickCube: ")]
    figures = [re.fullmatch(r"record-rewards PickCube: (\d+)/80 frames, success (\d+)%, episodes (\d+)", line)
               for line in status]
    assert all(figures) and len(figures) >= 2, status  # the first frame's and the closing one at least
    frames = [int(m.group(1)) for m in figures]
    episodes = [int(m.group(3)) for m in figures]
    assert frames[0] == 1 and frames[-1] == 80 and frames == sorted(frames), status
    assert episodes == sorted(episodes) and episodes[-1] == result["episodes"], status
    assert int(figures[-1].group(2)) == round(100 * result["positives"] / 80), status


def test_frame_progress_figures_before_any_frame_and_at_huge_counts():
    import io

    from robot_rl.cli.record_rewards import FrameProgress
    from robot_rl.reward.collect import RecordStats

    cfg = load_config(CONFIG, ["learning.log_every_s=0.1"])
    assert FrameProgress.figures(RecordStats()) == {"success": "-", "episodes": 0}  # no frame yet: no 0/0
    big = RecordStats(frames=10**12, positives=10**12 - 1, episodes=10**9)
    assert FrameProgress.figures(big) == {"success": "100%", "episodes": 10**9}
    out = io.StringIO()
    progress = FrameProgress(cfg, 10**12, stream=out)
    progress.close()  # nothing recorded: nothing shown (a refused --out prints only its error)
    assert out.getvalue() == "" and progress.progress is None
    progress(big)  # the last frame: its figures are the closing line's, not shown twice
    progress.close()
    assert out.getvalue().splitlines() == [
        "record-rewards PickCube: 1000000000000/1000000000000 frames, success 100%, episodes 1000000000"]
