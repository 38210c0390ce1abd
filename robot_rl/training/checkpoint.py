"""Checkpoints of a training run, and the check that a resume uses the same config.

A checkpoint is the directory ``<run_dir>/checkpoint/``:

* ``state.pt``: a ``torch.save`` dict (loadable with ``weights_only=True``) of the
  config it was made with, the observation/action spaces, the agent (networks,
  optimizers, temperature, agent RNG, update counters), the learner's counters and
  sampling RNG, the actor loop's episode counter and env RNG, the global RNG states
  (python, numpy, torch) and the trainer's counters;
* ``online.npz``, ``demo.npz``: the two replay buffers
  (:meth:`robot_rl.data.replay.ReplayBuffer.state_dict`).

It is written to ``checkpoint.tmp/`` (every file fsync'd, the marker ``complete.json``
listing each file's size written last) and then swapped in by renames through
``checkpoint.old/`` (:func:`robot_rl.data.durable.swap_dir`). So a crash or power cut at
any moment leaves a whole checkpoint: :func:`recover_checkpoint` (run by the run's owner
when it starts or saves) takes the newest whole one of ``checkpoint.tmp`` (if marked
complete), ``checkpoint`` and ``checkpoint.old``; :func:`load_checkpoint` reads without
renaming anything. A damaged file (truncated, garbage) is a one-line error.

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

from robot_rl.data.durable import (
    MARKER, durable_mkdir, durable_writer, incomplete_reason, mark_complete, old_dir, recover_dir, remove_tree,
    staging_dir, swap_dir)
from robot_rl.errors import RobotRLError, one_line

CHECKPOINT_DIR = "checkpoint"
STATE_FILE = "state.pt"
REBUILD_HINT = ("; move the checkpoint folder aside and --resume again to rebuild the run from its replay log "
                "(the data is kept, the agent restarts)")
RESUME_MAY_CHANGE = frozenset({
    "train.total_env_steps", "train.eval_every", "train.eval_episodes", "train.checkpoint_every",
    "train.log_every", "train.progress", "train.stop_at_success", "train.device", "train.torch_threads",
    "train.run_dir", "train.demos", "train.scripted_demos", "train.scripted_demo_noise",
})


class CheckpointError(RobotRLError):
    """A checkpoint is missing, unreadable, or was made with another config or other spaces."""


def config_difference(saved: Any, current: Any, where: str = "", defaults: Any = None) -> str | None:
    """The first differing dotted key between two plain config dicts, in words; None if equal.

    ``defaults`` (the plain default config) lets a run made before a key existed resume:
    a key missing from ``saved`` is no difference while ``current`` holds its default.
    """
    if where in RESUME_MAY_CHANGE:
        return None
    if isinstance(saved, dict) and isinstance(current, dict):
        defaults = defaults if isinstance(defaults, dict) else {}
        for key in sorted(set(saved) | set(current)):
            sub = f"{where}.{key}" if where else str(key)
            if key not in saved:
                if key in defaults and config_difference(defaults[key], current[key], sub) is None:
                    continue  # a key newer than the run, at its default: the run behaves as before
                return f"'{sub}' is not in the checkpoint's config"
            if key not in current:
                return f"'{sub}' is in the checkpoint's config but not in this one"
            diff = config_difference(saved[key], current[key], sub, defaults.get(key))
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


def _whole(directory: Path) -> bool:
    """A folder named ``checkpoint`` or ``checkpoint.old`` holds a whole checkpoint: one
    marked complete, or an unmarked one from before markers (renamed into place whole too)."""
    if (directory / MARKER).exists():
        return incomplete_reason(directory) is None
    return (directory / STATE_FILE).is_file()


def _pick(run_dir: Path) -> Path | None:
    """The folder to read, without changing anything (a reader may share the run with a writer):
    ``checkpoint`` if whole, else a complete ``checkpoint.tmp``, else ``checkpoint.old``."""
    final = run_dir / CHECKPOINT_DIR
    if final.is_dir() and _whole(final):
        return final
    tmp, old = staging_dir(final), old_dir(final)
    if tmp.is_dir() and incomplete_reason(tmp) is None:
        return tmp
    if old.is_dir() and _whole(old):
        return old
    return final if final.is_dir() else None  # damaged: reading it names what is wrong


def checkpoint_exists(run_dir: str | Path) -> bool:
    return _pick(Path(run_dir)) is not None


def recover_checkpoint(run_dir: str | Path) -> Path | None:
    """Finish (or undo) a checkpoint swap a crash cut short; the checkpoint folder or None.

    Only the run's owner (the trainer starting or saving) calls this: it renames folders.
    """
    return recover_dir(Path(run_dir) / CHECKPOINT_DIR, _whole)


def save_checkpoint(run_dir: str | Path, state: dict[str, Any], buffers: dict[str, dict[str, np.ndarray]]) -> Path:
    """Write ``state`` (torch-saveable) and ``buffers`` (name -> numpy dict) as one whole checkpoint.

    Every file is fsync'd, the marker goes last, and the folder is swapped in by renames
    (:func:`robot_rl.data.durable.swap_dir`), so a crash at any point leaves a whole
    checkpoint: the previous one or this one.
    """
    final = Path(run_dir) / CHECKPOINT_DIR
    tmp = staging_dir(final)
    try:
        recover_dir(final, _whole)  # an earlier crash mid-swap: finish it before starting over
        remove_tree(tmp)
        tmp.mkdir(parents=True)
        with durable_writer(tmp / STATE_FILE) as f:
            torch.save(state, f)
        for name, arrays in buffers.items():
            with durable_writer(tmp / f"{name}.npz") as f:
                np.savez(f, **arrays)
        mark_complete(tmp)
        swap_dir(tmp, final)
    except OSError as err:
        raise CheckpointError(f"cannot write checkpoint {tmp}: {err}") from None
    return final


def load_checkpoint(run_dir: str | Path, buffer_names: tuple[str, ...] = ("online", "demo"),
                    map_location: str | torch.device = "cpu") -> tuple[dict[str, Any], dict[str, dict[str, np.ndarray]]]:
    """Read the checkpoint of ``run_dir`` (read-only); a damaged one is a one-line CheckpointError."""
    run_dir = Path(run_dir)
    directory = _pick(run_dir)
    if directory is None:
        raise CheckpointError(f"no checkpoint to resume in {run_dir} "
                              f"(expected {run_dir / CHECKPOINT_DIR / STATE_FILE})")
    reason = incomplete_reason(directory) if (directory / MARKER).exists() else None
    if reason:
        raise CheckpointError(f"checkpoint {directory} is damaged: {reason}{REBUILD_HINT}")
    try:
        state = torch.load(directory / STATE_FILE, map_location=map_location, weights_only=True)
        buffers = {}
        for name in buffer_names:
            with np.load(directory / f"{name}.npz", allow_pickle=False) as data:
                buffers[name] = {k: data[k] for k in data.files}
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same user error
        raise CheckpointError(f"cannot read checkpoint {directory}: {one_line(err)}{REBUILD_HINT}") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"cannot read checkpoint {directory}: {STATE_FILE} holds no state dict{REBUILD_HINT}")
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
    durable_mkdir(run_dir)

