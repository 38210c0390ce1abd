"""Where training figures go: TensorBoard scalars, an ``evals.jsonl`` file, and memory.

Scalar names (TensorBoard tags), x axis = env steps:

* ``episode/success``, ``episode/return``, ``episode/length``, ``episode/intervention_rate``,
  ``episode/success_rate_20`` (the last 20 training episodes);
* ``eval/success_rate``, ``eval/return``, ``eval/length``;
* ``loss/critic``, ``loss/actor``, ``loss/temperature``, ``loss/gripper``,
  ``train/temperature``, ``train/entropy``, ``train/q_mean``;
* ``perf/updates_per_s`` (update time only), ``perf/env_steps_per_s`` (wall clock),
  ``buffer/online``, ``buffer/demo``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robot_rl import jsonio
from robot_rl.data.durable import durable_append

_METRIC_TAGS = {
    "critic_loss": "loss/critic", "actor_loss": "loss/actor", "temperature_loss": "loss/temperature",
    "gripper_loss": "loss/gripper", "temperature": "train/temperature", "entropy": "train/entropy",
    "q_mean": "train/q_mean", "target_q_mean": "train/target_q_mean", "gripper_q_mean": "train/gripper_q_mean",
}


class MetricsLog:
    """Writes scalars to TensorBoard under ``log_dir`` (if given) and keeps evals in memory."""

    def __init__(self, log_dir: str | Path | None, tensorboard: bool = True) -> None:
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.evals: list[dict[str, Any]] = []
        self.writer = None
        if self.log_dir is not None and tensorboard:
            from torch.utils.tensorboard import SummaryWriter  # imports tensorboard: slow, so late

            self.writer = SummaryWriter(str(self.log_dir / "tb"))

    def scalar(self, tag: str, value: float, step: int) -> None:
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)

    def agent_metrics(self, metrics: dict[str, float], step: int) -> None:
        for key, value in metrics.items():
            self.scalar(_METRIC_TAGS.get(key, f"train/{key}"), value, step)

    def eval(self, record: dict[str, Any]) -> None:
        self.evals.append(record)
        for key in ("success_rate", "return", "length"):
            self.scalar(f"eval/{key}", record[key], record["env_steps"])
        if self.log_dir is not None:  # an append-only log: each record is on disk before training goes on
            durable_append(self.log_dir / "evals.jsonl", (jsonio.dumps(record) + "\n").encode())

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
