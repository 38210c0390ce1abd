"""Synthetic ResNet-10 weight files in the layouts people hold, and reference forwards.

Nothing is downloaded: a random-weight ResNet10 is written under each layout's key names
(the rename tables here are written from the sources' module structure, independently of
robot_rl.agents.pretrained). The reference forwards compute each source network by its
*own* key names with plain torch functions (transformers' ResNetModel: BatchNorm, padding
``k // 2``; helper2424/resnet10: GroupNorm(4), JAX SAME padding with the TensorFlow
formula), so a loader that maps a key to the wrong place gives other features.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
import torch.nn.functional as F

from robot_rl.agents.encoders import ResNet10

MEAN = torch.tensor((0.485, 0.456, 0.406)).view(1, 3, 1, 1)
STD = torch.tensor((0.229, 0.224, 0.225)).view(1, 3, 1, 1)
BLOCK_PARTS = ("conv1", "bn1", "conv2", "bn2", "downsample.0", "downsample.1")


def random_backbone(variant: str = "torchvision", seed: int = 0) -> ResNet10:
    """A ResNet10 whose every tensor is random and distinct (norm statistics included)."""
    g = torch.Generator().manual_seed(seed)
    net = ResNet10(variant)
    with torch.no_grad():
        for name, t in net.state_dict().items():
            if not t.is_floating_point():
                continue
            if t.dim() == 4:
                t.copy_(torch.randn(t.shape, generator=g) * math.sqrt(2.0 / t[0].numel()))
            elif name.endswith("running_var") or name.endswith("weight"):
                t.copy_(0.5 + torch.rand(t.shape, generator=g))
            else:  # bias, running_mean
                t.copy_(0.2 * torch.randn(t.shape, generator=g))
    return net.eval()


def float_state(net: ResNet10) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in net.state_dict().items() if v.is_floating_point()}


def _split(key: str) -> tuple[int, str, str]:
    """``layer2.0.downsample.1.bias`` -> (2, 'downsample.1', 'bias')."""
    head, rest = key.split(".0.", 1)
    stage = int(head[len("layer"):])
    for part in BLOCK_PARTS:
        if rest.startswith(part + "."):
            return stage, part, rest[len(part) + 1:]
    raise KeyError(key)


def to_transformers(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """torchvision names -> transformers ResNetModel names (embedder / encoder.stages.S.layers.0)."""
    where = {"conv1": "layer.0.convolution", "bn1": "layer.0.normalization", "conv2": "layer.1.convolution",
             "bn2": "layer.1.normalization", "downsample.0": "shortcut.convolution",
             "downsample.1": "shortcut.normalization"}
    out = {}
    for key, value in state.items():
        if key.startswith("conv1."):
            out["embedder.embedder.convolution.weight"] = value
        elif key.startswith("bn1."):
            out["embedder.embedder.normalization." + key.split(".", 1)[1]] = value
        else:
            stage, part, param = _split(key)
            out[f"encoder.stages.{stage - 1}.layers.0.{where[part]}.{param}"] = value
    return out


def to_lerobot(state: dict[str, torch.Tensor], group_norm_level: bool = True) -> dict[str, torch.Tensor]:
    """hil_serl ResNet10 names -> helper2424/resnet10 names (embedder.0/1, encoder.stages.S.*)."""
    gn = ".group_norm" if group_norm_level else ""
    where = {"conv1": "conv1.conv", "bn1": f"norm1{gn}", "conv2": "conv2.conv", "bn2": f"norm2{gn}",
             "downsample.0": "shortcut.0.conv", "downsample.1": f"shortcut.1{gn}"}
    out = {}
    for key, value in state.items():
        if key == "conv1.weight":
            out["embedder.0.weight"] = value
        elif key.startswith("bn1."):
            out[f"embedder.1{gn}." + key.split(".", 1)[1]] = value
        else:
            stage, part, param = _split(key)
            out[f"encoder.stages.{stage - 1}.{where[part]}.{param}"] = value
    return out


def _tf_same(n: int, k: int, s: int) -> tuple[int, int]:
    """TensorFlow's documented SAME padding: total = max(k - s, 0) or max(k - n % s, 0)."""
    total = max(k - s, 0) if n % s == 0 else max(k - n % s, 0)
    return total // 2, total - total // 2


def _same(x: torch.Tensor, k: int, s: int, value: float = 0.0) -> torch.Tensor:
    top, bottom = _tf_same(x.shape[-2], k, s)
    left, right = _tf_same(x.shape[-1], k, s)
    return F.pad(x, (left, right, top, bottom), value=value)


def transformers_reference(src: dict[str, torch.Tensor], images: torch.Tensor) -> torch.Tensor:
    """transformers ResNetModel(basic, [64,128,256,512], depths 1) last_hidden_state, by its names."""
    def conv_bn(x, name, stride, act):
        w = src[f"{name}.convolution.weight"]
        x = F.conv2d(x, w, stride=stride, padding=w.shape[-1] // 2)
        x = F.batch_norm(x, src[f"{name}.normalization.running_mean"], src[f"{name}.normalization.running_var"],
                         src[f"{name}.normalization.weight"], src[f"{name}.normalization.bias"], False, 0.0, 1e-5)
        return F.relu(x) if act else x

    x = (images - MEAN) / STD
    x = F.max_pool2d(conv_bn(x, "embedder.embedder", 2, True), 3, 2, 1)
    for stage in range(4):
        base = f"encoder.stages.{stage}.layers.0"
        stride = 1 if stage == 0 else 2
        residual = conv_bn(x, f"{base}.shortcut", stride, False) if f"{base}.shortcut.convolution.weight" in src \
            else x
        h = conv_bn(x, f"{base}.layer.0", stride, True)
        x = F.relu(conv_bn(h, f"{base}.layer.1", 1, False) + residual)
    return x


def lerobot_reference(src: dict[str, torch.Tensor], images: torch.Tensor) -> torch.Tensor:
    """helper2424/resnet10 last_hidden_state, by its names (``.group_norm`` level present)."""
    def gn(x, name):
        return F.group_norm(x, 4, src[f"{name}.group_norm.weight"], src[f"{name}.group_norm.bias"], 1e-5)

    def conv(x, name, stride):
        w = src[f"{name}.conv.weight"]
        return F.conv2d(_same(x, w.shape[-1], stride), w, stride=stride)

    x = (images - MEAN) / STD
    x = F.relu(gn(F.conv2d(x, src["embedder.0.weight"], stride=2, padding=3), "embedder.1"))
    x = F.max_pool2d(_same(x, 3, 2, float("-inf")), 3, 2)
    for stage in range(4):
        base = f"encoder.stages.{stage}"
        stride = 1 if stage == 0 else 2
        residual = gn(conv(x, f"{base}.shortcut.0", stride), f"{base}.shortcut.1") \
            if f"{base}.shortcut.0.conv.weight" in src else x
        h = F.relu(gn(conv(x, f"{base}.conv1", stride), f"{base}.norm1"))
        x = F.relu(gn(conv(h, f"{base}.conv2", 1), f"{base}.norm2") + residual)
    return x


def save_safetensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> Path:
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in tensors.items()}, str(path), metadata=metadata)
    return path


def images(n: int = 2, size: int = 64, seed: int = 1) -> torch.Tensor:
    return torch.rand(n, 3, size, size, generator=torch.Generator().manual_seed(seed))
