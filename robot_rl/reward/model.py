"""The reward classifier network and its file.

Network: the agent's image encoder (:class:`robot_rl.agents.encoders.ObsEncoder`, built
on the classifier's cameras only) followed by an MLP head giving one logit. With
``encoder.kind: small`` the conv net trains from scratch; with ``resnet10`` the backbone
is frozen (weights from a local file) and its per-camera spatial-embedding head trains.

File (``robot-rl train-reward --out PATH``): ``torch.save`` of a plain dict of strings
and tensors, read back with ``torch.load(weights_only=True)`` (no pickled objects)::

    {"format": "robot_rl.reward_classifier", "version": 1,
     "header": "<JSON text>",            # cameras, image_size, threshold, encoder, ...
     "state_dict": {name: tensor, ...}}

The header says what the model expects (``cameras``, ``image_size`` as width, height),
its decision ``threshold`` (a logit), how it was built (``encoder``, ``hidden_dim``) and its
held-out report figures. :func:`load_classifier` refuses a file whose cameras or image
size differ from the config, or whose report misses the configured bar.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from robot_rl import jsonio
from robot_rl.agents.encoders import ObsEncoder
from robot_rl.config.agent import EncoderConfig
from robot_rl.config.loader import build, to_dict
from robot_rl.config.reward import RewardConfig
from robot_rl.data.durable import durable_writer
from robot_rl.errors import ConfigError
from robot_rl.reward.frames import classifier_images
from robot_rl.reward.metrics import bar_failures

FORMAT = "robot_rl.reward_classifier"
VERSION = 1


class ClassifierFileError(ConfigError):
    """A classifier file is unreadable, or does not fit the configured cameras, size or bar."""


class RewardClassifier(nn.Module):
    """Camera images -> one success logit; ``decide`` compares it with ``threshold``."""

    def __init__(self, cameras: list[str], image_size: tuple[int, int], encoder: EncoderConfig,
                 hidden_dim: int = 128, threshold: float = 0.0) -> None:
        super().__init__()
        self.cameras = list(cameras)
        self.image_size = (int(image_size[0]), int(image_size[1]))
        self.encoder_cfg = encoder
        self.hidden_dim = int(hidden_dim)
        self.threshold = float(threshold)
        self.header_info: dict[str, Any] = {}  # the header of the file it was loaded from
        w, h = self.image_size
        space = gym.spaces.Dict({c: gym.spaces.Box(0, 255, (h, w, 3), dtype=np.uint8) for c in self.cameras})
        if encoder.kind == "resnet10" and encoder.pretrained_path:
            path = Path(encoder.pretrained_path).expanduser()
            if not path.exists():  # a file, or a Hugging Face snapshot folder (config.json + model.safetensors)
                raise ConfigError(f"reward.encoder.pretrained_path: weights file not found: {path}")
        try:
            self.encoder = ObsEncoder(space, encoder)
        except ConfigError as err:  # the shared loader names the agent's key; this is the reward's
            raise ConfigError(str(err).replace("agent.encoder.", "reward.encoder.")) from None
        self.head = nn.Sequential(nn.Linear(self.encoder.feature_dim, self.hidden_dim), nn.ReLU(),
                                  nn.Linear(self.hidden_dim, 1))

    @classmethod
    def from_config(cls, cfg: RewardConfig) -> "RewardClassifier":
        return cls(cfg.cameras, cfg.image_size, cfg.encoder, cfg.hidden_dim)

    def forward(self, batch: Mapping[str, torch.Tensor], augment: bool = False,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """``{camera: uint8 (B, h, w, 3)}`` (or cached backbone maps) -> logits ``(B,)``."""
        return self.head(self.encoder(batch, augment=augment, generator=generator)).squeeze(-1)

    @property
    def device(self) -> torch.device:
        return next(self.head.parameters()).device

    @torch.no_grad()
    def logits(self, images: Mapping[str, np.ndarray], batch_size: int = 256) -> np.ndarray:
        """Logits for a batch of frames ``{camera: uint8 (N, h, w, 3)}`` (eval mode, no augmentation)."""
        was_training = self.training
        self.eval()
        n = len(next(iter(images.values())))
        out = []
        for i in range(0, n, batch_size):
            batch = {c: torch.as_tensor(np.asarray(images[c][i:i + batch_size]), device=self.device)
                     for c in self.cameras}
            out.append(self(batch).float().cpu().numpy())
        self.train(was_training)
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def score(self, obs: Mapping[str, np.ndarray]) -> float:
        """The logit for one observation (images resized to the classifier's size)."""
        frame = classifier_images(obs, self.cameras, self.image_size)
        return float(self.logits({c: frame[c][None] for c in self.cameras})[0])

    def decide(self, score: float) -> bool:
        return bool(score > self.threshold)

    def header(self, **extra: Any) -> dict[str, Any]:
        return {"cameras": self.cameras, "image_size": list(self.image_size), "threshold": self.threshold,
                "encoder": to_dict(dataclasses.replace(self.encoder_cfg, pretrained_path=None)),
                "hidden_dim": self.hidden_dim, **extra}


def save_classifier(path: str | Path, model: RewardClassifier, **header: Any) -> None:
    """Write the model and its header atomically (a crash leaves the old file intact)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {"format": FORMAT, "version": VERSION, "header": jsonio.dumps(model.header(**header)),
            "state_dict": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}}
    with durable_writer(path) as f:  # a crash or power cut leaves the old file or the new one, whole
        torch.save(blob, f)


def read_header(path: str | Path) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The header and state dict of a classifier file (no checks against a config)."""
    path = Path(path)
    if not path.is_file():
        raise ClassifierFileError(f"reward classifier file not found: {path}")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same user error
        raise ClassifierFileError(f"{path} is not a reward classifier file ({type(err).__name__})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ClassifierFileError(f"{path} is not a reward classifier file "
                                  f"(format {blob.get('format') if isinstance(blob, dict) else None!r})")
    if blob.get("version") != VERSION:
        raise ClassifierFileError(f"{path}: classifier file version {blob.get('version')!r} is not supported")
    try:
        header = json.loads(blob["header"])
    except (KeyError, TypeError, json.JSONDecodeError):
        raise ClassifierFileError(f"{path}: the classifier header is missing or not JSON") from None
    return header, blob.get("state_dict", {})


def load_classifier(path: str | Path, cfg: RewardConfig, *, device: str | torch.device = "cpu") -> RewardClassifier:
    """Load a classifier for a session, refusing one that does not fit ``cfg``.

    Refused: other cameras (names or order) or image size than ``reward.cameras`` and
    ``reward.image_size``; held-out figures that miss the configured bar (unless
    ``reward.allow_below_bar``); weights that do not fit the recorded architecture.
    """
    path = Path(path)
    header, state = read_header(path)
    cams, size = list(header.get("cameras", [])), tuple(header.get("image_size", ()))
    if cams != list(cfg.cameras):
        raise ClassifierFileError(f"reward classifier {path} was trained on cameras {cams}, "
                                  f"but reward.cameras is {list(cfg.cameras)}")
    if size != tuple(cfg.image_size):
        raise ClassifierFileError(f"reward classifier {path} was trained on {size[0]}x{size[1]} images, "
                                  f"but reward.image_size is {cfg.image_size[0]}x{cfg.image_size[1]}"
                                  if len(size) == 2 else f"reward classifier {path} has no valid image_size")
    if not cfg.allow_below_bar:
        held_out = header.get("held_out", {})
        failures = bar_failures(held_out, min_accuracy=cfg.min_accuracy, max_fpr=cfg.max_fpr,
                                min_recall=cfg.min_recall)
        if failures:
            raise ClassifierFileError(f"reward classifier {path} misses the bar: {'; '.join(failures)} "
                                      "(retrain, or set reward.allow_below_bar: true to use it anyway)")
    threshold = header.get("threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise ClassifierFileError(f"{path}: the classifier header has no numeric threshold")
    encoder = build(EncoderConfig, header.get("encoder", {}), file=str(path), where="header.encoder")
    model = RewardClassifier(cams, size, encoder, int(header.get("hidden_dim", 128)), threshold=float(threshold))
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    bad = [k for k in own if k in state and tuple(state[k].shape) != tuple(own[k].shape)]
    if missing or unexpected or bad:
        raise ClassifierFileError(f"{path}: weights do not fit the recorded architecture "
                                  f"(missing {missing[:2]}, unexpected {unexpected[:2]}, wrong shape {bad[:2]})")
    model.load_state_dict(state)
    model.header_info = header
    return model.to(device).eval()
