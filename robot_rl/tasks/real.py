"""What a task that lives only on a real cell takes from its config, checked when it loads.

A real-only task (``TaskSpec.real_only``) has no scene to ask, so its config says
everything a scene would: the cameras the policy sees and their sizes
(``cameras.<name>.width/height``, stated, not defaulted), the action dimensions it
commands (``env.active_dims``, stated), the proprioception it observes
(``task.params.proprio``), where episodes start (``task.params.reset_poses`` and/or a
recorded ``task.params.reset_poses_file``, each inside ``robot.workspace``) and, for a
learning run (``ros.policy: learner``), the reward classifier that decides success
(``reward.classifier_path``). Each missing or bad one is one ConfigError naming the
file and the key (:func:`check_real_config`, run by :func:`robot_rl.tasks.config_from_dict`).

The spaces then follow from the config alone (:func:`robot_rl.assemble.config_spaces_env`)
and the resets from :func:`reset_poses` (:class:`robot_rl.reset.pose_list.PoseListReset`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_rl.config.loader import source_of
from robot_rl.errors import ConfigError

if TYPE_CHECKING:
    from robot_rl.config import Config
    from robot_rl.tasks.spec import TaskSpec

MAX_POSES_FILE_BYTES = 1 << 20
MAX_POSES = 10_000


def _has(data: Any, *keys: str) -> bool:
    for key in keys:
        if not isinstance(data, dict) or key not in data or data[key] is None:
            return False
        data = data[key]
    return True


def check_real_config(spec: "TaskSpec", cfg: "Config", data: dict[str, Any], file: Any) -> None:
    """Refuse a real-only task's config that lacks what its spaces, resets or reward need.

    ``data`` is the raw mapping the config was built from (after ``base:`` and ``--set``),
    so a value the config left to its default reads as missing: on a real cell the
    defaults describe the sim's arm, not this cell.
    """

    def fail(key: str, why: str) -> ConfigError:
        return ConfigError(f"{source_of(file, key)}: '{key}' {why} (task '{spec.name}' lives only on a real "
                           "cell: its config says what a scene would)")

    if cfg.env.obs_mode != "pixels":
        raise fail("env.obs_mode", f"is '{cfg.env.obs_mode}'; a real cell has no ground-truth task state: "
                                   "use pixels (camera images + proprioception)")
    for name in cfg.env.cameras:
        for side in ("width", "height"):
            if not _has(data, "cameras", name, side):
                raise fail(f"cameras.{name}.{side}", "is missing: state the camera's image size "
                                                     "(the policy's image space follows from it)")
    if not _has(data, "env", "active_dims"):
        raise fail("env.active_dims", "is missing: name the action dimensions the policy commands, "
                                      "e.g. [x, y, z]")
    check_proprio(cfg.task.params.proprio, lambda why: fail("task.params.proprio", why))
    poses = _config_poses(cfg, fail)
    box_low, box_high = np.asarray(cfg.robot.workspace.pos_low), np.asarray(cfg.robot.workspace.pos_high)
    for where, pose in poses:
        if np.any(pose[:3] < box_low) or np.any(pose[:3] > box_high):
            entry = f"entry {where[1]}" + (f" of {cfg.task.params.reset_poses_file}" if "file" in where[0] else "")
            raise fail(where[0], f"{entry} at {np.round(pose[:3], 4).tolist()} m is outside the workspace "
                                 f"box {list(cfg.robot.workspace.pos_low)}..{list(cfg.robot.workspace.pos_high)}")
    if cfg.ros.policy == "learner" and cfg.ros.reward_frames_dir is None and not cfg.reward.classifier_path:
        raise fail("reward.classifier_path", "is missing: a learning run's success comes from the reward "
                                             "classifier (record frames with ros.reward_frames_dir, then "
                                             "robot-rl train-reward)")


def check_proprio(keys: list[str], fail: Any) -> None:
    """``task.params.proprio``: known keys, each once, at least one."""
    from robot_rl.envs.robot_env import PROPRIO_LAYOUT

    if not keys:
        raise fail(f"is missing: name the proprioception the policy sees, from {list(PROPRIO_LAYOUT)}")
    unknown = [k for k in keys if k not in PROPRIO_LAYOUT]
    if unknown:
        raise fail(f"names {unknown}, which are not proprioception keys (known: {list(PROPRIO_LAYOUT)})")
    if len(set(keys)) != len(keys):
        raise fail(f"names a key twice: {keys}")


def _config_poses(cfg: "Config", fail: Any) -> list[tuple[tuple[str, int], np.ndarray]]:
    """Every reset pose with where it came from: (key, index), pose."""
    params = cfg.task.params
    out = [(("task.params.reset_poses", i), np.asarray(p, float)) for i, p in enumerate(params.reset_poses)]
    if params.reset_poses_file:
        try:
            loaded = read_reset_poses(params.reset_poses_file)
        except ValueError as err:
            raise fail("task.params.reset_poses_file", str(err)) from None
        out += [(("task.params.reset_poses_file", i), p) for i, p in enumerate(loaded)]
    return out


def read_reset_poses(path: str | Path) -> list[np.ndarray]:
    """A recorded reset-pose file: JSON, a list of [x, y, z, roll, pitch, yaw]; ValueError saying what is wrong."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_POSES_FILE_BYTES:
            raise ValueError(f"{path} is larger than {MAX_POSES_FILE_BYTES} bytes; it is not a pose list")
        poses = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a folder, not a pose file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a JSON pose list: {err}") from None
    if not isinstance(poses, list) or not poses or len(poses) > MAX_POSES:
        raise ValueError(f"{path} must hold a list of 1 to {MAX_POSES} poses")
    out = []
    for i, pose in enumerate(poses):
        if (not isinstance(pose, list) or len(pose) != 6
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                           and abs(v) <= 6.3 for v in pose)):
            raise ValueError(f"{path}: pose {i} must be [x, y, z, roll, pitch, yaw], finite, each within 6.3")
        out.append(np.asarray(pose, float))
    return out


def write_reset_poses(path: str | Path, poses: list[Any]) -> Path:
    """Record reset poses ([x, y, z, roll, pitch, yaw] each) where ``task.params.reset_poses_file`` reads them."""
    from robot_rl.data.durable import durable_write_text

    rows = [[float(v) for v in np.asarray(p, float).reshape(6)] for p in poses]
    return durable_write_text(path, json.dumps(rows) + "\n")


def reset_poses(cfg: "Config") -> list[np.ndarray]:
    """The reset poses of a real-only task's config, in order ([x, y, z, roll, pitch, yaw] each); may be empty."""
    params = cfg.task.params
    poses = [np.asarray(p, float) for p in getattr(params, "reset_poses", ())]
    if getattr(params, "reset_poses_file", None):
        poses += read_reset_poses(params.reset_poses_file)
    return poses


def check_real_run(cfg: "Config") -> None:
    """What an actor refuses for a real-only task before it starts: the scripted expert (there is none)."""
    from robot_rl.tasks import get_task

    spec = get_task(cfg.task.name)
    if spec.real_only and cfg.ros.policy == "expert":
        raise spec.no_sim("ros.policy 'expert' (the scripted expert)")
