"""A LeRobotDataset v3 folder into a robot_rl demo folder, checked whole before anything is written.

``robot-rl demos import --format lerobot DATASET_DIR DEMO_DIR [--config TASK]``. The
spaces come from the task's config (``--config``), or, for a dataset robot_rl exported,
from the demo manifest its ``info.json`` carries. The names are in
:mod:`robot_rl.data.lerobot_layout`.

What v3 does not hold is rebuilt the same way every time:

* **the final next observation** of an episode is a copy of its last observation. A
  terminated episode never uses it (no bootstrap); a truncated one bootstraps from the
  last observation instead of the one after it.
* **terminated vs truncated**: with ``next.truncated`` (datasets robot_rl exported) both
  come back as they were. Without it, an episode whose last frame has ``next.done`` true
  ended ``terminated``; one whose last frame does not is ``truncated`` (the recording
  stopped there). ``next.done`` true before an episode's last frame is an error.
* a feature the dataset lacks among ``next.reward``, ``next.done``, ``next.success``,
  ``complementary_info.is_intervention`` and ``complementary_info.discrete_penalty``
  reads as 0 / false on every step, and the report line names it.

Camera images of another size than the task's are refused unless ``resize`` (``--resize``):
then every frame is resized with OpenCV's area interpolation, and the report says so.
Actions outside the task's action space are refused unless ``action_range``
(``--action-range``) says which range of the dataset's units to rescale from, linearly per
dimension; the manifest records the mapping (:mod:`robot_rl.data.lerobot_actions`).
A dataset with observation features the task lacks, or lacking one the task has, of
another fps than the task's, a parquet or video file that is missing, cut short or
damaged, values that are NaN or infinite: one line naming the file and the feature,
nothing written. Cameras stored as PNG images (``dtype: image``) are refused:
robot_rl reads cameras stored as videos.

A v3 dataset packs many episodes into one parquet file and one video per camera, and a
lab's dataset does not fit in memory, so the import reads it twice and never whole:

1. **check**: every episode's rows, index, done flags and numbers (the data files'
   non-image columns, one file at a time), every video file's frame count and size from
   its container (:func:`robot_rl.data.video_frames.video_info`; no frame is kept), each
   episode's span of frames (its ``from_timestamp``) inside its video, no two episodes
   sharing a frame. Each episode's actions are kept: they are fitted into the task's
   action space together (:func:`robot_rl.data.lerobot_actions.fit_actions`). Any
   mistake here is the one-line error above, before the demo folder is touched.
2. **write**: one episode at a time, in episode order, only its own span of each video
   decoded (:class:`robot_rl.data.video_frames.FrameSpans` keeps each camera's file open
   and reads forward, so a file is decoded once), its steps written, then dropped.

Memory is thus one episode's frames plus one data file's non-image columns and every
episode's actions, whatever the episode count. A file damaged in a way the check cannot
see (a container that counts more frames than it decodes) fails in the write pass: the
import then takes back what it wrote, leaving the demo folder as it was (a new folder is
not created, ``--append`` removes the episodes it added, ``--force`` writes the new demos
beside the folder and swaps them in only once whole), and the error is one line.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.data.demos import MANIFEST, DemoFormatError, DemoWriter, episode_files, holds_demos_error
from robot_rl.data.durable import TMP_SUFFIX, durable_rename, fsync_dir, staging_dir, swap_dir
from robot_rl.data.lerobot_actions import ActionRange, describe, fit_actions, mapping_for, record_mapping, summary
from robot_rl.data.lerobot_export import manifest_spaces
from robot_rl.data.lerobot_layout import (
    DATA_PATH,
    EPISODES_DIR,
    IMAGE_PREFIX,
    INDEX_FEATURES,
    INFO,
    ROBOT_RL_KEY,
    STEP_FEATURES,
    VIDEO_PATH,
    LeRobotFormatError,
    is_camera,
    obs_features,
    pyarrow_modules,
    read_info,
)
from robot_rl.data.transition import Step
from robot_rl.data.video_frames import FrameSpans, VideoInfo, video_info
from robot_rl.errors import one_line


@dataclass
class LeRobotImportReport:
    directory: Path
    episodes: int
    steps: int
    filled: list[str] = field(default_factory=list)  # features the dataset lacks, read as 0 / false
    resized: list[str] = field(default_factory=list)  # camera features resized to the task's size
    rescaled: str = ""  # how the actions were rescaled into the task's action space ("": they were not)

    def line(self) -> str:
        text = f"imported {self.episodes} episodes ({self.steps} steps) into {self.directory}"
        if self.filled:
            text += f"; absent, read as 0/false: {', '.join(self.filled)}"
        if self.resized:
            text += f"; resized to the task's image size: {', '.join(self.resized)}"
        if self.rescaled:
            text += f"; {self.rescaled}"
        return text


@dataclass
class _Target:
    """What the demo folder will hold, and where it came from."""

    obs_space: gym.spaces.Dict
    action_space: gym.spaces.Box
    task: str
    source: str
    env: dict[str, Any]


def import_lerobot(dataset_dir: str | Path, demo_dir: str | Path, *, obs_space: gym.spaces.Dict | None = None,
                   action_space: gym.spaces.Box | None = None, fps: int | None = None, task: str = "",
                   env_config: dict[str, Any] | None = None, resize: bool = False, force: bool = False,
                   append: bool = False, action_range: ActionRange | None = None) -> LeRobotImportReport:
    """Check the v3 dataset ``dataset_dir`` whole, then write it into ``demo_dir`` one episode at a time
    (see the module docstring).

    Without ``obs_space``/``action_space`` the dataset must carry robot_rl's manifest
    (an export of robot_rl's). ``fps``: the task's control rate, checked against the dataset's.
    ``action_range``: the range of the dataset's action units to rescale from (None: the
    actions must already lie in the task's action space).
    """
    pa, pq = pyarrow_modules()
    root = Path(dataset_dir)
    info = read_info(root)
    target = _target(root, info, obs_space, action_space, task, env_config)
    if fps is not None and fps != info["fps"]:
        raise LeRobotFormatError(f"{root / INFO}: fps is {info['fps']}, the task runs at {fps} Hz "
                                 "(env.control_hz): its steps would not be the task's steps")
    keys = _check_features(root, info, target, resize)
    mapping = mapping_for(action_range, root, target.action_space)
    reader = _Reader(pa, pq, root, info, target, keys, resize)
    # pass 1: every episode checked, its actions kept; no frame kept, nothing written
    plans = reader.check_all()
    actions = fit_actions([(plan.data, plan.actions) for plan in plans], target.action_space, mapping)
    # pass 2: one episode at a time, decoded, written, dropped; a failure takes back what this import wrote
    destination = _Destination(Path(demo_dir), target, force, append)
    try:
        first = destination.writer.next_index
        for plan, fitted in zip(plans, actions):
            destination.write(reader.steps(plan, fitted))
        if mapping is not None:
            record_mapping(destination.directory, {**describe(mapping, target.action_space), "dataset": root.name,
                                                   "episodes": [first, first + len(plans) - 1]})
    except BaseException as err:
        destination.rollback()
        if isinstance(err, LeRobotFormatError):
            raise LeRobotFormatError(f"{err}; nothing imported, {demo_dir} is as it was") from None
        raise
    finally:
        reader.close()
    destination.commit()
    return LeRobotImportReport(Path(demo_dir), len(plans), sum(plan.length for plan in plans),
                               sorted(reader.filled), sorted(reader.resized),
                               summary(mapping) if mapping is not None else "")


class _Destination:
    """Where pass 2 writes, and how a failure takes back what this import wrote.

    A folder that exists and holds no demos, or holds demos and ``append``: the episodes go into
    it and a failure deletes the files this import added (the manifest of existing demos
    changes only once every episode is written). A new folder, or ``force`` over demos: the
    demos are written into the sibling ``<name>.tmp`` and put in place by renames
    (:func:`robot_rl.data.durable.swap_dir`) only once whole, so a failure leaves no folder, or
    the old demos as they were. A ``force`` import carries any other file the old folder held
    into the new one.
    """

    def __init__(self, final: Path, target: _Target, force: bool, append: bool) -> None:
        if final.exists() and not final.is_dir():
            raise DemoFormatError(f"{final} is a file, not a demo folder")
        existing = episode_files(final) if final.is_dir() else []
        holds = bool(existing) or (final / MANIFEST).exists()
        if holds and not (force or append):
            raise holds_demos_error(final, len(existing))
        # the folder itself, not a link to it or a name without a name ("."), is what gets swapped
        self.final = Path(os.path.realpath(final))
        self.in_place = final.is_dir() and (append or not holds)  # nothing of the folder's own to replace
        self.created = not holds  # the manifest too is this import's
        self.written: list[Path] = []
        self.directory = final if self.in_place else staging_dir(self.final)
        if not self.in_place:
            shutil.rmtree(self.directory, ignore_errors=True)  # what an import a crash cut short left
        try:
            self.writer = DemoWriter(self.directory, target.obs_space, target.action_space, task=target.task,
                                     source=target.source, env_config=target.env, append=self.in_place)
        except BaseException:
            if not self.in_place:
                shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def write(self, steps: list[Step]) -> None:
        self.written.append(self.writer.write_episode(steps))

    def rollback(self) -> None:
        if not self.in_place:
            shutil.rmtree(self.directory, ignore_errors=True)
            return
        for path in [*self.written, *([self.directory / MANIFEST] if self.created else [])]:
            path.unlink(missing_ok=True)
        fsync_dir(self.directory)

    def commit(self) -> None:
        """Swap the staged folder in; other files of the folder it replaces come along."""
        if self.in_place:
            return
        if self.final.is_dir():
            demos = {p.name for p in episode_files(self.final)} | {MANIFEST}
            for path in sorted(self.final.iterdir()):
                if path.name not in demos and not path.name.endswith((TMP_SUFFIX, TMP_SUFFIX + ".npz")):
                    durable_rename(path, self.directory / path.name)
        swap_dir(self.directory, self.final)


def _target(root: Path, info: dict[str, Any], obs_space: gym.spaces.Dict | None,
            action_space: gym.spaces.Box | None, task: str, env_config: dict[str, Any] | None) -> _Target:
    manifest = info.get(ROBOT_RL_KEY) if isinstance(info.get(ROBOT_RL_KEY), dict) else None
    source = str(manifest.get("source") or "lerobot") if manifest else "lerobot"
    if obs_space is not None and action_space is not None:
        return _Target(obs_space, action_space, task, source, env_config or {})
    if manifest is None:
        raise LeRobotFormatError(f"{root / INFO} has no '{ROBOT_RL_KEY}' manifest (not exported by robot_rl): "
                                 "pass --config with the task the dataset is for")
    obs, action = manifest_spaces(manifest, f"{root / INFO}: '{ROBOT_RL_KEY}'")
    env = manifest.get("env") if isinstance(manifest.get("env"), dict) else {}
    return _Target(obs, action, str(manifest.get("task") or ""), source, env)


def _check_features(root: Path, info: dict[str, Any], target: _Target, resize: bool) -> dict[str, str]:
    """The task's observation keys -> the dataset's features, every difference a one-line error."""
    where = root / INFO
    features: dict[str, dict[str, Any]] = info["features"]
    try:
        keys = obs_features(target.obs_space)
    except LeRobotFormatError as err:
        raise LeRobotFormatError(f"the task's observation: {err}") from None
    observed = sorted(n for n in features if n.startswith("observation."))
    extra = [n for n in observed if n not in keys.values()]
    if extra:
        raise LeRobotFormatError(f"{where}: feature '{extra[0]}' is not in the task's observation (the task's "
                                 f"features: {sorted(keys.values())})")
    for key, name in keys.items():
        space = target.obs_space.spaces[key]
        feature = features.get(name)
        if feature is None:
            raise LeRobotFormatError(f"{where}: no feature '{name}' (the task's observation '{key}'); the "
                                     f"dataset's observation features: {observed}")
        shape = tuple(feature["shape"])
        if is_camera(space):
            if feature["dtype"] != "video":
                raise LeRobotFormatError(f"{where}: feature '{name}' is stored as {feature['dtype']!r}; robot_rl "
                                         "reads cameras stored as videos")
            if len(shape) != 3 or shape[2] != 3:
                raise LeRobotFormatError(f"{where}: feature '{name}' has shape {shape}, not an HxWx3 camera image")
            if shape != space.shape and not resize:
                raise LeRobotFormatError(f"{where}: feature '{name}' is {shape[1]}x{shape[0]}, the task's camera "
                                         f"'{key}' is {space.shape[1]}x{space.shape[0]}; pass --resize to resize")
        elif shape != space.shape:
            raise LeRobotFormatError(f"{where}: feature '{name}' has shape {shape}, the task's observation "
                                     f"'{key}' is {space.shape}")
    action = features.get("action")
    if action is None:
        raise LeRobotFormatError(f"{where}: no feature 'action'")
    if tuple(action["shape"]) != target.action_space.shape:
        raise LeRobotFormatError(f"{where}: feature 'action' has shape {tuple(action['shape'])}, the task's action "
                                 f"is {target.action_space.shape}")
    if any(n.startswith(IMAGE_PREFIX) for n in keys.values()) and not info.get("video_path"):
        raise LeRobotFormatError(f"{where}: has no 'video_path' for its camera videos")
    return keys


class _Reader:
    """Reads episodes of a v3 dataset as robot_rl Steps, one data file and one video file at a time."""

    def __init__(self, pa: Any, pq: Any, root: Path, info: dict[str, Any], target: _Target, keys: dict[str, str],
                 resize: bool) -> None:
        self.pa, self.pq, self.root, self.info, self.target, self.keys = pa, pq, root, info, target, keys
        self.resize = resize
        self.fps: int = info["fps"]
        self.features: dict[str, dict[str, Any]] = info["features"]
        self.filled = {name for name, _ in STEP_FEATURES.values() if name not in self.features}
        self.resized: set[str] = set()
        self._data: tuple[Path, dict[str, np.ndarray]] | None = None
        self._infos: dict[Path, VideoInfo] = {}  # pass 1: each video file's frame count and size
        self._spans: dict[str, FrameSpans] = {}  # pass 2: per camera, the video file open for reading

    # --- metadata ---

    def episode_rows(self) -> list[dict[str, Any]]:
        folder = self.root / EPISODES_DIR
        files = sorted(folder.glob("chunk-*/file-*.parquet"))
        if not files:
            raise LeRobotFormatError(f"{self.root} is not a LeRobotDataset v3 folder: no {EPISODES_DIR}/chunk-*/"
                                     "file-*.parquet")
        need = ["episode_index", "length", "data/chunk_index", "data/file_index"]
        for name in self.keys.values():
            if name.startswith(IMAGE_PREFIX):
                need += [f"videos/{name}/chunk_index", f"videos/{name}/file_index", f"videos/{name}/from_timestamp"]
        rows: list[dict[str, Any]] = []
        for path in files:
            table = self._read_table(path)
            missing = [c for c in need if c not in table.column_names]
            if missing:
                raise LeRobotFormatError(f"{path}: no column '{missing[0]}'")
            rows += table.select(need).to_pylist()
        for row in rows:
            for column in need:
                value = row[column]
                ok = type(value) in (int, float) and np.isfinite(value) and value >= 0 if column.endswith("timestamp") \
                    else type(value) is int and value >= 0
                if not ok:
                    raise LeRobotFormatError(f"{files[0].parent.parent}: episode {row['episode_index']}: "
                                             f"'{column}' is {value!r}")
        indices = [r["episode_index"] for r in rows]
        if len(set(indices)) != len(indices):
            raise LeRobotFormatError(f"{folder}: an episode_index is listed twice")
        return sorted(rows, key=lambda r: r["episode_index"])

    def _read_table(self, path: Path, columns: list[str] | None = None) -> Any:
        if not path.is_file():
            raise LeRobotFormatError(f"{path}: file missing")
        try:
            return self.pq.read_table(path, columns=columns)
        except (OSError, ValueError, self.pa.ArrowException) as err:
            raise LeRobotFormatError(f"{path}: cannot read the parquet file ({one_line(err)})") from None

    def _read_schema(self, path: Path) -> Any:
        if not path.is_file():
            raise LeRobotFormatError(f"{path}: file missing")
        try:
            return self.pq.read_schema(path)
        except (OSError, ValueError, self.pa.ArrowException) as err:
            raise LeRobotFormatError(f"{path}: cannot read the parquet file ({one_line(err)})") from None

    # --- data ---

    def _data_file(self, path: Path) -> dict[str, np.ndarray]:
        if self._data is not None and self._data[0] == path:
            return self._data[1]
        vector = {n: self.features[n] for n in self.keys.values() if not n.startswith(IMAGE_PREFIX)}
        wanted = {**vector, "action": self.features["action"],
                  **{n: {"shape": [1]} for n, _ in STEP_FEATURES.values() if n in self.features},
                  "episode_index": INDEX_FEATURES["episode_index"], "frame_index": INDEX_FEATURES["frame_index"]}
        self._data = None  # the previous file's columns go before this one's are read
        names = self._read_schema(path).names
        missing = [n for n in wanted if n not in names]
        if missing:
            raise LeRobotFormatError(f"{path}: no column '{missing[0]}'")
        table = self._read_table(path, list(wanted))  # only these columns: never an image column
        index = {n: self._column(path, table.column(n), n, (1,)) for n in ("episode_index", "frame_index")}

        def where(row: int) -> str:
            return f"episode {index['episode_index'][row]}, frame {index['frame_index'][row]}"

        arrays = {name: index[name] if name in index else
                  self._column(path, table.column(name), name, tuple(f["shape"]), where) for name, f in wanted.items()}
        self._data = (path, arrays)
        return arrays

    def _column(self, path: Path, column: Any, name: str, shape: tuple[int, ...],
                where: Callable[[int], str] | None = None) -> np.ndarray:
        try:
            values = column.combine_chunks() if hasattr(column, "combine_chunks") else column
            n = len(values)
            if shape == (1,) and not self.pa.types.is_list(values.type) \
                    and not self.pa.types.is_fixed_size_list(values.type):
                out = values.to_numpy(zero_copy_only=False)
            else:
                flat = values.flatten().to_numpy(zero_copy_only=False)
                out = flat.reshape(n, *shape)
        except (ValueError, TypeError, self.pa.ArrowException) as err:
            raise LeRobotFormatError(f"{path}: column '{name}' is not {shape} per row ({one_line(err)})") from None
        if out.dtype == object:
            raise LeRobotFormatError(f"{path}: column '{name}' holds missing values")
        if np.issubdtype(out.dtype, np.floating) and not np.isfinite(out).all():
            flat = out.reshape(n, -1)
            row, col = (int(i) for i in np.argwhere(~np.isfinite(flat))[0])
            place = [where(row)] if where is not None else []
            place += [f"dimension {col}"] if flat.shape[1] > 1 else []
            raise LeRobotFormatError(f"{path}: column '{name}' holds {float(flat[row, col])} at row {row}"
                                     + (f" ({', '.join(place)})" if place else ""))
        return out

    # --- pass 1: check ---

    def check_all(self) -> list[_Plan]:
        """Every episode checked (rows, flags, numbers, video frame counts, no two episodes sharing
        a frame), in episode order; the plans hold each episode's actions and where its frames are."""
        plans = [self.check(row) for row in self.episode_rows()]
        if not plans:
            raise LeRobotFormatError(f"{self.root}: holds no episodes")
        spans: dict[tuple[str, Path], list[tuple[int, int]]] = {}
        for plan in plans:
            for camera in plan.cameras:
                spans.setdefault((camera.name, camera.path), []).append((camera.first, plan.episode))
        length = {plan.episode: plan.length for plan in plans}
        for (name, path), starts in spans.items():
            starts.sort()  # by first frame: two spans that overlap leave a pair of neighbours that do
            for (a_first, a), (b_first, b) in zip(starts, starts[1:]):
                a_last = a_first + length[a] - 1
                if b_first <= a_last:
                    raise LeRobotFormatError(f"{path}: episodes {a} and {b} of '{name}' share frames "
                                             f"{b_first}..{min(a_last, b_first + length[b] - 1)}")
        return plans

    def check(self, row: dict[str, Any]) -> _Plan:
        e, length = row["episode_index"], row["length"]
        path = self._data_path(row)
        data = self._data_file(path)
        rows = self._rows(data, path, e, length)
        self._endings(data, rows, path, e, length)
        cameras = []
        for key, name in self.keys.items():
            if name.startswith(IMAGE_PREFIX):
                cameras.append(self._check_camera(row, key, name, length))
        return _Plan(e, length, path, data["action"][rows], cameras)

    def _check_camera(self, row: dict[str, Any], key: str, name: str, length: int) -> _Camera:
        pattern = str(self.info.get("video_path") or VIDEO_PATH)
        path = self.root / pattern.format(video_key=name, chunk_index=row[f"videos/{name}/chunk_index"],
                                          file_index=row[f"videos/{name}/file_index"])
        found = self._infos.get(path)
        if found is None:
            try:
                found = self._infos[path] = video_info(path)
            except Exception as err:  # VideoError and whatever a decoder raises, in one line naming the file
                raise _video_error(path, err) from None
        first = int(round(row[f"videos/{name}/from_timestamp"] * self.fps))
        if first + length > found.frames:
            raise LeRobotFormatError(f"{path}: holds {found.frames} frames, episode {row['episode_index']} of "
                                     f"'{name}' needs frames {first}..{first + length - 1} (a video cut short?)")
        declared = tuple(self.features[name]["shape"])
        if (found.height, found.width, 3) != declared:
            raise LeRobotFormatError(f"{path}: frames are {(found.height, found.width, 3)}, info.json says "
                                     f"'{name}' is {declared}")
        return _Camera(key, name, path, first)

    def _data_path(self, row: dict[str, Any]) -> Path:
        pattern = str(self.info.get("data_path") or DATA_PATH)
        return self.root / pattern.format(chunk_index=row["data/chunk_index"], file_index=row["data/file_index"])

    @staticmethod
    def _rows(data: dict[str, np.ndarray], path: Path, e: int, length: int) -> np.ndarray:
        """The data file's rows of episode ``e``, in frame order: exactly frames 0..length-1."""
        rows = np.flatnonzero(data["episode_index"] == e)
        rows = rows[np.argsort(data["frame_index"][rows], kind="stable")]
        if length < 1 or rows.size != length or not np.array_equal(data["frame_index"][rows], np.arange(rows.size)):
            raise LeRobotFormatError(f"{path}: episode {e} has frames {_span(data['frame_index'][rows])}, its "
                                     f"metadata says {length} (frames 0..{length - 1})")
        return rows

    def _field(self, data: dict[str, np.ndarray], rows: np.ndarray, field_name: str, dtype: Any) -> np.ndarray:
        name = STEP_FEATURES[field_name][0]
        return data[name][rows].reshape(rows.size).astype(dtype) if name in data else np.zeros(rows.size, dtype)

    def _endings(self, data: dict[str, np.ndarray], rows: np.ndarray, path: Path, e: int,
                 length: int) -> tuple[bool, bool]:
        """(terminated, truncated) of the episode's last step, by the rule in the module docstring."""
        done, truncated = self._field(data, rows, "done", bool), self._field(data, rows, "truncated", bool)
        if (done[:-1] | truncated[:-1]).any():
            t = int(np.flatnonzero(done[:-1] | truncated[:-1])[0])
            raise LeRobotFormatError(f"{path}: episode {e} is done at frame {t}, before its last frame {length - 1}")
        if "next.truncated" in data:
            return bool(done[-1]) and not bool(truncated[-1]), bool(truncated[-1])
        return bool(done[-1]), not bool(done[-1])

    # --- pass 2: one episode's steps ---

    def steps(self, plan: _Plan, actions: np.ndarray) -> list[Step]:
        """One checked episode's steps with ``actions`` (fitted into the task's space): its rows
        read again from its data file, its frames decoded now, only its own span of each video."""
        e, length, path = plan.episode, plan.length, plan.data
        data = self._data_file(path)
        rows = self._rows(data, path, e, length)
        last_terminated, last_truncated = self._endings(data, rows, path, e, length)
        obs: dict[str, Any] = {}
        for key, name in self.keys.items():
            if not name.startswith(IMAGE_PREFIX):
                obs[key] = [np.asarray(v, dtype=self.target.obs_space.spaces[key].dtype) for v in data[name][rows]]
        for camera in plan.cameras:
            obs[camera.key] = self._frames(camera, e, length)
        reward, penalty = self._field(data, rows, "reward", np.float32), self._field(data, rows, "grasp_penalty",
                                                                                      np.float32)
        success, intervened = self._field(data, rows, "success", bool), self._field(data, rows, "intervened", bool)
        steps = []
        for t in range(length):
            last = t == length - 1
            # the final next observation: a copy of the last one
            next_obs = {k: v[t].copy() for k, v in obs.items()} if last else {k: v[t + 1] for k, v in obs.items()}
            steps.append(Step(episode_id=e, step=t, obs={k: v[t] for k, v in obs.items()}, action=actions[t],
                              reward=float(reward[t]), terminated=last and last_terminated,
                              truncated=last and last_truncated, next_obs=next_obs,
                              intervened=bool(intervened[t]), success=bool(success[t]),
                              grasp_penalty=float(penalty[t])))
        return steps

    def _frames(self, camera: _Camera, e: int, length: int) -> list[np.ndarray]:
        spans = self._spans.get(camera.name)
        if spans is None or spans.path != camera.path:
            if spans is not None:
                spans.close()
            spans = self._spans[camera.name] = FrameSpans(camera.path)
        try:
            frames = spans.read(camera.first, length)
        except Exception as err:  # VideoError and whatever a decoder raises, in one line naming the file
            raise _video_error(camera.path, err) from None
        want = self.target.obs_space.spaces[camera.key].shape
        declared = tuple(self.features[camera.name]["shape"])
        out = []
        for frame in frames:
            if frame.shape != want:
                if frame.shape != declared:
                    raise LeRobotFormatError(f"{camera.path}: frames are {frame.shape}, info.json says "
                                             f"'{camera.name}' is {declared}")
                import cv2

                frame = cv2.resize(frame, (want[1], want[0]), interpolation=cv2.INTER_AREA)
                self.resized.add(camera.name)
            out.append(frame)
        return out

    def close(self) -> None:
        for spans in self._spans.values():
            spans.close()
        self._spans.clear()


@dataclass
class _Camera:
    """Where one camera's frames of an episode are: a video file, from its frame ``first``."""

    key: str
    name: str
    path: Path
    first: int


@dataclass
class _Plan:
    """One checked episode: what pass 2 needs to write it, and its actions as the dataset holds them."""

    episode: int
    length: int
    data: Path
    actions: np.ndarray
    cameras: list[_Camera]


def _video_error(path: Path, err: Exception) -> LeRobotFormatError:
    if isinstance(err, LeRobotFormatError):
        return err
    return LeRobotFormatError(str(err) if str(err).startswith(str(path)) else f"{path}: {one_line(err)}")


def _span(frames: np.ndarray) -> str:
    if frames.size == 0:
        return "none"
    return f"{int(frames.min())}..{int(frames.max())} ({frames.size} rows)"
