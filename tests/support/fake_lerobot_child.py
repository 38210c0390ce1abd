"""A stand-in for LeRobot's side of a LeRobot base policy (robot_rl/training/lerobot_child.py), for the
tests that need no LeRobot: it speaks the same frames (robot_rl's own framing functions) and misbehaves
on request, as a broken virtualenv, a crashed policy or a wrong program would.

Run as ``python fake_lerobot_child.py CHILD_SCRIPT POLICY_DIR`` (a wrapper script stands in for
LeRobot's python). ``FAKE_LEROBOT`` chooses what it does:

* ``ok``: ready with the folder's config.json features; each action is ``state[:n] * 2`` (so
  NaN, inf and huge states come back as such);
* ``die``: writes one line to stderr and exits 3 before it is ready;
* ``garbage``: writes bytes that are no frame;
* ``hang``: never answers;
* ``wrong``: answers ready with an 'action' op;
* ``die_after:N``: acts N times, then exits; ``garbage_after:N``: acts N times, then answers garbage;
  ``short_after:N``: acts N times, then answers an action one value short.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from robot_rl.training.lerobot_child import Closed, decode, encode, reader  # noqa: E402


def main() -> int:
    mode = os.environ.get("FAKE_LEROBOT", "ok")
    out = sys.stdout.buffer
    if mode == "die":
        print("ModuleNotFoundError: No module named 'lerobot'", file=sys.stderr)
        return 3
    if mode == "garbage":
        out.write(b"Hello from a program that is not LeRobot's child\n" * 4)
        out.flush()
        time.sleep(1)
        return 0
    if mode == "hang":
        time.sleep(60)
        return 0
    config = json.loads((Path(sys.argv[2]) / "config.json").read_text())
    inputs = {name: {"type": f["type"], "shape": f["shape"]} for name, f in config["input_features"].items()}
    n = config["output_features"]["action"]["shape"][0]
    out.write(encode({"op": "action" if mode == "wrong" else "ready", "type": config["type"], "inputs": inputs,
                      "action_shape": [n], "load_s": 0.0, "versions": {"lerobot": "fake", "torch": "none"}}))
    out.flush()
    limit = int(mode.split(":")[1]) if ":" in mode else -1
    acts = 0
    read = reader(sys.stdin.buffer)
    while True:
        try:
            header, arrays = decode(read)
        except Closed:
            return 0
        if header["op"] == "close":
            return 0
        if header["op"] == "reset":
            out.write(encode({"op": "ok"}))
        elif header["op"] == "act":
            if acts == limit and mode.startswith("die_after"):
                return 4
            if acts == limit and mode.startswith("garbage_after"):
                out.write(b"\x00\x00\x00\x05junk!")
                out.flush()
                continue
            if acts == limit and mode.startswith("short_after"):
                out.write(encode({"op": "action"}, {"action": np.zeros(n - 1, np.float32)}))
                out.flush()
                continue
            acts += 1
            state = np.asarray(arrays["observation.state"], np.float32)
            out.write(encode({"op": "action"}, {"action": (state[:n] * 2).astype(np.float32)}))
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
