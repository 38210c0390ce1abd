"""The LeRobot side of a LeRobot base policy: run by LeRobot's own Python, in LeRobot's virtualenv.

LeRobot's release installable here pins an older torch than robot_rl, so the two do not share a
process: :mod:`robot_rl.training.lerobot_policy` starts this file as a script
(``python lerobot_child.py POLICY_DIR``) with the LeRobot virtualenv's interpreter and talks to
it over the child's stdin/stdout. This file therefore imports nothing from robot_rl and nothing
but the standard library and numpy at module level (torch and lerobot only inside :func:`serve`),
so robot_rl imports it for the framing alone.

Framing, both ways: a 4-byte big-endian length, a JSON header of that length, then the raw bytes
of each array the header lists (``{"name", "dtype", "shape"}``, C order). Nothing is pickled.

The child answers, in order:

* at start, once: ``{"op": "ready", ...}`` (the policy's type, its input features and their
  shapes, its action shape, LeRobot's and torch's versions, the load time), or
  ``{"op": "error", "message": ...}`` and exit 2;
* ``{"op": "act"}`` with one array per LeRobot input feature (``observation.state`` as float32,
  ``observation.images.<cam>`` as uint8 HxWx3): ``{"op": "action"}`` with one float32 array
  ``action`` (the policy's ``select_action`` after LeRobot's own pre- and postprocessors), or
  ``{"op": "error"}`` (and it keeps serving); ``compute_s`` is the time the child spent on it;
* ``{"op": "reset"}``: the policy's ``reset()`` and torch's seed back to 0 (a diffusion policy
  then acts the same in every episode), ``{"op": "ok"}``;
* ``{"op": "close"}`` or end of input: exit 0.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from typing import Any, BinaryIO, Callable

import numpy as np

#: Largest header and largest array a frame may carry (a garbage length must not allocate gigabytes).
MAX_HEADER = 1 << 20
MAX_ARRAY_BYTES = 256 << 20
#: The dtypes a frame may carry.
DTYPES = ("float32", "float64", "uint8", "int64", "bool")
#: The LeRobot policy types this child runs (their ``select_action`` needs images and state only).
POLICY_TYPES = ("act", "diffusion")


class FrameError(Exception):
    """A frame that is not one (bad length, header, dtype or shape): the stream is out of step."""


class Closed(Exception):
    """The other side closed the stream."""


def encode(header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> bytes:
    """One frame: ``header`` (made JSON) listing ``arrays``, then their bytes."""
    arrays = arrays or {}
    listed, payload = [], []
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        if array.dtype.name not in DTYPES:
            raise FrameError(f"array '{name}' has dtype {array.dtype.name}, not one of {', '.join(DTYPES)}")
        listed.append({"name": name, "dtype": array.dtype.name, "shape": list(array.shape)})
        payload.append(array.tobytes())
    raw = json.dumps({**header, "arrays": listed}).encode()
    return struct.pack(">I", len(raw)) + raw + b"".join(payload)


def decode(read: Callable[[int], bytes]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One frame read through ``read(n) -> exactly n bytes``: its header and arrays, checked."""
    (n,) = struct.unpack(">I", read(4))
    if n < 2 or n > MAX_HEADER:
        raise FrameError(f"header length {n} bytes (at most {MAX_HEADER})")
    try:
        header = json.loads(read(n))
    except (UnicodeDecodeError, ValueError):
        raise FrameError("header is not JSON") from None
    if not isinstance(header, dict) or not isinstance(header.get("op"), str) \
            or not isinstance(header.get("arrays", []), list):
        raise FrameError("header is not an object with an 'op' and an 'arrays' list")
    arrays = {}
    for entry in header.pop("arrays", []):
        name, dtype, shape = _entry(entry)
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if size > MAX_ARRAY_BYTES:
            raise FrameError(f"array '{name}' of {size} bytes (at most {MAX_ARRAY_BYTES})")
        arrays[name] = np.frombuffer(read(size), dtype=dtype).reshape(shape)
    return header, arrays


def _entry(entry: Any) -> tuple[str, str, tuple[int, ...]]:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or entry.get("dtype") not in DTYPES \
            or not isinstance(entry.get("shape"), list) or len(entry["shape"]) > 8 \
            or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 31 for d in entry["shape"]):
        raise FrameError(f"array entry {str(entry)[:120]} is not {{name, dtype in {DTYPES}, shape}}")
    return entry["name"], entry["dtype"], tuple(entry["shape"])


def reader(stream: BinaryIO) -> Callable[[int], bytes]:
    """``read(n)`` on a blocking stream: exactly n bytes, or :class:`Closed`."""
    def read(n: int) -> bytes:
        data = stream.read(n)
        if len(data) != n:
            raise Closed(f"stream ended after {len(data)} of {n} bytes")
        return data
    return read


# --- the child -----------------------------------------------------------------------------


def _load(policy_dir: str) -> tuple[Any, Any, Any, dict[str, Any]]:
    """LeRobot's own classes load the folder ``save_pretrained`` wrote: the policy and its processors."""
    import lerobot
    import torch
    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.policies.factory import get_policy_class, make_pre_post_processors

    cfg = PreTrainedConfig.from_pretrained(policy_dir)
    if cfg.type not in POLICY_TYPES:
        raise ValueError(f"{policy_dir}/config.json: policy type '{cfg.type}' (runs: {', '.join(POLICY_TYPES)})")
    cfg.device = "cpu"
    policy = get_policy_class(cfg.type).from_pretrained(policy_dir, config=cfg)
    policy.eval()
    pre, post = make_pre_post_processors(cfg, pretrained_path=policy_dir,
                                         preprocessor_overrides={"device_processor": {"device": "cpu"}})
    inputs = {name: {"type": str(getattr(f.type, "name", f.type)), "shape": list(f.shape)}
              for name, f in cfg.input_features.items()}
    info = {"type": cfg.type, "inputs": inputs, "action_shape": list(cfg.output_features["action"].shape),
            "n_action_steps": getattr(cfg, "n_action_steps", None), "chunk_size": getattr(cfg, "chunk_size", None),
            "versions": {"lerobot": getattr(lerobot, "__version__", "?"), "torch": torch.__version__}}
    return policy, pre, post, info


def _act(policy: Any, pre: Any, post: Any, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """One action: images as LeRobot's datasets give them (float CxHxW in [0, 1]), then its processors."""
    import torch

    batch = {}
    for name, array in arrays.items():
        tensor = torch.from_numpy(np.array(array))
        if name.startswith("observation.images."):
            tensor = tensor.permute(2, 0, 1).float() / 255.0
        batch[name] = tensor.float()
    with torch.inference_mode():
        action = post(policy.select_action(pre(batch)))
    return np.asarray(action.detach().cpu().numpy(), np.float32).reshape(-1)


def serve(policy_dir: str) -> int:
    """Load the policy, say ready, answer requests until close (see the module docstring)."""
    out = os.fdopen(os.dup(1), "wb")  # the protocol's stdout; anything printed goes to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    read = reader(sys.stdin.buffer)

    def send(header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
        out.write(encode(header, arrays))
        out.flush()

    started = time.perf_counter()
    try:
        import torch

        torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1") or 1)))
        torch.manual_seed(0)
        policy, pre, post, info = _load(policy_dir)
    except Exception as err:  # noqa: BLE001 - whatever LeRobot raised, the policy cannot run: say it in one line
        send({"op": "error", "message": " ".join(f"{type(err).__name__}: {err}".split())[:400]})
        return 2
    send({"op": "ready", **info, "load_s": time.perf_counter() - started})
    while True:
        try:
            header, arrays = decode(read)
        except Closed:
            return 0
        except FrameError as err:  # out of step with the parent: nothing more can be read right
            print(f"lerobot_child: bad frame from the parent: {err}", file=sys.stderr)
            return 2
        op = header["op"]
        if op == "close":
            return 0
        try:
            if op == "act":
                began = time.perf_counter()
                action = _act(policy, pre, post, arrays)
                send({"op": "action", "compute_s": time.perf_counter() - began}, {"action": action})
            elif op == "reset":
                policy.reset()
                torch.manual_seed(0)
                send({"op": "ok"})
            else:
                send({"op": "error", "message": f"unknown op '{op}'"})
        except Exception as err:  # noqa: BLE001 - one bad request is answered, the child keeps serving
            send({"op": "error", "message": " ".join(f"{type(err).__name__}: {err}".split())[:400]})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python lerobot_child.py POLICY_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(serve(sys.argv[1]))
