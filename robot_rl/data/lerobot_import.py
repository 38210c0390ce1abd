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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.data.demos import DemoWriter
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
from robot_rl.data.video_frames import read_frames
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
    """Read the v3 dataset ``dataset_dir`` whole, then write it into ``demo_dir`` (see the module docstring).

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
    read = [reader.episode(row) for row in reader.episode_rows()]
    if not read:
        raise LeRobotFormatError(f"{root}: holds no episodes")
    actions = fit_actions([(path, np.stack([s.action for s in steps])) for path, steps in read],
                          target.action_space, mapping)
    episodes = [steps for _, steps in read]
    for steps, fitted in zip(episodes, actions):
        for step, action in zip(steps, fitted):
            step.action = action
    writer = DemoWriter(demo_dir, target.obs_space, target.action_space, task=target.task, source=target.source,
                        env_config=target.env, force=force, append=append)
    if mapping is not None:
        record_mapping(Path(demo_dir), {**describe(mapping, target.action_space), "dataset": root.name,
                                        "episodes": [writer.next_index, writer.next_index + len(episodes) - 1]})
    for steps in episodes:
        writer.write_episode(steps)
    return LeRobotImportReport(Path(demo_dir), len(episodes), sum(len(s) for s in episodes),
                               sorted(reader.filled), sorted(reader.resized),
                               summary(mapping) if mapping is not None else "")


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
        self._videos: dict[str, tuple[Path, list[np.ndarray]]] = {}

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

    # --- data ---

    def _data_file(self, path: Path) -> dict[str, np.ndarray]:
        if self._data is not None and self._data[0] == path:
            return self._data[1]
        vector = {n: self.features[n] for n in self.keys.values() if not n.startswith(IMAGE_PREFIX)}
        wanted = {**vector, "action": self.features["action"],
                  **{n: {"shape": [1]} for n, _ in STEP_FEATURES.values() if n in self.features},
                  "episode_index": INDEX_FEATURES["episode_index"], "frame_index": INDEX_FEATURES["frame_index"]}
        table = self._read_table(path)
        missing = [n for n in wanted if n not in table.column_names]
        if missing:
            raise LeRobotFormatError(f"{path}: no column '{missing[0]}'")
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

    # --- videos ---

    def _video(self, name: str, path: Path) -> list[np.ndarray]:
        cached = self._videos.get(name)
        if cached is not None and cached[0] == path:
            return cached[1]
        try:
            frames = read_frames(path)
        except LeRobotFormatError:
            raise
        except Exception as err:  # VideoError and whatever a decoder raises, in one line naming the file
            raise LeRobotFormatError(str(err) if str(err).startswith(str(path)) else
                                     f"{path}: {one_line(err)}") from None
        self._videos[name] = (path, frames)
        return frames

    def _camera(self, row: dict[str, Any], key: str, name: str, length: int) -> list[np.ndarray]:
        pattern = str(self.info.get("video_path") or VIDEO_PATH)
        path = self.root / pattern.format(video_key=name, chunk_index=row[f"videos/{name}/chunk_index"],
                                          file_index=row[f"videos/{name}/file_index"])
        frames = self._video(name, path)
        first = int(round(row[f"videos/{name}/from_timestamp"] * self.fps))
        if first + length > len(frames):
            raise LeRobotFormatError(f"{path}: holds {len(frames)} frames, episode {row['episode_index']} of "
                                     f"'{name}' needs frames {first}..{first + length - 1} (a video cut short?)")
        want = self.target.obs_space.spaces[key].shape
        out = []
        for frame in frames[first:first + length]:
            if frame.shape != want:
                declared = tuple(self.features[name]["shape"])
                if frame.shape != declared:
                    raise LeRobotFormatError(f"{path}: frames are {frame.shape}, info.json says '{name}' is "
                                             f"{declared}")
                import cv2

                frame = cv2.resize(frame, (want[1], want[0]), interpolation=cv2.INTER_AREA)
                self.resized.add(name)
            out.append(frame)
        return out

    # --- episodes ---

    def episode(self, row: dict[str, Any]) -> tuple[Path, list[Step]]:
        """One episode's steps, and the data file they came from; the actions as the dataset holds them
        (``fit_actions`` puts them into the task's space once every episode is read)."""
        e, length = row["episode_index"], row["length"]
        pattern = str(self.info.get("data_path") or DATA_PATH)
        path = self.root / pattern.format(chunk_index=row["data/chunk_index"], file_index=row["data/file_index"])
        data = self._data_file(path)
        rows = np.flatnonzero(data["episode_index"] == e)
        rows = rows[np.argsort(data["frame_index"][rows], kind="stable")]
        if length < 1 or rows.size != length or not np.array_equal(data["frame_index"][rows], np.arange(rows.size)):
            raise LeRobotFormatError(f"{path}: episode {e} has frames {_span(data['frame_index'][rows])}, its "
                                     f"metadata says {length} (frames 0..{length - 1})")
        obs: dict[str, Any] = {}
        for key, name in self.keys.items():
            space = self.target.obs_space.spaces[key]
            if name.startswith(IMAGE_PREFIX):
                obs[key] = self._camera(row, key, name, length)
            else:
                obs[key] = [np.asarray(v, dtype=space.dtype) for v in data[name][rows]]
        actions = data["action"][rows]

        def step_field(field_name: str, dtype: Any) -> np.ndarray:
            name = STEP_FEATURES[field_name][0]
            return data[name][rows].reshape(length).astype(dtype) if name in data else np.zeros(length, dtype)

        done, truncated = step_field("done", bool), step_field("truncated", bool)
        if (done[:-1] | truncated[:-1]).any():
            t = int(np.flatnonzero(done[:-1] | truncated[:-1])[0])
            raise LeRobotFormatError(f"{path}: episode {e} is done at frame {t}, before its last frame {length - 1}")
        if "next.truncated" in data:
            last_truncated = bool(truncated[-1])
            last_terminated = bool(done[-1]) and not last_truncated
        else:
            last_terminated = bool(done[-1])
            last_truncated = not last_terminated
        reward, penalty = step_field("reward", np.float32), step_field("grasp_penalty", np.float32)
        success, intervened = step_field("success", bool), step_field("intervened", bool)
        steps = []
        for t in range(length):
            last = t == length - 1
            nxt = t if last else t + 1  # the final next observation: a copy of the last one
            steps.append(Step(episode_id=e, step=t, obs={k: v[t] for k, v in obs.items()}, action=actions[t],
                              reward=float(reward[t]), terminated=last and last_terminated,
                              truncated=last and last_truncated, next_obs={k: v[nxt].copy() for k, v in obs.items()},
                              intervened=bool(intervened[t]), success=bool(success[t]),
                              grasp_penalty=float(penalty[t])))
        return path, steps


def _span(frames: np.ndarray) -> str:
    if frames.size == 0:
        return "none"
    return f"{int(frames.min())}..{int(frames.max())} ({frames.size} rows)"
