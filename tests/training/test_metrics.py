"""MetricsLog beyond scalars: config text, hyperparameters and GIF videos in the run's own
TensorBoard event file, and the optional W&B run (offline, read back from its files)."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest
from wandb_records import history_rows, read_records

from robot_rl.config import Config
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config
from robot_rl.training.metrics import HPARAM_METRICS, VIDEO_TAG, MetricsLog, hparams_of

CONFIG = "configs/pick_cube.yaml"


def events_of(log_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    files = list((log_dir / "tb").iterdir())
    assert len(files) == 1 and files[0].name.startswith("events.out.tfevents")  # no subfolder per hparams call
    events = EventAccumulator(str(log_dir / "tb"), size_guidance={"images": 0, "tensors": 0})
    events.Reload()
    return events


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    """W&B in offline mode with every folder it writes in tmp_path: no network, no home files."""
    pytest.importorskip("wandb")
    for var, sub in (("WANDB_DIR", "wandb_dir"), ("WANDB_CACHE_DIR", "cache"), ("WANDB_CONFIG_DIR", "config"),
                     ("WANDB_DATA_DIR", "data"), ("WANDB_ARTIFACT_DIR", "artifacts")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    return tmp_path


def test_hparams_are_the_flat_agent_and_train_settings_without_paths_or_secrets():
    cfg = load_config(CONFIG, ["train.batch_size=64", "learning.token=s3cret", "train.run_dir=/somewhere/run"])
    hp = hparams_of(cfg)
    assert hp["train.batch_size"] == 64 and hp["agent.discount"] == cfg.agent.discount
    assert hp["task.name"] == "PickCube" and hp["env.obs_mode"] == "state"
    assert json.loads(hp["agent.hidden_dims"]) == list(cfg.agent.hidden_dims)
    assert json.loads(hp["env.active_dims"]) == list(cfg.env.active_dims)
    assert hp["agent.encoder.kind"] == cfg.agent.encoder.kind
    assert "train.run_dir" not in hp and not any(k.startswith("train.wandb") for k in hp)
    assert "s3cret" not in json.dumps(hp)
    assert all(isinstance(v, (bool, int, float, str)) for v in hp.values())


def test_the_config_and_hyperparameters_go_into_the_runs_own_event_file(tmp_path):
    from tensorboard.plugins.hparams import metadata

    cfg = load_config(CONFIG, ["train.batch_size=64", "learning.token=s3cret"])
    log = MetricsLog(tmp_path, config=cfg)
    log.scalar("eval/success_rate", 0.5, 1000)
    log.close()
    events = events_of(tmp_path)
    text = events.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "batch_size: 64" in text and "PickCube" in text and "s3cret" not in text
    hp_content = events.PluginTagToContent(metadata.PLUGIN_NAME)
    assert {metadata.EXPERIMENT_TAG, metadata.SESSION_START_INFO_TAG, metadata.SESSION_END_INFO_TAG} <= set(hp_content)
    experiment = metadata.parse_experiment_plugin_data(hp_content[metadata.EXPERIMENT_TAG])
    assert [m.name.tag for m in experiment.metric_infos] == list(HPARAM_METRICS)
    start = metadata.parse_session_start_info_plugin_data(hp_content[metadata.SESSION_START_INFO_TAG])
    assert start.hparams["train.batch_size"].number_value == 64
    assert start.hparams["task.name"].string_value == "PickCube"


def test_a_video_is_an_animated_gif_image_at_its_step(tmp_path):
    from PIL import Image

    log = MetricsLog(tmp_path)
    frames = [np.full((24, 40, 3), v, np.uint8) for v in (0, 100, 200)]
    log.video(frames, step=2000, fps=10)
    log.video([], step=3000, fps=10)  # nothing to show: nothing written
    log.close()
    images = events_of(tmp_path).Images(VIDEO_TAG)
    assert [i.step for i in images] == [2000] and (images[0].width, images[0].height) == (40, 24)
    gif = Image.open(io.BytesIO(images[0].encoded_image_string))
    assert gif.format == "GIF" and gif.n_frames == 3


def test_wandb_offline_gets_the_config_scalars_and_videos(offline_wandb, tmp_path):
    cfg = load_config(CONFIG, ["train.wandb.enabled=true", "train.wandb.mode=offline", "learning.token=s3cret",
                               f"train.wandb.dir={tmp_path / 'wb'}", "train.wandb.name=unit"])
    log = MetricsLog(tmp_path / "run", config=cfg)
    directory = log.wandb.directory
    for n in (100, 200):
        log.scalar("loss/critic", n / 100, n)
        log.scalar("buffer/online", n, n)
    log.eval({"env_steps": 200, "success_rate": 0.5, "return": 1.0, "length": 40.0})
    log.video([np.full((16, 16, 3), v, np.uint8) for v in (0, 255)], step=200, fps=10)
    log.scalar("episode/return", 3.0, 150)  # a learner's late, lower step still lands (plotted by env_steps)
    log.close()

    assert directory.parent == tmp_path / "wb" / "wandb" and directory.name.startswith("offline-run-")
    records = read_records(next(directory.glob("run-*.wandb")))
    run = next(r.run for r in records if r.WhichOneof("record_type") == "run")
    config = {item.key: item.value_json for item in run.config.update}
    assert json.loads(config["train"])["batch_size"] == cfg.train.batch_size and "s3cret" not in str(config)
    assert run.display_name == "unit" and run.project == "robot_rl"
    rows = history_rows(records)
    by_step = {}
    for row in rows:
        by_step.setdefault(json.loads(row["env_steps"]), {}).update(row)
    assert json.loads(by_step[100]["loss/critic"]) == 1.0 and json.loads(by_step[200]["buffer/online"]) == 200
    assert json.loads(by_step[200]["eval/success_rate"]) == 0.5 and json.loads(by_step[150]["episode/return"]) == 3
    video = json.loads(by_step[200]["eval/video.path"])
    assert video.endswith(".gif") and (directory / "files" / video).stat().st_size > 0


def test_a_missing_wandb_package_is_one_config_error_naming_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb now raises ImportError
    cfg = load_config(CONFIG, ["train.wandb.enabled=true"])
    with pytest.raises(ConfigError) as err:
        MetricsLog(tmp_path, tensorboard=False, config=cfg)
    assert "scripts/setup.sh wandb" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("override, fragment", [
    ("train.wandb.mode=cloud", "'train.wandb.mode' must be one of 'online', 'offline'"),
    ("train.wandb.project=' '", "project must not be empty"),
    ("train.wandb.enabeld=true", "unknown key 'train.wandb.enabeld'"),
    ("train.eval_video_episodes=-1", "'train.eval_video_episodes' = -1 is out of range"),
    ("train.eval_video_episodes=.nan", "'train.eval_video_episodes'"),
])
def test_bad_video_and_wandb_settings_are_one_line_config_errors(override, fragment):
    with pytest.raises(ConfigError) as err:
        load_config(CONFIG, [override])
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_wandb_is_off_and_videos_are_on_by_default():
    assert Config().train.wandb.enabled is False and Config().train.eval_video_episodes == 2
