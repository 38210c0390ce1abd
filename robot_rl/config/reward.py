"""Typed config for the learned reward classifier: the ``reward:`` section of a session YAML.

The classifier looks at the cameras named in ``cameras``, each resized to ``image_size``
(width, height), and says "success" or "not yet". It is trained by
``robot-rl train-reward`` on frames recorded by ``robot-rl record-rewards`` and used by
:class:`robot_rl.reward.ClassifierReward` when ``classifier_path`` is set.

A classifier is accepted only if its held-out report meets the bar: accuracy at least
``min_accuracy``, false-positive rate at most ``max_fpr`` and recall at least
``min_recall``. Its decision threshold is picked on a calibration split so that the
false-positive rate stays under ``target_fpr``; keep ``target_fpr`` below ``max_fpr`` so
that sampling noise on the held-out split does not push a good classifier over the bar.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from robot_rl.config.agent import EncoderConfig
from robot_rl.config.loader import param


@dataclass
class RewardEncoderConfig(EncoderConfig):
    """The agent's encoder options (see :class:`EncoderConfig`), with defaults sized for a
    classifier trained in minutes on a CPU: a narrower first conv and a 64-wide latent."""

    channels: tuple[int, ...] = param((16, 32, 32, 32), min=1, max=1024, doc="small encoder conv widths")
    latent_dim: int = param(64, min=1, max=4096, doc="per-camera feature size after the trainable head")


@dataclass
class RewardCollectConfig:
    """How ``record-rewards`` drives the sim to cover hard cases (ignored on hardware)."""

    expert_noise: float = param(0.3, min=0.0, max=2.0, doc="std of the noise on the scripted motions")
    hold_steps: int = param(12, min=0, max=200, doc="steps a reached (near-)success state is held")
    margin: float = param(0.01, min=0.0, max=0.1,
                          doc="metres: held near-success states stay this far from the success boundary")
    chunk_frames: int = param(256, min=1, max=100_000, doc="frames per file; a crash loses at most one chunk")


@dataclass
class RewardConfig:
    """The reward classifier: inputs, model, training budget, acceptance bar, use."""

    cameras: list[str] = field(default_factory=lambda: ["front", "wrist"])
    image_size: tuple[int, int] = param((64, 64), min=16, max=512, doc="width, height the classifier sees")
    encoder: RewardEncoderConfig = field(default_factory=RewardEncoderConfig)
    hidden_dim: int = param(128, min=1, max=4096, doc="width of the MLP head on the encoder features")
    train_steps: int = param(2000, min=1, max=10**7, doc="gradient steps")
    batch_size: int = param(64, min=2, max=65_536)
    learning_rate: float = param(3e-4, min=0.0, max=1.0)
    weight_decay: float = param(0.0, min=0.0, max=1.0)
    eval_every: int = param(250, min=1, max=10**7, doc="steps between calibration-loss checks (the best one is kept)")
    calibration_fraction: float = param(0.15, min=0.01, max=0.5, doc="share of episodes for threshold picking")
    test_fraction: float = param(0.2, min=0.01, max=0.5, doc="share of episodes held out for the report")
    split_seed: int = param(0, min=0, max=2**32 - 1)
    target_fpr: float = param(0.005, min=0.0, max=0.5, doc="the threshold keeps calibration FPR under this")
    min_accuracy: float = param(0.98, min=0.0, max=1.0, doc="bar: held-out accuracy")
    max_fpr: float = param(0.01, min=0.0, max=1.0, doc="bar: held-out false-positive rate")
    min_recall: float = param(0.9, min=0.0, max=1.0, doc="bar: held-out recall (true-positive rate)")
    consecutive: int = param(2, min=1, max=1000, doc="positive frames in a row before the wrapper says success")
    classifier_path: Optional[str] = param(None,
                                           doc="a file written by 'robot-rl train-reward'; set: reward comes from it")
    allow_below_bar: bool = param(False, doc="accept a classifier saved with --force although it missed the bar")
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    torch_threads: int = param(0, min=0, max=1024, doc="PyTorch CPU threads while training; 0 leaves PyTorch's default")
    collect: RewardCollectConfig = field(default_factory=RewardCollectConfig)

    def __post_init__(self) -> None:
        if not self.cameras:
            raise ValueError("reward.cameras must name at least one camera")
        if len(set(self.cameras)) != len(self.cameras):
            raise ValueError(f"reward.cameras names a camera twice: {self.cameras}")
        if self.calibration_fraction + self.test_fraction >= 0.9:
            raise ValueError("reward.calibration_fraction + reward.test_fraction must leave episodes to train on")
