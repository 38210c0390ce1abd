"""Demonstrations on disk: one directory, a JSON manifest and one ``.npz`` file per episode.

Layout of a demo directory::

    manifest.json            what the demos are for (written once, when recording starts)
    episode_000000.npz       one finished episode each, written the moment it ends
    episode_000001.npz
    ...

``manifest.json``::

    {"format": "robot_rl-demos", "version": 1,
     "task": "PickCube", "source": "scripted", "created": "2025-01-01T12:00:00",
     "spaces": {"observation": {"state": {"shape": [13], "dtype": "float32",
                                          "low": [...], "high": [...]},
                                "front": {"shape": [128, 128, 3], "dtype": "uint8"}},
                "action": {"shape": [4], "dtype": "float32", "low": [...], "high": [...]}},
     "env": {...the env section of the config it was recorded with, for reference...}}

An episode of ``T`` steps, ``episode_NNNNNN.npz`` (``numpy.savez_compressed``):

==================  ===============  ==========================================
key                 shape, dtype     meaning
==================  ===============  ==========================================
``obs/<key>``       (T+1, ...)       observations 0..T-1 and, last, the final
                                     next observation (each frame once)
``action``          (T, n) float32   executed action (the human's if intervened)
``reward``          (T,) float32     env reward
``terminated``      (T,) bool        true end, no bootstrap
``truncated``       (T,) bool        cut by time limit or operator
``intervened``      (T,) bool        a human produced the action
``success``         (T,) bool        ``info["success"]`` after the step
``grasp_penalty``   (T,) float32     the gripper critic's extra reward
==================  ===============  ==========================================

Each file (and the manifest) is written through :mod:`robot_rl.data.durable`: a
temporary name, fsync of the file, rename, fsync of the folder. So a crash or a power
cut leaves either a whole episode or none, a directory is readable at any moment, and
an episode the writer returned is on disk. Reading back checks every array: a damaged
file (truncated, garbage, NaN or infinite numbers) is a one-line :class:`DemoFormatError`. Episodes that did not
end (``terminated`` or ``truncated`` on the last step) are never written.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.data.durable import READ_ERRORS, durable_mkdir, durable_write, durable_writer, remove_stale
from robot_rl.data.spaces import spaces_spec, spec_mismatch
from robot_rl.data.transition import Step
from robot_rl.errors import RobotRLError, one_line

FORMAT = "robot_rl-demos"
VERSION = 1
MANIFEST = "manifest.json"
_EPISODE_RE = re.compile(r"^episode_(\d{6,})\.npz$")
_STEP_FIELDS = {"reward": np.float32, "terminated": np.bool_, "truncated": np.bool_,
                "intervened": np.bool_, "success": np.bool_, "grasp_penalty": np.float32}


class DemoFormatError(RobotRLError):
    """A demo directory is missing, malformed, or made for other observation/action spaces."""


def episode_files(directory: str | Path) -> list[Path]:
    """The episode files of a demo directory, in recording order."""
    directory = Path(directory)
    found = [(int(m.group(1)), p) for p in directory.iterdir() if (m := _EPISODE_RE.match(p.name))]
    return [p for _, p in sorted(found)]


def episode_arrays(steps: list[Step], obs_keys: list[str]) -> dict[str, np.ndarray]:
    """The arrays of one episode file (the format above); the last step must end the episode."""
    if not steps or not steps[-1].last:
        raise ValueError("an episode to write must end with a terminated or truncated step")
    arrays: dict[str, np.ndarray] = {}
    for key in obs_keys:
        arrays[f"obs/{key}"] = np.stack([s.obs[key] for s in steps] + [steps[-1].next_obs[key]])
    arrays["action"] = np.stack([np.asarray(s.action, dtype=np.float32) for s in steps])
    for name, dtype in _STEP_FIELDS.items():
        arrays[name] = np.array([getattr(s, name) for s in steps], dtype=dtype)
    return arrays


def remove_stale_episodes(directory: str | Path) -> None:
    """Delete the temporary files of episode writes a crash cut short (also under the
    ``*.tmp.npz`` name older versions used)."""
    remove_stale(directory)
    remove_stale(directory, "*.tmp.npz")


def episode_index(path: str | Path) -> int:
    """The number in an episode file's name (its place in recording order)."""
    match = _EPISODE_RE.match(Path(path).name)
    if match is None:
        raise ValueError(f"{path} is not an episode file")
    return int(match.group(1))


def holds_demos_error(directory: Path, episodes: int) -> DemoFormatError:
    """The refusal to write into a folder that already holds demos, without ``force`` or ``append``
    (an import that writes elsewhere first and swaps the folder in refuses the same way)."""
    return DemoFormatError(f"{directory} already holds demos ({episodes} episodes); "
                           "pass --force to replace them or --append to add to them")


class DemoWriter:
    """Writes Steps into a demo directory, one episode file as soon as the episode ends.

    A directory that already holds demos is an error unless ``force`` (its demo files
    are deleted first) or ``append`` (the manifest's spaces must match; numbering goes on).
    """

    def __init__(self, directory: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                 task: str = "", source: str = "", env_config: dict[str, Any] | None = None,
                 force: bool = False, append: bool = False) -> None:
        self.directory = Path(directory)
        self.spec = spaces_spec(obs_space, action_space)
        self.obs_keys = sorted(obs_space.spaces)
        self._steps: list[Step] = []
        durable_mkdir(self.directory)
        remove_stale_episodes(self.directory)
        existing = episode_files(self.directory)
        has_manifest = (self.directory / MANIFEST).exists()
        if (existing or has_manifest) and append:
            manifest = read_manifest(self.directory)
            mismatch = spec_mismatch(manifest.get("spaces", {}), self.spec)
            if mismatch:
                raise DemoFormatError(f"{self.directory}: cannot append, the existing demos' {mismatch}")
            self.next_index = max((episode_index(p) for p in existing), default=-1) + 1
            return
        if existing or has_manifest:
            if not force:
                raise holds_demos_error(self.directory, len(existing))
            for p in existing:
                p.unlink()
        manifest = {"format": FORMAT, "version": VERSION, "task": task, "source": source,
                    "created": datetime.datetime.now().isoformat(timespec="seconds"),
                    "spaces": self.spec, "env": env_config or {}}
        durable_write(self.directory / MANIFEST, jsonio.dumps(manifest, indent=1).encode())
        self.next_index = 0

    def add(self, step: Step) -> Path | None:
        """Buffer a step; returns the episode file's path when this step ended the episode."""
        if self._steps and (step.episode_id != self._steps[-1].episode_id or step.step != self._steps[-1].step + 1):
            self._steps = []  # the previous episode never ended: drop it
        self._steps.append(step)
        if not step.last:
            return None
        steps, self._steps = self._steps, []
        return self.write_episode(steps)

    def discard(self) -> None:
        """Drop the episode in progress (e.g. a failed scripted attempt)."""
        self._steps = []

    def write_episode(self, steps: list[Step]) -> Path:
        arrays = episode_arrays(steps, self.obs_keys)
        path = self.directory / f"episode_{self.next_index:06d}.npz"
        with durable_writer(path) as f:
            np.savez_compressed(f, **arrays)
        self.next_index += 1
        return path


def read_manifest(directory: str | Path) -> dict[str, Any]:
    directory = Path(directory)
    if not directory.is_dir():
        raise DemoFormatError(f"demo directory not found: {directory}")
    path = directory / MANIFEST
    if not path.is_file():
        raise DemoFormatError(f"{directory} has no {MANIFEST}: not a demo directory written by 'robot-rl record-demos'")
    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DemoFormatError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DemoFormatError(f"{path}: not a robot_rl demo manifest (format is {manifest.get('format')!r})"
                              if isinstance(manifest, dict) else f"{path}: not a robot_rl demo manifest")
    if manifest.get("version") != VERSION:
        raise DemoFormatError(f"{path}: demo format version {manifest.get('version')}, this robot_rl reads {VERSION}")
    return manifest


def check_demo_dir(directory: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> dict[str, Any]:
    """Read the manifest and check its spaces against the task's; returns the manifest."""
    manifest = read_manifest(directory)
    mismatch = spec_mismatch(manifest.get("spaces", {}), spaces_spec(obs_space, action_space))
    if mismatch:
        raise DemoFormatError(f"{directory}: demos do not match this task: {mismatch}")
    return manifest


def read_episode(path: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box,
                 episode_id: int = 0) -> list[Step]:
    """One episode file as Steps (``next_obs`` filled in for every step)."""
    path = Path(path)
    obs, action, fields = _read_arrays(path, obs_space)
    _check_episode(path, obs, action, fields, obs_space, action_space)
    steps = []
    for t in range(action.shape[0]):
        steps.append(Step(
            episode_id=episode_id, step=t,
            obs={k: v[t] for k, v in obs.items()}, action=action[t].astype(np.float32),
            reward=float(fields["reward"][t]), terminated=bool(fields["terminated"][t]),
            truncated=bool(fields["truncated"][t]), next_obs={k: v[t + 1] for k, v in obs.items()},
            intervened=bool(fields["intervened"][t]), success=bool(fields["success"][t]),
            grasp_penalty=float(fields["grasp_penalty"][t])))
    return steps


def _read_arrays(path: Path, obs_space: gym.spaces.Dict) -> tuple[dict[str, np.ndarray], np.ndarray,
                                                                  dict[str, np.ndarray]]:
    """Every array of an episode file, read now, so a damaged file fails here in one line."""
    try:
        with np.load(path, allow_pickle=False) as data:
            names = [f"obs/{k}" for k in obs_space.spaces] + ["action", *_STEP_FIELDS]
            missing = [k for k in names if k not in data.files]
            if missing:
                raise DemoFormatError(f"{path}: missing array '{missing[0]}'")
            obs = {k: data[f"obs/{k}"] for k in obs_space.spaces}
            return obs, data["action"], {k: data[k] for k in _STEP_FIELDS}
    except READ_ERRORS as err:
        raise DemoFormatError(f"{path}: cannot read demo episode ({one_line(err)})") from None


def _check_episode(path: Path, obs: dict[str, np.ndarray], action: np.ndarray, fields: dict[str, np.ndarray],
                   obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> None:
    """Shapes, dtypes, finite numbers and a last step that ends the episode."""
    steps_count = action.shape[0] if action.ndim else 0
    if action.shape[1:] != action_space.shape:
        raise DemoFormatError(f"{path}: action has shape {action.shape[1:]}, the task's is {action_space.shape}")
    for key, arr in obs.items():
        want = obs_space.spaces[key]
        if arr.shape != (steps_count + 1, *want.shape) or arr.dtype != want.dtype:
            raise DemoFormatError(f"{path}: observation '{key}' is {arr.dtype}{arr.shape}, expected "
                                  f"{np.dtype(want.dtype).name}{(steps_count + 1, *want.shape)}")
    for name, arr in fields.items():
        if arr.shape != (steps_count,):
            raise DemoFormatError(f"{path}: '{name}' has shape {arr.shape}, expected ({steps_count},)")
    numbers = {"action": action, **{f"obs/{k}": v for k, v in obs.items()}, **fields}
    for name, arr in numbers.items():
        if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr).all():
            raise DemoFormatError(f"{path}: '{name}' holds NaN or infinite values")
    if steps_count == 0 or not (fields["terminated"][-1] or fields["truncated"][-1]):
        raise DemoFormatError(f"{path}: the episode does not end with a terminated or truncated step")


def iter_demo_episodes(directory: str | Path, obs_space: gym.spaces.Dict,
                       action_space: gym.spaces.Box) -> Iterator[list[Step]]:
    """Check the directory against the task's spaces, then yield its episodes in order."""
    check_demo_dir(directory, obs_space, action_space)
    for i, path in enumerate(episode_files(directory)):
        yield read_episode(path, obs_space, action_space, episode_id=i)


def load_demos(directory: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> list[list[Step]]:
    episodes = list(iter_demo_episodes(directory, obs_space, action_space))
    if not episodes:
        raise DemoFormatError(f"{directory} holds no demo episodes")
    return episodes
