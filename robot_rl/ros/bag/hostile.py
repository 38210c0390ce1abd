"""Hostile and damaged bags, built on purpose: what the bag tools' adversarial tests and
``bench/bag_attacks.py`` feed ``robot-rl bag check|repair`` and ``robot-rl demos import``.

* :func:`demo_bag`: a demo directory of ``episodes`` episodes exported as a bag (one chunk
  per episode, the exporter's own layout), and :func:`flip_byte` to damage it;
* :func:`bomb_bag`: a bag whose one chunk claims (or inflates to) gigabytes, built by
  streaming compression so that building it never holds the inflated bytes;
* :func:`alias_bomb_metadata`, :func:`deep_metadata`: a ``metadata.yaml`` that expands
  exponentially, or nests ``depth`` lists deep;
* :func:`escape_metadata`: a ``metadata.yaml`` that names a file outside its folder.

Everything here only writes inside the folders it is given.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import gymnasium as gym
import numpy as np

from robot_rl.ros.bag.writer import METADATA, BagWriter

MAGIC = b"\x89MCAP0\r\n"


def demo_bag(folder: Path, episodes: int = 40, steps: int = 50, seed: int = 0) -> Path:
    """``folder/bag``: ``episodes`` demo episodes of ``steps`` steps (a 16x16 image and a state per frame)."""
    from robot_rl.data.demos import DemoWriter
    from robot_rl.data.transition import Step
    from robot_rl.ros.bag.demos import export_demos

    rng = np.random.default_rng(seed)
    obs = gym.spaces.Dict({"front": gym.spaces.Box(0, 255, (16, 16, 3), np.uint8),
                           "state": gym.spaces.Box(-np.inf, np.inf, (7,), np.float32)})
    action = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    writer = DemoWriter(folder / "demos", obs, action, task="PickCube", source="hostile", env_config={"control_hz": 10})
    for e in range(episodes):
        frames = [{"front": rng.integers(0, 256, (16, 16, 3), dtype=np.uint8),
                   "state": rng.normal(size=7).astype(np.float32)} for _ in range(steps + 1)]
        writer.write_episode([Step(episode_id=e, step=t, obs=frames[t], action=rng.uniform(-1, 1, 4).astype(np.float32),
                                   reward=float(t == steps - 1), terminated=t == steps - 1, truncated=False,
                                   next_obs=frames[t + 1]) for t in range(steps)])
    export_demos(folder / "demos", folder / "bag")
    return folder / "bag"


def mcap_of(bag: Path) -> Path:
    """The one ``.mcap`` file of a bag folder this module (or :class:`BagWriter`) made, also one copied elsewhere."""
    found = sorted(bag.glob("*.mcap"))
    return found[0] if len(found) == 1 else bag / f"{bag.name}_0.mcap"


def flip_byte(path: Path, offset: int, mask: int = 0xFF) -> None:
    """XOR one byte of ``path`` in place (a bad sector, a bit rot)."""
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))


def chunk_spans(path: Path) -> list[tuple[int, int, int, int]]:
    """``(offset, length, first log time, last log time)`` of every chunk, from the file's own summary."""
    from mcap.reader import make_reader

    with open(path, "rb") as f:
        indexes = make_reader(f).get_summary().chunk_indexes
    return sorted((c.chunk_start_offset, c.chunk_length, c.message_start_time, c.message_end_time) for c in indexes)


def _record(opcode: int, body: bytes) -> bytes:
    return struct.pack("<BQ", opcode, len(body)) + body


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<I", len(raw)) + raw


def _zeros_compressed(compression: str, inflated: int) -> bytes:
    """``inflated`` zero bytes, compressed in 1 MiB pieces (never held inflated)."""
    piece = bytes(1 << 20)
    full, rest = divmod(inflated, len(piece))
    if compression == "lz4":
        import lz4.frame

        comp = lz4.frame.LZ4FrameCompressor()
        out = [comp.begin()]
        out += [comp.compress(piece) for _ in range(full)]
        out += [comp.compress(piece[:rest]), comp.flush()]
        return b"".join(out)
    import zstandard

    zc = zstandard.ZstdCompressor(level=9).compressobj(size=inflated)
    out = [zc.compress(piece) for _ in range(full)]
    out += [zc.compress(piece[:rest]), zc.flush()]
    return b"".join(out)


def bomb_bag(folder: Path, compression: str, inflated: int, claimed: Optional[int] = None) -> Path:
    """``folder``: a bag (``metadata.yaml`` + MCAP) whose one chunk inflates to ``inflated`` zero
    bytes and claims ``claimed`` (default: the truth) in its header."""
    writer = BagWriter(folder)
    writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    writer.close()
    data = _zeros_compressed(compression, inflated)
    claimed = inflated if claimed is None else claimed
    chunk = (struct.pack("<QQQI", 0, 0, claimed, 0) + _string(compression) + struct.pack("<Q", len(data)) + data)
    header = _record(0x01, _string("ros2") + _string("hostile"))
    body = MAGIC + header + _record(0x06, chunk) + _record(0x0F, struct.pack("<I", 0))
    footer = _record(0x02, struct.pack("<QQI", 0, 0, 0))
    mcap_of(folder).write_bytes(body + footer + MAGIC)
    return folder


def _metadata_text(extra: str, files: str = "[{name}_0.mcap]") -> str:
    return ("rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: mcap\n"
            f"  relative_file_paths: {files}\n{extra}")


def alias_bomb_metadata(folder: Path, levels: int) -> Path:
    """``folder/metadata.yaml``: a billion-laughs document of ``levels`` levels of nine aliases each."""
    lines = ['  l0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"  l{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    path = folder / METADATA
    path.write_text(_metadata_text("\n".join(lines) + "\n").format(name=folder.name))
    return path


def deep_metadata(folder: Path, depth: int = 1000) -> Path:
    """``folder/metadata.yaml`` with a value nested ``depth`` lists deep."""
    path = folder / METADATA
    path.write_text(_metadata_text(f"  deep: {'[' * depth}{']' * depth}\n").format(name=folder.name))
    return path


def escape_metadata(folder: Path, target: str) -> Path:
    """``folder/metadata.yaml`` naming ``target`` (``../victim/x.mcap``, an absolute path) as its file."""
    path = folder / METADATA
    quoted = target.replace("'", "''")
    text = _metadata_text(f"  files:\n  - path: '{quoted}'\n", files=f"['{quoted}']")
    path.write_text(text)
    return path


def cut_bag(folder: Path, messages: int = 20) -> Path:
    """``folder``: a bag a crash cut short (no summary, no footer): what ``bag repair`` would rewrite."""
    from robot_rl.ros import messages as m

    writer = BagWriter(folder)
    topic = writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    for i in range(messages):
        writer.write(topic, bytes(m.serialize(m.JointState(name=["a"]))), 1_000 + i)
        if i % 5 == 4:
            writer.flush()
    writer.flush()
    path = mcap_of(folder)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - 3])
    return folder


_RUNNER = """
import contextlib, io, json, resource, sys, time
from robot_rl.cli import main


def peak_mib():
    try:  # this process's own high-water mark (ru_maxrss also counts the parent's RSS at fork)
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


out = []
for argv in json.loads(sys.argv[1]):
    o, e = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            rc = main(argv)
        except SystemExit as err:
            rc = err.code
    out.append({"argv": argv, "rc": rc, "seconds": time.perf_counter() - t, "out": o.getvalue(), "err": e.getvalue(),
                "peak_mib": peak_mib()})
print(json.dumps(out))
"""


def run_measured(commands: list[list[str]], timeout_s: float = 300.0) -> tuple[list[dict], float, float]:
    """Run ``robot-rl`` commands one after the other in a fresh Python process.

    Returns each command's ``{argv, rc, seconds, out, err, peak_mib}``, the process's peak
    RSS (MiB: its own high-water mark, VmHWM; the kernel's rusage of a killed one) and its
    wall time (s). A process past ``timeout_s`` is killed, and its figures say so (rc None).
    """
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _RUNNER, json.dumps(commands)], stdout=stdout, stderr=stderr,
                                env={**os.environ, "OMP_NUM_THREADS": "1"})
        deadline = start + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        stdout.seek(0)
        text = stdout.read().decode(errors="replace").strip().splitlines()
    try:
        results = json.loads(text[-1]) if text else []
    except json.JSONDecodeError:
        results = []
    if len(results) != len(commands):
        results = [{"argv": c, "rc": None, "seconds": wall, "out": "", "err": "killed or crashed"} for c in commands]
        return results, usage.ru_maxrss / 1024, wall
    return results, max(r["peak_mib"] for r in results), wall


__all__ = ["alias_bomb_metadata", "bomb_bag", "chunk_spans", "cut_bag", "deep_metadata", "demo_bag",
           "escape_metadata", "flip_byte", "mcap_of", "run_measured"]
