"""A robot_rl demo folder (or a run's replay log) as a new LeRobotDataset v3 folder.

``robot-rl demos export --format lerobot DEMO_DIR DATASET_DIR``. The layout and the names
are in :mod:`robot_rl.data.lerobot_layout`. Each episode becomes one data file and one
video per camera (``file-NNN`` numbered by episode, 1,000 to a chunk folder), written
with FFV1, a lossless codec (:mod:`robot_rl.data.video_frames`), so every pixel and
every number reads back as it was. The folder is written under ``<DATASET_DIR>.tmp``
and renamed into place when whole: a crash leaves no half dataset under the final name.

What v3 cannot hold, and is therefore lost on the way out:

* each episode's **final next observation** (v3 keeps one observation per step; the
  observation after the last step is not a frame of the episode);
* **terminated vs truncated** for LeRobot's own loader: it reads ``next.done``
  (``terminated or truncated``). robot_rl adds ``next.truncated``, so an import into
  robot_rl gets both back.

An import (:mod:`robot_rl.data.lerobot_import`) rebuilds both the same way every time.
"""

from __future__ import annotations

import io
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.data.demos import episode_files, read_episode, read_manifest
from robot_rl.data.durable import durable_mkdir, durable_rename, durable_write, staging_dir
from robot_rl.data.lerobot_layout import (
    CODEBASE_VERSION,
    DATA_PATH,
    EPISODES_PATH,
    INFO,
    ROBOT_RL_KEY,
    STATS,
    STEP_FEATURES,
    TASKS,
    VIDEO_PATH,
    LeRobotFormatError,
    arrow_type,
    chunk_file,
    features_of,
    is_camera,
    obs_features,
    pyarrow_modules,
)
from robot_rl.data.spaces import box_from_spec
from robot_rl.data.transition import Step
from robot_rl.data.video_frames import CODEC, PIX_FMT, LosslessMp4


@dataclass
class LeRobotExportReport:
    dataset: Path
    episodes: int
    steps: int
    fps: int

    def line(self) -> str:
        return (f"exported {self.episodes} episodes ({self.steps} steps, {self.fps} fps) as LeRobotDataset "
                f"{CODEBASE_VERSION} into {self.dataset}")


def manifest_spaces(manifest: dict[str, Any], where: str) -> tuple[gym.spaces.Dict, gym.spaces.Box]:
    """The observation and action spaces a demo manifest describes."""
    spaces = manifest.get("spaces")
    if not isinstance(spaces, dict) or not isinstance(spaces.get("observation"), dict):
        raise LeRobotFormatError(f"{where}: the manifest has no observation spaces")
    try:
        obs = gym.spaces.Dict({k: box_from_spec(v) for k, v in spaces["observation"].items()})
        action = box_from_spec(spaces.get("action", {}))
    except (ValueError, AttributeError) as err:
        raise LeRobotFormatError(f"{where}: {err}") from None
    return obs, action


def manifest_fps(manifest: dict[str, Any], where: str) -> int:
    """The frame rate of the export: the demos' ``env.control_hz`` (10 when absent), a whole number."""
    env = manifest.get("env") if isinstance(manifest.get("env"), dict) else {}
    hz = env.get("control_hz", 10)
    if type(hz) not in (int, float) or not np.isfinite(hz) or hz < 1 or float(hz) != round(hz):
        raise LeRobotFormatError(f"{where}: env.control_hz is {hz!r}; LeRobotDataset v3 needs a whole number of "
                                 "frames per second")
    return int(round(hz))


class _Stats:
    """Running min/max/mean/std/count of one feature (images per channel, scaled to 0..1, as LeRobot does)."""

    def __init__(self, image: bool) -> None:
        self.image = image
        self.count = 0  # frames
        self.n = 0  # values per entry: frames, or pixels of every frame for images
        self.sum: np.ndarray | None = None
        self.sumsq: np.ndarray | None = None
        self.min: np.ndarray | None = None
        self.max: np.ndarray | None = None

    def add(self, values: np.ndarray) -> None:
        """``values``: (N, ...) for N frames."""
        x = values.astype(np.float64)
        if self.image:  # (N, H, W, C) -> per channel
            x = (x / 255.0).reshape(-1, x.shape[-1])
        else:
            x = x.reshape(x.shape[0], -1)
        s, sq, lo, hi = x.sum(0), (x * x).sum(0), x.min(0), x.max(0)
        if self.sum is None:
            self.sum, self.sumsq, self.min, self.max = s, sq, lo, hi
        else:
            self.sum, self.sumsq = self.sum + s, self.sumsq + sq
            self.min, self.max = np.minimum(self.min, lo), np.maximum(self.max, hi)
        self.count += values.shape[0]
        self.n += x.shape[0]

    def as_dict(self) -> dict[str, Any]:
        assert self.sum is not None and self.sumsq is not None and self.min is not None and self.max is not None
        mean = self.sum / self.n
        std = np.sqrt(np.maximum(self.sumsq / self.n - mean * mean, 0.0))

        def shaped(v: np.ndarray) -> Any:
            return v.reshape(-1, 1, 1).tolist() if self.image else v.tolist()

        return {"min": shaped(self.min), "max": shaped(self.max), "mean": shaped(mean), "std": shaped(std),
                "count": [self.count]}


def _parquet_bytes(pq: Any, table: Any) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def export_lerobot(demo_dir: str | Path, dataset_dir: str | Path) -> LeRobotExportReport:
    """Write the demo folder (or replay log) ``demo_dir`` as the new v3 dataset ``dataset_dir``."""
    pa, pq = pyarrow_modules()
    demo_dir, dataset_dir = Path(demo_dir), Path(dataset_dir)
    manifest = read_manifest(demo_dir)
    where = str(demo_dir / "manifest.json")
    obs_space, action_space = manifest_spaces(manifest, where)
    fps = manifest_fps(manifest, where)
    try:
        keys = obs_features(obs_space)
    except LeRobotFormatError as err:
        raise LeRobotFormatError(f"{demo_dir}: {err}") from None
    if len(action_space.shape) != 1:
        raise LeRobotFormatError(f"{demo_dir}: the action has shape {action_space.shape}; v3 holds vectors")
    if dataset_dir.exists() and (not dataset_dir.is_dir() or any(dataset_dir.iterdir())):
        raise LeRobotFormatError(f"{dataset_dir} already exists: an export writes a new dataset folder")
    files = episode_files(demo_dir)
    if not files:
        raise LeRobotFormatError(f"{demo_dir} holds no demo episodes to export")
    features = features_of(obs_space, action_space, fps, CODEC, PIX_FMT)
    stage = staging_dir(dataset_dir)
    shutil.rmtree(stage, ignore_errors=True)  # what an export a crash cut short left
    durable_mkdir(stage)
    try:
        rows, steps_total = _write_episodes(pa, pq, stage, files, obs_space, action_space, keys, features, fps)
        task = str(manifest.get("task") or "robot_rl demos")
        _write_meta(pa, pq, stage, rows, features, fps, task, manifest, steps_total)
        if dataset_dir.exists():
            dataset_dir.rmdir()  # empty, checked above
        durable_rename(stage, dataset_dir)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return LeRobotExportReport(dataset_dir, len(rows), steps_total, fps)


def _write_episodes(pa: Any, pq: Any, stage: Path, files: list[Path], obs_space: gym.spaces.Dict,
                    action_space: gym.spaces.Box, keys: dict[str, str], features: dict[str, Any],
                    fps: int) -> tuple[list[dict[str, Any]], int]:
    """Every episode's data file and videos; returns the episodes' metadata rows and the step count."""
    stats = {name: _Stats(features[name]["dtype"] == "video") for name in features}
    rows: list[dict[str, Any]] = []
    index = 0
    for e, path in enumerate(files):
        steps = read_episode(path, obs_space, action_space, episode_id=e)
        chunk, file = chunk_file(e)
        columns = _columns(steps, keys, obs_space, e, index, fps)
        row: dict[str, Any] = {"episode_index": e, "tasks": None, "length": len(steps),
                               "data/chunk_index": chunk, "data/file_index": file,
                               "dataset_from_index": index, "dataset_to_index": index + len(steps)}
        for key, name in keys.items():
            if not is_camera(obs_space.spaces[key]):
                continue
            video_path = stage / VIDEO_PATH.format(video_key=name, chunk_index=chunk, file_index=file)
            durable_mkdir(video_path.parent)
            writer = LosslessMp4(video_path, fps)
            try:
                for frame in columns[name]:
                    writer.write(frame)
                writer.finish()
            except BaseException:
                writer.abort()
                raise
            row.update({f"videos/{name}/chunk_index": chunk, f"videos/{name}/file_index": file,
                        f"videos/{name}/from_timestamp": 0.0, f"videos/{name}/to_timestamp": len(steps) / fps})
        for name, values in columns.items():
            stats[name].add(values if values.ndim > 1 else values[:, None])
        table = pa.table({name: _arrow_column(pa, values, features[name]) for name, values in columns.items()
                          if features[name]["dtype"] != "video"})
        data_path = stage / DATA_PATH.format(chunk_index=chunk, file_index=file)
        durable_mkdir(data_path.parent)
        durable_write(data_path, _parquet_bytes(pq, table))
        rows.append(row)
        index += len(steps)
    durable_mkdir(stage / "meta")
    durable_write(stage / STATS, jsonio.dumps({n: s.as_dict() for n, s in stats.items() if s.count},
                                              indent=1).encode())
    return rows, index


def _columns(steps: list[Step], keys: dict[str, str], obs_space: gym.spaces.Dict, episode: int, first: int,
             fps: int) -> dict[str, np.ndarray]:
    """One episode as v3 columns, one entry per step (the final next observation is not among them)."""
    n = len(steps)
    cols: dict[str, np.ndarray] = {name: np.stack([s.obs[key] for s in steps]) for key, name in keys.items()}
    cols["action"] = np.stack([np.asarray(s.action, dtype=np.float32) for s in steps])
    values = {"reward": [s.reward for s in steps], "done": [s.terminated or s.truncated for s in steps],
              "truncated": [s.truncated for s in steps], "success": [s.success for s in steps],
              "intervened": [s.intervened for s in steps], "grasp_penalty": [s.grasp_penalty for s in steps]}
    for field, (name, dtype) in STEP_FEATURES.items():
        cols[name] = np.asarray(values[field], dtype=dtype)
    cols["timestamp"] = (np.arange(n) / fps).astype(np.float32)
    cols["frame_index"] = np.arange(n, dtype=np.int64)
    cols["episode_index"] = np.full(n, episode, dtype=np.int64)
    cols["index"] = np.arange(first, first + n, dtype=np.int64)
    cols["task_index"] = np.zeros(n, dtype=np.int64)
    return cols


def _arrow_column(pa: Any, values: np.ndarray, feature: dict[str, Any]) -> Any:
    kind = arrow_type(pa, feature)
    if values.ndim == 1:
        return pa.array(values, type=kind)
    flat = pa.array(values.reshape(-1).astype(np.dtype(feature["dtype"])))
    return pa.FixedSizeListArray.from_arrays(flat, int(np.prod(values.shape[1:])))


def _write_meta(pa: Any, pq: Any, stage: Path, rows: list[dict[str, Any]], features: dict[str, Any], fps: int,
                task: str, manifest: dict[str, Any], steps_total: int) -> None:
    for row in rows:
        row["tasks"] = [task]
        row["meta/episodes/chunk_index"], row["meta/episodes/file_index"] = 0, 0
    episodes = pa.Table.from_pylist(rows)
    path = stage / EPISODES_PATH.format(chunk_index=0, file_index=0)
    durable_mkdir(path.parent)
    durable_write(path, _parquet_bytes(pq, episodes))
    # meta/tasks.parquet as pandas writes it: the task string is the (named-less) index
    tasks = pa.table({"task_index": pa.array([0], pa.int64()), "__index_level_0__": pa.array([task])})
    pandas_meta = {"index_columns": ["__index_level_0__"], "column_indexes": [],
                   "columns": [{"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
                                "numpy_type": "int64", "metadata": None},
                               {"name": None, "field_name": "__index_level_0__", "pandas_type": "unicode",
                                "numpy_type": "object", "metadata": None}],
                   "creator": {"library": "pyarrow", "version": pa.__version__}, "pandas_version": "2.2.0"}
    tasks = tasks.replace_schema_metadata({b"pandas": jsonio.dumps(pandas_meta).encode()})
    durable_write(stage / TASKS, _parquet_bytes(pq, tasks))
    robot_rl = {k: manifest.get(k) for k in ("task", "source", "created", "spaces", "env")}
    info = {"codebase_version": CODEBASE_VERSION, "robot_type": None, "total_episodes": len(rows),
            "total_frames": steps_total, "total_tasks": 1, "chunks_size": 1000, "data_files_size_in_mb": 100,
            "video_files_size_in_mb": 200, "fps": fps, "splits": {"train": f"0:{len(rows)}"},
            "data_path": DATA_PATH, "video_path": VIDEO_PATH if any(f["dtype"] == "video" for f in features.values())
            else None, "features": features, ROBOT_RL_KEY: robot_rl}
    durable_write(stage / INFO, jsonio.dumps(info, indent=4).encode())
