"""Observation encoders: per-camera image encoders plus the proprioceptive vector.

An observation is a dict: vector keys (``state``: proprioception, plus privileged object
state in obs_mode ``state``/``both``) and one ``uint8 (H, W, 3)`` image per camera.
:class:`ObsEncoder` turns a batch of them into one feature vector:

    features = concat([head_cam(backbone_cam(image_cam)) for each camera] + [normalize(state)])

Two image paths (``agent.encoder.kind``):

* ``small``: a conv net per camera trained from scratch (by the critic loss, DrQ style),
  flattened into a ``Linear -> LayerNorm -> tanh`` head.
* ``resnet10``: one ResNet-10-style backbone shared by all cameras, frozen, with weights
  from a local file (torchvision ResNet key names, see :func:`load_backbone_weights`),
  and a trainable spatial-learned-embedding head per camera (as in HIL-SERL).

The frozen backbone is the expensive part (about 100-140 images/s on a 2-core CPU), so
its output is computed once per frame: either when the frame enters replay
(``cache_features``, see :meth:`ObsEncoder.storage_transform`) or once per batch.
Either way, the actor and the critics share one encoding of each batch.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Mapping

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from robot_rl.agents.augment import random_shift
from robot_rl.config.agent import EncoderConfig
from robot_rl.errors import ConfigError

log = logging.getLogger(__name__)

_IMAGENET_MEAN = (0.485, 0.456, 0.406)
_IMAGENET_STD = (0.229, 0.224, 0.225)


def image_keys(space: gym.spaces.Dict) -> list[str]:
    """Observation keys holding camera images: ``uint8`` boxes of shape ``(H, W, 3)``."""
    return sorted(k for k, s in space.spaces.items()
                  if isinstance(s, gym.spaces.Box) and s.dtype == np.uint8 and len(s.shape) == 3)


def vector_keys(space: gym.spaces.Dict) -> list[str]:
    """Observation keys that are flat float vectors (``state``), concatenated as they are."""
    keys = sorted(k for k in space.spaces if k not in image_keys(space))
    for k in keys:
        s = space.spaces[k]
        if not isinstance(s, gym.spaces.Box) or len(s.shape) != 1:
            raise ConfigError(f"observation key '{k}' is neither a camera image nor a flat vector: {s}")
    return keys


class SmallConvBackbone(nn.Module):
    """A few strided 3x3 convs on ``[0, 1]`` images; trained from scratch."""

    def __init__(self, channels: tuple[int, ...], strides: tuple[int, ...]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        in_ch = 3
        for ch, stride in zip(channels, strides):
            layers += [nn.Conv2d(in_ch, ch, 3, stride=stride), nn.ReLU()]
            in_ch = ch
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x - 0.5)


class BasicBlock(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet10(nn.Module):
    """ResNet with one BasicBlock per stage (64-128-256-512): a 128x128 image -> 512x4x4.

    Parameter names follow torchvision's ResNet (``conv1``, ``bn1``, ``layerN.0.*``), so
    a ResNet-10 checkpoint saved in that layout loads directly.
    """

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64, 1))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2))
        self.register_buffer("mean", torch.tensor(_IMAGENET_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(_IMAGENET_STD).view(1, 3, 1, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - self.mean) / self.std
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


def load_backbone_weights(backbone: nn.Module, path: str) -> None:
    """Load a local state dict (optionally under a ``state_dict`` key) into ``backbone``.

    Keys the backbone does not have (a classifier ``fc.*``, deeper blocks) are ignored;
    keys it needs but the file lacks, or shapes that differ, are a ConfigError.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"agent.encoder.pretrained_path: weights file not found: {file}")
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same user error
        raise ConfigError(f"agent.encoder.pretrained_path: cannot read {file} "
                          f"as a PyTorch state dict ({err})") from None
    if isinstance(state, Mapping) and "state_dict" in state and isinstance(state["state_dict"], Mapping):
        state = state["state_dict"]
    own = backbone.state_dict()
    missing = [k for k in own if k not in state]
    if missing:
        raise ConfigError(f"agent.encoder.pretrained_path: {file} lacks {len(missing)} backbone weights, "
                          f"e.g. {missing[:3]}")
    for k, v in own.items():
        if tuple(state[k].shape) != tuple(v.shape):
            raise ConfigError(f"agent.encoder.pretrained_path: {file}: '{k}' has shape "
                              f"{tuple(state[k].shape)}, the backbone needs {tuple(v.shape)}")
    backbone.load_state_dict({k: state[k] for k in own})
    log.info("loaded backbone weights from %s (%d tensors, %d ignored)", file, len(own), len(state) - len(own))


class SpatialEmbeddingHead(nn.Module):
    """Per channel, ``F`` learned weightings over the spatial map; then Linear-LayerNorm-tanh."""

    def __init__(self, in_shape: tuple[int, int, int], num_features: int, latent_dim: int) -> None:
        super().__init__()
        c, h, w = in_shape
        self.kernel = nn.Parameter(torch.empty(c, h * w, num_features))
        nn.init.normal_(self.kernel, std=1.0 / np.sqrt(h * w))
        self.proj = nn.Sequential(nn.Linear(c * num_features, latent_dim), nn.LayerNorm(latent_dim), nn.Tanh())

    def forward(self, fmap: torch.Tensor) -> torch.Tensor:
        b, c = fmap.shape[:2]
        emb = torch.einsum("bcs,csf->bcf", fmap.reshape(b, c, -1), self.kernel)
        return self.proj(emb.reshape(b, -1))


class FlattenHead(nn.Module):
    def __init__(self, in_shape: tuple[int, int, int], latent_dim: int) -> None:
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(int(np.prod(in_shape)), latent_dim), nn.LayerNorm(latent_dim), nn.Tanh())

    def forward(self, fmap: torch.Tensor) -> torch.Tensor:
        return self.proj(fmap.flatten(1))


class RunningNormalizer(nn.Module):
    """Per-dimension running mean and std of the state vector; ``forward`` standardises and clips.

    Proprioception and object state mix units and scales (metres, quaternions, tenths of
    newtons, an opening fraction); a cube offset that matters at the millimetre level
    would otherwise be drowned by entries of order 1. The statistics are buffers, so
    they travel with the policy weights and the checkpoint. The learner updates them
    with every step it ingests (demos included); as the count grows they settle.
    """

    def __init__(self, dim: int, clip: float = 10.0, min_std: float = 1e-3) -> None:
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float64))
        self.register_buffer("m2", torch.zeros(dim, dtype=torch.float64))
        self.clip = clip
        self.min_std = min_std

    @torch.no_grad()
    def update(self, x: np.ndarray) -> None:
        """Merge a ``(B, dim)`` batch into the statistics (Chan et al.'s parallel update)."""
        x = torch.as_tensor(np.asarray(x, dtype=np.float64).reshape(-1, self.mean.shape[0]), device=self.mean.device)
        n = x.shape[0]
        if n == 0:
            return
        batch_mean = x.mean(0)
        batch_m2 = ((x - batch_mean) ** 2).sum(0)
        total = self.count + n
        delta = batch_mean - self.mean
        self.mean += delta * (n / total)
        self.m2 += batch_m2 + delta ** 2 * (self.count * n / total)
        self.count.fill_(total)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.count < 2:
            return x
        std = (self.m2 / (self.count - 1)).sqrt().clamp_min(self.min_std)
        return ((x - self.mean.to(x.dtype)) / std.to(x.dtype)).clamp(-self.clip, self.clip)


class ObsEncoder(nn.Module):
    """A batch of observations (torch tensors keyed like the env's obs) -> ``(B, feature_dim)``.

    Camera entries may be raw ``uint8 (B, H, W, 3)`` images or, when features are cached
    in replay, the backbone's ``float16 (B, C, h, w)`` output; both encode identically.
    """

    def __init__(self, obs_space: gym.spaces.Dict, cfg: EncoderConfig, normalize_state: bool = True) -> None:
        super().__init__()
        self.cfg = cfg
        self.image_keys = image_keys(obs_space)
        self.vector_keys = vector_keys(obs_space)
        self.vector_dim = int(sum(obs_space.spaces[k].shape[0] for k in self.vector_keys))
        self.normalizer = RunningNormalizer(self.vector_dim) if normalize_state and self.vector_dim else None
        self.frozen = cfg.kind == "resnet10" and cfg.freeze_backbone
        self.backbones = nn.ModuleDict()
        self.heads = nn.ModuleDict()
        self.fmap_shapes: dict[str, tuple[int, int, int]] = {}
        shared: nn.Module | None = None
        if self.image_keys and cfg.kind == "resnet10":
            shared = ResNet10()
            if cfg.pretrained_path:
                load_backbone_weights(shared, cfg.pretrained_path)
            if self.frozen:
                shared.requires_grad_(False)
                shared.eval()
        for key in self.image_keys:
            h, w, _ = obs_space.spaces[key].shape
            if shared is not None:
                backbone = shared
            else:
                backbone = SmallConvBackbone(cfg.channels, cfg.strides)
            with torch.no_grad():
                shape = tuple(backbone(torch.zeros(1, 3, h, w)).shape[1:])
            self.fmap_shapes[key] = shape  # type: ignore[assignment]
            self.backbones[key] = backbone
            if cfg.kind == "resnet10":
                self.heads[key] = SpatialEmbeddingHead(shape, cfg.spatial_features, cfg.latent_dim)  # type: ignore[arg-type]
            else:
                self.heads[key] = FlattenHead(shape, cfg.latent_dim)  # type: ignore[arg-type]
        self.feature_dim = cfg.latent_dim * len(self.image_keys) + self.vector_dim

    @property
    def caches_features(self) -> bool:
        """True when replay holds backbone feature maps instead of images."""
        return bool(self.image_keys) and self.frozen and self.cfg.cache_features

    def train(self, mode: bool = True) -> "ObsEncoder":
        super().train(mode)
        if self.frozen:  # a frozen backbone keeps its BatchNorm statistics
            for backbone in self.backbones.values():
                backbone.eval()
        return self

    # --- pixels -> feature maps ------------------------------------------------------

    @staticmethod
    def to_float_image(images: torch.Tensor) -> torch.Tensor:
        """``uint8 (B, H, W, 3)`` -> ``float (B, 3, H, W)`` in ``[0, 1]``."""
        return images.permute(0, 3, 1, 2).float().div_(255.0)

    def backbone_features(self, key: str, images: torch.Tensor) -> torch.Tensor:
        """Float ``(B, 3, H, W)`` images in ``[0, 1]`` -> the backbone's feature map."""
        if self.frozen:
            with torch.no_grad():
                return self.backbones[key](images)
        return self.backbones[key](images)

    def feature_maps(self, obs: Mapping[str, torch.Tensor], augment: bool = False,
                     generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        """Backbone output per camera (cached maps pass through; augmentation is pixel-only)."""
        maps = {}
        for key in self.image_keys:
            x = obs[key]
            if x.dtype == torch.uint8:
                x = self.to_float_image(x)
                if augment and self.cfg.augment == "shift":
                    x = random_shift(x, self.cfg.shift_pad, generator)
                maps[key] = self.backbone_features(key, x)
            else:
                maps[key] = x.float()
        return maps

    def forward(self, obs: Mapping[str, torch.Tensor], augment: bool = False,
                generator: torch.Generator | None = None) -> torch.Tensor:
        parts = [self.heads[k](m) for k, m in self.feature_maps(obs, augment, generator).items()]
        if self.vector_keys:
            vector = torch.cat([obs[k].float() for k in self.vector_keys], dim=-1)
            parts.append(self.normalizer(vector) if self.normalizer is not None else vector)
        return torch.cat(parts, dim=-1)

    def update_normalizer(self, obs_batch: Mapping[str, np.ndarray]) -> None:
        """Add a batch of env observations (leading dim B) to the state statistics."""
        if self.normalizer is not None:
            rows = len(obs_batch[self.vector_keys[0]])
            self.normalizer.update(np.concatenate(
                [np.asarray(obs_batch[k], dtype=np.float64).reshape(rows, -1) for k in self.vector_keys], axis=-1))

    # --- replay storage --------------------------------------------------------------

    def storage_space(self, obs_space: gym.spaces.Dict) -> gym.spaces.Dict:
        """The observation space replay stores: images become float16 maps when caching."""
        if not self.caches_features:
            return obs_space
        spaces = dict(obs_space.spaces)
        for key in self.image_keys:
            spaces[key] = gym.spaces.Box(-np.inf, np.inf, self.fmap_shapes[key], np.float16)
        return gym.spaces.Dict(spaces)

    def storage_transform(self, obs_batch: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """A batch of env observations (leading dim B) -> what replay stores for them."""
        out = dict(obs_batch)
        if not self.caches_features:
            return out
        device = next(self.heads.parameters()).device
        for key in self.image_keys:
            images = torch.as_tensor(np.asarray(obs_batch[key]), device=device)
            fmap = self.backbone_features(key, self.to_float_image(images))
            out[key] = fmap.to(torch.float16).cpu().numpy()
        return out
