"""What a `robot-rl train` run shows: eval videos (TensorBoard and MP4), loss curves,
hyperparameters, the success PNG, a progress bar that ends at its total, and W&B.

The 2,000-step run is the issue's must-show: a real ``robot-rl train`` on the MuJoCo
PickCube from state, shrunk everywhere except in env steps.
"""

from __future__ import annotations

import functools
import io
import json
import struct
import sys

import numpy as np
import pytest
from video_files import read_video
from wandb_records import history_rows, read_records

from robot_rl.cli import main
from robot_rl.tasks import load_config
from robot_rl.training.evaluation import hold_frames
from robot_rl.training.frames import FAILURE_RGB, MIN_VIDEO_HEIGHT, SUCCESS_RGB

pytestmark = pytest.mark.usefixtures("one_torch_thread")

pytest.importorskip("mujoco")

CONFIG = "configs/pick_cube.yaml"
SMALL = ["--set", "agent.hidden_dims=[16,16]", "--set", "train.batch_size=16", "--set", "train.utd_ratio=0.5",
         "--set", "train.learning_starts=10", "--set", "train.scripted_demos=2", "--set", "train.checkpoint_every=0",
         "--set", "train.torch_threads=1", "--no-progress"]


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def border_color(frame: np.ndarray) -> np.ndarray:
    """The mean colour of the frame's bottom rows, inside the outcome border."""
    return frame[-3:, 4:-4].reshape(-1, 3).astype(float).mean(axis=0)


@pytest.fixture(scope="module")
def run_2000(tmp_path_factory):
    run = tmp_path_factory.mktemp("watch") / "run"
    out = io.StringIO()
    argv = ["train", "--config", CONFIG, "--run-dir", str(run), "--set", "train.total_env_steps=2000",
            "--set", "train.eval_every=1000", "--set", "train.eval_episodes=2", "--set", "train.eval_video_episodes=2",
            "--set", "train.log_every=100", *SMALL]
    from contextlib import redirect_stdout

    with redirect_stdout(out):
        code = main(argv)
    assert code == 0, out.getvalue()[-2000:]
    return run, last_json(out.getvalue())


def test_the_event_file_holds_eval_videos_loss_curves_hyperparameters_and_the_config(run_2000):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run, summary = run_2000
    assert summary["env_steps"] >= 2000
    events = EventAccumulator(str(run / "tb"), size_guidance={"images": 0, "scalars": 0, "tensors": 0})
    events.Reload()
    videos = events.Images("eval/video")
    assert [v.step for v in videos] == [1000, 2000]
    for video in videos:
        assert video.encoded_image_string[:6] in (b"GIF87a", b"GIF89a") and video.width > video.height
    for tag in ("loss/critic", "loss/actor", "train/q_mean", "eval/success_rate"):
        points = events.Scalars(tag)
        assert len(points) >= (2 if tag.startswith("eval") else 5), tag
        assert all(np.isfinite(p.value) for p in points), tag
    assert "_hparams_/session_start_info" in events.PluginTagToContent("hparams")
    assert "config/text_summary" in events.Tags()["tensors"]


def test_each_eval_mp4_opens_with_the_frame_count_of_its_episodes_and_their_outcomes(run_2000):
    run, _ = run_2000
    cfg = load_config(CONFIG)
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    assert [e["env_steps"] for e in evals] == [1000, 2000]
    for record in evals:
        path = run / record["video"]
        assert path == run / "videos" / f"eval_{record['env_steps']}.mp4" and record["video_episodes"] == 2
        frames, fps = read_video(path)
        hold = hold_frames(fps)
        lengths = record["lengths"][:2]  # the evaluation's own episodes, as its success rate counted them
        assert len(frames) == sum(1 + n + hold for n in lengths)
        front, wrist = cfg.cameras["front"], cfg.cameras["wrist"]
        # side by side, each named, scaled up by whole pixels to a watchable size (x2 for 128 px cameras)
        scale = -(-MIN_VIDEO_HEIGHT // max(front.height, wrist.height))
        assert frames[0].shape == (scale * max(front.height, wrist.height), scale * (front.width + wrist.width), 3)
        end = 0
        for n, success in zip(lengths, record["successes"][:2]):
            end += 1 + n + hold
            expected = SUCCESS_RGB if success else FAILURE_RGB
            assert np.abs(border_color(frames[end - 1]) - expected).max() < 50
            assert np.abs(border_color(frames[end - hold - 2]) - expected).max() > 50  # the step before: unmarked


def test_the_success_png_is_drawn_at_the_end(run_2000):
    run, summary = run_2000
    png = run / "success.png"
    assert summary["success_png"] == str(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert 300 <= width <= 3000 and 200 <= height <= 3000 and len(data) > 5000


def test_the_progress_bar_ends_exactly_at_its_total(tmp_path, monkeypatch, point_env_fn, point_expert_cls):
    from robot_rl.config import Config
    from robot_rl.config.agent import TrainConfig
    from robot_rl.training import trainer as trainer_module

    bars = []
    make_bar = trainer_module._progress

    def capture(total, initial, enabled, every_s=10.0):
        bars.append(make_bar(total, initial, enabled, file=io.StringIO(), every_s=every_s))
        return bars[-1]

    monkeypatch.setattr(trainer_module, "_progress", capture)
    cfg = Config()
    cfg.agent.hidden_dims = (16, 16)
    cfg.train = TrainConfig(total_env_steps=100, utd_ratio=0.5, batch_size=16, learning_starts=10, scripted_demos=0,
                            eval_every=0, checkpoint_every=0, progress=True, run_dir=str(tmp_path / "run"))
    env = point_env_fn(max_steps=30)  # episodes of at most 30 steps: the run ends past 100 unless one ends there
    trainer = trainer_module.Trainer(cfg, env_fn=lambda c: env, tensorboard=False)
    try:
        result = trainer.run()
    finally:
        trainer.close()
    bar = bars[-1]
    assert result.env_steps > 100 and bar.n == bar.total == result.env_steps  # it ran past 100, the bar with it
    # off a terminal (a log file): plain status lines, no carriage-return redraws, the last one full
    text = bar.stream.getvalue()
    lines = text.splitlines()
    assert "\r" not in text and lines[0].startswith("train: 1/100 env steps, ep 0, success -, alpha ")
    assert lines[-1].startswith(f"train: {result.env_steps}/{result.env_steps} env steps, ep ")
    assert len(lines) <= 10, lines  # a line every learning.log_every_s, not one per step


def test_wandb_offline_writes_a_run_with_the_scalars_and_a_video(tmp_path, monkeypatch, capsys):
    pytest.importorskip("wandb")
    for var in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    run = tmp_path / "run"
    code = main(["train", "--config", CONFIG, "--run-dir", str(run), "--set", "train.total_env_steps=100",
                 "--set", "train.eval_every=100", "--set", "train.eval_episodes=1", "--set", "train.log_every=50",
                 "--set", "train.wandb.enabled=true", "--set", "train.wandb.mode=offline", *SMALL])
    assert code == 0, capsys.readouterr().err[-2000:]
    [directory] = list((run / "wandb").glob("offline-run-*"))
    rows = history_rows(read_records(next(directory.glob("run-*.wandb"))))
    keys = set().union(*rows)
    assert {"env_steps", "loss/critic", "episode/success", "eval/success_rate", "buffer/online"} <= keys
    videos = [json.loads(r["eval/video.path"]) for r in rows if "eval/video.path" in r]
    assert len(videos) == 1 and (directory / "files" / videos[0]).stat().st_size > 1000
    assert json.loads(next(r for r in rows if "eval/video.path" in r)["env_steps"]) == 100


def test_wandb_on_without_the_package_is_one_line_and_touches_no_run_dir(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wandb", None)
    run = tmp_path / "run"
    code = main(["train", "--config", CONFIG, "--run-dir", str(run), "--set", "train.wandb.enabled=true", *SMALL])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1 and "scripts/setup.sh wandb" in err[0]
    assert not run.exists()


def test_progress_capture_uses_the_real_bar_factory():
    """The bar factory takes a file, so the test above sees the very bar the trainer draws."""
    from robot_rl.training import trainer as trainer_module

    bar = functools.partial(trainer_module._progress, file=io.StringIO())(50, 60, True)
    assert bar.total == 60 and bar.n == 60  # a resumed run already past its total starts full
    bar.close()
    assert bar.stream.getvalue() == "train: 60/60 env steps\n"
