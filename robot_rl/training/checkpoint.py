"""The one checkpoint format: the trainer's, the learner process's and eval's, with no pickle.

A checkpoint is the folder ``<run_dir>/checkpoint/``, whoever wrote it:

* ``state.npz``: an uncompressed zip holding ``__tree__.json`` (the state's structure as
  JSON: nested dicts, lists, tuples, numbers, strings, None) and one ``.npy`` member per
  array or tensor in it (read with ``allow_pickle=False``). Its top-level keys:
  ``format`` (``"robot_rl.checkpoint"``), ``version`` (:data:`VERSION`), ``kind``
  (``"train"`` for ``robot-rl train``, ``"learner"`` for ``robot-rl learner``),
  ``config`` (the run's config as a plain dict), ``spaces``
  (:func:`robot_rl.data.spaces.spaces_spec`) and ``agent``
  (:meth:`robot_rl.agents.sac.SACAgent.state_dict`: networks, optimizers, temperature,
  RNG, update counters; ``agent.policy`` is all acting needs). The rest is the writer's own
  (counters and RNG states a resume needs). ``robot-rl train-bc`` writes ``kind`` ``"bc"``
  with ``bc`` in place of ``agent``: ``bc.policy`` (the
  :class:`~robot_rl.agents.bc.BCNetwork`'s weights, built from the config's ``agent`` and
  ``bc.chunk``), steps, loss and what it learned from (read by
  :mod:`robot_rl.training.base_loader`).
* ``online.npz``, ``demo.npz`` (the trainer only): the replay buffers
  (:meth:`robot_rl.data.replay.ReplayBuffer.state_dict`); the learner rebuilds its
  buffers from its replay log instead.
* ``complete.json``, written last: every other file with its size.

Why one folder and not one file: the buffers are large and written as they are, and the
folder is swapped in whole. Every file goes through :func:`robot_rl.data.durable.durable_writer`
(temporary file, fsync of file and folder, rename) into ``checkpoint.tmp/``, the marker
goes last, and :func:`robot_rl.data.durable.swap_dir` renames it into place, so a crash or
power cut at any moment leaves a whole checkpoint. :func:`recover_checkpoint` (run by the
run's owner when it starts or saves) takes the newest whole one of ``checkpoint.tmp`` (if
marked complete), ``checkpoint`` and ``checkpoint.old``; :func:`load_checkpoint` reads
without renaming anything, so eval can read a run that is still training.

Files read back are an input: a truncated, garbled, NaN-filled or foreign file is a
one-line :class:`CheckpointError` naming it, never a traceback.

Resuming with a config that differs from the checkpoint's is an error naming the first
differing key, except for the keys in :data:`RESUME_MAY_CHANGE` (how long to run, how
often to evaluate and save, where and on what to run).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import zipfile
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import torch
import yaml

from robot_rl.config import Config, read_yaml, to_dict
from robot_rl.data.durable import (
    MARKER,
    durable_mkdir,
    durable_write_text,
    durable_writer,
    incomplete_reason,
    mark_complete,
    old_dir,
    recover_dir,
    remove_tree,
    staging_dir,
    swap_dir,
)
from robot_rl.errors import ConfigError, RobotRLError, one_line

CHECKPOINT_DIR = "checkpoint"
#: The config a run was started with, written first by ``robot-rl train`` and ``robot-rl learner``.
CONFIG_FILE = "config.yaml"
STATE_FILE = "state.npz"
FORMAT = "robot_rl.checkpoint"
VERSION = 1
TREE = "__tree__"
#: Every name a checkpoint folder takes during a swap: a fresh run (``--force``) removes them all.
CHECKPOINT_NAMES = tuple(f"{CHECKPOINT_DIR}{suffix}"
                         for suffix in ("", ".tmp", ".old", ".trash", ".tmp.trash", ".old.trash"))
REBUILD_HINT = ("; move the checkpoint folder aside and --resume again to rebuild the run from its replay log "
                "(the data is kept, the agent restarts)")
RESUME_MAY_CHANGE = frozenset({
    "train.total_env_steps", "train.eval_every", "train.eval_episodes", "train.checkpoint_every",
    "train.log_every", "train.progress", "train.stop_at_success", "train.device", "train.torch_threads",
    "train.run_dir", "train.demos", "train.scripted_demos", "train.scripted_demo_noise",
    "train.eval_video_episodes", "train.wandb",  # what is logged where, not what is learned
    "learning.token",  # never saved (see checkpoint_config)
    "viz",  # the live view watches a run; it changes nothing the run learns
    # how the updates execute, not what they compute (bf16 and compile within the tolerances
    # tests/agents/test_execution.py states; prefetching is exact)
    "train.prefetch", "train.prefetch_depth", "train.compile", "train.precision",
})


class CheckpointError(RobotRLError):
    """A checkpoint is missing, unreadable, or was made with another config or other spaces."""


# --- the state file: a JSON tree plus raw arrays ------------------------------------------


def write_tree(f: Any, tree: Any) -> None:
    """Write ``tree`` into the open binary file ``f`` (arrays as ``.npy`` members, the rest as JSON)."""
    arrays: dict[str, np.ndarray] = {}
    spec = _encode(tree, arrays)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(TREE + ".json", json.dumps(spec))
        for name, arr in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(arr, order="C"), allow_pickle=False)


def read_tree(path: str | Path) -> Any:
    """Read what :func:`write_tree` wrote; numpy and json only, so reading can never run code."""
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
    """JSON for ``obj``; arrays and tensors go into ``arrays`` and are referred to by name.

    Dict keys keep their type (optimizer states are keyed by int) and tuples stay tuples,
    so an agent's state comes back exactly as ``state_dict()`` gave it.
    """
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
        arrays[f"a{len(arrays)}"] = obj
        return {"ndarray": f"a{len(arrays) - 1}"}
    if isinstance(obj, torch.Tensor):
        arrays[f"a{len(arrays)}"] = obj.detach().cpu().numpy()
        return {"tensor": f"a{len(arrays) - 1}"}
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
        return torch.from_numpy(np.array(arrays[spec["tensor"]]))
    if "dict" in spec:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in spec["dict"]}
    if "tuple" in spec:
        return tuple(_decode(v, arrays) for v in spec["tuple"])
    if "float" in spec:
        return float(spec["float"])
    raise ValueError(f"unknown checkpoint node {sorted(spec)}")


def first_non_finite(tree: Any, where: str = "") -> str | None:
    """The dotted key of the first float array holding NaN or inf in ``tree``; None if all are finite.

    A NaN-filled network loads without complaint and then acts (or trains) on garbage,
    so the loader refuses it up front.
    """
    if isinstance(tree, torch.Tensor):
        tree = tree.detach().cpu().numpy() if tree.is_floating_point() else None
    if isinstance(tree, np.ndarray):
        return where if tree.dtype.kind in "fc" and not np.isfinite(tree).all() else None
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, (list, tuple)) else ()
    for key, value in items:
        found = first_non_finite(value, f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None


# --- config and RNG state ---------------------------------------------------------------


def checkpoint_config(cfg: Any) -> dict[str, Any]:
    """The config as a checkpoint records it: plain, without the learning plane's secret token
    (a checkpoint is carried to other machines to be evaluated or run)."""
    plain = to_dict(cfg)
    if isinstance(plain.get("learning"), dict):
        plain["learning"]["token"] = None
    return plain


def write_run_config(run_dir: Path, cfg: Config) -> None:
    """Write the config a run starts with, durably, before anything else of the run."""
    durable_write_text(run_dir / CONFIG_FILE, yaml.safe_dump(to_dict(cfg), sort_keys=False))


def read_run_config(run_dir: Path) -> dict[str, Any]:
    """The config a run was started with, as a plain dict; anything else is one CheckpointError line."""
    try:
        return read_yaml(run_dir / CONFIG_FILE)  # a mapping, or a ConfigError
    except ConfigError as err:  # unreadable, not UTF-8, not YAML, not a mapping, or hostile YAML: one line
        raise CheckpointError(f"--resume: cannot read the run's config: {err}") from None


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
    """Python's, numpy's and torch's global RNG states, in plain types and tensors."""
    np_state = np.random.get_state(legacy=False)
    np_state["state"] = {"key": np_state["state"]["key"].tolist(), "pos": int(np_state["state"]["pos"])}
    state = {"python": random.getstate(), "numpy": np_state, "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_global_rng_state(state: dict[str, Any]) -> None:
    """Put back what :func:`global_rng_state` returned."""
    python = state["python"]
    random.setstate((python[0], tuple(python[1]), python[2]))
    np_state = dict(state["numpy"])
    np_state["state"] = {"key": np.asarray(np_state["state"]["key"], dtype=np.uint32), "pos": np_state["state"]["pos"]}
    np.random.set_state(np_state)
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# --- the checkpoint folder ----------------------------------------------------------------


def _whole(directory: Path) -> bool:
    """A folder named ``checkpoint`` or ``checkpoint.old`` holds a whole checkpoint: one
    marked complete, or an unmarked one (renamed into place whole too)."""
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

    Only the run's owner (the trainer or learner starting or saving) calls this: it renames folders.
    """
    return recover_dir(Path(run_dir) / CHECKPOINT_DIR, _whole)


def save_checkpoint(run_dir: str | Path, state: dict[str, Any],
                    buffers: dict[str, dict[str, np.ndarray]] | None = None) -> Path:
    """Write ``state`` (see the module docstring for its keys) and ``buffers`` (name -> numpy
    dict) as one whole checkpoint; ``format`` and ``version`` are stamped here.

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
            write_tree(f, {"format": FORMAT, "version": VERSION, **state})
        for name, arrays in (buffers or {}).items():
            with durable_writer(tmp / f"{name}.npz") as f:
                np.savez(f, **arrays)
        mark_complete(tmp)
        swap_dir(tmp, final)
    except OSError as err:
        raise CheckpointError(f"cannot write checkpoint {tmp}: {err}") from None
    return final


def checkpoint_file(run_dir: str | Path) -> Path | None:
    """The state file a reader of ``run_dir`` would read (None when there is no checkpoint)."""
    directory = _pick(Path(run_dir))
    return None if directory is None else directory / STATE_FILE


def load_checkpoint(run_dir: str | Path, buffer_names: tuple[str, ...] = ("online", "demo"),
                    hint: str = REBUILD_HINT) -> tuple[dict[str, Any], dict[str, dict[str, np.ndarray]]]:
    """Read the checkpoint of ``run_dir`` (read-only): its state and the buffers named.

    A damaged or foreign one is a one-line CheckpointError naming the file, ending in
    ``hint`` (what to do about it; resuming and acting need different advice).
    """
    run_dir = Path(run_dir)
    directory = _pick(run_dir)
    if directory is None:
        raise CheckpointError(f"no checkpoint in {run_dir} (expected {run_dir / CHECKPOINT_DIR / STATE_FILE})")
    reason = incomplete_reason(directory) if (directory / MARKER).exists() else None
    if reason:
        raise CheckpointError(f"checkpoint {directory} is damaged: {reason}{hint}")
    path = directory / STATE_FILE
    if not path.is_file() and (directory / "state.pt").is_file():
        raise CheckpointError(f"{directory} holds state.pt, the pickle-based format of older robot_rl versions; "
                              f"this one reads {STATE_FILE} only{hint}")
    try:
        state = read_tree(path)
        buffers = {}
        for name in buffer_names:
            path = directory / f"{name}.npz"
            with np.load(path, allow_pickle=False) as data:
                buffers[name] = {k: data[k] for k in data.files}
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same user error
        raise CheckpointError(f"cannot read checkpoint {path}: {one_line(err)}{hint}") from None
    _check_state(state, directory / STATE_FILE, hint)
    return state, buffers


def _check_state(state: Any, path: Path, hint: str) -> None:
    """The state file is ours, of a version this code reads, and holds no NaN or inf."""
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"cannot read checkpoint {path}: it is not a robot_rl checkpoint "
                              f"(no format '{FORMAT}'){hint}")
    if state.get("version") != VERSION:
        raise CheckpointError(f"cannot read checkpoint {path}: format version {state.get('version')!r}, "
                              f"this robot_rl reads version {VERSION}")
    bad = first_non_finite(state)
    if bad:
        raise CheckpointError(f"checkpoint {path} holds NaN or inf in '{bad}'{hint}")


def check_run_dir(run_dir: Path, run_files: Iterable[str], force: bool, *, resumable: bool = True) -> None:
    """Refuse a fresh run in ``run_dir`` when another run lives there, unless ``force``; nothing is touched.

    A run is a checkpoint or a logged episode (``replay/``). Files that a start refused
    before either existed (``config.yaml``, ``tb/``, ``demos/``) are no run: the next
    start reuses the folder. The refusal names ``--run-dir`` first, then ``--resume``
    (when ``resumable``), then what ``--force`` would delete.
    """
    used = [name for name in run_files if (run_dir / name).exists()]
    if force or not used or not holds_run(run_dir):
        return
    keep_going = "continue it with --resume, " if resumable else ""
    raise RobotRLError(f"{run_dir} already holds a run ({describe_run(run_dir)}): choose another folder with "
                       f"--run-dir DIR, {keep_going}or delete it with --force (removes {_what_force_removes(used)})")


def claim_run_dir(run_dir: Path, run_files: Iterable[str], force: bool, *, resumable: bool = True) -> None:
    """Make ``run_dir`` ready for a fresh run: refuse to mix runs unless ``force``
    (:func:`check_run_dir`); then remove whatever of ``run_files`` is there (another run's
    with ``force``, or what a refused start left) and create the folder."""
    run_files = tuple(run_files)
    check_run_dir(run_dir, run_files, force, resumable=resumable)
    for name in run_files:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    durable_mkdir(run_dir)


def holds_run(run_dir: Path) -> bool:
    """``run_dir`` holds a checkpoint (under any name a swap gives it) or a logged episode."""
    if any((run_dir / name).exists() for name in CHECKPOINT_NAMES):
        return True
    replay = run_dir / "replay"
    return replay.is_dir() and any(p.name.startswith("episode_") for p in replay.iterdir())


def describe_run(run_dir: Path) -> str:
    """A few words on the run in ``run_dir`` for a refusal: its checkpoint's env steps and
    episodes (read from the state file's JSON part, no arrays), else its logged episodes."""
    replay = run_dir / "replay"
    logged = sum(1 for p in replay.iterdir() if p.name.startswith("episode_")) if replay.is_dir() else 0
    directory = _pick(run_dir)
    if directory is None:
        return f"no checkpoint yet, {logged} logged episode(s)"
    try:
        with zipfile.ZipFile(directory / STATE_FILE) as zf:
            state = _plain(json.loads(zf.read(TREE + ".json")))
        if state.get("kind") == "bc":
            return f"behaviour-cloning checkpoint after {int(state['bc']['steps'])} gradient steps"
        if state.get("kind") == "learner":
            steps, episodes = state["received_steps"], state["episodes"]
        else:
            steps, episodes = state["learner"]["env_steps"], state["trainer"]["episodes"]
        return f"checkpoint at {int(steps)} env steps, {int(episodes)} episodes"
    except Exception:  # noqa: BLE001 - a damaged checkpoint is still a run; say what is certain
        return f"a checkpoint in {directory.name}/, {logged} logged episode(s)"


def _plain(spec: Any) -> Any:
    """A state tree's JSON part as plain Python, arrays left out (None): enough to read counters."""
    if isinstance(spec, list):
        return [_plain(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    if "dict" in spec:
        return {_plain(k) if not isinstance(k, dict) else str(k): _plain(v) for k, v in spec["dict"]}
    if "tuple" in spec:
        return tuple(_plain(v) for v in spec["tuple"])
    if "float" in spec:
        return float(spec["float"])
    return None


#: How a refusal names what ``--force`` would delete, by run file.
_FORCE_WORDS = (("checkpoint", "its checkpoint"), ("replay", "replay log"), ("videos", "videos"),
                ("tb", "TensorBoard logs"), ("demos", "recorded demos"), ("evals.jsonl", "evaluations"),
                ("learner", "learner state"), ("wandb", "W&B files"))


def _what_force_removes(used: list[str]) -> str:
    words = [word for name, word in _FORCE_WORDS if any(u == name or u.startswith(name + ".") for u in used)]
    words = words or ["its files"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
