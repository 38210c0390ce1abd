"""Pretrained ResNet-10 backbone weights from local files: readers, layouts, the project format.

People hold ResNet-10 weights in several shapes, and none of them may cost a download or
an unpickled object. This module reads a file, finds which layout its key names follow,
maps them onto :class:`robot_rl.agents.encoders.ResNet10`'s names and verifies every
tensor before anything is loaded, so a wrong file is one line naming the file and the
first key that does not fit, and a backbone is never left half-loaded.

Containers (sniffed from the bytes, not the file name), read only from a regular file:
a FIFO, socket, device or directory is refused before it is opened (``open`` on a FIFO
would wait for a writer forever), and the file is opened non-blocking and checked again,
so a path swapped in between cannot block either.

* **safetensors** (``safetensors`` package; the header is checked first, so a truncated
  file, a huge header length or a bad offset is one line, not a library panic). The
  header is at most :data:`MAX_HEADER_BYTES`, its nesting is measured by a linear scan
  before it is parsed (the format's header is a flat mapping, :data:`MAX_HEADER_DEPTH`
  levels deep: a 200 KB header of nested arrays would otherwise exhaust the parser's
  recursion), and every entry must be what the format defines: ``__metadata__`` a
  mapping of strings, every other entry a mapping with a string ``dtype``, a ``shape``
  of non-negative integers and two ``data_offsets`` inside the file;
* **PyTorch zip archives** (``.pt``/``.pth`` from ``torch.save``), read only through
  ``torch.load(weights_only=True)``, which refuses any pickled object other than tensors
  and plain containers. Nested dicts are flattened with ``.``, so ``{"state_dict": {...}}``
  is found under the prefix ``state_dict.``;
* a bare **pickle** (legacy ``torch.save``, ``.pkl`` files) is refused: it can run code.

Layouts (``layout``; ``auto`` picks the one whose names the file holds most of, under
whatever common prefix the keys carry, e.g. ``module.`` or a LeRobot policy's
``encoder_critic.image_encoder.image_enc_layers.``):

``robot_rl``
    The project format :func:`save_backbone` writes: a safetensors file with ResNet10's
    own key names, float32, and metadata ``format``/``version``/``arch``/``variant``.
``torchvision``
    torchvision ResNet names (``conv1``, ``bn1``, ``layerN.B.*``, BatchNorm). Deeper
    blocks (``layerN.1+``: a ResNet-18/34 file keeps the first block of each stage), the
    ``fc.*`` head and ``num_batches_tracked`` counters are ignored and reported.
``transformers``
    Hugging Face ``ResNetModel`` with ``layer_type="basic"``, ``hidden_sizes
    [64, 128, 256, 512]``, ``downsample_in_first_stage=False``: ``embedder.embedder.
    {convolution,normalization}``, ``encoder.stages.S.layers.B.layer.{0,1}.*`` and
    ``...shortcut.{convolution,normalization}`` (BatchNorm, padding ``k // 2``, stem
    7x7/2 + maxpool 3/2: the same network as torchvision's). A ``resnet.`` prefix and a
    ``classifier.*`` head (``ResNetForImageClassification``) are handled.
``lerobot``
    The ResNet-10 LeRobot's HIL-SERL port loads (``helper2424/resnet10``, HIL-SERL's JAX
    ResNet-10 converted to PyTorch). It is *not* the transformers network: GroupNorm with
    4 groups (eps 1e-5) instead of BatchNorm, and JAX ``SAME`` padding in the blocks and
    the max-pool (the extra row/column goes bottom/right). Its names are ``embedder.0``
    (7x7/2 stem conv, symmetric padding 3), ``embedder.1[.group_norm]``, and per stage
    ``encoder.stages.S.{conv1,conv2}.conv``, ``{norm1,norm2}[.group_norm]``,
    ``shortcut.0.conv``, ``shortcut.1[.group_norm]`` (the ``.group_norm`` level exists
    in files written since April 2025; older ones lack it). It maps onto
    ``ResNet10(variant="hil_serl")``.

Two backbone variants follow: ``torchvision`` (BatchNorm; torchvision, transformers)
and ``hil_serl`` (GroupNorm + SAME padding; lerobot). Every tensor the variant needs must
be present with its exact shape, a floating-point dtype and finite values (running
variances non-negative); any other key under the prefix that the layout does not know
as harmless is refused.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Mapping

import numpy as np
import torch

from robot_rl.data.durable import durable_write
from robot_rl.errors import ConfigError, one_line

FORMAT = "robot_rl.backbone"
FORMAT_VERSION = "1"
ARCH = "resnet10"
LAYOUTS = ("auto", "robot_rl", "torchvision", "transformers", "lerobot")
VARIANTS = ("torchvision", "hil_serl")
#: The backbone variant each foreign layout's weights belong to.
LAYOUT_VARIANT = {"torchvision": "torchvision", "transformers": "torchvision", "lerobot": "hil_serl"}
#: The longest JSON header read: a ResNet-10's is about 6 KB, a whole policy's with thousands of
#: tensors well under a megabyte; a larger length is a corrupt, foreign or hostile file.
MAX_HEADER_BYTES = 16 * 1024 * 1024
#: How deep a safetensors header nests: the mapping, a tensor's entry, its shape or offsets list.
MAX_HEADER_DEPTH = 3

#: (in channels, out channels, stride) of each stage's single BasicBlock.
STAGES = ((64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2))
_NORM_PARAMS = {"torchvision": ("weight", "bias", "running_mean", "running_var"), "hil_serl": ("weight", "bias")}


def backbone_spec(variant: str) -> dict[str, tuple[int, ...]]:
    """ResNet10's floating-point tensors and shapes for ``variant``, in forward order.

    ``num_batches_tracked`` counters are left out: a frozen backbone never reads them.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown ResNet-10 variant {variant!r}")
    norm = _NORM_PARAMS[variant]
    spec: dict[str, tuple[int, ...]] = {"conv1.weight": (64, 3, 7, 7)}
    spec.update({f"bn1.{p}": (64,) for p in norm})
    for stage, (cin, cout, stride) in enumerate(STAGES, start=1):
        block = f"layer{stage}.0."
        spec[block + "conv1.weight"] = (cout, cin, 3, 3)
        spec.update({f"{block}bn1.{p}": (cout,) for p in norm})
        spec[block + "conv2.weight"] = (cout, cout, 3, 3)
        spec.update({f"{block}bn2.{p}": (cout,) for p in norm})
        if stride != 1 or cin != cout:
            spec[block + "downsample.0.weight"] = (cout, cin, 1, 1)
            spec.update({f"{block}downsample.1.{p}": (cout,) for p in norm})
    return spec


# --- key names per layout ------------------------------------------------------------

_BLOCK_KEY = re.compile(r"layer(\d)\.0\.(conv1|bn1|conv2|bn2|downsample\.0|downsample\.1)\.(\w+)$")
_TRANSFORMERS_PART = {"conv1": "layer.0.convolution", "bn1": "layer.0.normalization",
                      "conv2": "layer.1.convolution", "bn2": "layer.1.normalization",
                      "downsample.0": "shortcut.convolution", "downsample.1": "shortcut.normalization"}
_LEROBOT_CONV = {"conv1": "conv1.conv", "conv2": "conv2.conv", "downsample.0": "shortcut.0.conv"}
_LEROBOT_NORM = {"bn1": "norm1", "bn2": "norm2", "downsample.1": "shortcut.1"}


def _same_names(key: str) -> tuple[str, ...]:
    return (key,)


def _transformers_names(key: str) -> tuple[str, ...]:
    if key.startswith("conv1."):
        return ("embedder.embedder.convolution." + key[len("conv1."):],)
    if key.startswith("bn1."):
        return ("embedder.embedder.normalization." + key[len("bn1."):],)
    m = _BLOCK_KEY.match(key)
    if m is None:
        raise ValueError(f"no transformers name for {key!r}")
    return (f"encoder.stages.{int(m[1]) - 1}.layers.0.{_TRANSFORMERS_PART[m[2]]}.{m[3]}",)


def _lerobot_names(key: str) -> tuple[str, ...]:
    """The name in a helper2424/resnet10 file, and its pre-``group_norm`` spelling for norms."""
    if key == "conv1.weight":
        return ("embedder.0.weight",)
    if key.startswith("bn1."):
        param = key[len("bn1."):]
        return (f"embedder.1.group_norm.{param}", f"embedder.1.{param}")
    m = _BLOCK_KEY.match(key)
    if m is None:
        raise ValueError(f"no lerobot name for {key!r}")
    stage = f"encoder.stages.{int(m[1]) - 1}."
    if m[2] in _LEROBOT_CONV:
        return (f"{stage}{_LEROBOT_CONV[m[2]]}.{m[3]}",)
    norm = stage + _LEROBOT_NORM[m[2]]
    return (f"{norm}.group_norm.{m[3]}", f"{norm}.{m[3]}")


_NAMES: dict[str, Callable[[str], tuple[str, ...]]] = {
    "robot_rl": _same_names, "torchvision": _same_names, "transformers": _transformers_names,
    "lerobot": _lerobot_names}
#: Keys (relative to the prefix) a layout may carry that the backbone does not use.
_HARMLESS = {
    "robot_rl": re.compile(r"(^|\.)num_batches_tracked$"),
    "torchvision": re.compile(r"^fc\.(weight|bias)$|(^|\.)num_batches_tracked$|^layer[1-4]\.[1-9]\d*\."),
    "transformers": re.compile(r"^classifier\.|(^|\.)num_batches_tracked$|^encoder\.stages\.[0-3]\.layers\.[1-9]\d*\."),
    "lerobot": re.compile(r"(?!)"),  # matches nothing: its pooler has no parameters, nothing else belongs
}
_LAYOUT_WORDS = {"robot_rl": "robot_rl project format", "torchvision": "torchvision ResNet",
                 "transformers": "transformers ResNetModel", "lerobot": "LeRobot/HIL-SERL ResNet-10"}


# --- what a file holds -----------------------------------------------------------------

@dataclass
class BackboneWeights:
    """A verified set of ResNet10 tensors (float32, ResNet10's names) and where they came from."""

    file: Path
    layout: str
    variant: str
    prefix: str
    tensors: dict[str, torch.Tensor]
    ignored: list[str] = field(default_factory=list)  # known-harmless keys under the prefix
    outside: int = 0  # keys outside the prefix (the rest of a bigger model's file)
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def parameters(self) -> int:
        return int(sum(t.numel() for t in self.tensors.values()))

    def summary(self) -> dict[str, Any]:
        return {"file": str(self.file), "layout": self.layout, "variant": self.variant, "prefix": self.prefix,
                "tensors": len(self.tensors), "parameters": self.parameters, "ignored": len(self.ignored),
                "ignored_examples": self.ignored[:3], "outside_prefix": self.outside}


class _Reader:
    """Builds one-line errors that name the config key (if any) and the file."""

    def __init__(self, file: Path, where: str | None) -> None:
        self.file = file
        self.where = where

    def fail(self, message: str) -> ConfigError:
        head = f"{self.where}: {self.file}" if self.where else str(self.file)
        return ConfigError(f"{head}: {message}")


def read_backbone_weights(path: str | Path, layout: str = "auto", prefix: str | None = None,
                          where: str | None = "agent.encoder.pretrained_path") -> BackboneWeights:
    """Read, map and verify a ResNet-10 weights file; every problem is one :class:`ConfigError` line.

    ``where`` names the config key the path came from (None: the message starts with the file).
    """
    file = Path(path).expanduser()
    reader = _Reader(file, where)
    if layout not in LAYOUTS:
        raise reader.fail(f"unknown layout {layout!r} (one of {', '.join(LAYOUTS)})")
    raw, metadata = read_tensors(file, where)
    return _select(raw, metadata, reader, layout, prefix)


def read_tensors(file: Path, where: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """All tensors of a safetensors file or a PyTorch zip archive (flattened), and its metadata.

    A Hugging Face snapshot folder (``config.json`` and ``model.safetensors``, as
    ``save_pretrained`` or a Hub download leaves it) stands for its ``model.safetensors``.
    """
    reader = _Reader(file, where)
    file = snapshot_weights(file, reader)
    reader = _Reader(file, where)
    with _open_regular(file, reader) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            head = f.read(16)
        except OSError as err:
            raise reader.fail(f"cannot read it ({one_line(err)})") from None
        if size == 0:
            raise reader.fail("is empty")
        if _looks_like_safetensors(head, size):
            return _read_safetensors(f, size, reader)
        if head.startswith(b"PK\x03\x04"):
            return _read_torch_zip(f, reader), {}
        if file.suffix == ".safetensors":  # meant to be one: say what is wrong with it
            return _read_safetensors(f, size, reader)
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        raise reader.fail("is a pickle (a legacy torch.save or a .pkl file); robot_rl never unpickles "
                          "weights: save them as safetensors, or with torch.save's default zip format")
    raise reader.fail("is neither a safetensors file nor a PyTorch zip archive "
                      f"(it starts with {head[:8]!r})")


def snapshot_weights(file: Path, reader: _Reader) -> Path:
    """``file``, or the ``model.safetensors`` of the Hugging Face snapshot folder it is; a folder with a
    ``config.json`` but no single ``model.safetensors`` (sharded, ``.bin`` only) is refused in one line."""
    if not file.is_dir() or not (file / "config.json").is_file():
        return file  # a plain folder: _open_regular says it is one (and which file it may have meant)
    weights = file / "model.safetensors"
    if weights.is_file():
        return weights
    sharded = (file / "model.safetensors.index.json").is_file()
    raise reader.fail("is a Hugging Face snapshot folder without a single model.safetensors ("
                      + ("its weights are sharded; " if sharded else "") + "robot_rl reads config.json + "
                      "model.safetensors)")


_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_regular(mode: int) -> str:
    return next((words for test, words in _NOT_REGULAR if test(mode)), "not a regular file")


def _open_regular(file: Path, reader: _Reader) -> BinaryIO:
    """``file`` opened for reading, refused in one line unless it is a regular file.

    Checked with ``stat`` before opening (``open`` on a FIFO waits for a writer forever),
    then opened with ``O_NONBLOCK`` and checked again on the descriptor, so a path
    swapped for a FIFO in between is refused too instead of blocking.
    """
    try:
        mode = os.stat(file).st_mode
    except FileNotFoundError:
        raise reader.fail("weights file not found") from None
    except (OSError, ValueError) as err:  # a NUL in the name, a name too long, a loop of links
        raise reader.fail(f"cannot read it ({one_line(err)})") from None
    if stat.S_ISDIR(mode):
        hint = next((f" (did you mean {file / n}?)" for n in ("model.safetensors", "pytorch_model.bin")
                     if (file / n).is_file()), "")
        raise reader.fail(f"is a directory, not a weights file{hint}")
    if not stat.S_ISREG(mode):
        raise reader.fail(f"is {_not_regular(mode)}, not a regular file; weights are read from files only")
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise reader.fail(f"cannot read it ({one_line(err)})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise reader.fail(f"is {_not_regular(mode)}, not a regular file; weights are read from files only")
    return os.fdopen(fd, "rb")


def _same_file_path(f: BinaryIO, file: Path) -> str:
    """A path that opens the very file ``f`` has open (Linux: ``/proc/self/fd/N``), for libraries that
    take a path: nothing swapped in under ``file`` since it was checked is read."""
    by_fd = f"/proc/self/fd/{f.fileno()}"
    return by_fd if os.path.exists(by_fd) else str(file)


def _looks_like_safetensors(head: bytes, size: int) -> bool:
    if len(head) < 9:
        return False
    n = int.from_bytes(head[:8], "little")
    return 0 < n <= min(MAX_HEADER_BYTES, size - 8) and head[8:9] == b"{"


def _read_safetensors(f: BinaryIO, size: int, reader: _Reader) -> tuple[dict[str, Any], dict[str, str]]:
    """Check the header by hand (size, nesting, entries, offsets), then let ``safetensors`` read the tensors."""
    if size < 8:
        raise reader.fail(f"is truncated: {size} bytes, a safetensors file starts with an 8-byte header length")
    f.seek(0)
    n = int.from_bytes(f.read(8), "little")
    if n == 0 or n > MAX_HEADER_BYTES:
        raise reader.fail(f"is not a valid safetensors file: header length {n} bytes "
                          f"(at most {MAX_HEADER_BYTES}; corrupt or another format)")
    if 8 + n > size:
        raise reader.fail(f"is truncated: its header needs {n} bytes, {size - 8} follow")
    raw_header = f.read(n)
    depth = json_depth(raw_header)
    if depth > MAX_HEADER_DEPTH:
        raise reader.fail(f"is not a valid safetensors file: its header nests {depth} levels deep (the format's "
                          f"header is a flat mapping, {MAX_HEADER_DEPTH} levels at most)")
    try:
        header = json.loads(raw_header.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise reader.fail("is not a valid safetensors file: its header is not JSON "
                          f"({_short(one_line(err))})") from None
    _check_header(header, size - 8 - n, reader)
    from safetensors import safe_open

    try:
        with safe_open(_same_file_path(f, reader.file), framework="pt", device="cpu") as st:
            metadata = dict(st.metadata() or {})
            tensors = {name: st.get_tensor(name) for name in st.keys()}
    except Exception as err:  # noqa: BLE001 - the library's errors (SafetensorError, ...) are all "corrupt"
        raise reader.fail(f"is not a readable safetensors file ({_short(one_line(err))})") from None
    return tensors, metadata


def json_depth(raw: bytes) -> int:
    """How deep the arrays and objects of the JSON text ``raw`` nest, by one linear scan (no parser).

    Escaped backslashes, then escaped quotes, are dropped (left to right, as JSON reads
    escapes); every quote left opens or closes a string, and brackets count outside them.
    """
    data = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    if not data:
        return 0
    a = np.frombuffer(data, dtype=np.uint8)
    outside = np.cumsum(a == ord('"')) % 2 == 0
    opens = ((a == ord("[")) | (a == ord("{"))) & outside
    closes = ((a == ord("]")) | (a == ord("}"))) & outside
    return max(0, int(np.cumsum(opens.astype(np.int32) - closes.astype(np.int32)).max()))


def _check_header(header: Any, data_bytes: int, reader: _Reader) -> None:
    """The header is the flat mapping the format defines, and every tensor lies inside the file."""
    if not isinstance(header, dict):
        raise reader.fail("is not a valid safetensors file: its header is not a JSON object")
    for name, entry in header.items():
        label = _short(repr(name)[1:-1], 80)
        if name == "__metadata__":
            if not (isinstance(entry, dict) and all(isinstance(v, str) for v in entry.values())):
                raise reader.fail("is not a valid safetensors file: its __metadata__ is not a mapping of strings")
            continue
        if not isinstance(entry, dict):
            raise reader.fail(f"is not a valid safetensors file: tensor '{label}' is a JSON "
                              f"{type(entry).__name__} in the header, not a mapping")
        shape = entry.get("shape")
        if not isinstance(entry.get("dtype"), str) or not (
                isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                for d in shape)):
            raise reader.fail(f"is not a valid safetensors file: tensor '{label}' has no valid dtype and shape")
        offsets = entry.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                and 0 <= offsets[0] <= offsets[1]):
            raise reader.fail(f"is not a valid safetensors file: tensor '{label}' has no valid data_offsets")
        if offsets[1] > data_bytes:
            raise reader.fail(f"is truncated: tensor '{label}' ends at data byte {offsets[1]}, "
                              f"the file holds {data_bytes}")


def _read_torch_zip(f: BinaryIO, reader: _Reader) -> dict[str, Any]:
    try:  # the open file, not the path: torch.load would hand a *.safetensors name to safetensors
        f.seek(0)
        obj = torch.load(f, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - a refused pickle, a bad zip, a torn file: the same user error
        raise reader.fail(f"cannot be read as a PyTorch state dict with weights_only=True "
                          f"({_short(one_line(err))})") from None
    if not isinstance(obj, Mapping):
        raise reader.fail(f"holds a {type(obj).__name__}, not a state dict (a mapping of names to tensors)")
    return _flatten(obj)


def _flatten(obj: Mapping, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --- mapping and verification ---------------------------------------------------------

def _select(raw: Mapping[str, Any], metadata: Mapping[str, str], reader: _Reader, layout: str = "auto",
            prefix: str | None = None) -> BackboneWeights:
    """Pick the layout and prefix, then map and verify every tensor the backbone needs."""
    if layout == "auto" and metadata.get("format") == FORMAT:
        layout = "robot_rl"
    if layout == "robot_rl":
        variant = _project_variant(metadata, reader)
    elif layout == "auto":
        layout, found = _detect(raw, reader)
        variant = LAYOUT_VARIANT[layout]
        if prefix is None:
            prefix = _choose_prefix(raw, layout, variant, found, reader)
    else:
        variant = LAYOUT_VARIANT[layout]
    if prefix is None:
        prefix = _best_prefix(raw, layout, variant, reader)
    return _verify(raw, metadata, reader, layout, variant, prefix)


def _project_variant(metadata: Mapping[str, str], reader: _Reader) -> str:
    if metadata.get("format") != FORMAT:
        raise reader.fail(f"is not in the robot_rl project format (no '{FORMAT}' metadata); "
                          "convert it with: robot-rl encoder convert IN OUT")
    if metadata.get("version") != FORMAT_VERSION:
        raise reader.fail(f"has project format version {metadata.get('version')!r}; "
                          f"this robot_rl reads version {FORMAT_VERSION}")
    if metadata.get("arch") != ARCH:
        raise reader.fail(f"holds a {metadata.get('arch')!r} backbone, not {ARCH}")
    variant = metadata.get("variant")
    if variant not in VARIANTS:
        raise reader.fail(f"names an unknown ResNet-10 variant {variant!r} (one of {', '.join(VARIANTS)})")
    return variant


def _prefix_scores(raw: Mapping[str, Any], layout: str, variant: str) -> dict[str, int]:
    """For each prefix under which the layout's names occur: how many backbone tensors it holds."""
    names = [_NAMES[layout](key) for key in backbone_spec(variant)]
    scores: dict[str, int] = {}
    candidates: set[str] = set()
    for key in raw:
        for alternatives in names:
            for name in alternatives:
                if key.endswith(name) and (len(key) == len(name) or key[-len(name) - 1] == "."):
                    candidates.add(key[:-len(name)])
    for p in candidates:
        scores[p] = sum(any(p + n in raw for n in alternatives) for alternatives in names)
    return scores


def _detect(raw: Mapping[str, Any], reader: _Reader) -> tuple[str, list[str]]:
    """The layout whose names the file holds most of, and the prefixes it holds them under."""
    best: list[tuple[int, str, str]] = []
    for layout in ("torchvision", "transformers", "lerobot"):
        for p, score in _prefix_scores(raw, layout, LAYOUT_VARIANT[layout]).items():
            best.append((score, layout, p))
    if not best:
        first = next(iter(raw), None)
        what = f"first key {first!r}" if first is not None else "it holds no tensors"
        raise reader.fail(f"matches no known ResNet-10 layout ({what}); torchvision, transformers, "
                          "lerobot and robot_rl files are read (see robot-rl encoder convert --help)")
    top = max(score for score, _, _ in best)
    layouts = sorted({layout for score, layout, _ in best if score == top})
    if len(layouts) > 1:
        raise reader.fail(f"matches several layouts equally ({', '.join(layouts)}); name one with --layout")
    return layouts[0], sorted(p for score, lay, p in best if lay == layouts[0] and score == top)


def _best_prefix(raw: Mapping[str, Any], layout: str, variant: str, reader: _Reader) -> str:
    scores = _prefix_scores(raw, layout, variant)
    if not scores:
        return ""  # verification names the first missing key
    top = max(scores.values())
    return _choose_prefix(raw, layout, variant, sorted(p for p, s in scores.items() if s == top), reader)


def _choose_prefix(raw: Mapping[str, Any], layout: str, variant: str, prefixes: list[str], reader: _Reader) -> str:
    """One prefix; several are fine only when they hold the very same tensors (a shared encoder)."""
    if len(prefixes) == 1:
        return prefixes[0]
    names = [_NAMES[layout](key) for key in backbone_spec(variant)]
    first = prefixes[0]
    for other in prefixes[1:]:
        for alternatives in names:
            a = next((raw[first + n] for n in alternatives if first + n in raw), None)
            b = next((raw[other + n] for n in alternatives if other + n in raw), None)
            same = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                    and a.dtype == b.dtype and torch.equal(a, b))
            if not same:
                shown = ", ".join(repr(p) for p in prefixes[:3])
                raise reader.fail(f"holds {len(prefixes)} different ResNet-10 backbones (prefixes {shown}); "
                                  "pick one with: robot-rl encoder convert IN OUT --prefix PREFIX")
    return first


def _verify(raw: Mapping[str, Any], metadata: Mapping[str, str], reader: _Reader, layout: str, variant: str,
            prefix: str) -> BackboneWeights:
    spec = backbone_spec(variant)
    words = _LAYOUT_WORDS[layout]
    tensors: dict[str, torch.Tensor] = {}
    used: set[str] = set()
    for ours, shape in spec.items():
        names = [prefix + n for n in _NAMES[layout](ours)]
        present = [n for n in names if n in raw]
        label = f"'{names[0]}'" if names[0] == ours else f"'{names[0]}' (the backbone's '{ours}')"
        if not present:
            missing = sum(not any(prefix + n in raw for n in _NAMES[layout](k)) for k in spec)
            under = f" under prefix '{prefix}'" if prefix else ""
            raise reader.fail(f"{label} is missing ({missing}/{len(spec)} backbone tensors absent, "
                              f"read as {words} layout{under})")
        if len(present) > 1:
            raise reader.fail(f"holds both '{present[0]}' and '{present[1]}' for the backbone's '{ours}'")
        key = present[0]
        label = f"'{key}'" if key == ours else f"'{key}' (the backbone's '{ours}')"
        value = raw[key]
        if not isinstance(value, torch.Tensor):
            raise reader.fail(f"{label} is a {type(value).__name__}, not a tensor")
        if tuple(value.shape) != shape:
            raise reader.fail(f"{label} has shape {tuple(value.shape)}, the backbone needs {shape}")
        if not value.is_floating_point():
            raise reader.fail(f"{label} has dtype {str(value.dtype).replace('torch.', '')}, "
                              "not a floating-point type")
        as_float = value.detach().to(torch.float32)
        bad = int((~torch.isfinite(as_float)).sum())
        if bad:
            raise reader.fail(f"{label} holds {bad} NaN, infinite or beyond-float32 values")
        if ours.endswith("running_var") and bool((as_float < 0).any()):
            raise reader.fail(f"{label} holds negative variances")
        tensors[ours] = as_float.contiguous().clone()
        used.add(key)
    ignored: list[str] = []
    unknown: list[str] = []
    outside = 0
    for key in raw:
        if key in used:
            continue
        if not key.startswith(prefix):
            outside += 1
        elif _HARMLESS[layout].search(key[len(prefix):]):
            ignored.append(key)
        else:
            unknown.append(key)
    if unknown:
        raise reader.fail(f"holds {len(unknown)} key(s) the {words} layout does not have, first '{unknown[0]}' "
                          f"(not a ResNet-10 in that layout, or another model's weights)")
    return BackboneWeights(file=reader.file, layout=layout, variant=variant, prefix=prefix, tensors=tensors,
                           ignored=ignored, outside=outside, metadata=dict(metadata))


# --- the project format ---------------------------------------------------------------

def project_bytes(weights: BackboneWeights) -> bytes:
    """``weights`` as a robot_rl project-format safetensors file (float32, ResNet10's names)."""
    from safetensors.torch import save

    from robot_rl.version import __version__

    metadata = {"format": FORMAT, "version": FORMAT_VERSION, "arch": ARCH, "variant": weights.variant,
                "source_layout": weights.layout, "writer": f"robot_rl {__version__}"}
    return save({k: v.to(torch.float32).contiguous() for k, v in weights.tensors.items()}, metadata=metadata)


def save_backbone(path: str | Path, weights: BackboneWeights) -> Path:
    """Write ``weights`` in the project format, atomically (a crash leaves the old file or none)."""
    return durable_write(Path(path), project_bytes(weights))
