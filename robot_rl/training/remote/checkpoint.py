"""Checkpoint files without pickle: a JSON tree plus raw arrays, in one ``.npz``.

A state tree (nested dicts, lists and tuples of numbers, strings, None, numpy arrays and
torch tensors, e.g. an agent's ``state_dict()`` with its optimizers and RNG states) is
split into its arrays, stored as ``.npy`` members of an uncompressed zip, and its
structure, stored as JSON in the member ``__tree__``. Loading uses
``numpy.load(allow_pickle=False)`` and ``json``, so a checkpoint can never run code.

Dict keys keep their type (optimizer states are keyed by int), tuples stay tuples and
tensors come back as CPU tensors of the same dtype. Writes go through
:func:`robot_rl.data.durable.durable_writer` (a temporary file, fsync'd and renamed over
the old one), so a crash at any moment leaves a whole checkpoint (the previous or the
new one).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from robot_rl.data.durable import durable_writer

TREE = "__tree__"


def save_tree(path: str | Path, tree: Any) -> Path:
    """Write ``tree`` to ``path`` atomically and durably."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    spec = _encode(tree, arrays)
    with durable_writer(path) as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            zf.writestr(TREE + ".json", json.dumps(spec))
            for name, arr in arrays.items():
                with zf.open(name + ".npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asarray(arr, order="C"), allow_pickle=False)
    return path


def load_tree(path: str | Path) -> Any:
    """Read a tree written by :func:`save_tree` (no pickle involved)."""
    path = Path(path)
    with zipfile.ZipFile(path) as zf:
        spec = json.loads(zf.read(TREE + ".json"))
        arrays = {}
        for info in zf.infolist():
            if info.filename.endswith(".npy"):
                with zf.open(info) as member:
                    arrays[info.filename[:-4]] = np.lib.format.read_array(io.BytesIO(member.read()),
                                                                          allow_pickle=False)
    return _decode(spec, arrays)


def _encode(obj: Any, arrays: dict[str, np.ndarray]) -> Any:
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        return value if np.isfinite(value) else {"float": repr(value)}
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError("object arrays cannot be checkpointed without pickle")
        name = f"a{len(arrays)}"
        arrays[name] = obj
        return {"ndarray": name}
    if _is_tensor(obj):
        name = f"a{len(arrays)}"
        arrays[name] = obj.detach().cpu().numpy()
        return {"tensor": name}
    if isinstance(obj, dict):
        return {"dict": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays) for v in obj]
    raise TypeError(f"cannot checkpoint a {type(obj).__name__} without pickle")


def _decode(spec: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(spec, list):
        return [_decode(v, arrays) for v in spec]
    if not isinstance(spec, dict):
        return spec
    if "ndarray" in spec:
        return arrays[spec["ndarray"]]
    if "tensor" in spec:
        import torch

        return torch.from_numpy(np.array(arrays[spec["tensor"]]))
    if "dict" in spec:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in spec["dict"]}
    if "tuple" in spec:
        return tuple(_decode(v, arrays) for v in spec["tuple"])
    if "float" in spec:
        return float(spec["float"])
    raise ValueError(f"unknown checkpoint node {sorted(spec)}")


def _is_tensor(obj: Any) -> bool:
    module = type(obj).__module__
    return module.startswith("torch") and hasattr(obj, "detach") and hasattr(obj, "cpu")
