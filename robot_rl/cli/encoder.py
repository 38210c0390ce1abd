"""``robot-rl encoder``: check a pretrained ResNet-10 file, or convert it to the project format.

    robot-rl encoder check FILE [--layout auto] [--prefix PREFIX]
    robot-rl encoder convert IN OUT.safetensors [--layout auto] [--prefix PREFIX] [--force]

Both read FILE/IN through :mod:`robot_rl.agents.pretrained` (safetensors, or a PyTorch
zip archive with ``weights_only=True``; never a pickle), map its key names onto the
backbone (``--layout auto|robot_rl|torchvision|transformers|lerobot``; ``auto`` detects
it and any common prefix, ``--prefix`` picks one where a file holds several backbones),
and refuse anything they cannot verify: a path that is not a regular file (a FIFO,
socket, device or directory is refused before it is opened, so nothing waits on it), a
safetensors header that is too long, nested deeper than the format's flat mapping or not
that mapping, a missing key, another shape, a non-float dtype, a NaN or infinite value, a
key the layout does not know. Then the backbone runs on a fixed batch of images, which
must give finite features.

``convert`` writes OUT in the project format (safetensors, float32, ResNet10's names,
metadata with the variant), reads OUT back and checks that it loads and gives the very
same features. Set ``agent.encoder.pretrained_path`` to OUT and
``agent.encoder.resnet_variant`` to the variant it reports. Both end with one summary
line and one JSON line; bad input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from robot_rl import jsonio
from robot_rl.errors import ConfigError

#: robot_rl.agents.pretrained.LAYOUTS (a test keeps them equal), here so that ``--help`` needs no torch
LAYOUTS = ("auto", "robot_rl", "torchvision", "transformers", "lerobot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    style = {"formatter_class": parser.formatter_class}
    check = sub.add_parser("check", help="verify a weights file and report its layout and variant",
                           description="verify a weights file and report its layout and variant", **style)
    check.add_argument("file", help="a safetensors file or a PyTorch zip archive (.pt/.pth)")
    convert = sub.add_parser("convert", help="verify IN and write it in the project format to OUT",
                             description="verify IN and write it in the project format to OUT", **style)
    convert.add_argument("input", metavar="IN", help="a safetensors file or a PyTorch zip archive (.pt/.pth)")
    convert.add_argument("output", metavar="OUT", help="the project-format file to write (.safetensors)")
    convert.add_argument("--force", action="store_true", help="replace OUT if it exists")
    for p in (check, convert):
        p.add_argument("--layout", choices=LAYOUTS, default="auto", help="key-name layout of the file")
        p.add_argument("--prefix", help="the key prefix the backbone sits under (default: detected)")


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return _check(args)
    return _convert(args)


def _probe(variant: str, tensors: dict[str, Any]) -> Any:
    """The backbone's features for a fixed batch of images; they must all be finite."""
    import torch

    from robot_rl.agents.encoders import ResNet10

    backbone = ResNet10(variant)
    state = backbone.state_dict()
    state.update(tensors)
    backbone.load_state_dict(state)
    backbone.eval()
    images = torch.rand(2, 3, 128, 128, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        features = backbone(images)
    return features


def _verified(path: str, layout: str, prefix: str | None) -> tuple[Any, Any]:
    import torch

    from robot_rl.agents.pretrained import read_backbone_weights

    weights = read_backbone_weights(path, layout=layout, prefix=prefix, where=None)
    features = _probe(weights.variant, weights.tensors)
    if not bool(torch.isfinite(features).all()):
        raise ConfigError(f"{weights.file}: the backbone gives non-finite features with these weights "
                          "(every tensor is finite, but their values overflow)")
    return weights, features


def _describe(weights: Any) -> str:
    prefix = f" under prefix '{weights.prefix}'" if weights.prefix else ""
    extra = []
    if weights.ignored:
        extra.append(f"{len(weights.ignored)} known-harmless keys ignored (e.g. '{weights.ignored[0]}')")
    if weights.outside:
        extra.append(f"{weights.outside} keys outside the prefix ignored")
    return (f"ResNet-10, variant {weights.variant}, {weights.layout} layout{prefix}: {len(weights.tensors)} tensors, "
            f"{weights.parameters:,} parameters" + ("; " + "; ".join(extra) if extra else ""))


def _check(args: argparse.Namespace) -> int:
    weights, features = _verified(args.file, args.layout, args.prefix)
    print(f"{weights.file}: {_describe(weights)}; features {tuple(features.shape[1:])} for 128x128 images")
    print(jsonio.dumps({**weights.summary(), "feature_shape": list(features.shape[1:]), "ok": True}))
    return 0


def _convert(args: argparse.Namespace) -> int:
    import torch

    from robot_rl.agents.pretrained import read_backbone_weights, save_backbone

    source, out = Path(args.input).expanduser(), Path(args.output).expanduser()
    if out.suffix != ".safetensors":
        raise ConfigError(f"{out}: the project format is a safetensors file; name OUT *.safetensors")
    if out.is_dir():
        raise ConfigError(f"{out}: is a directory; OUT must be a file path")
    if out.exists() and source.exists() and out.resolve() == source.resolve():
        raise ConfigError(f"{out}: OUT is IN; write the converted file elsewhere")
    if out.exists() and not args.force:
        raise ConfigError(f"{out}: exists (use --force to replace it)")
    weights, features = _verified(str(source), args.layout, args.prefix)
    if not out.parent.is_dir():
        raise ConfigError(f"{out}: folder {out.parent} does not exist")
    save_backbone(out, weights)
    again = read_backbone_weights(out, layout="robot_rl", where=None)
    if again.variant != weights.variant or not torch.equal(_probe(again.variant, again.tensors), features):
        out.unlink(missing_ok=True)
        raise ConfigError(f"{out}: reading the written file back gave other features; removed it")
    print(f"wrote {out}: {_describe(weights)} (from {weights.file}); set agent.encoder.pretrained_path: {out} "
          f"and agent.encoder.resnet_variant: {weights.variant}")
    print(jsonio.dumps({**weights.summary(), "output": str(out), "feature_shape": list(features.shape[1:]),
                        "ok": True}))
    return 0
