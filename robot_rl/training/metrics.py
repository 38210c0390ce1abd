"""Where training figures go: TensorBoard, W&B (optional), an ``evals.jsonl`` file, and memory.

Scalar names (TensorBoard tags, W&B keys), x axis = env steps:

* ``episode/success``, ``episode/return``, ``episode/length``, ``episode/intervention_rate``,
  ``episode/success_rate_20`` (the last 20 training episodes);
* ``eval/success_rate``, ``eval/return``, ``eval/length``;
* ``loss/critic``, ``loss/actor``, ``loss/temperature``, ``loss/gripper``,
  ``train/temperature``, ``train/entropy``, ``train/q_mean``;
* ``perf/updates_per_s`` (update time only), ``perf/env_steps_per_s`` (wall clock),
  ``buffer/online``, ``buffer/demo``.

Besides scalars, given the run's config, the TensorBoard log holds the config as text
(tag ``config``) and the main agent and train settings as hyperparameters (the HParams
dashboard, with ``eval/success_rate`` as its metric), written into the run's own event
file; each evaluation's video is an animated GIF under ``eval/video`` (TensorBoard's
image dashboard plays it). With ``train.wandb.enabled`` all of it also goes to W&B
(:mod:`robot_rl.training.wandb_log`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from robot_rl import jsonio
from robot_rl.data.durable import durable_append

if TYPE_CHECKING:
    from robot_rl.config import Config

_METRIC_TAGS = {
    "critic_loss": "loss/critic", "actor_loss": "loss/actor", "temperature_loss": "loss/temperature",
    "gripper_loss": "loss/gripper", "temperature": "train/temperature", "entropy": "train/entropy",
    "q_mean": "train/q_mean", "target_q_mean": "train/target_q_mean", "gripper_q_mean": "train/gripper_q_mean",
}
#: The metrics the HParams dashboard shows beside each run's hyperparameters.
HPARAM_METRICS = ("eval/success_rate", "eval/return", "episode/success_rate_20")
#: Settings that say where or how a run is shown, not what it learns: left out of the hyperparameters.
_NOT_HPARAMS = {"train.run_dir", "train.progress", "train.demos", "train.torch_threads"}
VIDEO_TAG = "eval/video"


def plain_config(config: "Config") -> dict[str, Any]:
    """The config as plain data, without the learning plane's secret token."""
    from robot_rl.training.checkpoint import checkpoint_config

    return checkpoint_config(config)


def hparams_of(config: "Config") -> dict[str, float | str | bool]:
    """The main settings as flat ``section.key`` hyperparameters: the agent and train
    sections, the task and the observation; lists as JSON text, nulls left out."""
    plain = plain_config(config)
    flat: dict[str, Any] = {"task.name": plain["task"]["name"], "env.obs_mode": plain["env"]["obs_mode"],
                            "env.active_dims": plain["env"]["active_dims"], "seed": plain["seed"]}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                walk(f"{prefix}.{key}", sub)
        else:
            flat[prefix] = value

    for section in ("agent", "train"):
        walk(section, {k: v for k, v in plain[section].items() if k != "wandb"})
    out: dict[str, float | str | bool] = {}
    for key, value in flat.items():
        if key in _NOT_HPARAMS or value is None:
            continue
        out[key] = value if isinstance(value, (bool, int, float, str)) else jsonio.dumps(value)
    return out


EVALS_FILE = "evals.jsonl"  # one JSON line per evaluation, appended durably

class MetricsLog:
    """Writes scalars to TensorBoard under ``log_dir`` (if given) and keeps evals in memory.

    With ``config``: the config as text and hyperparameters go to TensorBoard at once,
    and a W&B run starts when ``train.wandb.enabled`` (a ConfigError if wandb is missing
    or the run cannot start).
    """

    def __init__(self, log_dir: str | Path | None, tensorboard: bool = True, config: "Config | None" = None) -> None:
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.evals: list[dict[str, Any]] = []
        self.writer = None
        self.wandb: Any = None
        self._hparams_open = False  # a session start is written; its end goes in at close()
        if self.log_dir is not None and tensorboard:
            from torch.utils.tensorboard import SummaryWriter  # imports tensorboard: slow, so late

            self.writer = SummaryWriter(str(self.log_dir / "tb"))
        if config is None:
            return
        if self.writer is not None:
            self._record_config(config)
        if config.train.wandb.enabled:
            from robot_rl.training.wandb_log import WandbRun

            self.wandb = WandbRun(config.train.wandb, self.log_dir or Path(config.train.run_dir),
                                  plain_config(config))

    def _record_config(self, config: "Config") -> None:
        import yaml
        from torch.utils.tensorboard.summary import hparams

        text = yaml.safe_dump(plain_config(config), sort_keys=False)
        self.writer.add_text("config", "\n".join("    " + line for line in text.splitlines()), 0)  # markdown code
        experiment, start, _ = hparams(hparams_of(config), {tag: 0.0 for tag in HPARAM_METRICS})
        file_writer = self.writer._get_file_writer()  # into this run's event file, not a subfolder per call
        file_writer.add_summary(experiment)
        file_writer.add_summary(start)
        self._hparams_open = True

    def scalar(self, tag: str, value: float, step: int) -> None:
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)
        if self.wandb is not None:
            self.wandb.scalar(tag, value, step)

    def agent_metrics(self, metrics: dict[str, float], step: int) -> None:
        for key, value in metrics.items():
            self.scalar(_METRIC_TAGS.get(key, f"train/{key}"), value, step)

    def video(self, frames: Sequence[np.ndarray], step: int, fps: float, tag: str = VIDEO_TAG,
              caption: str = "") -> None:
        """``frames`` (RGB, one size) as an animated GIF to TensorBoard and W&B."""
        if not frames or (self.writer is None and self.wandb is None):
            return
        from robot_rl.training.frames import gif_bytes

        gif = gif_bytes(frames, fps)
        if self.writer is not None:
            from tensorboard.compat.proto.summary_pb2 import Summary

            height, width = frames[0].shape[:2]
            image = Summary.Image(height=height, width=width, colorspace=3, encoded_image_string=gif)
            self.writer._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, image=image)]), step)
        if self.wandb is not None:
            self.wandb.video(tag, gif, step, caption)

    def eval(self, record: dict[str, Any]) -> None:
        self.evals.append(record)
        for key in ("success_rate", "return", "length"):
            self.scalar(f"eval/{key}", record[key], record["env_steps"])
        if self.log_dir is not None:  # an append-only log: each record is on disk before training goes on
            durable_append(self.log_dir / EVALS_FILE, (jsonio.dumps(record) + "\n").encode())

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()
        if self.wandb is not None:
            self.wandb.flush()

    def close(self) -> None:
        if self.writer is not None:
            if self._hparams_open:
                from torch.utils.tensorboard.summary import hparams

                _, _, end = hparams({}, {})  # the session's end: the dashboard shows it as done
                self.writer._get_file_writer().add_summary(end)
                self._hparams_open = False
            self.writer.close()
        if self.wandb is not None:
            self.wandb.close()
            self.wandb = None
