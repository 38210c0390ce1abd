"""Checkpoints of a training run, and the check that a resume uses the same config.

A checkpoint is the directory ``<run_dir>/checkpoint/``:

* ``state.pt``: a ``torch.save`` dict (loadable with ``weights_only=True``) of the
  config it was made with, the observation/action spaces, the agent (networks,
  optimizers, temperature, agent RNG, update counters), the learner's counters and
  sampling RNG, the actor loop's episode counter and env RNG, the global RNG states
  (python, numpy, torch) and the trainer's counters;
* ``online.npz``, ``demo.npz``: the two replay buffers
  (:meth:`robot_rl.data.replay.ReplayBuffer.state_dict`).

It is written to ``checkpoint.tmp/`` and then swapped in by renames, so a crash while
saving leaves the previous checkpoint whole.

Resuming with a config that differs from the checkpoint's is an error naming the first
differing key, except for the keys in :data:`RESUME_MAY_CHANGE` (how long to run, how
often to evaluate and save, where and on what to run).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import torch

from robot_rl.errors import RobotRLError

CHECKPOINT_DIR = "checkpoint"
RESUME_MAY_CHANGE = frozenset({
    "train.total_env_steps", "train.eval_every", "train.eval_episodes", "train.checkpoint_every",
    "train.log_every", "train.progress", "train.stop_at_success", "train.device", "train.torch_threads",
    "train.run_dir", "train.demos", "train.scripted_demos", "train.scripted_demo_noise",
})


class CheckpointError(RobotRLError):
    """A checkpoint is missing, unreadable, or was made with another config or other spaces."""


def config_difference(saved: Any, current: Any, where: str = "") -> str | None:
    """The first differing dotted key between two plain config dicts, in words; None if equal."""
    if where in RESUME_MAY_CHANGE:
        return None
    if isinstance(saved, dict) and isinstance(current, dict):
        for key in sorted(set(saved) | set(current)):
            sub = f"{where}.{key}" if where else str(key)
            if key not in saved:
                return f"'{sub}' is not in the checkpoint's config"
            if key not in current:
                return f"'{sub}' is in the checkpoint's config but not in this one"
            diff = config_difference(saved[key], current[key], sub)
            if diff:
                return diff
        return None
    if isinstance(saved, (list, tuple)) and isinstance(current, (list, tuple)):
        saved, current = list(saved), list(current)
    if saved != current:
        return f"'{where}' is {saved!r} in the checkpoint, {current!r} here"
    return None


def global_rng_state() -> dict[str, Any]:
    np_state = np.random.get_state(legacy=False)
    np_state["state"] = {"key": np_state["state"]["key"].tolist(), "pos": int(np_state["state"]["pos"])}
    state = {"python": random.getstate(), "numpy": np_state, "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_global_rng_state(state: dict[str, Any]) -> None:
    python = state["python"]
    random.setstate((python[0], tuple(python[1]), python[2]))
    np_state = dict(state["numpy"])
    np_state["state"] = {"key": np.asarray(np_state["state"]["key"], dtype=np.uint32), "pos": np_state["state"]["pos"]}
    np.random.set_state(np_state)
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_exists(run_dir: str | Path) -> bool:
    return (Path(run_dir) / CHECKPOINT_DIR / "state.pt").is_file()


def save_checkpoint(run_dir: str | Path, state: dict[str, Any], buffers: dict[str, dict[str, np.ndarray]]) -> Path:
    """Write ``state`` (torch-saveable) and ``buffers`` (name -> numpy dict) atomically."""
    run_dir = Path(run_dir)
    final, tmp, old = run_dir / CHECKPOINT_DIR, run_dir / f"{CHECKPOINT_DIR}.tmp", run_dir / f"{CHECKPOINT_DIR}.old"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    torch.save(state, tmp / "state.pt")
    for name, arrays in buffers.items():
        np.savez(tmp / f"{name}.npz", **arrays)
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def load_checkpoint(run_dir: str | Path, buffer_names: tuple[str, ...] = ("online", "demo"),
                    map_location: str | torch.device = "cpu") -> tuple[dict[str, Any], dict[str, dict[str, np.ndarray]]]:
    run_dir = Path(run_dir)
    directory = run_dir / CHECKPOINT_DIR
    if not (directory / "state.pt").is_file():
        old = run_dir / f"{CHECKPOINT_DIR}.old"  # a crash between the two renames of a save
        if (old / "state.pt").is_file():
            directory = old
        else:
            raise CheckpointError(f"no checkpoint to resume in {run_dir} (expected {directory / 'state.pt'})")
    try:
        state = torch.load(directory / "state.pt", map_location=map_location, weights_only=True)
        buffers = {}
        for name in buffer_names:
            with np.load(directory / f"{name}.npz") as data:
                buffers[name] = {k: data[k] for k in data.files}
    except (OSError, RuntimeError, ValueError, EOFError) as err:
        raise CheckpointError(f"cannot read checkpoint {directory}: {err}") from None
    return state, buffers


def claim_run_dir(run_dir: Path, run_files: Iterable[str], force: bool) -> None:
    """Make ``run_dir`` ready for a fresh run: refuse to mix runs unless ``force``.

    Any of ``run_files`` already there means another run lives in it: that is an error
    naming them (continue it with ``--resume``), or with ``force`` they are removed.
    """
    used = [name for name in run_files if (run_dir / name).exists()]
    if used and not force:
        raise RobotRLError(f"run directory {run_dir} already holds a run ({', '.join(used)}); "
                           "pass --resume to continue it or --force to replace it")
    for name in used:
        path = run_dir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)

