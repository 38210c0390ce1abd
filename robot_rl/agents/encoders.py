"""Observation encoders: per-camera image encoders plus the proprioceptive vector.

An observation is a dict: vector keys (``state``: proprioception, plus privileged object
state in obs_mode ``state``/``both``) and one ``uint8 (H, W, 3)`` image per camera.
:class:`ObsEncoder` turns a batch of them into one feature vector:

    features = concat([head_cam(backbone_cam(image_cam)) for each camera] + [normalize(state)])

Two image paths (``agent.encoder.kind``):

* ``small``: a conv net per camera trained from scratch (by the critic loss, DrQ style),
  flattened into a ``Linear -> LayerNorm -> tanh`` head.
* ``resnet10``: one ResNet-10 backbone shared by all cameras, frozen, with weights from a
  local file (see :func:`load_backbone_weights` and :mod:`robot_rl.agents.pretrained`),
  and a trainable spatial-learned-embedding head per camera (as in HIL-SERL). Two
  variants (``agent.encoder.resnet_variant``): ``torchvision`` (BatchNorm) and
  ``hil_serl`` (GroupNorm and JAX ``SAME`` padding: the network LeRobot's HIL-SERL port
  loads as ``helper2424/resnet10``, whose weights only reproduce their features there).

The frozen backbone is the expensive part (about 100-140 images/s on a 2-core CPU), so
its output is computed once per frame: either when the frame enters replay
(``cache_features``, see :meth:`ObsEncoder.storage_transform`) or once per batch.
Either way, the actor and the critics share one encoding of each batch.
"""

from __future__ import annotations

import logging
from typing import Mapping

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from robot_rl.agents.augment import random_shift
from robot_rl.agents.pretrained import VARIANTS, backbone_spec, read_backbone_weights
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


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """JAX/TensorFlow ``SAME`` padding of one axis: (before, after), the odd pixel after."""
    total = max(0, (-(-size // stride) - 1) * stride + kernel - size)  # integer ceil: traceable by torch.compile
    return total // 2, total - total // 2


class SameConv2d(nn.Conv2d):
    """A bias-free conv padded like JAX's ``padding="SAME"``.

    HIL-SERL's ResNet-10 was trained in JAX; with a stride of 2 on an even size ``SAME``
    pads only the bottom/right, one pixel off from PyTorch's symmetric ``padding=1``.
    Its weights give their features only with the alignment they were trained with.
    """

    def __init__(self, in_ch: int, out_ch: int, kernel: int, stride: int = 1) -> None:
        super().__init__(in_ch, out_ch, kernel, stride=stride, padding=0, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top, bottom = same_padding(x.shape[-2], self.kernel_size[0], self.stride[0])
        left, right = same_padding(x.shape[-1], self.kernel_size[1], self.stride[1])
        return super().forward(F.pad(x, (left, right, top, bottom)))


class SameMaxPool2d(nn.Module):
    """3x3/2 max-pool with JAX ``SAME`` padding (padded cells never win: they are -inf)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top, bottom = same_padding(x.shape[-2], 3, 2)
        left, right = same_padding(x.shape[-1], 3, 2)
        return F.max_pool2d(F.pad(x, (left, right, top, bottom), value=float("-inf")), 3, 2)


def _norm(variant: str, channels: int) -> nn.Module:
    return nn.BatchNorm2d(channels) if variant == "torchvision" else nn.GroupNorm(4, channels, eps=1e-5)


def _conv(variant: str, in_ch: int, out_ch: int, kernel: int, stride: int) -> nn.Conv2d:
    if variant == "torchvision":
        return nn.Conv2d(in_ch, out_ch, kernel, stride=stride, padding=kernel // 2, bias=False)
    return SameConv2d(in_ch, out_ch, kernel, stride)


class BasicBlock(nn.Module):
    """Two 3x3 convs and a residual; ``bn*`` are GroupNorm in the ``hil_serl`` variant."""

    def __init__(self, in_ch: int, out_ch: int, stride: int, variant: str = "torchvision") -> None:
        super().__init__()
        self.conv1 = _conv(variant, in_ch, out_ch, 3, stride)
        self.bn1 = _norm(variant, out_ch)
        self.conv2 = _conv(variant, out_ch, out_ch, 3, 1)
        self.bn2 = _norm(variant, out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(_conv(variant, in_ch, out_ch, 1, stride), _norm(variant, out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet10(nn.Module):
    """ResNet with one BasicBlock per stage (64-128-256-512): a 128x128 image -> 512x4x4.

    Parameter names follow torchvision's ResNet (``conv1``, ``bn1``, ``layerN.0.*``) in
    both variants; :mod:`robot_rl.agents.pretrained` maps other layouts onto them.

    * ``torchvision``: BatchNorm, symmetric padding (torchvision's and transformers' ResNet).
    * ``hil_serl``: GroupNorm (4 groups) and JAX ``SAME`` padding in the blocks and the
      max-pool, the stem conv padded symmetrically by 3, as in ``helper2424/resnet10``.

    Images arrive in ``[0, 1]`` and are standardised with ImageNet statistics, as both
    sources were trained.
    """

    def __init__(self, variant: str = "torchvision") -> None:
        super().__init__()
        if variant not in VARIANTS:
            raise ConfigError(f"agent.encoder.resnet_variant: unknown variant {variant!r} "
                              f"(one of {', '.join(VARIANTS)})")
        self.variant = variant
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = _norm(variant, 64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool: nn.Module = nn.MaxPool2d(3, stride=2, padding=1) if variant == "torchvision" \
            else SameMaxPool2d()
        self.layer1 = nn.Sequential(BasicBlock(64, 64, 1, variant))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2, variant))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2, variant))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2, variant))
        self.register_buffer("mean", torch.tensor(_IMAGENET_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(_IMAGENET_STD).view(1, 3, 1, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - self.mean) / self.std
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


def load_backbone_weights(backbone: ResNet10, path: str, where: str = "agent.encoder.pretrained_path",
                          layout: str = "auto", prefix: str | None = None) -> None:
    """Load a local weights file into ``backbone``, verified whole before anything is copied.

    Any layout :func:`robot_rl.agents.pretrained.read_backbone_weights` reads is accepted
    (project format, torchvision, transformers, lerobot; safetensors or a PyTorch zip
    archive read with ``weights_only=True``). The file's variant must be the backbone's:
    a GroupNorm HIL-SERL file cannot stand in for a BatchNorm network, or the reverse.
    Every problem is one :class:`ConfigError` line naming ``where``, the file and the key.
    """
    weights = read_backbone_weights(path, layout=layout, prefix=prefix, where=where)
    if weights.variant != backbone.variant:
        key = where.rsplit(".", 1)[0] + ".resnet_variant"
        raise ConfigError(f"{where}: {weights.file} holds a {weights.variant} ResNet-10 "
                          f"({weights.layout} layout), but {key} is {backbone.variant}: "
                          f"set {key}: {weights.variant}")
    state = backbone.state_dict()
    expected = set(backbone_spec(backbone.variant))
    floats = {k for k, v in state.items() if v.is_floating_point()}
    if floats != expected:  # the spec and the module must describe one network
        raise RuntimeError(f"ResNet10 and backbone_spec disagree: {sorted(floats ^ expected)[:4]}")
    state.update(weights.tensors)
    backbone.load_state_dict(state)
    log.info("loaded %s ResNet-10 weights from %s (%s layout%s, %d tensors, %d ignored, %d outside the prefix)",
             weights.variant, weights.file, weights.layout, f", prefix '{weights.prefix}'" if weights.prefix else "",
             len(weights.tensors), len(weights.ignored), weights.outside)


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
        # torch.where, not `if count < 2`: a Python branch on a device tensor is a host sync per call.
        std = (self.m2 / (self.count - 1)).sqrt().clamp_min(self.min_std)
        normalized = ((x - self.mean.to(x.dtype)) / std.to(x.dtype)).clamp(-self.clip, self.clip)
        return torch.where(self.count >= 2, normalized, x)


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
        # True: the state statistics stay as loaded (a warm-started actor sees its input as BC saw it)
        self.hold_statistics = False
        self.vector_dim = int(sum(obs_space.spaces[k].shape[0] for k in self.vector_keys))
        self.normalizer = RunningNormalizer(self.vector_dim) if normalize_state and self.vector_dim else None
        self.frozen = cfg.kind == "resnet10" and cfg.freeze_backbone
        self.backbones = nn.ModuleDict()
        self.heads = nn.ModuleDict()
        self.fmap_shapes: dict[str, tuple[int, int, int]] = {}
        shared: nn.Module | None = None
        if self.image_keys and cfg.kind == "resnet10":
            shared = ResNet10(cfg.resnet_variant)
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
        """Add a batch of env observations (leading dim B) to the state statistics (unless held)."""
        if self.normalizer is not None and not self.hold_statistics:
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
