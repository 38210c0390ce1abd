"""The LeRobotDataset v3 layout as robot_rl writes and reads it: folder, features, names.

A v3 dataset is a folder (LeRobot's ``codebase_version`` ``v3.0``)::

    meta/info.json                               fps, features (name, dtype, shape), paths
    meta/tasks.parquet                           task strings, indexed by task_index
    meta/stats.json                              min/max/mean/std/count of each feature
    meta/episodes/chunk-000/file-000.parquet     one row per episode: length, where its rows
                                                 and video frames are
    data/chunk-CCC/file-FFF.parquet              one row per frame (per step)
    videos/<feature>/chunk-CCC/file-FFF.mp4      one video per camera

robot_rl's names for a demo's arrays (:mod:`robot_rl.data.demos`):

====================================  ==========================================================
v3 feature                            robot_rl
====================================  ==========================================================
``observation.images.<key>`` (video)  ``obs/<key>``, a uint8 HxWx3 camera image
``observation.state``                 ``obs/state``
``observation.<key>``                 ``obs/<key>``, any other vector observation
``action``                            ``action``
``next.reward``                       ``reward``
``next.done``                         ``terminated or truncated`` (true on an episode's last step)
``next.truncated``                    ``truncated`` (robot_rl's own; LeRobot's loader ignores it)
``next.success``                      ``success``
``complementary_info.is_intervention``  ``intervened``
``complementary_info.discrete_penalty``  ``grasp_penalty`` (LeRobot's name for the gripper penalty)
====================================  ==========================================================

plus the five columns every v3 dataset has (``timestamp``, ``frame_index``,
``episode_index``, ``index``, ``task_index``). ``info.json`` also carries the demo
folder's manifest under ``robot_rl`` (task, source, spaces, env), which LeRobot ignores
and an import into robot_rl reads back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl.errors import RobotRLError, install_extra, one_line

CODEBASE_VERSION = "v3.0"
INFO = "meta/info.json"
STATS = "meta/stats.json"
TASKS = "meta/tasks.parquet"
EPISODES_DIR = "meta/episodes"
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = EPISODES_DIR + "/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
CHUNK_SIZE = 1000  # files per chunk folder (LeRobot's default)
IMAGE_PREFIX = "observation.images."
ROBOT_RL_KEY = "robot_rl"  # info.json: the demo manifest an export came from

#: The columns every v3 dataset has, besides its own features.
INDEX_FEATURES: dict[str, dict[str, Any]] = {
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}
#: robot_rl's per-step fields -> (v3 feature, dtype). ``done`` is ``terminated or truncated``.
STEP_FEATURES: dict[str, tuple[str, str]] = {
    "reward": ("next.reward", "float32"),
    "done": ("next.done", "bool"),
    "truncated": ("next.truncated", "bool"),
    "success": ("next.success", "bool"),
    "intervened": ("complementary_info.is_intervention", "bool"),
    "grasp_penalty": ("complementary_info.discrete_penalty", "float32"),
}


class LeRobotFormatError(RobotRLError):
    """A folder that is not a LeRobotDataset v3 robot_rl can read, or demos v3 cannot hold."""


def pyarrow_modules() -> tuple[Any, Any]:
    """``(pyarrow, pyarrow.parquet)``, or a one-line error saying how to install them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise LeRobotFormatError("LeRobotDataset v3 needs pyarrow: install the lerobot extra "
                                 f"({install_extra('lerobot')})") from None
    return pyarrow, pyarrow.parquet


def is_camera(space: gym.spaces.Box) -> bool:
    """An observation stored as a video: uint8 HxWx3."""
    return np.dtype(space.dtype) == np.uint8 and len(space.shape) == 3 and space.shape[2] == 3


def feature_name(key: str, space: gym.spaces.Box) -> str:
    """The v3 feature of robot_rl's observation ``key`` (see the module docstring)."""
    if is_camera(space):
        return IMAGE_PREFIX + key
    return "observation.state" if key == "state" else f"observation.{key}"


def obs_features(obs_space: gym.spaces.Dict) -> dict[str, str]:
    """``{robot_rl obs key: v3 feature}``, refusing what v3 (or this mapping) cannot hold."""
    out: dict[str, str] = {}
    for key, space in sorted(obs_space.spaces.items()):
        if not isinstance(space, gym.spaces.Box):
            raise LeRobotFormatError(f"observation '{key}' is a {type(space).__name__}: v3 holds Box observations")
        if not is_camera(space) and len(space.shape) != 1:
            raise LeRobotFormatError(f"observation '{key}' has shape {space.shape}: v3 holds HxWx3 uint8 images "
                                     "(videos) and vectors")
        name = feature_name(key, space)
        if name in out.values() or (name == "observation.state" and key != "state"):
            raise LeRobotFormatError(f"observation '{key}' would be the v3 feature '{name}' twice")
        out[key] = name
    return out


def features_of(obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, fps: int,
                codec: str, pix_fmt: str) -> dict[str, dict[str, Any]]:
    """The ``features`` of info.json for a demo folder of these spaces."""
    features: dict[str, dict[str, Any]] = {}
    for key, name in obs_features(obs_space).items():
        space = obs_space.spaces[key]
        if is_camera(space):
            h, w, c = space.shape
            features[name] = {"dtype": "video", "shape": [h, w, c], "names": ["height", "width", "channels"],
                              "info": {"video.height": h, "video.width": w, "video.codec": codec,
                                       "video.pix_fmt": pix_fmt, "video.is_depth_map": False, "video.fps": fps,
                                       "video.channels": c, "has_audio": False}}
        else:
            features[name] = {"dtype": np.dtype(space.dtype).name, "shape": list(space.shape), "names": None}
    features["action"] = {"dtype": np.dtype(action_space.dtype).name, "shape": list(action_space.shape),
                          "names": None}
    for name, dtype in STEP_FEATURES.values():
        features[name] = {"dtype": dtype, "shape": [1], "names": None}
    return {**features, **INDEX_FEATURES}


def arrow_type(pa: Any, feature: dict[str, Any]) -> Any:
    """The parquet column type LeRobot (Hugging Face ``datasets``) gives a feature: a scalar for
    shape ``[1]``, a fixed-size list otherwise."""
    scalar = pa.from_numpy_dtype(np.dtype(feature["dtype"]))
    shape = list(feature["shape"])
    return scalar if shape == [1] else pa.list_(scalar, int(np.prod(shape)))


def chunk_file(n: int) -> tuple[int, int]:
    """The ``(chunk, file)`` indices of the ``n``-th file of a kind."""
    return n // CHUNK_SIZE, n % CHUNK_SIZE


def read_info(root: Path) -> dict[str, Any]:
    """``meta/info.json`` of a v3 dataset, checked enough to go on; one-line errors otherwise."""
    if not root.is_dir():
        raise LeRobotFormatError(f"{root}: no such folder")
    path = root / INFO
    if not path.is_file():
        raise LeRobotFormatError(f"{root} is not a LeRobotDataset v3 folder: it has no {INFO}")
    try:
        info = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as err:
        raise LeRobotFormatError(f"{path}: not valid JSON ({one_line(err)})") from None
    if not isinstance(info, dict):
        raise LeRobotFormatError(f"{path}: not a v3 info object")
    version = info.get("codebase_version")
    if not isinstance(version, str) or not version.startswith("v3."):
        raise LeRobotFormatError(f"{path}: codebase_version is {version!r}; robot_rl reads LeRobotDataset v3 "
                                 "(LeRobot's own convert_dataset_v21_to_v30 converts older ones)")
    fps = info.get("fps")
    if type(fps) is not int or not 1 <= fps <= 100_000:
        raise LeRobotFormatError(f"{path}: 'fps' is {fps!r}, not a whole number of frames per second")
    features = info.get("features")
    if not isinstance(features, dict) or not all(isinstance(v, dict) for v in features.values()):
        raise LeRobotFormatError(f"{path}: 'features' is not a map of feature descriptions")
    for name, feature in features.items():
        shape = feature.get("shape")
        if not isinstance(shape, list) or not all(type(n) is int and n > 0 for n in shape) \
                or not isinstance(feature.get("dtype"), str):
            raise LeRobotFormatError(f"{path}: feature '{name}' needs a dtype and a shape of whole numbers")
    for key in ("data_path", "video_path"):
        if info.get(key) is not None and not isinstance(info.get(key), str):
            raise LeRobotFormatError(f"{path}: '{key}' is not a path pattern")
    return info
